// Latency measurement (doc/observability.md, "Latency"): the log-linear histogram's bucket
// math and percentiles, and the stamping PortIo around a real worker and QosEgress in virtual
// ticks: every forwarded packet is counted once, in its class, with the exact RX->TX delta;
// dropped packets and frames the switch makes itself are not counted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/latency_hist.h"
#include "pipeline/latency_io.h"
#include "qos_fixture.h"

namespace rocesw::test {
namespace {

// ------------------------------------------------------------------ histogram math

TEST(LatencyHist, BucketsAreExactBelow64AndLogLinearAbove) {
    for (uint64_t v = 0; v < 64; v++) {
        EXPECT_EQ(latency_bucket(v), v);
        EXPECT_EQ(latency_bucket_lower(unsigned(v)), v);
        EXPECT_EQ(latency_bucket_upper(unsigned(v)), v + 1);
    }
    // Contiguous, and every value lies in [lower, upper) of its bucket, at most 1/32 wide.
    for (unsigned i = 0; i + 1 < kLatBuckets; i++)
        ASSERT_EQ(latency_bucket_upper(i), latency_bucket_lower(i + 1)) << i;
    for (uint64_t v : {64ull, 65ull, 127ull, 128ull, 1000ull, 4095ull, 4096ull, 123456789ull,
                       (1ull << 40) - 1}) {
        const unsigned b = latency_bucket(v);
        EXPECT_LE(latency_bucket_lower(b), v) << v;
        EXPECT_GT(latency_bucket_upper(b), v) << v;
        EXPECT_LE(double(latency_bucket_upper(b) - latency_bucket_lower(b)),
                  double(latency_bucket_lower(b)) / kLatSub)
            << v;
    }
    EXPECT_EQ(latency_bucket(1000), 4u * 32 + 62);  // 1000 >> 4 = 62: [992, 1008)
    EXPECT_EQ(latency_bucket_lower(latency_bucket(1000)), 992u);
    EXPECT_EQ(latency_bucket_upper(latency_bucket(1000)), 1008u);
    EXPECT_EQ(latency_bucket(1ull << 41), kLatBuckets - 1);  // beyond the range: last bucket
    EXPECT_EQ(latency_bucket(~0ull), kLatBuckets - 1);
}

TEST(LatencyHist, KnownDeltasGiveExactCountsAndPercentiles) {
    LatencyHist h{};
    for (uint64_t v = 1; v <= 100; v++) h.record(2, v);  // class 2: 1..100
    for (int i = 0; i < 10; i++) h.record(5, 1000);      // class 5: ten times 1000
    h.record(5, 5000);
    LatencySnapshot s = latency_snapshot(&h, 1);
    EXPECT_EQ(s.tc[2].count, 100u);
    EXPECT_EQ(s.tc[2].sum, 5050u);
    EXPECT_EQ(s.tc[2].max, 100u);
    EXPECT_EQ(s.tc[2].buckets[10], 1u);
    EXPECT_EQ(s.tc[2].buckets[latency_bucket(98)], 2u);  // 98 and 99 share [98, 100)
    EXPECT_EQ(s.tc[5].buckets[latency_bucket(1000)], 10u);
    EXPECT_EQ(s.tc[5].buckets[latency_bucket(5000)], 1u);
    EXPECT_EQ(s.tc[5].count, 11u);
    for (unsigned c : {0u, 1u, 3u, 4u, 6u, 7u}) EXPECT_EQ(s.tc[c].count, 0u) << c;

    EXPECT_EQ(s.tc[2].quantile(0.5), 50u);  // exact below 64
    EXPECT_EQ(s.tc[2].quantile(0.01), 1u);
    EXPECT_EQ(s.tc[2].quantile(0.99), 98u);   // the 99th value, 99, is in [98, 100)
    EXPECT_EQ(s.tc[2].quantile(0.999), 100u);  // [100, 102), capped by the max
    EXPECT_EQ(s.tc[5].quantile(0.5), 999u);    // midpoint of [992, 1008)
    EXPECT_NEAR(double(s.tc[5].quantile(0.999)), 5000, 5000.0 / 64);
    EXPECT_EQ(s.tc[5].window_max(), 5000u);
    EXPECT_EQ(LatencyClassSnapshot{}.quantile(0.5), 0u);
}

TEST(LatencyHist, PercentilesWithinBucketPrecisionOfTheExactOnes) {
    LatencyHist h{};
    std::vector<uint64_t> v;
    uint64_t x = 12345;
    for (int i = 0; i < 20000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const uint64_t val = 100 + (x >> 33) % 2'000'000;  // 100 ticks .. 2 M ticks
        v.push_back(val);
        h.record(1, val);
    }
    std::sort(v.begin(), v.end());
    const LatencyClassSnapshot s = latency_snapshot(&h, 1).tc[1];
    for (double q : {0.5, 0.9, 0.99, 0.999}) {
        const uint64_t exact = v[size_t(std::ceil(q * double(v.size()))) - 1];
        EXPECT_NEAR(double(s.quantile(q)), double(exact), double(exact) / kLatSub) << q;
    }
    EXPECT_EQ(s.max, v.back());
    EXPECT_NEAR(double(s.window_max()), double(v.back()), double(v.back()) / kLatSub);
}

TEST(LatencyHist, BaselineStartsAFreshWindowAndWorkersAreSummed) {
    std::vector<LatencyHist> w(2);
    for (int i = 0; i < 7; i++) w[0].record(3, 40);
    w[1].record(3, 20);
    const LatencySnapshot base = latency_snapshot(w.data(), 2);
    EXPECT_EQ(base.tc[3].count, 8u);
    EXPECT_EQ(base.tc[3].quantile(0.5), 40u);
    w[1].record(3, 10);
    w[1].record(3, 10);
    w[0].record(3, 30);
    const LatencyClassSnapshot d = latency_snapshot(w.data(), 2).tc[3].since(base.tc[3]);
    EXPECT_EQ(d.count, 3u);
    EXPECT_EQ(d.sum, 50u);
    EXPECT_EQ(d.quantile(0.5), 10u);
    EXPECT_EQ(d.window_max(), 30u);
}

// ------------------------------------------------------------------ through the pipeline

struct VirtualTicks {
    uint64_t t = 0;
    static uint64_t read(void *c) { return static_cast<VirtualTicks *>(c)->t; }
};

// SwitchFixture's two ports and routes, with DSCP d -> TC d % 8 classification, a QosEgress
// and the stamping PortIo between both and the test ports.
class LatencyPipeline : public SwitchFixture {
  protected:
    void SetUp() override {
        std::vector<QosPortInfo> info = {{"p0", 10000}, {"p1", 10000}};
        plan = build_qos_plan(load_qos_string(qos_profile(""), "t.yaml"), info);
        qos_plan = &plan;
        SwitchFixture::SetUp();
    }
    void adjust(DataplaneOptions &o) override {
        io = std::make_unique<LatencyPortIo>(*ports, hist, &VirtualTicks::read, &ticks);
        o.worker_io = {io.get()};
        o.egress = nullptr;  // QosEgress
    }
    uint32_t poll(uint64_t at_ticks) {
        ticks.t = at_ticks;
        now_ns += 1000;
        return worker->poll_once(now_ns);
    }
    LatencySnapshot snap() const { return latency_snapshot(&hist, 1); }
    static Bytes to_h2(uint8_t dscp, uint32_t dst = v4(10, 9, 0, 5)) {
        return cat(eth(kP0, kH1, kEtherTypeIpv4),
                   ipv4(v4(10, 0, 1, 2), dst, kProtoUdp, udp_payload(1000, 2000, 64), 64,
                        uint8_t(dscp << 2)));
    }

