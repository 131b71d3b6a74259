#include "common/log.h"

namespace rocesw {

std::optional<spdlog::level::level_enum> parse_log_level(std::string_view s) {
    using spdlog::level::level_enum;
    if (s == "trace") return level_enum::trace;
    if (s == "debug") return level_enum::debug;
    if (s == "info") return level_enum::info;
    if (s == "warn" || s == "warning") return level_enum::warn;
    if (s == "error") return level_enum::err;
    if (s == "critical") return level_enum::critical;
    if (s == "off") return level_enum::off;
    return std::nullopt;
}

}  // namespace rocesw
