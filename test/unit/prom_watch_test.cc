// rocectl watch's arithmetic: rates from two samples, filters, the first frame, PFC rows.
#include <gtest/gtest.h>

#include "watch.h"

namespace rocesw {
namespace {

using nlohmann::json;

json ports(uint64_t rx, uint64_t rx_bytes, uint64_t drops) {
    return {{"ports",
             {{{"name", "p0"},
               {"link", {{"up", true}}},
               {"rx_packets", rx},
               {"rx_bytes", rx_bytes},
               {"tx_packets", 0u},
               {"tx_bytes", 0u},
               {"drops", drops}},
              {{"name", "p1"}, {"link", {{"up", false}}}, {"rx_packets", 0u}}}}};
}

json queues(uint64_t enq, uint64_t ecn, uint64_t depth) {
    return {{"queues",
             {{{"port", "p0"},
               {"queue", 3u},
               {"enq_packets", enq},
               {"ecn_marked", ecn},
               {"depth_bytes", depth},
               {"depth_packets", 2u},
               {"watermark_bytes", 9000u},
               {"drops", 0u}},
              {{"port", "p0"}, {"queue", 0u}, {"enq_packets", 0u}, {"drops", 0u}}}}};
}

TEST(RocectlWatch, FirstFrameHasCountersButNoRates) {
    WatchOptions opt;
    json f = watch_frame(ports(10, 1000, 1), queues(5, 1, 3000), nullptr, nullptr, 1.0, opt);
    ASSERT_EQ(f["ports"].size(), 2u);
    EXPECT_EQ(f["ports"][0]["rx_packets"], 10u);
    EXPECT_TRUE(f["ports"][0]["rx_pps"].is_null());
    EXPECT_FALSE(f["ports"][1]["link_up"].get<bool>());
    ASSERT_EQ(f["queues"].size(), 1u) << "an idle queue is hidden without --all";
    EXPECT_EQ(f["queues"][0]["depth_bytes"], 3000u);
    EXPECT_TRUE(f["queues"][0]["ecn_ps"].is_null());
}

TEST(RocectlWatch, RatesAreDifferencesOverTheMeasuredInterval) {
    WatchOptions opt;
    json p0 = ports(10, 1000, 1), q0 = queues(5, 1, 0);
    json f = watch_frame(ports(210, 51000, 5), queues(405, 101, 0), &p0, &q0, 0.5, opt);
    EXPECT_DOUBLE_EQ(f["ports"][0]["rx_pps"].get<double>(), 400.0);
    EXPECT_DOUBLE_EQ(f["ports"][0]["rx_bps"].get<double>(), 50000.0 * 8 / 0.5);
    EXPECT_DOUBLE_EQ(f["ports"][0]["drops_ps"].get<double>(), 8.0);
    EXPECT_DOUBLE_EQ(f["queues"][0]["enq_pps"].get<double>(), 800.0);
    EXPECT_DOUBLE_EQ(f["queues"][0]["ecn_ps"].get<double>(), 200.0);
}

TEST(RocectlWatch, CounterThatWentBackwardsHasNoRate) {
    WatchOptions opt;
    json p0 = ports(500, 1000, 1), q0 = queues(5, 1, 0);
    json f = watch_frame(ports(10, 1000, 1), q0, &p0, &q0, 1.0, opt);
    EXPECT_TRUE(f["ports"][0]["rx_pps"].is_null());
}

TEST(RocectlWatch, FiltersPortsAndShowsAllQueuesOnRequest) {
    WatchOptions opt;
    opt.ports = {"p1"};
    json f = watch_frame(ports(1, 1, 0), queues(5, 1, 0), nullptr, nullptr, 1.0, opt);
    ASSERT_EQ(f["ports"].size(), 1u);
    EXPECT_EQ(f["ports"][0]["port"], "p1");
    EXPECT_TRUE(f["queues"].empty());
    opt.ports.clear();
    opt.all_queues = true;
    f = watch_frame(ports(1, 1, 0), queues(5, 1, 0), nullptr, nullptr, 1.0, opt);
    EXPECT_EQ(f["queues"].size(), 2u);
    std::string text = format_watch(f, opt);
    EXPECT_NE(text.find("p0          3"), std::string::npos) << text;
}

TEST(RocectlWatch, PfcRowsShowPausesPerPriority) {
    auto pfc = [](uint64_t rx, bool now) {
        return json{{"ports",
                     {{{"port", "p0"},
                       {"priorities",
                        {{{"priority", 3u},
                          {"rx_pause", rx},
                          {"tx_pause", 0u},
                          {"rx_paused_now", now},
                          {"tx_pausing_now", false},
                          {"rx_pause_us", 1500u},
                          {"tx_pause_us", 0u}},
                         {{"priority", 4u}, {"rx_pause", 0u}, {"tx_pause", 0u}}}}}}}};
    };
    WatchOptions opt;
    json prev = pfc(10, false);
    json rows = watch_pfc_rows(pfc(30, true), &prev, 2.0, opt);
    ASSERT_EQ(rows.size(), 1u) << "priority 4 never paused: hidden without --all";
    EXPECT_EQ(rows[0]["priority"], 3u);
    EXPECT_DOUBLE_EQ(rows[0]["rx_pause_ps"].get<double>(), 10.0);
    EXPECT_TRUE(rows[0]["rx_paused_now"].get<bool>());
    json frame = {{"ports", json::array()}, {"queues", json::array()}, {"pfc", rows}};
    EXPECT_NE(format_watch(frame, opt).find("yes"), std::string::npos);
}

}  // namespace
}  // namespace rocesw
