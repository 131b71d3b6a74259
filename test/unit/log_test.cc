#include <gtest/gtest.h>

#include "common/log.h"

using namespace rocesw;

TEST(RateLimitedLog, AllowsBurstPerIntervalThenCountsSuppressed) {
    RateLimitedLog rl(1000, 3);
    int allowed = 0;
    for (int i = 0; i < 10; i++) allowed += rl.allow(5000);
    EXPECT_EQ(allowed, 3);
    EXPECT_EQ(rl.suppressed(), 7u);
    EXPECT_TRUE(rl.allow(6000));  // a new interval
}

TEST(LogLevel, ParsesEveryNameAndRejectsOthers) {
    EXPECT_EQ(parse_log_level("debug"), spdlog::level::debug);
    EXPECT_EQ(parse_log_level("warn"), spdlog::level::warn);
    EXPECT_EQ(parse_log_level("error"), spdlog::level::err);
    EXPECT_EQ(parse_log_level("off"), spdlog::level::off);
    EXPECT_FALSE(parse_log_level("verbose"));
    EXPECT_FALSE(parse_log_level(""));
}
