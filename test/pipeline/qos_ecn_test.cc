// WRED/ECN in virtual time (TESTPLAN E1-E4):
//  E1 the marked fraction at every fixed queue depth follows the WRED curve within 4 binomial
//     standard deviations of its sample count, at dequeue and at enqueue; a seed repeats a run;
//  E2 codepoints against frames written by scapy (test/data/gen_qos_pcaps.py): ECT(0)/ECT(1)
//     become CE, CE stays, Not-ECT is never marked, the IPv4 checksum verifies, DSCP is kept and
//     a RoCEv2 packet's ICRC (recomputed by scapy on the marked packet) still matches;
//  E3 Not-ECT traffic in a lossless queue is never WRED-dropped (while a lossy queue with the
//     same profile drops it);
//  E4 dequeue marking marks the head of a drained burst and not its tail (enqueue marking the
//     reverse);
//  E6 the marker's depth includes the TX ring (ecn_depth queue_and_tx_ring, the default): with a
//     known backlog split between queue and ring, marks start exactly at Kmin of port backlog;
//     with ecn_depth queue they start a ring's worth later.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include "common/strings.h"
#include "../unit/pcap_reader.h"
#include "qos/ecn.h"
#include "qos_fixture.h"

#ifndef ROCESW_TEST_DATA
#error "ROCESW_TEST_DATA must name the test/data directory"
#endif

