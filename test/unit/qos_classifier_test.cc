// Classification as pure logic over PacketMeta: every DSCP and PCP value, both trust modes,
// the fallbacks, and switch-originated traffic.
#include <gtest/gtest.h>

#include <vector>

#include "qos/classifier.h"

namespace rocesw {
namespace {

PortQos scrambled(Trust trust) {
    PortQos q;
    q.trust = trust;
    q.default_tc = 2;
    for (unsigned d = 0; d < 64; d++) q.dscp_to_tc[d] = uint8_t((d * 5 + 3) % 8);
    for (unsigned p = 0; p < 8; p++) q.dot1p_to_tc[p] = uint8_t(7 - p);
    return q;
}

PacketMeta meta(L3Type l3, uint8_t dscp, int pcp = -1) {
    PacketMeta m{};
    m.l3 = l3;
    m.dscp = dscp;
    if (pcp >= 0) {
        m.flags = kFlagVlan;
        m.pcp = uint8_t(pcp);
    }
    m.tc = 0xEE;
    return m;
}

TEST(Classifier, DscpTrustMapsEveryDscpForIpv4AndIpv6TaggedOrNot) {
    PortQos q = scrambled(Trust::dscp);
    for (L3Type l3 : {L3Type::ipv4, L3Type::ipv6})
        for (int pcp : {-1, 0, 5})
            for (uint8_t d = 0; d < 64; d++)
                EXPECT_EQ(classify_tc(meta(l3, d, pcp), q), (d * 5 + 3) % 8) << int(d);
}

TEST(Classifier, DscpTrustSendsNonIpToDefaultTc) {
    PortQos q = scrambled(Trust::dscp);
    EXPECT_EQ(classify_tc(meta(L3Type::arp, 0), q), 2);
    EXPECT_EQ(classify_tc(meta(L3Type::arp, 0, 7), q), 2);
}

TEST(Classifier, Dot1pTrustMapsEveryPcpAndUntaggedGoesToDefault) {
    PortQos q = scrambled(Trust::dot1p);
    for (L3Type l3 : {L3Type::ipv4, L3Type::ipv6, L3Type::arp}) {
        for (int p = 0; p < 8; p++) EXPECT_EQ(classify_tc(meta(l3, 46, p), q), 7 - p);
        EXPECT_EQ(classify_tc(meta(l3, 46), q), 2);
    }
}

// The worker classifies the parser's fast-path packets (untagged IPv4) with
// classify_tc_untagged_ip: it must agree with classify_tc on every untagged IP packet.
TEST(Classifier, UntaggedIpShortcutAgreesWithClassifyTc) {
    for (Trust trust : {Trust::dscp, Trust::dot1p}) {
        PortQos q = scrambled(trust);
        for (L3Type l3 : {L3Type::ipv4, L3Type::ipv6})
            for (uint8_t d = 0; d < 64; d++)
                EXPECT_EQ(classify_tc_untagged_ip(meta(l3, d), q), classify_tc(meta(l3, d), q))
                    << int(trust) << " " << int(d);
    }
}

// The worker's per-burst table for its fast path: every DSCP's entry is what
// classify_tc_untagged_ip gives, for both trust modes and every default TC; without a QoS plan
// every entry is TC 0 (the parser's).
TEST(Classifier, UntaggedIpTableIsClassifyTcUntaggedIp) {
    std::array<uint8_t, kNumDscp> t;
    for (Trust trust : {Trust::dscp, Trust::dot1p}) {
        for (uint8_t def = 0; def < kNumTc; def++) {
            PortQos q = scrambled(trust);
            q.default_tc = def;
            t.fill(0xEE);
            untagged_ip_tc_table(&q, t);
            for (uint8_t d = 0; d < 64; d++)
                EXPECT_EQ(t[d], classify_tc_untagged_ip(meta(L3Type::ipv4, d), q))
                    << int(trust) << " " << int(def) << " " << int(d);
        }
    }
    t.fill(0xEE);
    untagged_ip_tc_table(nullptr, t);
    for (uint8_t d = 0; d < 64; d++) EXPECT_EQ(t[d], 0) << int(d);
}

TEST(Classifier, BurstSetsTcOnEveryMeta) {
    PortQos q = scrambled(Trust::dscp);
    std::vector<PacketMeta> ms;
    for (uint8_t d = 0; d < 64; d++) ms.push_back(meta(L3Type::ipv4, d));
    std::vector<PacketMeta *> ptrs;
    for (auto &m : ms) ptrs.push_back(&m);
    classify_burst(ptrs.data(), uint16_t(ptrs.size()), q);
    for (uint8_t d = 0; d < 64; d++) EXPECT_EQ(ms[d].tc, (d * 5 + 3) % 8);
}

TEST(Classifier, SwitchOriginatedTrafficTakesTheNetworkControlClass) {
    QosPlan plan;
    PacketMeta m = meta(L3Type::ipv4, 0);
    classify_switch_originated(m, plan);
    EXPECT_EQ(m.tc, 7);
    plan.switch_tc = 6;
    classify_switch_originated(m, plan);
    EXPECT_EQ(m.tc, 6);
}

}  // namespace
}  // namespace rocesw
