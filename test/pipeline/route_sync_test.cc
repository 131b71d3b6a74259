// Netlink messages -> Rib -> Fib (lib/ctrl/route_sync.h): what the kernel of the switch's
// namespace says becomes exactly the data plane's routes, next hops and ECMP groups.
#include <gtest/gtest.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include <cstring>
#include <map>

#include "ctrl/route_sync.h"
#include "fixture.h"

namespace rocesw::test {
namespace {

constexpr int kIf0 = 10, kIf1 = 11;  // host interfaces of p0, p1

class RouteSyncTest : public SwitchFixture {
  protected:
    void SetUp() override {
        SwitchFixture::SetUp();
        sync = std::make_unique<RouteSync>(*rib, 2, [](int ifindex) -> std::optional<uint16_t> {
            if (ifindex == kIf0) return 0;
            if (ifindex == kIf1) return 1;
            return std::nullopt;
        });
        // The kernel reports the addresses roceswd gave the interfaces.
        apply(addr(nl::Op::add, kIf0, "10.0.1.1/24"));
        apply(addr(nl::Op::add, kIf0, "fd00:1::1/64"));
        apply(addr(nl::Op::add, kIf1, "10.0.2.1/24"));
        apply(addr(nl::Op::add, kIf1, "fd00:2::1/64"));
        rib->sync();
    }
    bool apply(const nl::Message &m) { return sync->apply(m); }
    static nl::AddrMsg addr(nl::Op op, int ifindex, const char *a) {
        nl::AddrMsg m{};
        m.op = op;
        m.ifindex = ifindex;
        m.addr = ifa(a);
        return m;
    }
    static nl::NeighMsg neigh(nl::Op op, int ifindex, const char *ip, const char *mac,
                              uint16_t state = NUD_REACHABLE) {
        nl::NeighMsg m{};
        m.op = op;
        m.ifindex = ifindex;
        m.ip = ipa(ip);
        if (mac) m.mac = maca(mac);
        m.state = state;
        return m;
    }
    static nl::RouteMsg route(nl::Op op, const char *prefix,
                              std::vector<std::pair<int, const char *>> paths,
                              uint8_t proto = 12 /* bird */) {
        nl::RouteMsg m{};
        m.op = op;
        m.dst = *parse_prefix(prefix);
        m.family = m.dst.addr.is_v6 ? 10 : 2;
        m.table = RT_TABLE_MAIN;
        m.protocol = proto;
        m.type = RTN_UNICAST;
        for (auto &[ifx, gw] : paths) {
            nl::NextHopMsg nh;
            nh.ifindex = ifx;
            if (gw) nh.gateway = ipa(gw);
            m.nexthops.push_back(nh);
        }
        return m;
    }
    static nl::LinkMsg link(int ifindex, const char *name, bool up) {
        nl::LinkMsg m{};
        m.op = nl::Op::add;
        m.ifindex = ifindex;
        m.name = name;
        m.admin_up = up;
        m.oper_up = up;
        return m;
    }
    // What a worker would find for `dst` in the FIB now.
    NextHop lookup(const char *dst) {
        const FibTables *t = fib->reader();
        uint32_t ip = ipa(dst).v4, nh = 0;
        fib_lookup4_bulk(t, &ip, &nh, 1);  // kNoRouteNh (a miss) reads NextHop{}
        return t->nexthops[nh];
    }
    NextHop lookup6(const char *dst) {
        const FibTables *t = fib->reader();
        uint8_t ip[1][16];
        std::memcpy(ip[0], ipa(dst).v6.data(), 16);
        uint32_t nh = 0;
        fib_lookup6_bulk(t, ip, &nh, 1);  // kNoRouteNh (a miss) reads NextHop{}
        return t->nexthops[nh];
    }
    std::map<std::string, RouteView> routes() {
        std::map<std::string, RouteView> m;
        for (const auto &v : rib->routes()) m.emplace(v.prefix.str(), v);
        return m;
    }

