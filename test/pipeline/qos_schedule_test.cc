// Scheduler and shaper in virtual time (TESTPLAN Q2, Q3): strict queues always first, DWRR byte
// shares within 5% of the weights, paused queues skipped, the port shaper within 2% of the
// line rate at 1G/10G/25G/100G, the TX ring cap bounding what the device holds, and frames the
// device refuses kept in order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "qos_fixture.h"

namespace rocesw::test {
namespace {

using QosSchedule = QosFixture;

const std::string kSchedulers =
    "SCHEDULER:\n  w10: {type: DWRR, weight: 10}\n  w20: {type: DWRR, weight: 20}\n"
    "  w30: {type: DWRR, weight: 30}\n  w40: {type: DWRR, weight: 40}\n  sp: {type: STRICT}\n"
    "QUEUE:\n  default|0: {scheduler: w10}\n  default|1: {scheduler: w20}\n"
    "  default|2: {scheduler: w30}\n  default|3: {scheduler: w40}\n"
    "  default|4: {scheduler: w10}\n  default|5-7: {scheduler: sp}\n";

uint8_t dscp_of(const Frame &f) {
    return f[15] >> 2;
}  // untagged IPv4: TOS at 14 + 1

TEST_F(QosSchedule, Q2StrictQueuesLeaveFirstHighestFirst) {
    start(qos_profile(kSchedulers), 1000);
    shared->set_paused(1, 0xFF);
    for (uint8_t queue = 0; queue < 8; queue++) send(udp4_frame(queue, 0, 200), 10);
    shared->set_paused(1, 0);
    std::vector<uint8_t> order;
    for (int i = 0; i < 1000 && egress->backlog(); i++) {
        egress->flush(now_ns += 1000);
        for (auto &f : ports->take_tx(1)) order.push_back(dscp_of(f));
    }
    ASSERT_EQ(order.size(), 80u);
    for (size_t i = 0; i < 30; i++) EXPECT_EQ(order[i], 7 - i / 10) << "position " << i;
    for (size_t i = 30; i < 80; i++) EXPECT_LT(order[i], 5) << "position " << i;
}

// A strict queue that never runs dry takes the whole port; DWRR queues wait, then resume.
TEST_F(QosSchedule, Q2BackloggedStrictQueueIsAlwaysServedFirst) {
    start(qos_profile(kSchedulers), 10000, true);
    auto keep_backlogged = [&](uint8_t queue, uint64_t depth) {
        while (q(queue).depth_packets < depth) send(udp4_frame(queue, 0, 500));
    };
    for (int step = 0; step < 2000; step++) {
        keep_backlogged(6, 64);
        keep_backlogged(0, 64);
        keep_backlogged(3, 64);
        egress->flush(now_ns += 2000);
        ASSERT_EQ(q(0).deq_packets, 0u) << "step " << step;
        ASSERT_EQ(q(3).deq_packets, 0u) << "step " << step;
    }
    EXPECT_GT(q(6).deq_packets, 4000u);
    drain(2000);
    EXPECT_EQ(q(0).deq_packets, 64u);
    EXPECT_EQ(q(3).deq_packets, 64u);
}

// Four DWRR queues with their own frame sizes, all saturated (each holds more than two quanta,
// weight x 1024 bytes, so none ever runs dry within a round) over 20 ms at 10G.
TEST_F(QosSchedule, Q2DwrrByteSharesWithin5PercentOfWeights) {
    start(qos_profile(kSchedulers), 10000, true);
    const std::array<uint32_t, 4> size = {64, 1500, 800, 300};
    const std::array<double, 4> weight = {10, 20, 30, 40};
    std::map<uint8_t, std::vector<rte_mbuf *>> spare;
    auto top_up = [&]() {
        for (auto *m : sink.taken) spare[meta_of(m)->tc].push_back(m);
        sink.taken.clear();
        for (uint8_t queue = 0; queue < 4; queue++) {
            while (q(queue).depth_bytes < 2 * 1024 * uint64_t(weight[queue]) + size[queue]) {
                rte_mbuf *m;
                if (!spare[queue].empty()) {
                    m = spare[queue].back();
                    spare[queue].pop_back();
                } else {
                    m = packet(udp4_frame(queue, 0, size[queue]));
                }
                egress->enqueue(1, &m, 1, now_ns);
            }
        }
    };
    std::array<uint64_t, 4> start_bytes{};
    for (int step = 0; step < 4000; step++) {  // 5 us steps: 20 ms
        top_up();
        egress->flush(now_ns += 5000);
        if (step == 200)
            for (uint8_t i = 0; i < 4; i++) start_bytes[i] = q(i).deq_bytes;
    }
    uint64_t total = 0;
    std::array<uint64_t, 4> got{};
    for (uint8_t i = 0; i < 4; i++) total += got[i] = q(i).deq_bytes - start_bytes[i];
    for (uint8_t i = 0; i < 4; i++) {
        double share = double(got[i]) / double(total), want = weight[i] / 100.0;
        EXPECT_LT(std::abs(share / want - 1.0), 0.05)
            << "queue " << int(i) << ": share " << share << ", weight share " << want;
    }
    for (auto &[tc, v] : spare)
        for (auto *m : v) rte_pktmbuf_free(m);
    egress->discard_all(DropReason::port_stopped);
}

TEST_F(QosSchedule, PausedQueueIsSkippedThenResumes) {
    start(qos_profile(kSchedulers), 10000);
    shared->set_paused(1, 1u << 7 | 1u << 1);
    send(udp4_frame(7, 0, 300), 5);
    send(udp4_frame(1, 0, 300), 5);
    send(udp4_frame(2, 0, 300), 5);
    for (int i = 0; i < 20; i++) egress->flush(now_ns += 10'000);
    auto out = ports->take_tx(1);
    ASSERT_EQ(out.size(), 5u);
    for (auto &f : out) EXPECT_EQ(dscp_of(f), 2);
    EXPECT_EQ(egress->backlog(), 10u);
    shared->set_paused(1, 1u << 1);
    egress->flush(now_ns += 10'000);
    out = ports->take_tx(1);
    ASSERT_EQ(out.size(), 5u);
    for (auto &f : out) EXPECT_EQ(dscp_of(f), 7);
    shared->set_paused(1, 0);
    drain();
    EXPECT_EQ(ports->take_tx(1).size(), 5u);
}

// Q3: a saturated port at its configured speed, counted over a simulated second (or 20 M frames
// when a second holds more: 100G at 64 B takes 134 ms). Frames of 64 and 1500 bytes on the wire
// (60 and 1496 in the mbuf: the device adds the FCS) plus 20 bytes of preamble and gap. The
// speeds from the slowest a port may be configured at (1 Mb/s) to the fastest (800G).
TEST_F(QosSchedule, Q3ShaperHoldsLineRateWithin2Percent) {
    for (uint64_t mbps : {1, 10, 1000, 10000, 25000, 100000, 400000, 800000}) {
        for (uint32_t wire_frame : {64u, 1500u}) {
            SCOPED_TRACE(std::to_string(mbps) + " Mb/s, " + std::to_string(wire_frame) +
                         " B frames");
            start(qos_profile("", "shaper_burst_bytes: 50000"), mbps, true, 64);
            const uint32_t len = wire_frame - 4;
            const double rate = double(mbps) * 1e6;
            const double pps = rate / ((wire_frame + 20) * 8.0);
            const uint64_t interval_ns = uint64_t(std::min(1e9, 20e6 / pps * 1e9));
            // 2 us a flush, shorter above 100G: no flush may need more than the queue's 1024.
            const uint64_t step_ns = std::min<uint64_t>(2000, 2000 * 100000 / mbps);
            // Enough frames in the queue for any one flush (2 us at 100G = 298 small frames).
            std::vector<rte_mbuf *> pkts;
            for (int i = 0; i < 1024; i++) pkts.push_back(packet(udp4_frame(1, 0, len)));
            egress->enqueue(1, pkts.data(), uint16_t(pkts.size()), now_ns);
            // Recycle what the device took: the backlog never runs dry.
            auto flush_and_recycle = [&]() {
                egress->flush(now_ns);
                for (size_t i = 0; i < sink.taken.size(); i += 256) {
                    uint16_t k = uint16_t(std::min<size_t>(256, sink.taken.size() - i));
                    egress->enqueue(1, &sink.taken[i], k, now_ns);
                }
                sink.taken.clear();
            };
            flush_and_recycle();  // the first flush empties the initial bucket
            uint64_t p0 = sink.packets[1], b0 = sink.bytes[1];
            const uint64_t t0 = now_ns;
            while (now_ns - t0 < interval_ns) {
                now_ns += step_ns;
                flush_and_recycle();
            }
            const uint64_t frames = sink.packets[1] - p0, bytes = sink.bytes[1] - b0;
            EXPECT_EQ(bytes, frames * len);
            const double seconds = double(interval_ns) / 1e9;
            const double measured = double(bytes + frames * 24) * 8 / seconds;
            EXPECT_LT(std::abs(measured / rate - 1.0), 0.02)
                << "measured " << measured << " b/s over " << seconds << " s";
            EXPECT_EQ(q(1).drops_total(), 0u);
            egress.reset();  // frees the backlog
            shared.reset();
            sink.packets = {};
            sink.bytes = {};
        }
    }
}

// Without a shaper, only the TX ring cap paces posting: the device never holds more than the
// cap beyond what the link has carried since.
TEST_F(QosSchedule, TxRingCapBoundsWhatTheDeviceHolds) {
    start(qos_profile("", "shaper: false, tx_ring_bytes: 10000"), 10000);
    send(udp4_frame(0, 0, 1000), 100);  // 1024 wire bytes each, 819.2 ns at 10G
    const uint64_t t0 = now_ns;
    egress->flush(now_ns);
    EXPECT_EQ(ports->take_tx(1).size(), 9u);  // 9216 <= 10000 < 10240
    EXPECT_EQ(shared->stats(1).tx_ring_bytes.load(), 9216u);
    uint64_t sent = 9;
    while (egress->backlog()) {
        now_ns += 100;
        egress->flush(now_ns);
        sent += ports->take_tx(1).size();
        const double drained = double(now_ns - t0) * 1.25;  // bytes at 10G
        ASSERT_LE(double(sent * 1024), 10000 + drained) << "at +" << now_ns - t0 << " ns";
        ASSERT_GE(double(sent * 1024), drained) << "at +" << now_ns - t0 << " ns";
        ASSERT_LE(shared->stats(1).tx_ring_bytes.load(), 10000u);
    }
    EXPECT_EQ(sent, 100u);
}

TEST_F(QosSchedule, FramesTheDeviceRefusesWaitInOrderAndNothingIsLost) {
    start(qos_profile("", "shaper: false, tx_ring_bytes: 0"), 10000);
    for (uint16_t i = 0; i < 40; i++) {
        rte_mbuf *m = packet(udp4_frame(0, 0, 100, uint16_t(5000 + i)));
        egress->enqueue(1, &m, 1, now_ns);
    }
    ports->set_tx_budget(1, 5);
    egress->flush(now_ns);
    EXPECT_EQ(ports->take_tx(1).size(), 5u);
    EXPECT_EQ(egress->backlog(), 35u);  // 27 staged from the refused burst + 8 still queued
    EXPECT_EQ(q(0).deq_packets, 32u);
    ports->set_tx_budget(1, UINT32_MAX);
    egress->flush(now_ns += 1000);
    auto out = ports->take_tx(1);
    ASSERT_EQ(out.size(), 35u);
    for (uint16_t i = 0; i < 35; i++) EXPECT_EQ(rd16(&out[i][34]), 5005 + i);  // UDP source port
    EXPECT_EQ(counters->ports[1].tx_packets.load(), 40u);
    EXPECT_EQ(port_drops(1, DropReason::tx_full), 0u);
}

}  // namespace
}  // namespace rocesw::test
