// Fuzz target: the QoS profile loader (SONiC-shaped YAML: DSCP/PCP maps, schedulers, WRED,
// buffer pools and profiles, PFC) on arbitrary text, then its binding to two ports. Each step
// must either succeed or throw ConfigError with a message that starts with the source name;
// nothing else may escape.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "config/config.h"
#include "qos/qos_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    auto check = [](const rocesw::ConfigError &e) {
        if (std::string(e.what()).rfind("fuzz.yaml", 0) != 0) std::abort();
    };
    rocesw::QosConfig cfg;
    try {
        cfg = rocesw::load_qos_string(text, "fuzz.yaml");
    } catch (const rocesw::ConfigError &e) {
        check(e);
        return 0;
    }
    // The shipped profiles name their ports p0 and p1 (or all ports): two ports of different
    // speeds and MTUs.
    const std::vector<rocesw::QosPortInfo> ports = {{"p0", 100000, 9000, 32, {}},
                                                     {"p1", 1000, 1500, 64, {}}};
    try {
        rocesw::build_qos_plan(cfg, ports);
    } catch (const rocesw::ConfigError &e) {
        check(e);
    }
    return 0;
}
