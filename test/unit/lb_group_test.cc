// The resilient bucket table and the flow hash, as pure functions (no EAL).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>

#include "lb/ecmp_group.h"
#include "lb/flow_hash.h"
#include "lb/flowlet_policy.h"

namespace rocesw {
namespace {

IpAddr gw(uint32_t i) {
    IpAddr a;
    a.v4 = 0x0a000002u + (i << 8);
    return a;
}

std::vector<LbMember> members(const std::vector<uint32_t> &ids, uint32_t n_slots = 0) {
    std::vector<LbMember> v(std::max<size_t>(ids.size(), n_slots));
    for (size_t s = 0; s < ids.size(); s++) {
        v[s].key = lb_member_key(gw(ids[s]));
        v[s].alive = true;
        v[s].port = uint8_t(ids[s]);
    }
    return v;
}

// bucket -> port (the member identity), independent of slot numbering.
std::vector<uint8_t> owners(const EcmpGroup &g) {
    std::vector<uint8_t> o(kEcmpBuckets);
    for (uint32_t b = 0; b < kEcmpBuckets; b++) o[b] = g.members[g.buckets[b]].port;
    return o;
}

// A member's key is its gateway's, whatever the port (a global address names one router, and
// the keys, so the buckets, are unchanged from before ports counted); a link-local gateway's
// also depends on the port: fe80::1 on two links is two routers. build_ecmp_group gives each
// member its flowlet fingerprint.
TEST(EcmpGroupTable, MemberKeysOfLinkLocalGatewaysDependOnThePort) {
    IpAddr ll6, global6, ll4 = gw(0), global4 = gw(1);
    ll6.is_v6 = global6.is_v6 = true;
    ll6.v6 = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    global6.v6 = {0xfd, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    ll4.v4 = 0xA9FE0001u;  // 169.254.0.1
    for (const IpAddr &a : {global4, global6}) {
        EXPECT_EQ(lb_member_key(a, 1), lb_member_key(a));
        EXPECT_EQ(lb_member_key(a, 2), lb_member_key(a));
    }
    for (const IpAddr &a : {ll4, ll6}) {
        std::set<uint64_t> keys{lb_member_key(a)};
        for (uint8_t port = 0; port < 32; port++) keys.insert(lb_member_key(a, port));
        EXPECT_EQ(keys.size(), 33u) << a.str();
        EXPECT_EQ(lb_member_key(a, 3), lb_member_key(a, 3));
    }
    // fe80::/10 is link-local, fec0:: is not.
    IpAddr fec0 = ll6;
    fec0.v6[1] = 0xc0;
    EXPECT_EQ(lb_member_key(fec0, 1), lb_member_key(fec0));
    ll6.v6[1] = 0xbf;
    EXPECT_NE(lb_member_key(ll6, 1), lb_member_key(ll6));

    auto v = members({1, 2});
    v[1].key = v[0].key;  // the same gateway on two ports: told apart by the port
    auto g = build_ecmp_group(7, 0, v);
    EXPECT_EQ(g->members[0].fp, lb_member_fp(v[0].key, 1));
    EXPECT_EQ(g->members[1].fp, lb_member_fp(v[0].key, 2));
    EXPECT_NE(g->members[0].fp, g->members[1].fp);
}

TEST(EcmpGroupTable, BucketsSpreadEvenlyOverMembers) {
    for (uint32_t n : {2u, 3u, 4u, 8u, 16u, 32u}) {
        std::vector<uint32_t> ids;
        for (uint32_t i = 1; i <= n; i++) ids.push_back(i);
        auto g = build_ecmp_group(0, 0, members(ids));
        std::vector<uint32_t> count(256, 0);
        for (auto p : owners(*g)) count[p]++;
        // Rendezvous draws are independent per bucket: binomial spread, held to 4 sigma
        // (0.25 for 32 members, 0.06 for 2).
        const double expect = double(kEcmpBuckets) / n;
        for (uint32_t i = 1; i <= n; i++)
            EXPECT_NEAR(double(count[i]) / expect, 1.0, 4 / std::sqrt(expect)) << n;
    }
}

TEST(EcmpGroupTable, MappingIgnoresInsertionOrderAndSlots) {
    auto a = build_ecmp_group(0, 0, members({1, 2, 3, 4, 5, 6}));
    auto b = build_ecmp_group(0, 0, members({6, 4, 2, 5, 3, 1}));
    EXPECT_EQ(owners(*a), owners(*b));
}

TEST(EcmpGroupTable, RemovingAMemberMovesOnlyItsBuckets) {
    auto full = build_ecmp_group(0, 0, members({1, 2, 3, 4, 5, 6, 7, 8}));
    auto m = members({1, 2, 3, 4, 5, 6, 7, 8});
    m[4].alive = false;  // port 5 withdrawn, its slot kept
    auto less = build_ecmp_group(0, 0, m);
    auto a = owners(*full), b = owners(*less);
    size_t moved = 0;
    for (uint32_t i = 0; i < kEcmpBuckets; i++) {
        EXPECT_NE(b[i], 5);
        if (a[i] == 5)
            moved++;
        else
            EXPECT_EQ(a[i], b[i]);
    }
    EXPECT_GT(moved, 0u);
    // And the same table as a group built without it at all.
    EXPECT_EQ(b, owners(*build_ecmp_group(0, 0, members({1, 2, 3, 4, 6, 7, 8}))));
}

TEST(EcmpGroupTable, AddingAMemberTakesBucketsOnlyForItself) {
    auto before = owners(*build_ecmp_group(0, 0, members({1, 2, 3})));
    auto after = owners(*build_ecmp_group(0, 0, members({1, 2, 3, 9})));
    size_t to_new = 0;
    for (uint32_t i = 0; i < kEcmpBuckets; i++) {
        if (after[i] == 9)
            to_new++;
        else
            EXPECT_EQ(after[i], before[i]);
    }
    EXPECT_NEAR(double(to_new) / kEcmpBuckets, 0.25, 0.03);
}

TEST(EcmpGroupTable, WeightsAreHonoured) {
    auto m = members({1, 2, 3});
    m[2].weight = 2;
    auto o = owners(*build_ecmp_group(0, 0, m));
    EXPECT_NEAR(double(std::count(o.begin(), o.end(), 3)) / kEcmpBuckets, 0.5, 0.03);
    EXPECT_NEAR(double(std::count(o.begin(), o.end(), 1)) / kEcmpBuckets, 0.25, 0.03);
}

TEST(EcmpGroupTable, NoAliveMemberLeavesBucketsEmpty) {
    auto m = members({1, 2});
    m[0].alive = m[1].alive = false;
    auto g = build_ecmp_group(3, 1, m);
    EXPECT_EQ(g->n_alive, 0);
    EXPECT_EQ(g->n_slots, 2);
    EXPECT_EQ(g->buckets[0], kNoMember);
    EXPECT_EQ(g->id, 3);
    EXPECT_EQ(g->policy, 1);
}

// buckets_alive (the balancer's LetFlow draw skips its alive check on it): set by the build with
// every member alive, with a dead member (it owns no bucket) and with a weight-0 member; not
// with no alive member; ecmp_buckets_alive() sees one edited bucket naming a dead slot, an
// unused slot or no member.
TEST(EcmpGroupTable, BucketsAliveUnlessABucketNamesNoAliveSlot) {
    EXPECT_TRUE(build_ecmp_group(0, 1, members({1, 2, 3}))->buckets_alive);
    auto m = members({1, 2, 3});
    m[1].alive = false;
    auto g = build_ecmp_group(0, 1, m);
    EXPECT_TRUE(g->buckets_alive);
    EXPECT_TRUE(ecmp_buckets_alive(*g));
    m[2].weight = 0;
    EXPECT_TRUE(build_ecmp_group(0, 1, m)->buckets_alive);
    m[0].alive = m[2].alive = false;
    EXPECT_FALSE(build_ecmp_group(0, 1, m)->buckets_alive);
    for (uint8_t bad : {uint8_t(1), uint8_t(3), kNoMember}) {
        SCOPED_TRACE(int(bad));
        auto e = build_ecmp_group(0, 1, members({1, 2, 3}));
        e->members[1].alive = bad != 1;
        e->buckets[kEcmpBuckets - 1] = bad;
        EXPECT_FALSE(ecmp_buckets_alive(*e));
    }
}

TEST(EcmpGroups, PublishesAndRetiresWithoutQsbr) {
    EcmpGroups groups(nullptr);
    EXPECT_EQ(groups.group(7), nullptr);
    std::vector<std::pair<uint16_t, std::unique_ptr<EcmpGroup>>> ch;
    ch.emplace_back(7, build_ecmp_group(7, 0, members({1, 2})));
    groups.publish(std::move(ch));
    ASSERT_NE(groups.group(7), nullptr);
    EXPECT_EQ(groups.group(7)->n_alive, 2);
    EXPECT_EQ(groups.group(kMaxEcmpGroups), nullptr);
    ch.clear();
    ch.emplace_back(7, nullptr);
    groups.publish(std::move(ch));
    EXPECT_EQ(groups.group(7), nullptr);
    LbConfig c;
    c.seed = 42;
    c.default_policy = "spray";
    c.flowlet_chooser = "least_loaded";
    groups.set_settings(lb_settings_from(c));
    EXPECT_EQ(groups.settings().seed, 42u);
    EXPECT_EQ(groups.settings().default_policy, uint8_t(LbPolicyId::spray));
    EXPECT_TRUE(groups.settings().chooser_least_loaded);
}

class FlowHashFns : public testing::TestWithParam<FlowHashFn> {};

TEST_P(FlowHashFns, EveryFieldOfTheFiveTupleMatters) {
    PacketMeta m{};
    m.l3 = L3Type::ipv4;
    m.flags = kFlagL4;
    m.src_ip4 = 0x0a000002;
    m.dst_ip4 = 0x0a630001;
    m.src_port = 49152;
    m.dst_port = 4791;
    m.ip_proto = 17;
    FlowHashParams p{1, false, false, GetParam()};
    uint64_t h = flow_hash(m, nullptr, p);
    auto differs = [&](auto mutate) {
        PacketMeta x = m;
        mutate(x);
        return flow_hash(x, nullptr, p) != h;
    };
    EXPECT_TRUE(differs([](PacketMeta &x) { x.src_ip4++; }));
    EXPECT_TRUE(differs([](PacketMeta &x) { x.dst_ip4++; }));
    EXPECT_TRUE(differs([](PacketMeta &x) { x.src_port++; }));
    EXPECT_TRUE(differs([](PacketMeta &x) { x.dst_port++; }));
    EXPECT_TRUE(differs([](PacketMeta &x) { x.ip_proto = 6; }));
    EXPECT_FALSE(differs([](PacketMeta &x) { x.ttl = 5; }));
    FlowHashParams seeded{2, false, false, GetParam()};
    EXPECT_NE(flow_hash(m, nullptr, seeded), h);
}

TEST_P(FlowHashFns, SourcePortsAloneSpreadOverBuckets) {
    PacketMeta m{};
    m.l3 = L3Type::ipv4;
    m.flags = kFlagL4;
    m.src_ip4 = 0x0a000002;
    m.dst_ip4 = 0x0a630001;
    m.dst_port = 4791;
    m.ip_proto = 17;
    std::vector<uint32_t> low(16, 0), flowlet(16, 0);
    std::set<uint32_t> tags;
    for (uint32_t s = 0; s < 16384; s++) {
        m.src_port = uint16_t(49152 + s);
        const uint64_t h = flow_hash(m, nullptr, {0x5eed, false, false, GetParam()});
        low[h & 15]++;                   // the bucket (EcmpGroup::bucket_member)
        flowlet[(h >> 12) & 15]++;       // the flowlet bucket (FlowletTable)
        tags.insert(uint32_t(h >> 32));  // the flowlet tag
    }
    for (auto c : low) EXPECT_NEAR(double(c) / 1024, 1.0, 0.15);
    for (auto c : flowlet) EXPECT_NEAR(double(c) / 1024, 1.0, 0.15);
    EXPECT_GE(tags.size(), 16384u - 8);
}

INSTANTIATE_TEST_SUITE_P(FlowHash, FlowHashFns,
                         testing::Values(FlowHashFn::crc32c, FlowHashFn::mix64),
                         [](const auto &info) {
                             return std::string(flow_hash_fn_name(info.param));
                         });

// The flow hash's values are part of the behaviour (bucket, flowlet entry, member): pinned per
// function for IPv4 with and without L4, a reversed flow and IPv6, under every parameter
// combination (symmetric, dest_qp).
struct PinnedFlows {
    PacketMeta m{}, r, n, v6;
    uint8_t l3[40];
    PinnedFlows() {
        m.l3 = L3Type::ipv4;
        m.flags = kFlagL4 | kFlagRoce;
        m.src_ip4 = 0x0a000002;
        m.dst_ip4 = 0x0a630001;
        m.src_port = 49152;
        m.dst_port = 4791;
        m.ip_proto = 17;
        m.dest_qp = 0x123456;
        r = m;
        r.src_ip4 = 0x0a630001;
        r.dst_ip4 = 0x0a000002;
        r.src_port = 4791;
        r.dst_port = 49152;
        n = m;
        n.flags = 0;
        v6 = m;
        v6.l3 = L3Type::ipv6;
        for (int i = 0; i < 40; i++) l3[i] = uint8_t(i * 7 + 1);
    }
    void expect(FlowHashFn fn, const uint64_t (&want)[4][4]) const {
        const PacketMeta *ms[4] = {&m, &r, &n, &v6};
        for (int k = 0; k < 4; k++)
            for (int pc = 0; pc < 4; pc++) {
                SCOPED_TRACE(testing::Message() << "meta " << k << " params " << pc);
                const FlowHashParams p{0x5eed, bool(pc & 1), bool(pc & 2), fn};
                EXPECT_EQ(flow_hash(*ms[k], l3, p), want[k][pc]);
                // The balancer's variant for packets known to be IPv4 (no family test).
                if (ms[k]->l3 == L3Type::ipv4) {
                    EXPECT_EQ(flow_hash_ipv4(*ms[k], p), want[k][pc]);
                }
            }
    }
    static uint64_t flow_hash_ipv4(const PacketMeta &m, const FlowHashParams &p) {
        return with_flow_hash(p, [&]<FlowHashFn kFn, bool kS, bool kQ>() {
            return flow_hash_ipv4_t<kFn, kS, kQ>(m, p.seed);
        });
    }
};

// mix64, the hash before lb.hash_function: the values computed by the implementation before the
// per-burst specialization.
TEST(FlowHash, Mix64ValuesArePinned) {
    const uint64_t want[4][4] = {
        {0xf0bd25c28d39e76bull, 0xf0bd25c28d39e76bull, 0x4f786ce151dc512full,
         0x4f786ce151dc512full},
        {0x34253118bd2b125full, 0xf0bd25c28d39e76bull, 0xcd5da41f981d09b2ull,
         0x4f786ce151dc512full},
        {0x05615d935b0caa97ull, 0x05615d935b0caa97ull, 0x05615d935b0caa97ull,
         0x05615d935b0caa97ull},
        {0xad8fd7aa5debfc63ull, 0xad8fd7aa5debfc63ull, 0xbecf81b5479bd279ull,
         0xbecf81b5479bd279ull},
    };
    PinnedFlows().expect(FlowHashFn::mix64, want);
}

// crc32c, the default: the values of an independent bitwise CRC32C of the documented
// construction (doc/load-balancing.md "The flow hash"), printed by test/unit/flow_hash_ref.py.
TEST(FlowHash, Crc32cValuesArePinned) {
    const uint64_t want[4][4] = {
        {0x2b9dcd05e1a13e7aull, 0x2b9dcd05e1a13e7aull, 0x8ea97dd6d3d2a8e8ull,
         0x8ea97dd6d3d2a8e8ull},
        {0x72a7701e3a249564ull, 0x2b9dcd05e1a13e7aull, 0xd793c0cd085703f6ull,
         0x8ea97dd6d3d2a8e8ull},
        {0x5ec951446800e37aull, 0x5ec951446800e37aull, 0x5ec951446800e37aull,
         0x5ec951446800e37aull},
        {0xdadb63e8f341d13full, 0xdadb63e8f341d13full, 0x519091a0c13247adull,
         0x519091a0c13247adull},
    };
    PinnedFlows().expect(FlowHashFn::crc32c, want);
    // DPDK's table fallback (a CPU without the instruction) gives the same values. The choice is
    // per translation unit (rte_hash_crc.h keeps it in a static), so it changes this test's only.
    rte_hash_crc_set_alg(CRC32_SW);
    PinnedFlows().expect(FlowHashFn::crc32c, want);
    rte_hash_crc_set_alg(CRC32_SSE42_x64);
}

// flow_hash_ipv4_t (the balancer's hash of the route stage's IPv4 packets, no test of the
// family) is flow_hash for IPv4 packets of every shape: random addresses, ports, protocols, QPs
// and flags (with and without L4 and RoCE), every function and parameter combination.
TEST(FlowHash, Ipv4VariantIsTheGeneralOne) {
    std::mt19937_64 rng(7);
    for (int k = 0; k < 4000; k++) {
        PacketMeta m{};
        m.l3 = L3Type::ipv4;
        m.flags = uint16_t(rng() & (kFlagL4 | kFlagRoce | kFlagFragment | kFlagVlan));
        m.src_ip4 = uint32_t(rng());
        m.dst_ip4 = k % 5 == 0 ? m.src_ip4 : uint32_t(rng());  // equal: the symmetric tie-break
        m.src_port = uint16_t(rng());
        m.dst_port = k % 7 == 0 ? m.src_port : uint16_t(rng());
        m.ip_proto = uint8_t(rng());
        m.dest_qp = uint32_t(rng()) & 0xFFFFFF;
        for (int pc = 0; pc < 8; pc++) {
            const FlowHashParams p{rng(), bool(pc & 1), bool(pc & 2),
                                   pc & 4 ? FlowHashFn::mix64 : FlowHashFn::crc32c};
            ASSERT_EQ(PinnedFlows::flow_hash_ipv4(m, p), flow_hash(m, nullptr, p))
                << k << " " << pc;
        }
    }
}

// The balancer's CRC32C step (the instruction where the build targets SSE4.2) is DPDK's, table
// fallback included, for chained 64-bit words.
TEST(FlowHash, Crc32cStepIsDpdks) {
    uint64_t mine = 0x5eed, x = 0x0123456789abcdefull;
    uint32_t dpdk_sw = 0x5eed, dpdk_hw = 0x5eed;
    for (int i = 0; i < 64; i++) {
        x = lb_mix64(x + uint64_t(i));
        mine = lb_crc32c_8byte(x, mine);
        rte_hash_crc_set_alg(CRC32_SW);
        dpdk_sw = rte_hash_crc_8byte(x, dpdk_sw);
        rte_hash_crc_set_alg(CRC32_SSE42_x64);
        dpdk_hw = rte_hash_crc_8byte(x, dpdk_hw);
        ASSERT_EQ(mine, dpdk_sw) << i;
        ASSERT_EQ(mine, dpdk_hw) << i;
    }
}

// The LetFlow draw (FlowletPolicy::random_choice: the balancer's new-flowlet loop and the
// policy's choose()) is buckets[next() & (kEcmpBuckets - 1)] of the per-worker xorshift64*
// generator: the generator's values pinned (worker 0's seed), and the draw's 32-bit product
// (LbRng::next_low32) naming the same buckets as next() for a long sequence.
TEST(LetFlow, DrawIsTheGeneratorsBucketValuesPinned) {
    LbRng pin(0x9e3779b97f4a7c15ull);
    EXPECT_EQ(pin.next(), 0x0d83b3e29a21487aull);
    EXPECT_EQ(pin.next(), 0x54c44c79f1fe9d67ull);
    EXPECT_EQ(pin.next(), 0xa845f342007a0e78ull);
    EXPECT_EQ(pin.next(), 0x7d6e0b878a794779ull);
    LbRng ref(12345), low(12345), draw(12345), draw_ref(12345);
    auto g = build_ecmp_group(1, uint8_t(LbPolicyId::flowlet), members({1, 2, 3, 4, 5}));
    for (int k = 0; k < 100000; k++) {
        ASSERT_EQ(low.next_low32(), uint32_t(ref.next())) << k;
        ASSERT_EQ(FlowletPolicy::random_choice(*g, draw),
                  g->buckets[draw_ref.next() & (kEcmpBuckets - 1)])
            << k;
    }
}

TEST(FlowHash, FunctionIsAConfigChoiceDefaultCrc32c) {
    EXPECT_EQ(LbConfig{}.hash_function, FlowHashFn::crc32c);
    EXPECT_EQ(FlowHashParams{}.fn, FlowHashFn::crc32c);
    LbConfig c;
    c.hash_function = FlowHashFn::mix64;
    EXPECT_EQ(lb_settings_from(c).hash_function, FlowHashFn::mix64);
}

}  // namespace
}  // namespace rocesw