    std::unique_ptr<RouteSync> sync;
};

TEST_F(RouteSyncTest, LearnedRouteResolvesThroughTheKernelsNeighbour) {
    EXPECT_TRUE(apply(route(nl::Op::add, "10.50.0.0/16", {{kIf1, "10.0.2.9"}})));
    rib->sync();
    EXPECT_EQ(routes().at("10.50.0.0/16").source, RouteSource::learned);
    EXPECT_EQ(routes().at("10.50.0.0/16").origin, "bird");
    EXPECT_EQ(lookup("10.50.3.4").kind, NextHopKind::unresolved);  // punted: glean
    // The kernel resolves it (ARP through the host interface) and says so.
    EXPECT_TRUE(apply(neigh(nl::Op::add, kIf1, "10.0.2.9", "02:00:00:00:bb:09")));
    rib->sync();
    NextHop nh = lookup("10.50.3.4");
    EXPECT_EQ(nh.kind, NextHopKind::forward);
    EXPECT_EQ(nh.port, 1);
    EXPECT_EQ(nh.dst_mac, maca("02:00:00:00:bb:09"));
    // The neighbour fails: back to unresolved; the route is withdrawn: no route.
    EXPECT_TRUE(apply(neigh(nl::Op::add, kIf1, "10.0.2.9", nullptr, NUD_FAILED)));
    rib->sync();
    EXPECT_EQ(lookup("10.50.3.4").kind, NextHopKind::unresolved);
    EXPECT_TRUE(apply(route(nl::Op::del, "10.50.0.0/16", {})));
    rib->sync();
    EXPECT_EQ(lookup("10.50.3.4").kind, NextHopKind::drop_no_route);
    EXPECT_EQ(sync->stats().routes_added, 1u);
    EXPECT_EQ(sync->stats().routes_removed, 1u);
}

TEST_F(RouteSyncTest, Ipv6LearnedRoutesIncludingMultipathAndLinkLocalGateways) {
    apply(neigh(nl::Op::add, kIf1, "fd00:2::9", "02:00:00:00:bb:09"));
    apply(route(nl::Op::add, "fd00:50::/64", {{kIf1, "fd00:2::9"}}));
    // BGP over link-local sessions (FRR, BIRD with direct peers) gives fe80:: gateways: the
    // neighbour is known per port.
    apply(neigh(nl::Op::add, kIf0, "fe80::1", "02:00:00:00:aa:0e"));
    apply(neigh(nl::Op::add, kIf1, "fe80::1", "02:00:00:00:bb:0e"));
    apply(route(nl::Op::add, "fd00:60::/48", {{kIf0, "fe80::1"}, {kIf1, "fe80::1"}}));
    ASSERT_EQ(rib->sync(), 0u);
    NextHop nh = lookup6("fd00:50::1");
    EXPECT_EQ(nh.kind, NextHopKind::forward);
    EXPECT_EQ(nh.port, 1);
    EXPECT_EQ(nh.dst_mac, maca("02:00:00:00:bb:09"));
    nh = lookup6("fd00:60:0:1::5");
    ASSERT_EQ(nh.kind, NextHopKind::ecmp_group);
    for (const auto &g : rib->groups())
        if (g.id == nh.group) {
            ASSERT_EQ(g.members.size(), 2u);
            EXPECT_TRUE(g.members[0].alive && g.members[1].alive);
            EXPECT_EQ(g.members[0].mac, maca("02:00:00:00:aa:0e"));
            EXPECT_EQ(g.members[1].mac, maca("02:00:00:00:bb:0e"));
        }
    EXPECT_FALSE(routes().count("fe80::1/128"));  // link-local neighbours are not routes
    apply(route(nl::Op::del, "fd00:50::/64", {}));
    rib->sync();
    EXPECT_EQ(lookup6("fd00:50::1").kind, NextHopKind::drop_no_route);
}

// A multipath route over link-local next hops nothing has resolved (FRR's zebra installs the
// link-local part of an IPv6 BGP next hop; the session runs over global addresses, so the kernel
// never solicits those): the members have no MAC, so RouteSync hands each next hop to the caller
// once, to ask the kernel (NTF_USE); the kernel's answer makes the members alive.
TEST_F(RouteSyncTest, UnresolvedNextHopsOfLearnedRoutesAreHandedOutOnceForResolution) {
    apply(neigh(nl::Op::add, kIf1, "fd00:2::9", "02:00:00:00:bb:09"));
    apply(route(nl::Op::add, "fd00:60::/48", {{kIf0, "fe80::1"}, {kIf1, "fe80::2"}}));
    apply(route(nl::Op::add, "fd00:50::/64", {{kIf1, "fd00:2::9"}}));  // resolved already
    rib->sync();
    NextHop nh = lookup6("fd00:60::5");
    ASSERT_EQ(nh.kind, NextHopKind::ecmp_group);
    for (const auto &g : rib->groups()) {
        if (g.id == nh.group) {
            EXPECT_FALSE(g.members[0].alive || g.members[1].alive);
        }
    }
    std::vector<ResolveRequest> r = sync->take_resolves();
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].ifindex, kIf0);
    EXPECT_EQ(r[0].ip, ipa("fe80::1"));
    EXPECT_EQ(r[1].ifindex, kIf1);
    EXPECT_EQ(r[1].ip, ipa("fe80::2"));
    EXPECT_TRUE(sync->take_resolves().empty());  // taken
    // The same route again (BGP update, replace): still asked for, not asked again.
    apply(route(nl::Op::add, "fd00:60::/48", {{kIf0, "fe80::1"}, {kIf1, "fe80::2"}}));
    EXPECT_TRUE(sync->take_resolves().empty());
    // The kernel answers one; the other fails: a later update asks again for that one only.
    apply(neigh(nl::Op::add, kIf0, "fe80::1", "02:00:00:00:aa:01"));
    apply(neigh(nl::Op::add, kIf1, "fe80::2", nullptr, NUD_FAILED));
    rib->sync();
    nh = lookup6("fd00:60::5");
    for (const auto &g : rib->groups())
        if (g.id == nh.group) {
            EXPECT_TRUE(g.members[0].alive);
            EXPECT_EQ(g.members[0].mac, maca("02:00:00:00:aa:01"));
            EXPECT_FALSE(g.members[1].alive);
        }
    apply(route(nl::Op::add, "fd00:60::/48", {{kIf0, "fe80::1"}, {kIf1, "fe80::2"}}));
    r = sync->take_resolves();
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].ifindex, kIf1);
    EXPECT_EQ(r[0].ip, ipa("fe80::2"));
    EXPECT_EQ(sync->stats().resolve_requests, 3u);
}

