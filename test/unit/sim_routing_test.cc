#include "sim/routing.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sim/topo_gen.h"

using namespace rocesw::sim;

TEST(SimTopoGen, StarHasOneSwitch) {
    Topology t = make_star({4, 25'000'000'000, 1 * kPsPerUs});
    EXPECT_EQ(t.host_count(), 4u);
    EXPECT_EQ(t.switch_count(), 1u);
    EXPECT_EQ(t.link_count(), 4u);
    EXPECT_TRUE(t.is_switch(4));
    EXPECT_EQ(t.ports(4).size(), 4u);
}

TEST(SimTopoGen, LeafSpineUplinkRateFromOversubscription) {
    // 4 hosts x 25G per leaf, 2:1 -> 50G of uplink, 25G to each of 2 spines.
    LeafSpineSpec s{2, 2, 4, 25'000'000'000, 2, 1, 0, 1 * kPsPerUs};
    Topology t = make_leaf_spine(s);
    EXPECT_EQ(t.host_count(), 8u);
    EXPECT_EQ(t.switch_count(), 4u);
    EXPECT_EQ(t.link_count(), 8u + 4u);
    EXPECT_EQ(t.link(8).rate_bps, 25'000'000'000u);
    EXPECT_EQ(t.name(8), "leaf0");
    EXPECT_EQ(t.name(10), "spine0");
}

TEST(SimTopoGen, LeafSpineUplinkCountFromOversubscription) {
    // 1:1 with 25G uplinks: 100G per leaf = 2 links to each of 2 spines.
    LeafSpineSpec s{2, 2, 4, 25'000'000'000, 1, 1, 25'000'000'000, 1 * kPsPerUs};
    Topology t = make_leaf_spine(s);
    EXPECT_EQ(t.link_count(), 8u + 8u);
    EXPECT_EQ(t.ports(8).size(), 4u + 4u);  // leaf0: 4 hosts, 2 links to each spine
    s.oversub_num = 3;                      // 100/3 G per spine: not whole links
    EXPECT_THROW(make_leaf_spine(s), std::invalid_argument);
}

TEST(SimTopoGen, FatTreeK4Counts) {
    Topology t = make_fat_tree({4, 100'000'000'000, 400'000'000'000, 1 * kPsPerUs});
    EXPECT_EQ(t.host_count(), 16u);                                                 // k^3/4
    EXPECT_EQ(t.switch_count(), 20u);                                               // 5k^2/4
    EXPECT_EQ(t.link_count(), 48u);                                                 // 3k^3/4
    for (uint32_t s : t.switches()) EXPECT_EQ(t.ports(s).size(), 4u) << t.name(s);  // k ports
    EXPECT_THROW(make_fat_tree({3}), std::invalid_argument);
    Topology k8 = make_fat_tree({8});
    EXPECT_EQ(k8.host_count(), 128u);
    EXPECT_EQ(k8.switch_count(), 80u);
}

// HPCC's mix/fat.txt: 376 nodes (320 hosts, then switches 320..375), 480 links; ToR t
// (320..339) has hosts 16(t-320)..+15 and links to the 4 aggregation switches of its pod
// (340 + 4 x pod ..), aggregation switch j of a pod to cores 360 + 4j .. 363 + 4j.
TEST(SimTopoGen, ThreeTierHasHpccFatTxtShape) {
    Topology t = make_three_tier({});
    EXPECT_EQ(t.node_count(), 376u);
    EXPECT_EQ(t.host_count(), 320u);
    EXPECT_EQ(t.switch_count(), 56u);
    EXPECT_EQ(t.link_count(), 480u);
    const std::string txt = t.to_hpcc();
    auto line = [&](size_t i) {  // line i of the file, from 0
        size_t p = 0;
        for (size_t k = 0; k < i; k++) p = txt.find('\n', p) + 1;
        return txt.substr(p, txt.find('\n', p) - p);
    };
    EXPECT_EQ(line(0), "376 56 480");
    EXPECT_EQ(line(1).substr(0, 12), "320 321 322 ");
    EXPECT_EQ(line(2), "0 320 100Gbps 1000ns 0.000000");        // links from line 2
    EXPECT_EQ(line(2 + 16), "16 321 100Gbps 1000ns 0.000000");
    EXPECT_EQ(line(2 + 319), "319 339 100Gbps 1000ns 0.000000");
    EXPECT_EQ(line(2 + 320), "320 340 400Gbps 1000ns 0.000000");   // ToR uplinks
    EXPECT_EQ(line(2 + 323), "320 343 400Gbps 1000ns 0.000000");
    EXPECT_EQ(line(2 + 336), "324 344 400Gbps 1000ns 0.000000");   // pod 1
    EXPECT_EQ(line(2 + 399), "339 359 400Gbps 1000ns 0.000000");
    EXPECT_EQ(line(2 + 400), "340 360 400Gbps 1000ns 0.000000");   // aggregation - core
    EXPECT_EQ(line(2 + 404), "341 364 400Gbps 1000ns 0.000000");
    EXPECT_EQ(line(2 + 416), "344 360 400Gbps 1000ns 0.000000");   // pod 1's agg 0
    EXPECT_EQ(line(2 + 479), "359 375 400Gbps 1000ns 0.000000");
    uint64_t host_links = 0, fabric_links = 0;
    for (uint32_t i = 0; i < t.link_count(); i++) {
        const TopoLink &l = t.link(i);
        EXPECT_EQ(l.delay_ps, 1 * kPsPerUs);
        (t.is_host(l.a) ? host_links : fabric_links)++;
        EXPECT_EQ(l.rate_bps, t.is_host(l.a) ? 100'000'000'000u : 400'000'000'000u);
    }
    EXPECT_EQ(host_links, 320u);
    EXPECT_EQ(fabric_links, 160u);
    for (uint32_t s = 320; s < 340; s++) EXPECT_EQ(t.ports(s).size(), 16u + 4u) << t.name(s);
    for (uint32_t s = 340; s < 360; s++) EXPECT_EQ(t.ports(s).size(), 4u + 4u) << t.name(s);
    for (uint32_t s = 360; s < 376; s++) EXPECT_EQ(t.ports(s).size(), 5u) << t.name(s);
    // Routing: a ToR has 4 next hops toward another ToR's host, an aggregation switch 4 (its
    // cores) toward another pod, a core 1; host 0 to host 319 is 6 hops, to host 16 4.
    EcmpRouting r(t);
    EXPECT_EQ(r.next_hops(320, 319).size(), 4u);
    EXPECT_EQ(r.next_hops(340, 319).size(), 4u);
    EXPECT_EQ(r.next_hops(360, 319).size(), 1u);
    EXPECT_EQ(r.next_hops(340, 16).size(), 1u);
    EXPECT_EQ(r.distance(0, 319), 6u);
    EXPECT_EQ(r.distance(0, 16), 4u);
    // Other shapes: 2 pods x 2 ToRs x 3 hosts, 2 aggs per pod, 1 core per agg.
    Topology small = make_three_tier({2, 2, 2, 3, 1, 25'000'000'000, 50'000'000'000, 1 * kPsPerUs});
    EXPECT_EQ(small.host_count(), 12u);
    EXPECT_EQ(small.switch_count(), 4u + 4u + 2u);
    EXPECT_EQ(small.link_count(), 12u + 8u + 4u);
    EXPECT_THROW(make_three_tier({0}), std::invalid_argument);
}

TEST(SimTopoGen, RailOptimizedAttachesNicRToRailR) {
    RailSpec s{2, 2, 2, 2, 400'000'000'000, 400'000'000'000, 1 * kPsPerUs};
    Topology t = make_rail_optimized(s);
    EXPECT_EQ(t.host_count(), 8u);
    EXPECT_EQ(t.switch_count(), 2u * 2u + 2u);
    EXPECT_EQ(t.link_count(), 8u + 4u * 2u);
    // Host 3 = group 0, server 1, NIC 1 -> rail switch (0, 1) = node 9.
    EXPECT_EQ(t.ports(3)[0].peer, 9u);
    EXPECT_EQ(t.name(9), "group0-rail1");
    // Host 6 = group 1, server 1, NIC 0 -> rail switch (1, 0) = node 10.
    EXPECT_EQ(t.ports(6)[0].peer, 10u);
}

TEST(SimRouting, HostAddressesFollowHpcc) {
    EXPECT_EQ(host_address(0), 0x0b000001u);
    EXPECT_EQ(host_address(1), 0x0b000101u);
    EXPECT_EQ(host_address(255), 0x0b00ff01u);
    EXPECT_EQ(host_address(256), 0x0b010001u);
    EXPECT_EQ(address_node(host_address(300)), 300u);
}

TEST(SimRouting, LeafSpineEcmpSets) {
    Topology t = make_leaf_spine({2, 2, 2, 100'000'000'000, 1, 1, 0, 1 * kPsPerUs});
    // hosts 0-3, leaf0 = 4, leaf1 = 5, spine0 = 6, spine1 = 7
    EcmpRouting r(t);
    auto h = r.next_hops(4, 2);  // leaf0 -> host on leaf1: both spines
    ASSERT_EQ(h.size(), 2u);
    EXPECT_EQ(h[0].neighbour, 6u);
    EXPECT_EQ(h[1].neighbour, 7u);
    EXPECT_LT(h[0].port, h[1].port);
    EXPECT_EQ(r.next_hops(4, 1).size(), 1u);  // own host
    EXPECT_EQ(r.next_hops(6, 0).size(), 1u);  // spine -> leaf0
    EXPECT_EQ(r.next_hops(0, 3).size(), 1u);  // a host has one NIC
    EXPECT_EQ(r.distance(0, 3), 4u);
    EXPECT_EQ(r.distance(0, 1), 2u);
    auto routes = r.routes(4);
    ASSERT_EQ(routes.size(), 4u);
    EXPECT_EQ(routes[2].prefix, host_address(2));
    EXPECT_EQ(routes[2].prefix_len, 32u);
    EXPECT_EQ(routes[2].next_hops.size(), 2u);
}

TEST(SimRouting, FatTreeK4NextHopCounts) {
    Topology t = make_fat_tree({4, 100'000'000'000, 400'000'000'000, 1 * kPsPerUs});
    EcmpRouting r(t);
    const uint32_t edge0 = 16, agg0 = 24, core0 = 32;
    // host 0 is under edge0 (pod 0); host 15 under pod 3's last edge; host 2 under pod 0's edge1.
    EXPECT_EQ(r.next_hops(edge0, 15).size(), 2u);  // up to both aggs
    EXPECT_EQ(r.next_hops(agg0, 15).size(), 2u);   // up to both of its cores
    EXPECT_EQ(r.next_hops(core0, 15).size(), 1u);  // down to pod 3
    EXPECT_EQ(r.next_hops(edge0, 2).size(), 2u);   // same pod, other edge: via both aggs
    EXPECT_EQ(r.next_hops(agg0, 2).size(), 1u);    // down to edge1
    EXPECT_EQ(r.next_hops(edge0, 1).size(), 1u);   // own host
    EXPECT_EQ(r.distance(0, 15), 6u);
    EXPECT_EQ(r.distance(0, 2), 4u);
    // Every switch reaches every host.
    size_t total = 0;
    for (uint32_t s : t.switches()) {
        auto routes = r.routes(s);
        EXPECT_EQ(routes.size(), 16u);
        for (auto &rt : routes) total += rt.next_hops.size();
    }
    // Edges: 2 own hosts x1 + 14 others x2 = 30, x8; aggs: 4 in pod x1 + 12 x2 = 28, x8;
    // cores: 16 x1, x4.
    EXPECT_EQ(total, 8u * 30 + 8u * 28 + 4u * 16);
}

TEST(SimRouting, LinkDownWithdrawsPathsAndUpRestoresThem) {
    Topology t = make_leaf_spine({2, 2, 2, 100'000'000'000, 1, 1, 0, 1 * kPsPerUs});
    EcmpRouting r(t);
    auto before = r.routes(4);
    // Link leaf0 (4) - spine0 (6) is link 4 (after the 4 host links).
    ASSERT_EQ(t.link(4).a, 4u);
    ASSERT_EQ(t.link(4).b, 6u);
    r.set_link_up(4, false);
    r.recompute();
    ASSERT_EQ(r.next_hops(4, 2).size(), 1u);
    EXPECT_EQ(r.next_hops(4, 2)[0].neighbour, 7u);
    EXPECT_EQ(r.next_hops(5, 0).size(), 1u);  // leaf1 toward leaf0 only via spine1 now
    EXPECT_EQ(r.distance(6, 0), 4u);          // spine0 -> leaf1 -> spine1 -> leaf0 -> host
    auto &ch = r.changed_nodes();
    EXPECT_TRUE(std::find(ch.begin(), ch.end(), 4u) != ch.end());
    EXPECT_TRUE(std::find(ch.begin(), ch.end(), 5u) != ch.end());
    EXPECT_TRUE(std::find(ch.begin(), ch.end(), 0u) == ch.end());  // hosts unchanged
    r.set_link_up(4, true);
    r.recompute();
    auto after = r.routes(4);
    ASSERT_EQ(after.size(), before.size());
    for (size_t i = 0; i < after.size(); ++i) EXPECT_EQ(after[i].next_hops, before[i].next_hops);
}

TEST(SimRouting, UnreachableDestinationHasNoRoute) {
    Topology t = make_star({2, 100'000'000'000, 0});
    EcmpRouting r(t);
    r.set_link_up(1, false);  // host 1's only link
    r.recompute();
    EXPECT_TRUE(r.next_hops(2, 1).empty());
    EXPECT_EQ(r.routes(2).size(), 1u);
    EXPECT_FALSE(r.path(0, 1).reachable);
}
