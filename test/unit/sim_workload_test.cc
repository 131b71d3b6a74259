#include "sim/workload.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace rocesw::sim;

namespace {
const std::string kWorkloads = ROCESW_TEST_DATA "/../../config/workloads";
}

TEST(SimRng, XoshiroFromSplitMixIsPinned) {
    // Reference values computed independently (Python) from the published algorithms.
    Rng r(1);
    EXPECT_EQ(r.next(), 0xb3f2af6d0fc710c5ull);
    EXPECT_EQ(r.next(), 0x853b559647364ceaull);
    EXPECT_EQ(r.next(), 0x92f89756082a4514ull);
}

TEST(SimRng, DeterministicLogAgreesWithLibm) {
    for (double x : {1e-300, 1e-9, 0.1, 0.5, 0.7071, 0.9999999, 1.0, 2.0, 10.0, 1e12}) {
        EXPECT_NEAR(det_log(x), std::log(x), 4e-16 * std::max(1.0, std::fabs(std::log(x)))) << x;
    }
    EXPECT_EQ(det_log(1.0), 0.0);
    EXPECT_THROW(det_log(0.0), std::domain_error);
}

TEST(SimRng, BelowStaysInRange) {
    Rng r(7);
    for (int i = 0; i < 1000; ++i) EXPECT_LT(r.below(3), 3u);
    EXPECT_EQ(r.below(0), 0u);
}

TEST(SimSizeCdf, WebSearchAsHpccSamplesIt) {
    SizeCdf c = SizeCdf::load(kWorkloads + "/websearch.txt");
    EXPECT_DOUBLE_EQ(c.mean_bytes_hpcc(), 1711250.0);  // HPCC custom_rand getAvg
    EXPECT_EQ(c.sample_hpcc(0.5), 73076u);
    EXPECT_EQ(c.sample_hpcc(0.995), 26666666u);
    EXPECT_EQ(c.sample_hpcc(0.0), 1u);  // 0 bytes -> 1, as traffic_gen
    SizeCdf h = SizeCdf::load(kWorkloads + "/hadoop.txt");
    EXPECT_DOUBLE_EQ(h.mean_bytes_hpcc(), 120420.75);
    EXPECT_EQ(h.sample_hpcc(0.5), 700u);
}

TEST(SimSizeCdf, ErrorsNameLineAndField) {
    auto err = [](std::string_view s) {
        try {
            SizeCdf::parse(s, "c.txt");
        } catch (const std::runtime_error &e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(err("0 0\n10 50\n5 100\n"), "c.txt:3: field 1 (size): sizes must increase");
    EXPECT_EQ(err("0 0\n10 x\n"),
              "c.txt:2: field 2 (cumulative percent): 'x' is not a percent in [0, 100]");
    EXPECT_EQ(err("0 5\n10 100\n"),
              "c.txt:1: field 2 (cumulative percent): the first point must be 0");
    EXPECT_EQ(err("# comment\n0 0\n10 90\n"),
              "c.txt:3: field 2 (cumulative percent): the last point must be 100");
}

namespace {
PoissonSpec small_poisson(uint64_t seed) {
    PoissonSpec s;
    for (uint32_t i = 0; i < 16; ++i) s.hosts.push_back(i);
    s.cdf = SizeCdf::parse("1000 0\n1001 100\n", "fixed");
    s.load = 0.5;
    s.host_rate_bps = 10'000'000'000;
    s.start_ns = 2'000'000'000;
    s.duration_ns = 10'000'000;
    s.seed = seed;
    return s;
}
}  // namespace

TEST(SimPoisson, SameSeedSameFlowsOtherSeedOtherFlows) {
    auto a = poisson_cdf_flows(small_poisson(1));
    auto b = poisson_cdf_flows(small_poisson(1));
    auto c = poisson_cdf_flows(small_poisson(2));
    EXPECT_EQ(format_flows(a), format_flows(b));
    EXPECT_NE(format_flows(a), format_flows(c));
}

TEST(SimPoisson, FlowsMeetTheTargetLoadWithinTheWindow) {
    auto s = small_poisson(3);
    auto f = poisson_cdf_flows(s);
    uint64_t bytes = 0, prev = 0;
    for (auto &x : f) {
        EXPECT_NE(x.src, x.dst);
        EXPECT_GE(x.start_ns, s.start_ns);
        EXPECT_LT(x.start_ns, s.start_ns + s.duration_ns);
        EXPECT_GE(x.start_ns, prev);
        prev = x.start_ns;
        bytes += x.size_bytes;
    }
    // Offered load = bytes * 8 / (hosts * rate * duration).
    double load = double(bytes) * 8 / (16.0 * 1e10 * 0.01);
    EXPECT_NEAR(load, 0.5, 0.01);
}

TEST(SimPoisson, FirstFlowsArePinnedAcrossMachines) {
    auto f = poisson_cdf_flows(small_poisson(1));
    ASSERT_GE(f.size(), 3u);
    std::string head;
    for (int i = 0; i < 3; ++i) head += format_flows({f[i]}).substr(2);
    EXPECT_EQ(head,
              "12 9 3 100 1000 2.000000006\n1 15 3 100 1000 2.000000034\n"
              "7 0 3 100 1000 2.000000217\n");
}

TEST(SimIncast, AllSendersAtOnceToOneReceiver) {
    auto f = incast_flows({{1, 2, 3}, 0, 65536, 1000, 3, 200});
    ASSERT_EQ(f.size(), 3u);
    for (auto &x : f) {
        EXPECT_EQ(x.dst, 0u);
        EXPECT_EQ(x.start_ns, 1000u);
        EXPECT_EQ(x.dport, 200u);
    }
    EXPECT_THROW(incast_flows({{0, 1}, 0}), std::invalid_argument);
}