TEST_F(RouteSyncTest, MultipathRouteBecomesAnEcmpGroup) {
    apply(neigh(nl::Op::add, kIf0, "10.0.1.7", "02:00:00:00:aa:07"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    auto r = route(nl::Op::add, "10.60.0.0/16", {{kIf0, "10.0.1.7"}, {kIf1, "10.0.2.7"}});
    r.nexthops[1].weight = 3;
    apply(r);
    rib->sync();
    NextHop nh = lookup("10.60.1.1");
    ASSERT_EQ(nh.kind, NextHopKind::ecmp_group);
    auto groups = rib->groups();
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].id, nh.group);
    ASSERT_EQ(groups[0].members.size(), 2u);
    EXPECT_EQ(groups[0].members[0].port, 0);
    EXPECT_EQ(groups[0].members[1].port, 1);
    EXPECT_EQ(groups[0].members[1].weight, 3u);
    EXPECT_TRUE(groups[0].members[0].alive && groups[0].members[1].alive);
    // One member's interface goes down: the group shrinks to the other path at once.
    EXPECT_TRUE(apply(link(kIf0, "p0", false)));
    rib->sync();
    nh = lookup("10.60.1.1");
    EXPECT_EQ(nh.kind, NextHopKind::forward);
    EXPECT_EQ(nh.port, 1);
    EXPECT_EQ(lookup("10.0.1.7").kind, NextHopKind::drop_no_route);  // p0's routes withdrawn
    EXPECT_TRUE(apply(link(kIf0, "p0", true)));
    rib->sync();
    EXPECT_EQ(lookup("10.60.1.1").kind, NextHopKind::ecmp_group);
}

TEST_F(RouteSyncTest, IgnoresWhatIsNotOurs) {
    auto other_if = route(nl::Op::add, "10.70.0.0/16", {{99, "192.168.0.1"}});
    auto kernel = route(nl::Op::add, "10.0.1.0/24", {{kIf0, nullptr}}, RTPROT_KERNEL);
    auto local_table = route(nl::Op::add, "10.71.0.0/16", {{kIf0, "10.0.1.2"}});
    local_table.table = 100;
    auto blackhole = route(nl::Op::add, "10.72.0.0/16", {});
    blackhole.type = RTN_BLACKHOLE;
    auto nh_obj = route(nl::Op::add, "10.73.0.0/16", {{kIf0, "10.0.1.2"}});
    nh_obj.nh_id = 7;
    const size_t before = rib->routes().size();
    for (const auto &m : {other_if, kernel, local_table, blackhole, nh_obj}) EXPECT_FALSE(apply(m));
    EXPECT_FALSE(apply(neigh(nl::Op::add, 99, "192.168.0.1", "02:00:00:00:00:99")));
    // The kernel's NOARP entries for multicast groups are not next hops.
    EXPECT_FALSE(apply(neigh(nl::Op::add, kIf0, "ff02::16", "33:33:00:00:00:16", NUD_NOARP)));
    EXPECT_FALSE(apply(neigh(nl::Op::add, kIf0, "224.0.0.22", "01:00:5e:00:00:16", NUD_NOARP)));
    EXPECT_FALSE(apply(addr(nl::Op::add, 99, "192.168.0.2/24")));
    rib->sync();
    EXPECT_EQ(rib->routes().size(), before);
    EXPECT_EQ(sync->stats().unsupported, 1u);  // the nexthop object
    EXPECT_GE(sync->stats().ignored, 8u);
}