namespace rocesw::test {
namespace {

using QosEcn = QosFixture;

uint8_t ecn_of(const Frame &f) {
    return f[15] & 3;
}  // untagged IPv4

std::string wred_profile(const std::string &point, uint32_t kmin, uint32_t kmax, unsigned pmax,
                         const std::string &extra = "") {
    return "WRED_PROFILE:\n  w: {ecn: ecn_all, green_min_threshold: " + std::to_string(kmin) +
           ", green_max_threshold: " + std::to_string(kmax) +
           ", green_drop_probability: " + std::to_string(pmax) + ", ecn_mark_point: " + point +
           extra + "}\nQUEUE:\n  default|0-7: {wred_profile: w}\n";
}

// Fills paused queue 1 with `n` ECT(0) frames of 1000 bytes, drains it in one flush, and
// returns, in departure order, whether each left marked.
std::vector<bool> fill_and_drain(QosFixture &f, int n) {
    f.shared->set_paused(1, 0xFF);
    f.send(udp4_frame(1, kEcnEct0, 1000), n);
    f.shared->set_paused(1, 0);
    f.egress->flush(f.now_ns += 1'000'000);
    std::vector<bool> marked;
    for (auto &fr : f.ports->take_tx(1)) marked.push_back(ecn_of(fr) == kEcnCe);
    EXPECT_EQ(marked.size(), size_t(n));
    return marked;
}

// E1: 2000 fill-and-drain cycles of 100 frames sample every depth 0..99000 2000 times.
void check_curve(QosFixture &f, MarkPoint point) {
    const int n = 100, cycles = 2000;
    const WredCurve curve{true, 20000, 80000, 50};
    std::vector<int> marks(n, 0);
    for (int c = 0; c < cycles; c++) {
        auto m = fill_and_drain(f, n);
        for (int k = 0; k < n && k < int(m.size()); k++) marks[size_t(k)] += m[size_t(k)];
    }
    double sum_expected = 0, sum_var = 0;
    int sum_marked = 0;
    for (int k = 0; k < n; k++) {
        // Dequeue: frame k leaves (n - 1 - k) frames behind it. Enqueue: it found k ahead.
        uint64_t depth = uint64_t(point == MarkPoint::dequeue ? n - 1 - k : k) * 1000;
        double p = curve.probability(depth);
        double mean = cycles * p, sd = std::sqrt(cycles * p * (1 - p));
        if (p == 0.0 || p == 1.0)
            EXPECT_EQ(marks[size_t(k)], int(mean)) << "depth " << depth;
        else
            EXPECT_LE(std::abs(marks[size_t(k)] - mean), 4 * sd)
                << "depth " << depth << ": " << marks[size_t(k)] << " marked of " << cycles
                << ", WRED curve expects " << mean;
        if (p > 0 && p < 1) {
            sum_expected += mean;
            sum_var += cycles * p * (1 - p);
            sum_marked += marks[size_t(k)];
        }
    }
    // All depths of the linear part together: a tighter test of the slope.
    EXPECT_LE(std::abs(sum_marked - sum_expected), 4 * std::sqrt(sum_var))
        << sum_marked << " marked in the linear part, curve expects " << sum_expected;
    QueueSnapshot s = f.q(1);
    EXPECT_EQ(s.ecn_marked, uint64_t(std::accumulate(marks.begin(), marks.end(), 0)));
    EXPECT_EQ(s.drops_total(), 0u);
}

TEST_F(QosEcn, E1DequeueMarkingFollowsTheWredCurve) {
    start(qos_profile(wred_profile("dequeue", 20000, 80000, 50),
                      "shaper: false, tx_ring_bytes: 0, ecn_depth: queue"),
          10000, false, 256);
    check_curve(*this, MarkPoint::dequeue);
}

TEST_F(QosEcn, E1EnqueueMarkingFollowsTheWredCurve) {
    start(qos_profile(wred_profile("enqueue", 20000, 80000, 50),
                      "shaper: false, tx_ring_bytes: 0, ecn_depth: queue"),
          10000, false, 256);
    check_curve(*this, MarkPoint::enqueue);
}

TEST_F(QosEcn, E1TheSameSeedMakesTheSameDecisions) {
    auto run = [&](uint64_t seed) {
        start(qos_profile(wred_profile("dequeue", 0, 100000, 50),
                          "shaper: false, tx_ring_bytes: 0, ecn_depth: queue") +
                  "ROCESW: {seed: " + std::to_string(seed) + "}\n",
              10000, false, 256);
        std::vector<bool> all;
        for (int c = 0; c < 20; c++) {
            auto m = fill_and_drain(*this, 100);
            all.insert(all.end(), m.begin(), m.end());
        }
        egress.reset();
        shared.reset();
        return all;
    };
    auto a = run(7), b = run(7), c = run(8);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
}

// E4: 30 frames of 1000 bytes, Kmin 5000, Kmax 15000, Pmax 100%.
TEST_F(QosEcn, E4DequeueMarkingMarksTheHeadOfADrainedBurstNotItsTail) {
    start(qos_profile(wred_profile("dequeue", 5000, 15000, 100),
                      "shaper: false, tx_ring_bytes: 0, ecn_depth: queue"),
          10000);
    auto m = fill_and_drain(*this, 30);
    ASSERT_EQ(m.size(), 30u);
    for (int k = 0; k < 15; k++) EXPECT_TRUE(m[size_t(k)]) << k;    // >= 15000 left behind
    for (int k = 25; k < 30; k++) EXPECT_FALSE(m[size_t(k)]) << k;  // < 5000 left behind
    EXPECT_TRUE(m.front());
    EXPECT_FALSE(m.back());
}

TEST_F(QosEcn, E4EnqueueMarkingMarksTheTailInstead) {
    start(qos_profile(wred_profile("enqueue", 5000, 15000, 100),
                      "shaper: false, tx_ring_bytes: 0, ecn_depth: queue"),
          10000);
    auto m = fill_and_drain(*this, 30);
    ASSERT_EQ(m.size(), 30u);
    for (int k = 0; k < 5; k++) EXPECT_FALSE(m[size_t(k)]) << k;   // found < 5000 ahead
    for (int k = 15; k < 30; k++) EXPECT_TRUE(m[size_t(k)]) << k;  // found >= 15000 ahead
}

// E6: port p1 at 10 Gb/s, no shaper, a TX ring of 10240 wire bytes; frames of 976 bytes (1000
// on the wire: 800 ns each); a step marking curve, Kmin = Kmax = K, Pmax 100 %: a frame is
// marked exactly when the depth the marker sees is >= K.
constexpr uint32_t kE6Frame = 976, kE6Wire = 1000, kE6Ring = 10240;
constexpr uint64_t kE6FrameNs = 800;

std::string e6_profile(const std::string &point, uint32_t k, const std::string &depth) {
    return qos_profile(wred_profile(point, k, k, 100),
                       "shaper: false, tx_ring_bytes: " + std::to_string(kE6Ring) +
                           (depth.empty() ? "" : ", ecn_depth: " + depth));
}

// 40 frames wait in paused queue 1; then a flush at t0 fills the ring (10 frames: 10000 wire
// bytes, the 11th does not fit) and a flush every 800 ns takes exactly one more (the ring has
// drained one frame, 9000 bytes are left ahead of it). Frame i leaves (39 - i) frames in the
// queue behind it, and finds i x 1000 (i < 10), then 9000 bytes in the ring ahead of it.
// Returns, in departure order, whether each left marked.
std::vector<bool> e6_drain(QosFixture &f) {
    const int n = 40;
    f.shared->set_paused(1, 0xFF);
    f.send(udp4_frame(1, kEcnEct0, kE6Frame), n);
    f.shared->set_paused(1, 0);
    std::vector<bool> marked;
    for (int j = 0; marked.size() < size_t(n) && j < 100; j++) {
        const size_t before = marked.size();
        f.egress->flush(f.now_ns);
        for (auto &fr : f.ports->take_tx(1)) marked.push_back(ecn_of(fr) == kEcnCe);
        EXPECT_EQ(marked.size() - before, j == 0 ? 10u : 1u) << "flush " << j;
        f.now_ns += kE6FrameNs;
    }
    EXPECT_EQ(marked.size(), size_t(n));
    return marked;
}

// Port backlog at frame i's dequeue, excluding the frame: the queue behind it (frame bytes) and
// the ring ahead of it (wire bytes), as e6_drain schedules them.
uint64_t e6_backlog(int i, bool ring) {
    const uint64_t queue = uint64_t(39 - i) * kE6Frame;
    const uint64_t in_ring = i < 10 ? uint64_t(i) * kE6Wire : 9000;
    return queue + (ring ? in_ring : 0);
}

TEST_F(QosEcn, E6DequeueMarksStartExactlyAtKminOfQueuePlusTxRing) {
    // K: the backlog frame 29 leaves behind: 10 frames in the queue, 9000 bytes in the ring.
    const uint32_t k = 10 * kE6Frame + 9000;
    start(e6_profile("dequeue", k, ""));  // the default: queue_and_tx_ring
    ASSERT_EQ(plan.ports[1].ecn_depth, EcnDepth::queue_and_tx_ring);
    auto m = e6_drain(*this);
    for (int i = 0; i < 40; i++) EXPECT_EQ(m[size_t(i)], e6_backlog(i, true) >= k) << i;
    EXPECT_TRUE(m[29]);   // leaves exactly Kmin behind
    EXPECT_FALSE(m[30]);  // Kmin - one frame
    EXPECT_EQ(std::count(m.begin(), m.end(), true), 30);
    EXPECT_EQ(q(1).ecn_marked, 30u);
}

TEST_F(QosEcn, E6DequeueWithEcnDepthQueueMarksARingLater) {
    const uint32_t k = 10 * kE6Frame + 9000;
    start(e6_profile("dequeue", k, "queue"));
    auto m = e6_drain(*this);
    for (int i = 0; i < 40; i++) EXPECT_EQ(m[size_t(i)], e6_backlog(i, false) >= k) << i;
    // Only a queue of 20 frames (19520 bytes, a port backlog of 28520) reaches K = 18760: the
    // 9000 bytes of the ring shift the band.
    EXPECT_TRUE(m[19]);
    EXPECT_FALSE(m[20]);
    EXPECT_EQ(std::count(m.begin(), m.end(), true), 20);
}

// Enqueue: 10 frames fill the ring at t0 (nothing queued, nothing marked); 800 ns later 20
// frames arrive at once: frame j finds 9000 bytes in the ring and j frames in the queue ahead.
std::vector<bool> e6_arrivals(QosFixture &f) {
    f.send(udp4_frame(1, kEcnEct0, kE6Frame), 10);
    f.egress->flush(f.now_ns);
    EXPECT_EQ(f.ports->take_tx(1).size(), 10u);
    f.now_ns += kE6FrameNs;
    f.send(udp4_frame(1, kEcnEct0, kE6Frame), 20);
    f.drain(kE6FrameNs);
    std::vector<bool> marked;
    for (auto &fr : f.ports->take_tx(1)) marked.push_back(ecn_of(fr) == kEcnCe);
    EXPECT_EQ(marked.size(), 20u);
    return marked;
}

TEST_F(QosEcn, E6EnqueueMarksStartExactlyAtKminOfQueuePlusTxRing) {
    const uint32_t k = 9000 + 5 * kE6Frame;  // found by the 6th arrival (j = 5)
    start(e6_profile("enqueue", k, ""));
    auto m = e6_arrivals(*this);
    for (int j = 0; j < 20; j++) EXPECT_EQ(m[size_t(j)], j >= 5) << j;
    EXPECT_EQ(q(1).ecn_marked, 15u);
}

TEST_F(QosEcn, E6EnqueueWithEcnDepthQueueMarksARingLater) {
    const uint32_t k = 9000 + 5 * kE6Frame;
    start(e6_profile("enqueue", k, "queue"));
    auto m = e6_arrivals(*this);
    // j x 976 >= 13880 from j = 15 on.
    for (int j = 0; j < 20; j++) EXPECT_EQ(m[size_t(j)], j >= 15) << j;
}

// E3: a WRED profile that drops every Not-ECT packet (Kmin = Kmax = 0) on a lossless queue (3)
// and on a lossy one (1).
TEST_F(QosEcn, E3NotEctInALosslessQueueIsNeverWredDropped) {
    // PFC's PG limit far away: nothing here is about PFC.
    const std::string big_pg =
        "BUFFER_POOL:\n  ip: {type: ingress, mode: static, size: 100000000}\n"
        "BUFFER_PROFILE:\n  pg: {pool: ip, static_th: 50000000, xoff: 1000000}\n"
        "BUFFER_PG:\n  default|3: {profile: pg}\n";
    start(qos_profile(wred_profile("dequeue", 0, 0, 100, ", wred_green_enable: true") + big_pg,
                      "pfc_enable: \"3\""),
          10000);
    ASSERT_TRUE(plan.ports[1].queues[3].lossless);
    ASSERT_TRUE(plan.ports[1].queues[3].drop.enabled);
    shared->set_paused(1, 0xFF);
    for (int i = 0; i < 1000; i++) {
        send(udp4_frame(3, kEcnNotEct, 1000));
        send(udp4_frame(3, kEcnEct0, 1000));
        send(udp4_frame(1, kEcnNotEct, 1000));
        send(udp4_frame(1, kEcnEct1, 1000));
    }
    EXPECT_EQ(q(3).drops_total(), 0u);
    EXPECT_EQ(q(3).enq_packets, 2000u);
    EXPECT_EQ(q(1).drops[size_t(QueueDrop::wred_drop)], 1000u);  // every Not-ECT one
    EXPECT_EQ(q(1).enq_packets, 1000u);                          // every ECT one
    shared->set_paused(1, 0);
    drain();
    int lossless_notect = 0, lossless_ce = 0, lossy_ce = 0;
    for (auto &f : ports->take_tx(1)) {
        uint8_t dscp = f[15] >> 2;
        if (dscp == 3 && ecn_of(f) == kEcnNotEct) lossless_notect++;
        if (dscp == 3 && ecn_of(f) == kEcnCe) lossless_ce++;
        if (dscp == 1) lossy_ce += ecn_of(f) == kEcnCe;
    }
    EXPECT_EQ(lossless_notect, 1000);  // delivered, and not marked
    EXPECT_EQ(lossless_ce, 1000);      // ECT marked instead of dropped
    EXPECT_EQ(lossy_ce, 1000);
    EXPECT_EQ(q(3).ecn_marked, 1000u);
}

// E2 against the scapy-written frames, at both marking points.
class QosEcnCodepoints : public QosFixture, public ::testing::WithParamInterface<const char *> {};

TEST_P(QosEcnCodepoints, E2MatchesScapyFramesChecksumDscpAndIcrc) {
    const std::string dir = ROCESW_TEST_DATA;
    auto in = read_pcap(dir + "/qos_ecn_in.pcap");
    auto expected = read_pcap(dir + "/qos_ecn_expected.pcap");
    std::ifstream mf(dir + "/qos_ecn_cases.json");
    nlohmann::json cases = nlohmann::json::parse(mf);
    ASSERT_EQ(in.size(), cases.size());
    ASSERT_EQ(expected.size(), cases.size());
    // Every DSCP -> TC 3, whose queue marks every ECT packet (Kmin = Kmax = 0).
    std::string maps = "DSCP_TO_TC_MAP:\n  A: {" + join_n(64, ", ", [](int d) {
        return std::to_string(d) + ": 3";
    }) + "}\n";
    start(maps + wred_profile(GetParam(), 0, 0, 0) +
          "PORT_QOS_MAP:\n  default: {dscp_to_tc_map: A}\n");
    uint64_t want_marked = 0;
    for (size_t i = 0; i < in.size(); i++) {
        rte_mbuf *m = packet(in[i]);
        egress->enqueue(1, &m, 1, now_ns);
        want_marked += cases[i]["marked"].get<bool>();
    }
    drain();
    auto out = ports->take_tx(1);
    ASSERT_EQ(out.size(), in.size());
    for (size_t i = 0; i < out.size(); i++) {
        const auto &c = cases[i];
        SCOPED_TRACE(c["name"].get<std::string>());
        EXPECT_EQ(out[i], expected[i]) << "differs from the frame scapy built";
        PacketMeta meta{};
        ParseOptions opt;
        ASSERT_FALSE(parse_frame(out[i].data(), uint32_t(out[i].size()), opt, &meta).has_value())
            << "marked frame no longer parses (IPv4 checksum?)";
        EXPECT_EQ(meta.dscp, c["dscp"].get<int>());
        EXPECT_EQ(meta.ecn, c["ecn_out"].get<int>());
        if (meta.l3 == L3Type::ipv4) {
            EXPECT_TRUE(ipv4_header_checksum_ok(out[i].data() + meta.l3_offset, 20));
        }
        if (c["roce"].get<bool>()) {
            EXPECT_TRUE(meta.flags & kFlagRoce);
            // The ICRC trailer is untouched; scapy recomputed it over the marked packet.
            EXPECT_TRUE(std::equal(out[i].end() - 4, out[i].end(), in[i].end() - 4));
        }
    }
    EXPECT_EQ(q(3).ecn_marked, want_marked);
    EXPECT_EQ(want_marked, 12u);
}

INSTANTIATE_TEST_SUITE_P(MarkPoints, QosEcnCodepoints, ::testing::Values("dequeue", "enqueue"));

}  // namespace
}  // namespace rocesw::test
