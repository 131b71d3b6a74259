// Broken load-balancing plugins for lb_plugin_test, one per -DKIND_* (test/unit/meson.build).
#include <memory>
#include <stdexcept>

#include "lb/plugin.h"

namespace {
class Fixed final : public rocesw::LbPolicy {
  public:
    rocesw::LbGranularity granularity() const override { return rocesw::LbGranularity::flowlet; }
    void choose(std::span<rocesw::PathRequest> reqs, const rocesw::LbView &) override {
        for (auto &r : reqs) r.choice = r.group->alive[0];
    }
};
[[maybe_unused]] rocesw::LbPolicyFactory fixed() {
    return [](uint16_t) { return std::make_unique<Fixed>(); };
}
}  // namespace

#if defined(KIND_NOT_A_PLUGIN)
// A shared object with neither symbol.
extern "C" [[gnu::visibility("default")]] int not_a_plugin() { return 1; }
#elif defined(KIND_NO_INIT)
// The layout symbol alone.
extern "C" [[gnu::visibility("default")]] const rocesw::LbPluginAbi rocesw_lb_plugin_abi =
    rocesw::lb_plugin_abi();
#elif defined(KIND_OTHER_ABI)
// Built "for another rocesw": an interface version and a PathRequest size this one has not.
constexpr rocesw::LbPluginAbi other_abi() {
    rocesw::LbPluginAbi a = rocesw::lb_plugin_abi();
    a.version = 999;
    a.path_request += 8;
    return a;
}
extern "C" [[gnu::visibility("default")]] const rocesw::LbPluginAbi rocesw_lb_plugin_abi =
    other_abi();
extern "C" [[gnu::visibility("default")]] bool rocesw_lb_plugin_init(rocesw::LbPluginContext *) {
    throw std::logic_error("init of a plugin of another interface must not run");
}
#else
ROCESW_LB_PLUGIN(ctx) {
    std::string err;
    (void)ctx;
#if defined(KIND_NAME_TAKEN)
    return ctx.add("flowlet", fixed(), &err);  // a built-in's name
#elif defined(KIND_REGISTERS_NOTHING)
    return true;
#elif defined(KIND_INIT_THROWS)
    throw std::runtime_error("no licence for this policy");
#elif defined(KIND_TWO_POLICIES)
    return ctx.add("test_first", fixed(), &err) && ctx.add("test_second", fixed(), &err);
#else
#error "no KIND_*"
#endif
}
#endif
