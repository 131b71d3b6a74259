// Logging through spdlog. The data path logs only through RateLimitedLog so that a flood of
// bad packets cannot turn into a flood of log lines.
#pragma once

#include <spdlog/spdlog.h>

#include <cstdint>
#include <optional>
#include <string_view>

namespace rocesw {

// Maps "trace|debug|info|warn|error|critical|off" to a level; nullopt when unknown.
std::optional<spdlog::level::level_enum> parse_log_level(std::string_view s);

// Allows at most `burst` messages per `interval_ns`, counting what it suppressed.
class RateLimitedLog {
  public:
    explicit RateLimitedLog(uint64_t interval_ns = 1'000'000'000ull, uint32_t burst = 5)
        : interval_ns_(interval_ns), burst_(burst) {}
    // Time is an argument: the caller passes now in nanoseconds.
    bool allow(uint64_t now_ns) {
        if (now_ns - window_start_ns_ >= interval_ns_) {
            window_start_ns_ = now_ns;
            used_ = 0;
        }
        if (used_ < burst_) {
            used_++;
            return true;
        }
        suppressed_++;
        return false;
    }
    uint64_t suppressed() const { return suppressed_; }

  private:
    uint64_t interval_ns_;
    uint32_t burst_;
    uint64_t window_start_ns_ = 0;
    uint32_t used_ = 0;
    uint64_t suppressed_ = 0;
};

}  // namespace rocesw
