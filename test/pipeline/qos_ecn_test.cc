// WRED/ECN in virtual time (TESTPLAN E1-E4):
//  E1 the marked fraction at every fixed queue depth follows the WRED curve within 4 binomial
//     standard deviations of its sample count, at dequeue and at enqueue; a seed repeats a run;
//  E2 codepoints against frames written by scapy (test/data/gen_qos_pcaps.py): ECT(0)/ECT(1)
//     become CE, CE stays, Not-ECT is never marked, the IPv4 checksum verifies, DSCP is kept and
//     a RoCEv2 packet's ICRC (recomputed by scapy on the marked packet) still matches;
//  E3 Not-ECT traffic in a lossless queue is never WRED-dropped (while a lossy queue with the
//     same profile drops it);
//  E4 dequeue marking marks the head of a drained burst and not its tail (enqueue marking the
//     reverse).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <numeric>

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
    start(qos_profile(wred_profile("dequeue", 20000, 80000, 50), "shaper: false, tx_ring_bytes: 0"),
          10000, false, 256);
    check_curve(*this, MarkPoint::dequeue);
}

TEST_F(QosEcn, E1EnqueueMarkingFollowsTheWredCurve) {
    start(qos_profile(wred_profile("enqueue", 20000, 80000, 50), "shaper: false, tx_ring_bytes: 0"),
          10000, false, 256);
    check_curve(*this, MarkPoint::enqueue);
}

TEST_F(QosEcn, E1TheSameSeedMakesTheSameDecisions) {
    auto run = [&](uint64_t seed) {
        start(
            qos_profile(wred_profile("dequeue", 0, 100000, 50), "shaper: false, tx_ring_bytes: 0") +
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
    start(qos_profile(wred_profile("dequeue", 5000, 15000, 100), "shaper: false, tx_ring_bytes: 0"),
          10000);
    auto m = fill_and_drain(*this, 30);
    ASSERT_EQ(m.size(), 30u);
    for (int k = 0; k < 15; k++) EXPECT_TRUE(m[size_t(k)]) << k;    // >= 15000 left behind
    for (int k = 25; k < 30; k++) EXPECT_FALSE(m[size_t(k)]) << k;  // < 5000 left behind
    EXPECT_TRUE(m.front());
    EXPECT_FALSE(m.back());
}

TEST_F(QosEcn, E4EnqueueMarkingMarksTheTailInstead) {
    start(qos_profile(wred_profile("enqueue", 5000, 15000, 100), "shaper: false, tx_ring_bytes: 0"),
          10000);
    auto m = fill_and_drain(*this, 30);
    ASSERT_EQ(m.size(), 30u);
    for (int k = 0; k < 5; k++) EXPECT_FALSE(m[size_t(k)]) << k;   // found < 5000 ahead
    for (int k = 15; k < 30; k++) EXPECT_TRUE(m[size_t(k)]) << k;  // found >= 15000 ahead
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
    std::string maps = "DSCP_TO_TC_MAP:\n  A: {";
    for (int d = 0; d < 64; d++) maps += (d ? ", " : "") + std::to_string(d) + ": 3";
    maps += "}\n";
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
