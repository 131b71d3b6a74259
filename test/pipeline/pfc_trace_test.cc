// PFC events reach the event trace (lib/telemetry/trace.h): frames sent (XOFF with the quanta,
// XON), frames received (through the receiving worker's ring) and watchdog storm/restore, each
// with the time it happened in virtual time. The CSV the control thread writes is checked.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "pfc/frame.h"
#include "qos_fixture.h"
#include "qos/ecn.h"
#include "telemetry/trace.h"

namespace rocesw::test {
namespace {

std::vector<std::string> csv_lines(const std::string &path) {
    std::ifstream in(path);
    std::vector<std::string> out;
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

TEST_F(QosFixture, PfcEventsGoToTheTrace) {
    start(qos_profile(
        "BUFFER_POOL:\n  ip: {type: ingress, mode: static, size: 10000000}\n"
        "BUFFER_PROFILE:\n  pg: {pool: ip, static_th: 20000, xoff: 10000, xon_offset: 5000}\n"
        "BUFFER_PG:\n  default|3: {profile: pg}\n"
        "PFC_WD:\n  p1: {detection_time: 10, restoration_time: 20, action: drop}\n",
        "pfc_enable: \"3\""));
    shared->pfc().set_source(ports->pool(), {{2, 0, 0, 0, 0, 0x10}, {2, 0, 0, 0, 0, 0x11}});
    TraceWriter trace({"p0", "p1"}, 1);
    egress->set_trace(&trace.ring(0));
    // XOFF at t0 from p0 (its PG 3 passes 20000 while p1 is blocked), XON after the drain.
    shared->set_paused(1, 0xFF);
    send(udp4_frame(3, 0, 1000), 20);
    const uint64_t t0 = now_ns;
    egress->flush(t0);
    shared->set_paused(1, 0);
    drain(1000);
    ports->take_tx(0);
    ports->take_tx(1);
    // A storm on p1 priority 3, received through the ring: frames every ms for 15 ms.
    send(udp4_frame(3, 0, 1000), 2);
    Bytes f(60);
    std::array<uint16_t, 8> q{};
    q[3] = 0xFFFF;
    build_pfc_frame(f.data(), {2, 0, 0, 0, 0xBB, 2}, 1u << 3, q);
    const uint64_t s0 = now_ns + 1'000'000;
    for (uint64_t t = s0; t < s0 + 40'000'000; t += 100'000) {
        if (t < s0 + 15'000'000 && (t - s0) % 1'000'000 == 0)
            shared->pfc().receive_mac_control(1, f.data(), 60, t, &trace.ring(0));
        egress->flush(t);
    }
    const std::string path = ::testing::TempDir() + "/pfc_trace.csv";
    std::string err;
    ASSERT_TRUE(trace.open(path, &err)) << err;
    trace.drain();
    trace.close();
    auto lines = csv_lines(path);
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines[0], "time_ns,event,port,id,value");
    auto count = [&](const std::string &needle) {
        return std::count_if(lines.begin(), lines.end(),
                             [&](const std::string &l) { return l.find(needle) != l.npos; });
    };
    EXPECT_EQ(count(std::to_string(t0) + ",pfc_xoff_sent,p0,3,65535"), 1);
    EXPECT_EQ(count(",pfc_xon_sent,p0,3,0"), 1);
    EXPECT_EQ(count(",pfc_xoff_received,p1,3,65535"), 15);
    EXPECT_EQ(count(",watchdog_storm,p1,3,3"), 1);
    EXPECT_EQ(count(",watchdog_restore,p1,3,3"), 1);
    EXPECT_EQ(trace.lost(), 0u);
    ports->take_tx(1);
}

}  // namespace
}  // namespace rocesw::test

namespace rocesw::test {
namespace {

// ECN marks are sampled into the trace: one ecn_mark_sample per 16 marks of a queue, its value
// the marks it stands for, stamped with the flush that made them.
TEST_F(QosFixture, EcnMarksAreSampledIntoTheTrace) {
    start(qos_profile("WRED_PROFILE:\n  w: {ecn: ecn_all, green_min_threshold: 0, "
                      "green_max_threshold: 0, green_drop_probability: 100}\n"
                      "QUEUE:\n  default|1: {wred_profile: w}\n"));
    TraceWriter trace({"p0", "p1"}, 1);
    egress->set_trace(&trace.ring(0));
    shared->set_paused(1, 0xFF);
    send(udp4_frame(1, kEcnEct0, 1000), 40);  // every ECT(0) packet is marked at dequeue
    shared->set_paused(1, 0);
    drain(1000);
    EXPECT_EQ(q(1).ecn_marked, 40u);
    const std::string path = ::testing::TempDir() + "/ecn_trace.csv";
    std::string err;
    ASSERT_TRUE(trace.open(path, &err)) << err;
    trace.drain();
    trace.close();
    uint64_t samples = 0, marks = 0;
    for (const auto &l : csv_lines(path)) {
        if (l.find(",ecn_mark_sample,p1,1,") == l.npos) continue;
        samples++;
        marks += std::stoull(l.substr(l.rfind(',') + 1));
    }
    EXPECT_GE(samples, 1u);
    EXPECT_LE(marks, 40u);
    EXPECT_GT(marks, 40u - 16);  // what is left unsampled is below one sample
    ports->take_tx(1);
}

}  // namespace
}  // namespace rocesw::test