    QosPlan plan;
    VirtualTicks ticks;
    LatencyHist hist{};
    std::unique_ptr<LatencyPortIo> io;
};

TEST_F(LatencyPipeline, EveryForwardedPacketCountedOnceInItsClassDropsNot) {
    uint64_t want = 0;
    for (uint8_t c = 0; c < 8; c++)
        for (int i = 0; i <= c; i++) {  // class c: c + 1 packets
            ports->inject(0, to_h2(c));
            want++;
        }
    for (int i = 0; i < 5; i++) ports->inject(0, to_h2(3, v4(10, 77, 0, 1)));  // no route
    // Within one poll RX and TX read the same virtual tick: every delta is 0.
    poll(1000);
    for (int i = 0; i < 3; i++) poll(1000);  // nothing more arrives: nothing more counted
    EXPECT_EQ(ports->take_tx(1).size(), want);
    EXPECT_EQ(drops(0, DropReason::no_route), 5u);
    const LatencySnapshot s = snap();
    uint64_t total = 0;
    for (unsigned c = 0; c < 8; c++) {
        EXPECT_EQ(s.tc[c].count, c + 1) << c;
        EXPECT_EQ(s.tc[c].buckets[0], c + 1) << c;
        total += s.tc[c].count;
    }
    EXPECT_EQ(total, want);
}

TEST_F(LatencyPipeline, HeldPacketsCountTheirWholeWaitOnceWhenSent) {
    ports->set_tx_budget(1, 0);  // the device refuses everything
    for (int i = 0; i < 4; i++) ports->inject(0, to_h2(26));  // TC 2
    poll(1000);
    poll(2000);
    EXPECT_TRUE(ports->take_tx(1).empty());
    EXPECT_EQ(snap().tc[2].count, 0u);  // refused packets are not counted
    ports->set_tx_budget(1, 1);         // one leaves at tick 4000, three at 6000
    poll(4000);
    ports->set_tx_budget(1, UINT32_MAX);
    poll(6000);
    poll(7000);
    EXPECT_EQ(ports->take_tx(1).size(), 4u);
    const LatencyClassSnapshot s = snap().tc[2];
    EXPECT_EQ(s.count, 4u);
    EXPECT_EQ(s.buckets[latency_bucket(3000)], 1u);
    EXPECT_EQ(s.buckets[latency_bucket(5000)], 3u);
    EXPECT_EQ(s.sum, 3000u + 3 * 5000u);
    EXPECT_EQ(s.max, 5000u);
    EXPECT_NEAR(double(s.quantile(0.5)), 5000, 5000.0 / 64);
}

TEST_F(LatencyPipeline, FramesTheSwitchMakesAreNotCounted) {
    // A frame allocated on the TX side (like a PFC frame or one from a host interface) carries
    // no RX stamp.
    rte_mbuf *m = rte_pktmbuf_alloc(ports->pool());
    ASSERT_NE(m, nullptr);
    const Bytes f = to_h2(0);
    std::memcpy(rte_pktmbuf_append(m, uint16_t(f.size())), f.data(), f.size());
    EXPECT_EQ(io->stamp_of(m), ~0ull);
    ticks.t = 500;
    EXPECT_EQ(io->tx_burst(1, 0, &m, 1), 1);
    EXPECT_EQ(ports->take_tx(1).size(), 1u);
    // And a stamped packet is stamped with the RX burst's tick.
    ports->inject(0, to_h2(0));
    rte_mbuf *r[4];
    ticks.t = 777;
    ASSERT_EQ(io->rx_burst(0, 0, r, 4), 1);
    EXPECT_EQ(io->stamp_of(r[0]), 777u);
    rte_pktmbuf_free(r[0]);
    for (unsigned c = 0; c < 8; c++) EXPECT_EQ(snap().tc[c].count, 0u);
}

}  // namespace
}  // namespace rocesw::test
