// Load-balancing policies from shared objects (doc/load-balancing.md, "A policy as a plugin"):
// a researcher builds a policy once, as a plugin, and both engines load it from their files
// (roceswd's `lb.plugins`, a rocesim scenario's `lb.plugins`), without a patched main().
//
// A plugin is a shared object built in this tree (the same compiler, headers and C++ library as
// the switch: see lib/lb/plugins/meson.build) that defines, through ROCESW_LB_PLUGIN below:
//   - `rocesw_lb_plugin_abi`: the layouts it was built against (LbPluginAbi), which the loader
//     compares with its own before it runs any of the plugin's code;
//   - `rocesw_lb_plugin_init`: registers the plugin's policies through the context it is given.
// The switch's registry is reached through that context, so the switch exports no symbol.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lb/policy.h"

namespace rocesw {

// Bumped when the plugin interface changes in a way the sizes below do not show.
inline constexpr uint32_t kLbPluginVersion = 1;

struct LbPluginAbi {
    uint32_t version;
    uint32_t path_request;  // sizeof(PathRequest)
    uint32_t lb_view;       // sizeof(LbView)
    uint32_t ecmp_group;    // sizeof(EcmpGroup)
    uint32_t lb_member;     // sizeof(LbMember)
    uint32_t lb_settings;   // sizeof(LbSettings)
    uint32_t max_ports;     // kMaxPorts (LbView's per-port arrays)
    bool operator==(const LbPluginAbi &) const = default;
};

constexpr LbPluginAbi lb_plugin_abi() {
    return {kLbPluginVersion,          uint32_t(sizeof(PathRequest)), uint32_t(sizeof(LbView)),
            uint32_t(sizeof(EcmpGroup)), uint32_t(sizeof(LbMember)),  uint32_t(sizeof(LbSettings)),
            uint32_t(kMaxPorts)};
}

// What a plugin's init gets: add() registers a policy in the switch's registry.
class LbPluginContext {
  public:
    using AddFn = bool (*)(void *self, const std::string &name, LbPolicyFactory factory,
                           std::string *err);
    LbPluginContext(AddFn add, void *self) : add_(add), self_(self) {}
    // Registers `name` (then usable as `policy: name`). False with *err set when the name is
    // taken or kMaxLbPolicies are registered; init should then return false.
    bool add(const std::string &name, LbPolicyFactory factory, std::string *err) {
        return add_(self_, name, std::move(factory), err);
    }

  private:
    AddFn add_;
    void *self_;
};

// Loads the plugin at `path` and registers its policies; returns their names. Loading a file
// already loaded (the same file by its canonical path) registers nothing again and returns the
// names it registered then. Throws std::runtime_error with the path and the reason: the file
// cannot be loaded (dlopen's message), it is not a rocesw plugin (a symbol missing), it was
// built for another interface (both layouts shown), its init failed or registered nothing.
// A plugin's code stays loaded for the life of the process.
std::vector<std::string> load_lb_plugin(const std::string &path);

// The plugins a switch config names (Config::lb.plugins, in order), before
// check_lb_policy_names(): a failure throws ConfigError "<where>: <path>: <reason>".
void load_lb_plugins(const Config &cfg);

}  // namespace rocesw

// Defines a plugin's two symbols; the block that follows is its init, given
// `rocesw::LbPluginContext &ctx` and returning bool:
//   ROCESW_LB_PLUGIN(ctx) {
//       std::string err;
//       return ctx.add("two_choices", [](uint16_t w) { return std::make_unique<Mine>(w); }, &err);
//   }
#define ROCESW_LB_PLUGIN(ctx)                                                                  \
    extern "C" [[gnu::visibility("default")]] const rocesw::LbPluginAbi rocesw_lb_plugin_abi = \
        rocesw::lb_plugin_abi();                                                              \
    static bool rocesw_lb_plugin_body(rocesw::LbPluginContext &ctx);                          \
    extern "C" [[gnu::visibility("default")]] bool rocesw_lb_plugin_init(                     \
        rocesw::LbPluginContext *c) {                                                         \
        return rocesw_lb_plugin_body(*c);                                                     \
    }                                                                                         \
    static bool rocesw_lb_plugin_body(rocesw::LbPluginContext &ctx)
