// The WRED curve, the PCG32 generator and the ECN codepoint rewrite, as pure logic.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "pkt/checksum.h"
#include "qos/ecn.h"
#include "qos/plan.h"
#include "qos/rng.h"

namespace rocesw {
namespace {

TEST(WredCurve, ZeroBelowKminLinearToPmaxOneAtAndAboveKmax) {
    WredCurve c{true, 1000, 5000, 20};
    EXPECT_EQ(c.probability(0), 0.0);
    EXPECT_EQ(c.probability(999), 0.0);
    EXPECT_EQ(c.probability(1000), 0.0);
    EXPECT_DOUBLE_EQ(c.probability(3000), 0.10);
    EXPECT_DOUBLE_EQ(c.probability(4999), 0.20 * 3999 / 4000);
    EXPECT_EQ(c.probability(5000), 1.0);
    EXPECT_EQ(c.threshold32(999), 0u);
    EXPECT_EQ(c.threshold32(5000), uint64_t(1) << 32);
    EXPECT_EQ(c.threshold32(3000), uint64_t(0.10 * 4294967296.0));
    WredCurve off{false, 0, 0, 100};
    EXPECT_EQ(off.threshold32(1'000'000), 0u);
    WredCurve step{true, 0, 0, 0};  // Kmin = Kmax = 0: always
    EXPECT_EQ(step.threshold32(0), uint64_t(1) << 32);
}

TEST(Pcg32, SameSeedSameSequenceAndRoughlyUniform) {
    Pcg32 a(42, 1), b(42, 1), c(43, 1);
    bool differs = false;
    for (int i = 0; i < 100; i++) {
        uint32_t x = a.next();
        EXPECT_EQ(x, b.next());
        differs |= x != c.next();
    }
    EXPECT_TRUE(differs);
    // 16 buckets, 160000 draws: each within 5 sigma of 10000.
    std::vector<int> bucket(16);
    Pcg32 g(7);
    for (int i = 0; i < 160000; i++) bucket[g.next() >> 28]++;
    for (int n : bucket) EXPECT_NEAR(n, 10000, 5 * std::sqrt(10000 * 15.0 / 16));
}

std::vector<uint8_t> ipv4_header(uint8_t tos) {
    std::vector<uint8_t> h = {0x45, tos, 0,  60, 0x12, 0x34, 0x40, 0, 64, 17,
                              0,    0,   10, 0,  1,    2,    10,   0, 2,  3};
    wr16(&h[10], csum_finish(csum_partial(h.data(), 20)));
    return h;
}

TEST(EcnSetCe, Ipv4EveryCodepointWithEveryDscp) {
    for (unsigned dscp = 0; dscp < 64; dscp++) {
        for (unsigned ecn = 0; ecn < 4; ecn++) {
            auto h = ipv4_header(uint8_t(dscp << 2 | ecn));
            bool changed = ecn_set_ce(h.data(), L3Type::ipv4);
            bool ect = ecn == kEcnEct0 || ecn == kEcnEct1;
            EXPECT_EQ(changed, ect);
            EXPECT_EQ(h[1] >> 2, dscp);
            EXPECT_EQ(h[1] & 3, ect ? kEcnCe : ecn);
            EXPECT_TRUE(ipv4_header_checksum_ok(h.data(), 20));
            EXPECT_EQ(h, ipv4_header(h[1]));  // identical to a header built with that TOS
        }
    }
}

TEST(EcnSetCe, Ipv6EveryCodepointKeepsDscpAndFlowLabel) {
    for (unsigned dscp = 0; dscp < 64; dscp++) {
        for (unsigned ecn = 0; ecn < 4; ecn++) {
            uint8_t tc = uint8_t(dscp << 2 | ecn);
            uint8_t h[40] = {uint8_t(0x60 | tc >> 4), uint8_t((tc & 0x0F) << 4 | 0x0A), 0xBC, 0xDE};
            bool ect = ecn == kEcnEct0 || ecn == kEcnEct1;
            EXPECT_EQ(ecn_set_ce(h, L3Type::ipv6), ect);
            uint8_t tc2 = uint8_t((h[0] & 0x0F) << 4 | h[1] >> 4);
            EXPECT_EQ(tc2 >> 2, dscp);
            EXPECT_EQ(tc2 & 3, ect ? kEcnCe : ecn);
            EXPECT_EQ(h[0] >> 4, 6);
            EXPECT_EQ(h[1] & 0x0F, 0x0A);
            EXPECT_EQ(h[2], 0xBC);
            EXPECT_EQ(h[3], 0xDE);
        }
    }
}

TEST(EcnSetCe, NonIpIsNeverTouched) {
    uint8_t arp[28] = {0, 1, 8, 0, 6, 4, 0, 1};
    uint8_t copy[28];
    std::memcpy(copy, arp, sizeof arp);
    EXPECT_FALSE(ecn_set_ce(arp, L3Type::arp));
    EXPECT_EQ(std::memcmp(arp, copy, sizeof arp), 0);
}

}  // namespace
}  // namespace rocesw
