// The shared buffer in virtual time: dynamic thresholds hold a hog queue to alpha/(1+alpha) of
// the pool and leave room for others, reservations and static limits are exact, watermarks are
// exact and clearable, every drop is counted on its queue and on the port, lossless queues are
// governed only by pool + headroom and the PG limit, and PG bytes rise on admission and fall on
// transmit. Every test ends with all mbufs back in the pool (QosFixture::TearDown).
#include <gtest/gtest.h>

#include "qos_fixture.h"

namespace rocesw::test {
namespace {

using QosBuffer = QosFixture;

std::string lossy_pool(uint64_t size, const std::string &profile) {
    return "BUFFER_POOL:\n  pool: {size: " + std::to_string(size) +
           ", mode: dynamic}\nBUFFER_PROFILE:\n  p: {pool: pool, " + profile +
           "}\nBUFFER_QUEUE:\n  p1|0-2: {profile: p}\n";
}

// One queue alone, alpha = 2^dt: admitted while depth + 1000 <= alpha x (100000 - depth).
TEST_F(QosBuffer, DynamicThresholdLimitsAHogQueue) {
    struct Case {
        int dt;
        uint64_t watermark;
    };
    for (Case c : {Case{0, 50000}, Case{1, 67000}, Case{-1, 33000}, Case{3, 89000}}) {
        SCOPED_TRACE("dynamic_th " + std::to_string(c.dt));
        start(qos_profile(lossy_pool(100000, "dynamic_th: " + std::to_string(c.dt))));
        shared->set_paused(1, 0xFF);
        send(udp4_frame(1, 0, 1000), 200);
        QueueSnapshot s = q(1);
        EXPECT_EQ(s.watermark_bytes, c.watermark);
        EXPECT_EQ(s.depth_bytes, c.watermark);
        EXPECT_EQ(s.enq_packets, c.watermark / 1000);
        EXPECT_EQ(s.drops[size_t(QueueDrop::buffer_full)], 200 - c.watermark / 1000);
        EXPECT_EQ(s.drops_total(), 200 - c.watermark / 1000);
        EXPECT_EQ(port_drops(1, DropReason::buffer_full), 200 - c.watermark / 1000);
        EXPECT_EQ(shared->pool_used(0), c.watermark);
        shared->set_paused(1, 0);
        drain();
        EXPECT_EQ(ports->take_tx(1).size(), c.watermark / 1000);
        EXPECT_EQ(shared->pool_used(0), 0u);
        egress.reset();
        shared.reset();
        counters = std::make_unique<WorkerCounters>();
    }
}

TEST_F(QosBuffer, HogLeavesRoomForAnotherQueue) {
    start(qos_profile(lossy_pool(100000, "dynamic_th: 0")));
    shared->set_paused(1, 0xFF);
    send(udp4_frame(1, 0, 1000), 100);  // queue 1 takes 50000
    send(udp4_frame(2, 0, 1000), 100);  // queue 2: q + 1000 <= 50000 - q  ->  25000
    send(udp4_frame(1, 0, 1000), 10);   // queue 1 is now above alpha x free: all refused
    EXPECT_EQ(q(1).depth_bytes, 50000u);
    EXPECT_EQ(q(2).depth_bytes, 25000u);
    EXPECT_EQ(q(1).drops[size_t(QueueDrop::buffer_full)], 60u);
    EXPECT_EQ(q(2).drops[size_t(QueueDrop::buffer_full)], 75u);
    EXPECT_EQ(port_drops(1, DropReason::buffer_full), 135u);
    shared->set_paused(1, 0);
    drain();
    EXPECT_EQ(ports->take_tx(1).size(), 75u);
}

TEST_F(QosBuffer, ReservedBytesComeFirstThenTheSharedPart) {
    // Pool 20000, queue 1 reserves 5000 (queues 0 and 2 reserve too: 15000 reserved, 5000
    // shared). Queue 1: 5000 reserved + shared e with e + 1000 <= 5000 - e -> 3000.
    start(qos_profile(lossy_pool(20000, "size: 5000, dynamic_th: 0")));
    shared->set_paused(1, 0xFF);
    send(udp4_frame(1, 0, 1000), 20);
    EXPECT_EQ(q(1).depth_bytes, 8000u);
    EXPECT_EQ(q(1).drops[size_t(QueueDrop::buffer_full)], 12u);
    // Queue 2 still has its own 5000 reserved although the shared part is half used.
    send(udp4_frame(2, 0, 1000), 20);
    EXPECT_EQ(q(2).depth_bytes, 5000u + 1000u);  // + e with e + 1000 <= 2000 - e -> 1000
    shared->set_paused(1, 0);
    drain();
    EXPECT_EQ(ports->take_tx(1).size(), 14u);
}

TEST_F(QosBuffer, StaticThresholdIsExact) {
    start(
        qos_profile("BUFFER_POOL:\n  pool: {size: 100000, mode: static}\n"
                    "BUFFER_PROFILE:\n  p: {pool: pool, static_th: 30000}\n"
                    "BUFFER_QUEUE:\n  default|0-7: {profile: p}\n"));
    shared->set_paused(1, 0xFF);
    send(udp4_frame(4, 0, 1000), 40);
    EXPECT_EQ(q(4).depth_bytes, 30000u);
    EXPECT_EQ(q(4).drops[size_t(QueueDrop::buffer_full)], 10u);
    send(udp4_frame(5, 0, 1000), 40);
    send(udp4_frame(6, 0, 1000), 40);
    send(udp4_frame(7, 0, 1000), 40);  // the pool (100000 for both ports' 16 queues) is full
    EXPECT_EQ(q(7).depth_bytes, 10000u);
    EXPECT_EQ(shared->pool_used(0), 100000u);
    shared->set_paused(1, 0);
    drain();
}

TEST_F(QosBuffer, QueueSlotsBoundAQueueWithoutPool) {
    start(qos_profile("ROCESW: {queue_packets: 64}\n"));
    shared->set_paused(1, 0xFF);
    send(udp4_frame(0, 0, 100), 100);
    EXPECT_EQ(q(0).depth_packets, 64u);
    EXPECT_EQ(q(0).drops[size_t(QueueDrop::queue_full)], 36u);
    EXPECT_EQ(port_drops(1, DropReason::queue_full), 36u);
    shared->set_paused(1, 0);
    drain();
    EXPECT_EQ(ports->take_tx(1).size(), 64u);
}

TEST_F(QosBuffer, WatermarkIsExactAndClearable) {
    start(qos_profile(""));
    shared->set_paused(1, 0xFF);
    uint64_t total = 0;
    for (uint32_t len = 60; len < 1400; len += 37) {
        send(udp4_frame(3, 0, len));
        total += len;
    }
    EXPECT_EQ(q(3).watermark_bytes, total);
    EXPECT_EQ(q(3).depth_bytes, total);
    shared->set_paused(1, 0);
    drain();
    EXPECT_EQ(q(3).depth_bytes, 0u);
    EXPECT_EQ(q(3).depth_packets, 0u);
    EXPECT_EQ(q(3).watermark_bytes, total);  // the high mark stays after the queue drains
    shared->set_paused(1, 0xFF);
    send(udp4_frame(3, 0, 500), 2);
    shared->clear_watermarks(1);
    egress->flush(now_ns);  // the owner applies the clear at its next flush
    EXPECT_EQ(q(3).watermark_bytes, 1000u);
    EXPECT_EQ(q(3).watermark_packets, 2u);
    send(udp4_frame(3, 0, 500));
    EXPECT_EQ(q(3).watermark_bytes, 1500u);
    shared->set_paused(1, 0);
    drain();
    EXPECT_EQ(q(3).enq_bytes, total + 1500);
    EXPECT_EQ(q(3).deq_bytes, total + 1500);
}

// Lossless queue 3: no threshold and no WRED applies; only pool (20000) + headroom (5000).
TEST_F(QosBuffer, LosslessQueueDropsOnlyWhenPoolAndHeadroomAreExhausted) {
    start(
        qos_profile("BUFFER_POOL:\n  ll: {size: 20000, mode: static, xoff: 5000}\n"
                    "BUFFER_PROFILE:\n  p: {pool: ll, static_th: 1000}\n"
                    "BUFFER_QUEUE:\n  default|3: {profile: p}\n"
                    "WRED_PROFILE:\n  w: {wred_green_enable: true, green_min_threshold: 0, "
                    "green_max_threshold: 0, green_drop_probability: 100}\n"
                    "QUEUE:\n  default|3: {wred_profile: w}\n",
                    "pfc_enable: \"3\""));
    ASSERT_TRUE(plan.ports[1].queues[3].lossless);
    shared->set_paused(1, 0xFF);
    // Pool shares: 2 ports, one owner -> the whole pool. static_th 1000 would allow one packet
    // and WRED (Kmin = Kmax = 0) would drop every one: neither applies to a lossless queue.
    send(udp4_frame(3, 0, 1000), 30);
    EXPECT_EQ(q(3).depth_bytes, 25000u);
    EXPECT_EQ(q(3).drops[size_t(QueueDrop::headroom_exhausted)], 5u);
    EXPECT_EQ(q(3).drops[size_t(QueueDrop::wred_drop)], 0u);
    EXPECT_EQ(q(3).drops[size_t(QueueDrop::buffer_full)], 0u);
    EXPECT_EQ(shared->pg_bytes(0, 3), 25000u);
    EXPECT_EQ(shared->pg_drops(0, 3), 5u);
    EXPECT_EQ(port_drops(1, DropReason::headroom_exhausted), 5u);
    shared->set_paused(1, 0);
    drain();
    EXPECT_EQ(ports->take_tx(1).size(), 25u);
    EXPECT_EQ(shared->pg_bytes(0, 3), 0u);
    EXPECT_EQ(shared->pg_watermark(0, 3), 25000u);
}

TEST_F(QosBuffer, PgLimitHookRefusesLosslessPacketsAboveIt) {
    start(qos_profile("", "pfc_enable: \"3\""));
    shared->set_pg_limit(0, 3, 10000);
    shared->set_paused(1, 0xFF);
    send(udp4_frame(3, 0, 1000), 15);
    send(udp4_frame(3, 0, 1000), 4, 1, 1);  // another ingress port: its own PG
    EXPECT_EQ(shared->pg_bytes(0, 3), 10000u);
    EXPECT_EQ(shared->pg_drops(0, 3), 5u);
    EXPECT_EQ(shared->pg_bytes(1, 3), 4000u);
    EXPECT_EQ(q(3).drops[size_t(QueueDrop::headroom_exhausted)], 5u);
    shared->set_paused(1, 0);
    drain();
}

TEST_F(QosBuffer, PgBytesRiseOnAdmissionAndFallOnTransmit) {
    start(qos_profile(
        "TC_TO_PRIORITY_GROUP_MAP:\n  G: {0: 0, 1: 0, 2: 0, 3: 3, 4: 4, 5: 0, 6: 0, 7: 7}\n",
        "tc_to_pg_map: G"));
    shared->set_paused(1, 0xFF);
    send(udp4_frame(3, 0, 700), 3, 1, 0);
    send(udp4_frame(1, 0, 100), 2, 1, 0);
    send(udp4_frame(2, 0, 100), 1, 1, 0);
    send(udp4_frame(4, 0, 300), 5, 0, 1);  // p1 -> p0
    EXPECT_EQ(shared->pg_bytes(0, 3), 2100u);
    EXPECT_EQ(shared->pg_bytes(0, 0), 300u);
    EXPECT_EQ(shared->pg_bytes(1, 4), 1500u);
    shared->set_paused(1, 1u << 3);  // everything but queue 3 may go
    for (int i = 0; i < 10; i++) egress->flush(now_ns += 100'000);
    EXPECT_EQ(egress->backlog(), 3u);
    EXPECT_EQ(shared->pg_bytes(0, 3), 2100u);
    EXPECT_EQ(shared->pg_bytes(0, 0), 0u);
    shared->set_paused(1, 0);
    drain();
    EXPECT_EQ(shared->pg_bytes(0, 3), 0u);
    EXPECT_EQ(shared->pg_bytes(1, 4), 0u);
    EXPECT_EQ(ports->take_tx(1).size(), 6u);
    EXPECT_EQ(ports->take_tx(0).size(), 5u);
}

TEST_F(QosBuffer, DiscardAllCountsEveryHeldPacketAndResetsAccounting) {
    start(qos_profile(lossy_pool(1'000'000, "dynamic_th: 2")));
    shared->set_paused(1, 0xFF);
    send(udp4_frame(0, 0, 200), 7);
    send(udp4_frame(1, 0, 200), 3);
    EXPECT_EQ(egress->backlog(), 10u);
    egress->discard_all(DropReason::port_stopped);
    EXPECT_EQ(egress->backlog(), 0u);
    EXPECT_EQ(port_drops(1, DropReason::port_stopped), 10u);
    EXPECT_EQ(q(0).drops[size_t(QueueDrop::discarded)], 7u);
    EXPECT_EQ(q(1).depth_bytes, 0u);
    EXPECT_EQ(shared->pool_used(0), 0u);
    EXPECT_EQ(shared->pg_bytes(0, 0), 0u);
    // The pool is whole again: the hog limit starts over.
    send(udp4_frame(1, 0, 1000), 1000);
    EXPECT_EQ(q(1).depth_bytes, 800000u);  // q + 1000 <= 4 x (1e6 - q)
}

}  // namespace
}  // namespace rocesw::test
