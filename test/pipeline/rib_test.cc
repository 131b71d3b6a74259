#include <gtest/gtest.h>

#include <map>
#include <set>
#include <rte_rcu_qsbr.h>
#include <rte_malloc.h>
#include <thread>

#include "fixture.h"

namespace rocesw::test {
namespace {

using RibResolution = SwitchFixture;

std::map<std::string, RouteView> by_prefix(const Rib &r) {
    std::map<std::string, RouteView> m;
    for (const auto &v : r.routes()) m.emplace(v.prefix.str(), v);
    return m;
}

TEST_F(RibResolution, BuildsLocalConnectedNeighbourAndStaticRoutes) {
    auto m = by_prefix(*rib);
    EXPECT_EQ(m.at("10.0.1.1/32").source, RouteSource::local);
    EXPECT_EQ(m.at("10.0.1.0/24").source, RouteSource::connected);
    EXPECT_EQ(m.at("10.0.1.0/24").nh.kind, NextHopKind::glean);
    EXPECT_EQ(m.at("10.0.2.2/32").source, RouteSource::neighbour);
    EXPECT_EQ(m.at("10.0.2.2/32").nh.kind, NextHopKind::forward);
    EXPECT_EQ(m.at("10.9.0.0/16").nh.kind, NextHopKind::forward);
    EXPECT_EQ(m.at("10.9.0.0/16").nh.dst_mac, maca("02:00:00:00:bb:02"));
    EXPECT_EQ(m.at("10.8.0.0/16").nh.kind, NextHopKind::unresolved);
    EXPECT_EQ(m.at("fd00:9::/32").nh.port, 1);
    // Routes that resolve to the same next hop share its id.
    EXPECT_EQ(m.at("10.9.0.0/16").nexthop_id, m.at("10.0.2.2/32").nexthop_id);
    EXPECT_EQ(m.at("10.9.0.0/16").nexthop_id, m.at("fd00:2::2/128").nexthop_id);
    for (const auto &[p, v] : m) EXPECT_TRUE(v.installed) << p;
    // 2 ports x (local + connected) + 2 neighbours + 2 static, per family
    EXPECT_EQ(rib->route_count(false), 8u);
    EXPECT_EQ(rib->route_count(true), 7u);
}

TEST_F(RibResolution, StaticRouteOverridesNeighbourHostRoute) {
    rib->set_static({{*parse_prefix("10.0.2.2/32"), ipa("10.0.1.2"), ""}},
                    {{ipa("10.0.1.2"), maca("02:00:00:00:aa:01"), ""},
                     {ipa("10.0.2.2"), maca("02:00:00:00:bb:02"), ""}});
    rib->sync();
    auto m = by_prefix(*rib);
    EXPECT_EQ(m.at("10.0.2.2/32").source, RouteSource::static_route);
    EXPECT_EQ(m.at("10.0.2.2/32").nh.port, 0);
}

// A neighbour's MAC change (a BGP peer's NIC replaced, a VRRP failover) with no other neighbour
// on its port sharing the old MAC: one next-hop rewrite in the Fib, no route recomputed or
// rewritten, every route through it on the new MAC (views, Fib), and a full recompute then
// changes nothing. With a dual-stack neighbour still on the old MAC, the routes move one by
// one to the new MAC's next hop and the other family's stay.
TEST_F(RibResolution, NeighbourMacChangeRewritesOneNextHop) {
    const LearnedRoute via_h2{"bgp", {{1, ipa("10.0.2.2"), 1}}};
    constexpr int kRoutes = 200;
    neighbours_from_kernel();
    for (int i = 0; i < kRoutes; i++)
        rib->set_learned(IpPrefix{IpAddr{false, (20u << 24) + (uint32_t(i) << 8), {}}, 24}, via_h2);
    rib->del_neighbour(1, ipa("fd00:2::2"));  // 10.0.2.2 alone on bb:02
    rib->sync();
    auto m = by_prefix(*rib);
    const uint32_t id = m.at("20.0.0.0/24").nexthop_id;
    auto expect_all = [&](const MacAddr &mac) {
        auto now = by_prefix(*rib);
        int n = 0;
        for (const auto &[p, v] : now) {
            if (v.nh.kind != NextHopKind::forward || v.nh.port != 1 || p.find(':') != p.npos)
                continue;
            EXPECT_EQ(v.nh.dst_mac, mac) << p;
            EXPECT_EQ(fib->reader()->nexthops[v.nexthop_id].dst_mac, mac) << p;
            n++;
        }
        EXPECT_EQ(n, kRoutes + 2);  // the learned routes, 10.9.0.0/16 and the host route
    };
    expect_all(maca("02:00:00:00:bb:02"));

    rib->add_neighbour(1, ipa("10.0.2.2"), maca("02:00:00:00:bb:0a"));
    rib->sync();
    EXPECT_EQ(rib->last_sync().ops, 1u) << "one set_nexthop";
    EXPECT_EQ(rib->last_sync().evaluated, 0u) << "no route recomputed";
    expect_all(maca("02:00:00:00:bb:0a"));
    EXPECT_EQ(by_prefix(*rib).at("20.0.199.0/24").nexthop_id, id);
    rib->mark_all_dirty();
    rib->sync();
    EXPECT_EQ(rib->last_sync().ops, 0u) << "a full recompute changes nothing";

    // fd00:2::2 back on the new MAC: the v6 routes share the id. Then 10.0.2.2 moves on alone.
    rib->add_neighbour(1, ipa("fd00:2::2"), maca("02:00:00:00:bb:0a"));
    rib->sync();
    EXPECT_EQ(by_prefix(*rib).at("fd00:9::/32").nexthop_id, id);
    rib->add_neighbour(1, ipa("10.0.2.2"), maca("02:00:00:00:bb:0b"));
    rib->sync();
    EXPECT_GE(rib->last_sync().ops, size_t(kRoutes) + 2) << "each IPv4 route moved";
    expect_all(maca("02:00:00:00:bb:0b"));
    m = by_prefix(*rib);
    EXPECT_EQ(m.at("fd00:9::/32").nh.dst_mac, maca("02:00:00:00:bb:0a"));
    EXPECT_EQ(m.at("fd00:9::/32").nexthop_id, id);
    EXPECT_EQ(fib->reader()->nexthops[id].dst_mac, maca("02:00:00:00:bb:0a"));
}

TEST_F(RibResolution, NeighbourRemovalUnresolvesAndIdsAreRecycled) {
    neighbours_from_kernel();
    rib->del_neighbour(1, ipa("10.0.2.2"));
    rib->del_neighbour(1, ipa("fd00:2::2"));
    rib->sync();
    auto m = by_prefix(*rib);
    EXPECT_EQ(m.count("10.0.2.2/32"), 0u);
    EXPECT_EQ(m.at("10.9.0.0/16").nh.kind, NextHopKind::unresolved);
    rib->add_neighbour(1, ipa("10.0.2.2"), maca("02:00:00:00:bb:09"));
    rib->sync();
    m = by_prefix(*rib);
    EXPECT_EQ(m.at("10.9.0.0/16").nh.dst_mac, maca("02:00:00:00:bb:09"));
    // Repeated churn does not grow the id space.
    uint32_t max_id = 0;
    for (int i = 0; i < 50; i++) {
        rib->del_neighbour(1, ipa("10.0.2.2"));
        rib->sync();
        rib->add_neighbour(1, ipa("10.0.2.2"), maca("02:00:00:00:bb:09"));
        rib->sync();
        for (const auto &v : rib->routes()) max_id = std::max(max_id, v.nexthop_id);
    }
    EXPECT_LT(max_id, 16u);
}

// A configured neighbour is the config's, as a permanent entry is in Linux: the kernel learning
// the same address with another MAC, or deleting its entry (a stale ARP entry's garbage
// collection), leaves it in effect; the kernel's entry takes over when the config has none.
// An address the config does not name comes and goes with the kernel.
TEST_F(RibResolution, ConfiguredNeighbourOutlivesTheKernelsEntry) {
    auto neigh = [&](const char *ip) {
        for (const auto &n : rib->neighbours())
            if (n.ip == ipa(ip)) return std::optional<NeighbourView>(n);
        return std::optional<NeighbourView>();
    };
    const uint32_t id = by_prefix(*rib).at("10.9.0.0/16").nexthop_id;
    rib->add_neighbour(1, ipa("10.0.2.2"), maca("02:00:00:00:bb:0e"));
    rib->sync();
    EXPECT_EQ(rib->last_sync().ops, 0u);
    ASSERT_TRUE(neigh("10.0.2.2"));
    EXPECT_EQ(neigh("10.0.2.2")->mac, maca("02:00:00:00:bb:02"));
    EXPECT_FALSE(neigh("10.0.2.2")->learned);
    EXPECT_EQ(neigh("10.0.2.2")->kernel_mac, maca("02:00:00:00:bb:0e"));  // shown, not used
    EXPECT_FALSE(neigh("10.0.1.2")->kernel_mac);
    rib->add_neighbour(0, ipa("10.0.1.2"), maca("02:00:00:00:aa:01"));  // the kernel agrees
    EXPECT_FALSE(neigh("10.0.1.2")->kernel_mac);
    rib->del_neighbour(1, ipa("10.0.2.2"));
    rib->del_neighbour(1, ipa("fd00:2::2"));
    rib->sync();
    EXPECT_EQ(rib->last_sync().ops, 0u);
    EXPECT_FALSE(neigh("10.0.2.2")->kernel_mac);
    auto m = by_prefix(*rib);
    EXPECT_EQ(m.at("10.0.2.2/32").source, RouteSource::neighbour);
    EXPECT_EQ(m.at("10.9.0.0/16").nh.dst_mac, maca("02:00:00:00:bb:02"));
    EXPECT_EQ(m.at("10.9.0.0/16").nexthop_id, id);
    EXPECT_EQ(m.at("fd00:9::/32").nh.kind, NextHopKind::forward);
    EXPECT_EQ(fib->reader()->nexthops[id].dst_mac, maca("02:00:00:00:bb:02"));

    // An address of the kernel's only: learned, and gone with the kernel's delete.
    rib->add_neighbour(1, ipa("10.0.2.99"), maca("02:00:00:00:bb:63"));
    rib->sync();
    ASSERT_TRUE(neigh("10.0.2.99"));
    EXPECT_TRUE(neigh("10.0.2.99")->learned);
    EXPECT_EQ(by_prefix(*rib).at("10.8.0.0/16").nh.dst_mac, maca("02:00:00:00:bb:63"));
    rib->del_neighbour(1, ipa("10.0.2.99"));
    rib->sync();
    EXPECT_FALSE(neigh("10.0.2.99"));
    EXPECT_EQ(by_prefix(*rib).at("10.8.0.0/16").nh.kind, NextHopKind::unresolved);

    // The config without 10.0.2.2: the kernel's entry (learned above with bb:0e, then deleted)
    // is gone, so the address has no neighbour; learned again, the kernel's MAC is in effect.
    // The config naming it again puts its own MAC back over the kernel's.
    const DataplaneSpec s = spec();
    std::vector<NeighbourConfig> without;
    for (const auto &n : s.neighbours)
        if (!(n.ip == ipa("10.0.2.2"))) without.push_back(n);
    rib->set_static(s.routes, without);
    rib->sync();
    EXPECT_FALSE(neigh("10.0.2.2"));
    EXPECT_EQ(by_prefix(*rib).at("10.9.0.0/16").nh.kind, NextHopKind::unresolved);
    rib->add_neighbour(1, ipa("10.0.2.2"), maca("02:00:00:00:bb:0e"));
    rib->sync();
    EXPECT_TRUE(neigh("10.0.2.2")->learned);
    EXPECT_EQ(by_prefix(*rib).at("10.9.0.0/16").nh.dst_mac, maca("02:00:00:00:bb:0e"));
    rib->set_static(s.routes, s.neighbours);
    rib->sync();
    EXPECT_FALSE(neigh("10.0.2.2")->learned);
    EXPECT_EQ(by_prefix(*rib).at("10.9.0.0/16").nh.dst_mac, maca("02:00:00:00:bb:02"));
    rib->set_static(s.routes, without);
    rib->sync();
    EXPECT_TRUE(neigh("10.0.2.2")->learned) << "the kernel's entry was kept under the config's";
    EXPECT_EQ(by_prefix(*rib).at("10.9.0.0/16").nh.dst_mac, maca("02:00:00:00:bb:0e"));
}

// Learned routes added and withdrawn again and again (as BGP and `rocectl call route_learn` do
// in tools/soak) give back what they took: next-hop ids and ECMP groups in use return to the
// baseline and no new id is made after the first cycle; the FIB's rte_rib nodes and tbl8
// groups return to the baseline exactly. The /25 through the /16's gateway and the device
// route inside p1's subnet share their cover's next-hop id: the DPDK count fib.cc works around.
TEST_F(RibResolution, LearnedRouteChurnReturnsIdsGroupsAndFibObjects) {
    const Rib::IdUsage ids0 = rib->id_usage();
    const FibUsage u0 = fib->usage(0), u1 = fib->usage(1);
    const LearnedRoute ecmp{"bgp", {{0, ipa("10.0.1.2"), 1}, {1, ipa("10.0.2.2"), 1}}};
    const LearnedRoute via_h2{"bgp", {{1, ipa("10.0.2.2"), 1}}};
    const LearnedRoute device{"boot", {{1, std::nullopt, 1}}};
    std::vector<std::pair<IpPrefix, LearnedRoute>> routes;
    for (int i = 0; i < 10; i++)
        routes.emplace_back(*parse_prefix(("10.7." + std::to_string(i) + ".0/24").c_str()), ecmp);
    routes.emplace_back(*parse_prefix("10.6.0.0/16"), via_h2);
    routes.emplace_back(*parse_prefix("10.6.1.0/25"), via_h2);
    routes.emplace_back(*parse_prefix("10.0.2.128/25"), device);
    routes.emplace_back(*parse_prefix("fd00:7::/48"),
                        LearnedRoute{"bgp", {{0, ipa("fd00:1::2"), 1}, {1, ipa("fd00:2::2"), 1}}});
    auto cycle = [&](int k) {
        for (const auto &[p, r] : routes) rib->set_learned(p, r);
        ASSERT_EQ(rib->sync(), 0u) << k;
        auto m = by_prefix(*rib);
        EXPECT_EQ(m.at("10.6.1.0/25").nexthop_id, m.at("10.6.0.0/16").nexthop_id);
        EXPECT_EQ(m.at("10.0.2.128/25").nexthop_id, m.at("10.0.2.0/24").nexthop_id);
        EXPECT_EQ(rib->groups().size(), ids0.groups + 2) << k;  // one per family
        for (const auto &[p, r] : routes) rib->del_learned(p);
        ASSERT_EQ(rib->sync(), 0u) << k;
    };
    cycle(0);
    const Rib::IdUsage ids1 = rib->id_usage();
    EXPECT_EQ(ids1.nexthops, ids0.nexthops);
    EXPECT_EQ(ids1.groups, ids0.groups);
    for (int k = 1; k < 30; k++) cycle(k);
    EXPECT_EQ(rib->id_usage(), ids1);
    EXPECT_EQ(fib->usage(0), u0);
    EXPECT_EQ(fib->usage(1), u1);
    // 64 groups; two /24s hold routes longer than /24 (the ports' local and neighbour /32s).
    EXPECT_EQ(free_tbl8s4(*fib), 62);
}

// TESTPLAN R2: the FIB full. Learned /32s in 70 other /24s each need a tbl8 group (the fixture
// has 64, 2 in use): the Rib installs what fits and reports the rest as not installed (sync's
// count, RouteView::installed, rocectl's `installed`); the worker forwards the installed ones and
// the routes from before, and drops the refused ones as no_route (no covering route). Once
// routes are withdrawn, the next sync installs the refused ones (the Rib retries them).
TEST_F(RibResolution, FibFullReportsRefusedRoutesAndInstallsThemOnceThereIsRoom) {
    neighbours_from_kernel();
    auto dst = [](int k) { return v4(10, 60, uint8_t(k), 1); };
    auto prefix = [&](int k) { return IpPrefix{IpAddr{false, dst(k), {}}, 32}; };
    constexpr int kRoutes = 70;
    for (int k = 0; k < kRoutes; k++)
        rib->set_learned(prefix(k), LearnedRoute{"bgp", {{1, ipa("10.0.2.2"), 1}}});
    const size_t refused = rib->sync();
    EXPECT_GE(refused, size_t(kRoutes - 62));
    EXPECT_LE(refused, size_t(kRoutes - 61));  // DPDK's last group (fixture.h, free_tbl8s4)
    std::set<int> installed;
    for (const auto &v : rib->routes())
        for (int k = 0; k < kRoutes; k++)
            if (v.prefix == prefix(k) && v.installed) installed.insert(k);
    EXPECT_EQ(installed.size(), kRoutes - refused);
    for (const auto &v : rib->routes())
        if (v.prefix.addr.is_v6 || v.prefix.addr.v4 >> 16 != (10u << 8 | 60u)) {
            EXPECT_TRUE(v.installed) << v.prefix.str();
        }

    // Through the worker: each of the 70 destinations, and the static route from before.
    auto send = [&](std::vector<uint32_t> dsts) {
        for (uint32_t d : dsts) ports->inject(0, cat(eth(kP0, kH1, kEtherTypeIpv4), ipv4(v4(10, 0, 1, 2), d, kProtoUdp, udp_payload(1, 2, 16))));
        while (worker->poll_once(now_ns) > 0) {
        }
        std::multiset<uint32_t> out;
        for (const auto &f : ports->take_tx(1)) {
            EXPECT_TRUE(std::equal(f.begin(), f.begin() + 6, kH2.begin()));
            out.insert(rd32(&f[30]));
        }
        return out;
    };
    std::vector<uint32_t> all;
    for (int k = 0; k < kRoutes; k++) all.push_back(dst(k));
    all.push_back(v4(10, 9, 1, 1));
    uint64_t no_route0 = drops(0, DropReason::no_route);
    auto out = send(all);
    EXPECT_EQ(out.size(), installed.size() + 1);
    EXPECT_EQ(out.count(v4(10, 9, 1, 1)), 1u);
    for (int k : installed) EXPECT_EQ(out.count(dst(k)), 1u) << k;
    EXPECT_EQ(drops(0, DropReason::no_route) - no_route0, refused);

    // Withdraw as many installed routes as were refused: the next sync installs the refused.
    std::set<int> withdrawn;
    for (int k : installed) {
        if (withdrawn.size() == refused) break;
        EXPECT_TRUE(rib->del_learned(prefix(k)));
        withdrawn.insert(k);
    }
    EXPECT_EQ(rib->sync(), 0u);
    for (const auto &v : rib->routes()) EXPECT_TRUE(v.installed) << v.prefix.str();
    no_route0 = drops(0, DropReason::no_route);
    out = send(all);
    EXPECT_EQ(out.size(), size_t(kRoutes) - withdrawn.size() + 1);
    for (int k = 0; k < kRoutes; k++) EXPECT_EQ(out.count(dst(k)), withdrawn.count(k) ? 0u : 1u) << k;
    EXPECT_EQ(drops(0, DropReason::no_route) - no_route0, withdrawn.size());
}

// Control thread churns routes while a worker thread forwards continuously under QSBR:
// the prefix that never changes loses no packet.
TEST(RibConcurrency, ChurnOnOtherPrefixesLosesNoPacketOfAnUntouchedOne) {
    size_t sz = rte_rcu_qsbr_get_memsize(1);
    auto *q = static_cast<rte_rcu_qsbr *>(rte_zmalloc("tq", sz, 64));
    ASSERT_EQ(rte_rcu_qsbr_init(q, 1), 0);
    DataplaneSpec spec;
    spec.ports = {{"p0", maca("02:00:00:00:00:10"), 1500, {ifa("10.0.1.1/24")}},
                  {"p1", maca("02:00:00:00:00:11"), 1500, {ifa("10.0.2.1/24")}}};
    spec.fib.ipv4_max_routes = 4096;
    spec.fib.ipv4_tbl8s = 64;
    spec.fib.ipv6_max_routes = 64;
    spec.fib.ipv6_tbl8s = 64;
    spec.fib.max_nexthops = 1024;
    spec.routes = {{*parse_prefix("10.9.0.0/16"), ipa("10.0.2.2"), ""}};
    spec.neighbours = {{ipa("10.0.2.2"), maca("02:00:00:00:bb:02"), ""}};
    TestPorts io(unique_name("cp"), 2, 8192);
    DataplaneOptions opt;
    opt.name = unique_name("c");
    opt.qsbr = q;
    opt.rx = {{{0, 0}}};
    opt.egress = fifo_egress_factory(4096);
    Dataplane dp(spec, nullptr, io, opt);
    Rib &rib = dp.rib();
    Worker &w = dp.worker(0);
    WorkerCounters *ctr = &dp.counters(0);

    const int kPackets = 3000;
    std::atomic<bool> stop{false};
    std::thread worker_thread([&] {
        rte_rcu_qsbr_thread_register(q, 0);
        rte_rcu_qsbr_thread_online(q, 0);
        while (!stop.load()) {
            w.poll_once(0);
            rte_rcu_qsbr_quiescent(q, 0);
        }
        rte_rcu_qsbr_thread_offline(q, 0);
        rte_rcu_qsbr_thread_unregister(q, 0);
    });
    std::thread traffic([&] {
        Bytes f = cat(eth(kP0, kH1, kEtherTypeIpv4),
                      ipv4(v4(10, 0, 1, 2), v4(10, 9, 1, 1), kProtoUdp, udp_payload(1, 2, 16)));
        for (int i = 0; i < kPackets; i++) {
            while (true) {
                try {
                    io.inject(0, f);
                    break;
                } catch (const std::exception &) {
                    std::this_thread::yield();  // ring or pool momentarily full
                }
            }
            if (i % 64 == 0) std::this_thread::yield();
        }
    });
    // Churn: add and remove up to 20 other prefixes a round, and flap an unrelated neighbour.
    size_t received = 0;
    for (int round = 0; round < 20; round++) {
        std::vector<RouteConfig> routes = {{*parse_prefix("10.9.0.0/16"), ipa("10.0.2.2"), ""}};
        for (int i = 0; i < 10 * (round % 3); i++)
            routes.push_back(
                {IpPrefix{IpAddr{false, v4(172, 16, uint8_t(i), 0), {}}, 24}, ipa("10.0.2.2"), ""});
        std::vector<NeighbourConfig> neigh = {{ipa("10.0.2.2"), maca("02:00:00:00:bb:02"), ""}};
        if (round % 2) neigh.push_back({ipa("10.0.2.7"), maca("02:00:00:00:bb:07"), ""});
        rib.set_static(routes, neigh);
        rib.sync();
        received += io.take_tx(1).size();
    }
    traffic.join();
    for (int i = 0; i < 2000 && received < size_t(kPackets); i++) {
        received += io.take_tx(1).size();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    stop = true;
    worker_thread.join();
    received += io.take_tx(1).size();
    EXPECT_EQ(received, size_t(kPackets));
    uint64_t dropped = 0;
    for (auto &d : ctr->ports[0].drops) dropped += d.load();
    EXPECT_EQ(dropped, 0u);
    rte_free(q);
}

}  // namespace
}  // namespace rocesw::test