TEST_F(RouteSyncTest, AddressesGiveConnectedRoutesButLinkLocalIsNeverRouted) {
    apply(addr(nl::Op::add, kIf0, "10.0.5.1/24"));
    apply(addr(nl::Op::add, kIf0, "fe80::ff:fe00:10/64"));
    apply(addr(nl::Op::add, kIf1, "fe80::ff:fe00:11/64"));
    rib->sync();
    auto m = routes();
    EXPECT_EQ(m.at("10.0.5.0/24").source, RouteSource::connected);
    EXPECT_EQ(m.at("10.0.5.1/32").source, RouteSource::local);
    EXPECT_FALSE(m.count("fe80::/64"));
    apply(addr(nl::Op::del, kIf0, "10.0.5.1/24"));
    rib->sync();
    EXPECT_FALSE(routes().count("10.0.5.0/24"));
    EXPECT_EQ(lookup("10.0.5.9").kind, NextHopKind::drop_no_route);
}

TEST_F(RouteSyncTest, ConfigStaticRouteWinsOverALearnedOne) {
    // 10.9.0.0/16 is a static route of the fixture's config (via 10.0.2.2 on p1).
    apply(neigh(nl::Op::add, kIf0, "10.0.1.7", "02:00:00:00:aa:07"));
    apply(route(nl::Op::add, "10.9.0.0/16", {{kIf0, "10.0.1.7"}}));
    rib->sync();
    EXPECT_EQ(routes().at("10.9.0.0/16").source, RouteSource::static_route);
    EXPECT_EQ(lookup("10.9.1.1").port, 1);
    // The learned one is kept: it is used for a more specific prefix, and kept on withdrawal
    // of nothing else.
    apply(route(nl::Op::add, "10.9.5.0/24", {{kIf0, "10.0.1.7"}}));
    rib->sync();
    EXPECT_EQ(lookup("10.9.5.1").port, 0);
}

