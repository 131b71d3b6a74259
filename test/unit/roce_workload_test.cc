// Workload generation: every pattern, reproducibility from the seed, and the shipped CDFs.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "roce/workload.h"

namespace rocesw::roce {
namespace {

const std::string kWorkloads = std::string(ROCESW_TEST_DATA "/../../config/workloads");

TEST(Workload, PairsAndIncastAreFixedSizeAtTheirStart) {
    WorkloadSpec w;
    w.n_hosts = 4;
    w.pattern = Pattern::incast;
    w.receiver = 3;
    w.size_bytes = 1000;
    w.count = 2;
    w.start_ns = 100;
    w.interval_ns = 50;
    auto f = generate_workload(w);
    ASSERT_EQ(f.size(), 6u);
    for (uint32_t i = 0; i < 6; i++) {
        EXPECT_EQ(f[i].id, i);
        EXPECT_EQ(f[i].dst, 3u);
        EXPECT_EQ(f[i].size_bytes, 1000u);
        EXPECT_EQ(f[i].start_ns, i < 3 ? 100u : 150u);
    }
    w.pattern = Pattern::pairs;
    w.pairs = {{0, 1}, {2, 9}};
    EXPECT_THROW(generate_workload(w), std::invalid_argument);
    w.pairs = {{1, 1}};
    EXPECT_THROW(generate_workload(w), std::invalid_argument);
}

// The 2:1 convergence experiment's shape: the second sender 10 ms after the first.
TEST(Workload, StaggerDelaysEachSenderOrPair) {
    WorkloadSpec w;
    w.n_hosts = 3;
    w.pattern = Pattern::incast;
    w.receiver = 2;
    w.senders = {0, 1};
    w.start_ns = 100;
    w.stagger_ns = 10'000'000;
    auto f = generate_workload(w);
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].src, 0u);
    EXPECT_EQ(f[0].start_ns, 100u);
    EXPECT_EQ(f[1].src, 1u);
    EXPECT_EQ(f[1].start_ns, 10'000'100u);
    w.pattern = Pattern::pairs;
    w.pairs = {{1, 2}, {0, 2}};
    f = generate_workload(w);
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].src, 1u);
    EXPECT_EQ(f[1].src, 0u);
    EXPECT_EQ(f[1].start_ns, 10'000'100u);
}

TEST(Workload, AllToAllCoversEveryOrderedPair) {
    WorkloadSpec w;
    w.n_hosts = 4;
    w.pattern = Pattern::all_to_all;
    auto f = generate_workload(w);
    std::set<std::pair<uint32_t, uint32_t>> pairs;
    for (auto &x : f) pairs.insert({x.src, x.dst});
    EXPECT_EQ(f.size(), 12u);
    EXPECT_EQ(pairs.size(), 12u);
}

TEST(Workload, PermutationIsADerangementFixedByTheSeed) {
    WorkloadSpec w;
    w.n_hosts = 16;
    w.pattern = Pattern::permutation;
    w.seed = 7;
    auto a = generate_workload(w);
    ASSERT_EQ(a.size(), 16u);
    std::set<uint32_t> dsts;
    for (auto &x : a) {
        EXPECT_NE(x.src, x.dst);
        dsts.insert(x.dst);
    }
    EXPECT_EQ(dsts.size(), 16u);
    auto b = generate_workload(w);
    for (size_t i = 0; i < a.size(); i++) EXPECT_EQ(a[i].dst, b[i].dst);
    w.seed = 8;
    auto c = generate_workload(w);
    bool differs = false;
    for (size_t i = 0; i < a.size(); i++) differs |= a[i].dst != c[i].dst;
    EXPECT_TRUE(differs);
}

TEST(SizeCdf, ParsesSamplesByInterpolationAndRejectsBadFiles) {
    auto c = SizeCdf::parse("# comment\n0 0\n100 50\n300 100\n", "t.txt");
    EXPECT_EQ(c.sample(0.25), 50u);
    EXPECT_EQ(c.sample(0.5), 100u);
    EXPECT_EQ(c.sample(0.75), 200u);
    EXPECT_DOUBLE_EQ(c.mean_bytes(), 0.5 * 50 + 0.5 * 200);
    EXPECT_THROW(SizeCdf::parse("0 0\n100 50\n50 100\n", "t.txt"), std::runtime_error);
    EXPECT_THROW(SizeCdf::parse("0 0\n100 90\n", "t.txt"), std::runtime_error);
    try {
        SizeCdf::parse("0 0\n100 x\n", "t.txt");
        FAIL();
    } catch (const std::runtime_error &e) {
        EXPECT_STREQ(e.what(),
                     "t.txt:2: field 2 (cumulative percent): 'x' is not a percent in [0, 100]");
    }
}

TEST(Workload, CdfPoissonIsReproducibleAndHitsTheTargetLoad) {
    WorkloadSpec w;
    w.n_hosts = 8;
    w.pattern = Pattern::cdf;
    w.cdf = SizeCdf::load(kWorkloads + "/websearch.txt");
    w.load = 0.6;
    w.line_rate_bps = 10'000'000'000;
    w.duration_ns = 2'000'000'000;  // 2 s: ~ 1700 flows per sender
    w.seed = 42;
    auto a = generate_workload(w);
    auto b = generate_workload(w);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); i++) {
        EXPECT_EQ(a[i].src, b[i].src);
        EXPECT_EQ(a[i].dst, b[i].dst);
        EXPECT_EQ(a[i].size_bytes, b[i].size_bytes);
        EXPECT_EQ(a[i].start_ns, b[i].start_ns);
    }
    double bytes = 0;
    for (auto &f : a) {
        EXPECT_NE(f.src, f.dst);
        EXPECT_LT(f.start_ns, 2'000'000'000u);
        bytes += double(f.size_bytes);
    }
    // Offered load per sender, within 15 % (heavy-tailed sizes: a loose statistical bound).
    const double offered = bytes * 8 / 2.0 / 8 / 1e10;
    EXPECT_NEAR(offered, 0.6, 0.09);
    w.seed = 43;
    EXPECT_NE(generate_workload(w)[0].start_ns, a[0].start_ns);
}

TEST(SizeCdf, ShippedDistributionsLoad) {
    auto ws = SizeCdf::load(kWorkloads + "/websearch.txt");
    auto hd = SizeCdf::load(kWorkloads + "/hadoop.txt");
    EXPECT_GT(ws.mean_bytes(), 1e6);
    EXPECT_LT(hd.mean_bytes(), ws.mean_bytes());
    EXPECT_GT(ws.sample(0.999999), 29'000'000u);
    EXPECT_LE(ws.sample(0.999999), 30'000'000u);
}

}  // namespace
}  // namespace rocesw::roce
