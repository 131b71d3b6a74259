// Fuzz target: the config loader on arbitrary text. It must either return a config or throw
// ConfigError with a message that starts with the source name; nothing else may escape.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::string text(reinterpret_cast<const char *>(data), size);
    try {
        rocesw::load_config_string(text, "fuzz.yaml");
    } catch (const rocesw::ConfigError &e) {
        if (std::string(e.what()).rfind("fuzz.yaml", 0) != 0) std::abort();
    }
    return 0;
}