// After a socket overrun the caller re-dumps: what the dump no longer has is removed.
TEST_F(RouteSyncTest, ResyncSweepsWhatTheKernelNoLongerHas) {
    apply(neigh(nl::Op::add, kIf1, "10.0.2.9", "02:00:00:00:bb:09"));
    for (int i = 0; i < 100; i++) {
        std::string p = "10.100." + std::to_string(i) + ".0/24";
        apply(route(nl::Op::add, p.c_str(), {{kIf1, "10.0.2.9"}}));
    }
    rib->sync();
    EXPECT_EQ(sync->learned_routes(), 100u);
    sync->begin_resync();
    // The dump: addresses, the neighbour, and only the even routes.
    apply(addr(nl::Op::add, kIf0, "10.0.1.1/24"));
    apply(addr(nl::Op::add, kIf0, "fd00:1::1/64"));
    apply(addr(nl::Op::add, kIf1, "10.0.2.1/24"));
    apply(addr(nl::Op::add, kIf1, "fd00:2::1/64"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.9", "02:00:00:00:bb:09"));
    for (int i = 0; i < 100; i += 2) {
        std::string p = "10.100." + std::to_string(i) + ".0/24";
        apply(route(nl::Op::add, p.c_str(), {{kIf1, "10.0.2.9"}}));
    }
    EXPECT_TRUE(sync->end_resync());
    rib->sync();
    EXPECT_EQ(sync->learned_routes(), 50u);
    EXPECT_EQ(lookup("10.100.2.1").kind, NextHopKind::forward);
    EXPECT_EQ(lookup("10.100.3.1").kind, NextHopKind::drop_no_route);
    EXPECT_EQ(rib->route_counts().at("bird"), 50u);
}

// BGP gives thousands of prefixes the same next hops: they share one ECMP group, so a full
// table fits (kMaxEcmpGroups, 512, is below the route count).
TEST_F(RouteSyncTest, LearnedRoutesWithTheSameNextHopsShareOneGroup) {
    apply(neigh(nl::Op::add, kIf0, "10.0.1.7", "02:00:00:00:aa:07"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    for (int i = 0; i < 900; i++) {
        std::string p = "10." + std::to_string(200 + i / 256) + "." + std::to_string(i % 256) +
                        ".0/24";
        // Half of them list the next hops in the other order, as the kernel may.
        auto r = i % 2 ? route(nl::Op::add, p.c_str(), {{kIf0, "10.0.1.7"}, {kIf1, "10.0.2.7"}})
                       : route(nl::Op::add, p.c_str(), {{kIf1, "10.0.2.7"}, {kIf0, "10.0.1.7"}});
        apply(r);
    }
    apply(route(nl::Op::add, "10.210.0.0/16", {{kIf0, "10.0.1.7"}, {kIf1, "10.0.2.9"}}));
    ASSERT_EQ(rib->sync(), 0u);
    auto groups = rib->groups();
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups[0].routes + groups[1].routes, 901u);
    EXPECT_EQ(lookup("10.200.17.70").kind, NextHopKind::ecmp_group);
    EXPECT_EQ(lookup("10.200.17.70").group, lookup("10.203.100.1").group);
    EXPECT_NE(lookup("10.210.0.1").group, lookup("10.200.200.1").group);
    // Withdrawing all but one keeps the group; withdrawing the last retires it.
    for (int i = 1; i < 900; i++) {
        std::string p = "10." + std::to_string(200 + i / 256) + "." + std::to_string(i % 256) +
                        ".0/24";
        apply(route(nl::Op::del, p.c_str(), {}));
    }
    rib->sync();
    EXPECT_EQ(rib->groups().size(), 2u);
    apply(route(nl::Op::del, "10.200.0.0/24", {}));
    rib->sync();
    EXPECT_EQ(rib->groups().size(), 1u);
}

// Configured multipath routes with the same paths and policy share a group too, so a large
// route file can make every route multipath; a different policy or path set gets its own.
TEST_F(RouteSyncTest, ConfiguredRoutesWithTheSamePathsAndPolicyShareOneGroup) {
    apply(neigh(nl::Op::add, kIf0, "10.0.1.7", "02:00:00:00:aa:07"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    auto mp = [](const char *prefix, std::vector<RoutePath> paths, const char *policy) {
        return MultipathRouteConfig{*parse_prefix(prefix), std::move(paths), policy};
    };
    const RoutePath a{ipa("10.0.1.7"), "p0", 1}, b{ipa("10.0.2.7"), "p1", 1};
    std::vector<MultipathRouteConfig> routes;
    for (int i = 0; i < 700; i++)
        routes.push_back(mp(("10.220." + std::to_string(i / 256) + "." + std::to_string(i % 256) +
                             "/32").c_str(),
                            i % 2 ? std::vector<RoutePath>{a, b} : std::vector<RoutePath>{b, a},
                            "flowlet"));
    routes.push_back(mp("10.230.0.0/16", {a, b}, "hash"));  // another policy
    routes.push_back(mp("10.231.0.0/16", {a}, "flowlet"));  // another path set
    rib->set_multipath(routes);
    ASSERT_EQ(rib->sync(), 0u);
    auto groups = rib->groups();
    ASSERT_EQ(groups.size(), 3u);
    EXPECT_EQ(groups[0].routes + groups[1].routes + groups[2].routes, 702u);
    EXPECT_EQ(lookup("10.220.0.1").kind, NextHopKind::ecmp_group);
    EXPECT_EQ(lookup("10.220.0.1").group, lookup("10.220.2.100").group);
    EXPECT_NE(lookup("10.230.0.1").group, lookup("10.220.0.1").group);
    EXPECT_NE(lookup("10.231.0.1").group, lookup("10.220.0.1").group);
    EXPECT_NE(lookup("10.231.0.1").group, lookup("10.230.0.1").group);
}

// A host interface set down and up again: the kernel silently dropped its IPv4 routes, so the
// sync asks for a re-dump on the way up.
TEST_F(RouteSyncTest, InterfaceComingBackUpAsksForAResync) {
    EXPECT_FALSE(sync->take_resync_request());
    apply(link(kIf0, "p0", false));
    EXPECT_FALSE(sync->take_resync_request());
    apply(link(kIf0, "p0", true));
    EXPECT_TRUE(sync->take_resync_request());
    EXPECT_FALSE(sync->take_resync_request());
}

}  // namespace
}  // namespace rocesw::test
