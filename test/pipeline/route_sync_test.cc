// Netlink messages -> Rib -> Fib (lib/ctrl/route_sync.h): what the kernel of the switch's
// namespace says becomes exactly the data plane's routes, next hops and ECMP groups.
#include <gtest/gtest.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include <cstring>
#include <map>
#include <random>

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
        apply_addresses();
        rib->sync();
    }
    bool apply(const nl::Message &m) { return sync->apply(m); }
    // The kernel reports the addresses roceswd gave the interfaces (at start, in a dump).
    void apply_addresses() {
        apply(addr(nl::Op::add, kIf0, "10.0.1.1/24"));
        apply(addr(nl::Op::add, kIf0, "fd00:1::1/64"));
        apply(addr(nl::Op::add, kIf1, "10.0.2.1/24"));
        apply(addr(nl::Op::add, kIf1, "fd00:2::1/64"));
    }
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
    // A kernel nexthop object: one next hop, or (ifindex 0, no gateway) a group of `members`.
    static nl::NexthopMsg object(nl::Op op, uint32_t id, int ifindex, const char *gw,
                                 std::vector<nl::NexthopMsg::Member> members = {}) {
        nl::NexthopMsg m{};
        m.op = op;
        m.id = id;
        m.ifindex = ifindex;
        if (gw) m.gateway = ipa(gw);
        m.family = gw ? (m.gateway->is_v6 ? 10 : 2) : 0;
        m.group = std::move(members);
        return m;
    }
    // A route naming object `id`, as zebra installs it (nexthop_compat_mode 0: no next hops).
    static nl::RouteMsg route_nh(nl::Op op, const char *prefix, uint32_t id) {
        nl::RouteMsg m = route(op, prefix, {}, RTPROT_BGP);
        m.nh_id = id;
        return m;
    }
    // The ECMP group `dst` resolves to: (port, weight) of each member.
    std::vector<std::pair<int, uint32_t>> members_of(const char *dst) {
        const NextHop nh = lookup(dst);
        std::vector<std::pair<int, uint32_t>> out;
        if (nh.kind != NextHopKind::ecmp_group) return out;
        for (const auto &g : rib->groups())
            if (g.id == nh.group)
                for (const auto &mb : g.members) out.emplace_back(mb.port, mb.weight);
        return out;
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
    // rocectl show neighbours tells the kernel's (source learned) from the config's.
    std::map<std::string, bool> learned;
    for (const auto &n : rib->neighbours()) learned[n.ip.str()] = n.learned;
    EXPECT_TRUE(learned.at("10.0.2.9"));
    EXPECT_FALSE(learned.at("10.0.2.2"));
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
    auto multicast = route(nl::Op::add, "10.72.0.0/16", {{kIf0, nullptr}});
    multicast.type = RTN_MULTICAST;
    // A route naming a nexthop object never seen, with no next hop of its own
    // (nexthop_compat_mode 0).
    auto nh_obj = route(nl::Op::add, "10.73.0.0/16", {});
    nh_obj.nh_id = 7;
    const size_t before = rib->routes().size();
    for (const auto &m : {other_if, kernel, local_table, multicast, nh_obj}) EXPECT_FALSE(apply(m));
    EXPECT_FALSE(apply(neigh(nl::Op::add, 99, "192.168.0.1", "02:00:00:00:00:99")));
    // The kernel's NOARP entries for multicast groups are not next hops.
    EXPECT_FALSE(apply(neigh(nl::Op::add, kIf0, "ff02::16", "33:33:00:00:00:16", NUD_NOARP)));
    EXPECT_FALSE(apply(neigh(nl::Op::add, kIf0, "224.0.0.22", "01:00:5e:00:00:16", NUD_NOARP)));
    EXPECT_FALSE(apply(addr(nl::Op::add, 99, "192.168.0.2/24")));
    rib->sync();
    EXPECT_EQ(rib->routes().size(), before);
    EXPECT_EQ(sync->stats().unsupported, 1u);  // the unknown nexthop object
    EXPECT_GE(sync->stats().ignored, 8u);
}

// FRR's zebra installs routes through kernel nexthop objects: a route names an object (RTA_NH_ID)
// and takes its next hop, or a group's members with their weights.
TEST_F(RouteSyncTest, RoutesThroughKernelNexthopObjects) {
    apply(neigh(nl::Op::add, kIf0, "10.0.1.7", "02:00:00:00:aa:07"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    apply(neigh(nl::Op::add, kIf1, "fe80::7", "02:00:00:00:bb:0e"));
    EXPECT_FALSE(apply(object(nl::Op::add, 21, kIf0, "10.0.1.7")));  // no route names it yet
    apply(object(nl::Op::add, 22, kIf1, "10.0.2.7"));
    apply(object(nl::Op::add, 23, kIf1, "fe80::7"));  // RFC 5549: an IPv4 route via IPv6
    apply(object(nl::Op::add, 30, 0, nullptr, {{21, 1}, {22, 3}}));
    EXPECT_TRUE(apply(route_nh(nl::Op::add, "10.80.0.0/16", 21)));
    EXPECT_TRUE(apply(route_nh(nl::Op::add, "10.81.0.0/16", 30)));
    EXPECT_TRUE(apply(route_nh(nl::Op::add, "10.82.0.0/16", 23)));
    EXPECT_TRUE(apply(route_nh(nl::Op::add, "fd00:81::/64", 23)));
    ASSERT_EQ(rib->sync(), 0u);
    NextHop one = lookup("10.80.1.1");
    EXPECT_EQ(one.kind, NextHopKind::forward);
    EXPECT_EQ(one.port, 0);
    EXPECT_EQ(one.dst_mac, maca("02:00:00:00:aa:07"));
    const std::vector<std::pair<int, uint32_t>> both = {{0, 1}, {1, 3}};
    EXPECT_EQ(members_of("10.81.1.1"), both);
    EXPECT_EQ(lookup("10.82.1.1").dst_mac, maca("02:00:00:00:bb:0e"));
    EXPECT_EQ(lookup6("fd00:81::1").dst_mac, maca("02:00:00:00:bb:0e"));
    EXPECT_EQ(routes().at("10.81.0.0/16").origin, "bgp");
    EXPECT_EQ(sync->stats().unsupported, 0u);
    EXPECT_EQ(sync->stats().nexthop_changes, 4u);

    // A withdrawn route stops naming its object; the object stays.
    EXPECT_TRUE(apply(route_nh(nl::Op::del, "10.82.0.0/16", 23)));
    rib->sync();
    EXPECT_EQ(lookup("10.82.1.1").kind, NextHopKind::drop_no_route);
    EXPECT_EQ(lookup6("fd00:81::1").kind, NextHopKind::forward);
    // A route moving to another object, and to plain next hops, leaves the old one's users.
    EXPECT_TRUE(apply(route_nh(nl::Op::add, "10.80.0.0/16", 22)));
    EXPECT_TRUE(apply(route(nl::Op::add, "10.80.0.0/16", {{kIf0, "10.0.1.7"}})));
    // 22 replaced: group 30 (10.81) follows, 10.80 (no longer naming it) does not.
    apply(neigh(nl::Op::add, kIf0, "10.0.1.8", "02:00:00:00:aa:08"));
    EXPECT_TRUE(apply(object(nl::Op::add, 22, kIf0, "10.0.1.8")));
    rib->sync();
    EXPECT_EQ(lookup("10.80.1.1").dst_mac, maca("02:00:00:00:aa:07"));
    EXPECT_EQ(members_of("10.81.1.1"), (std::vector<std::pair<int, uint32_t>>{{0, 1}, {0, 3}}));
}

// Replacing an object moves every route naming it, or a group holding it, with no route message
// (nexthop_compat_mode 0). Deleting one withdraws its routes (the kernel deletes them) and
// drops it from its groups; a group left empty goes too.
TEST_F(RouteSyncTest, NexthopObjectReplacedOrDeletedMovesItsRoutes) {
    apply(neigh(nl::Op::add, kIf0, "10.0.1.7", "02:00:00:00:aa:07"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.8", "02:00:00:00:bb:08"));
    apply(object(nl::Op::add, 21, kIf0, "10.0.1.7"));
    apply(object(nl::Op::add, 22, kIf1, "10.0.2.7"));
    apply(object(nl::Op::add, 30, 0, nullptr, {{21, 1}, {22, 1}}));
    apply(object(nl::Op::add, 31, 0, nullptr, {{22, 2}}));
    apply(route_nh(nl::Op::add, "10.80.0.0/16", 22));
    apply(route_nh(nl::Op::add, "10.81.0.0/16", 30));
    apply(route_nh(nl::Op::add, "10.82.0.0/16", 31));
    ASSERT_EQ(rib->sync(), 0u);
    EXPECT_EQ(members_of("10.81.1.1"), (std::vector<std::pair<int, uint32_t>>{{0, 1}, {1, 1}}));

    // 22 replaced by a gateway on the same port: its route and both groups follow.
    EXPECT_TRUE(apply(object(nl::Op::add, 22, kIf1, "10.0.2.8")));
    rib->sync();
    EXPECT_EQ(lookup("10.80.1.1").dst_mac, maca("02:00:00:00:bb:08"));
    EXPECT_EQ(lookup("10.82.1.1").dst_mac, maca("02:00:00:00:bb:08"));  // group of one member
    // The group replaced: one member now.
    EXPECT_TRUE(apply(object(nl::Op::add, 30, 0, nullptr, {{21, 1}})));
    rib->sync();
    EXPECT_EQ(lookup("10.81.1.1").port, 0);
    EXPECT_TRUE(apply(object(nl::Op::add, 30, 0, nullptr, {{21, 1}, {22, 5}})));
    rib->sync();
    EXPECT_EQ(members_of("10.81.1.1"), (std::vector<std::pair<int, uint32_t>>{{0, 1}, {1, 5}}));

    // 22 deleted: 10.80 (naming it) goes, group 30 keeps 21, group 31 (only 22) goes with 10.82.
    EXPECT_TRUE(apply(object(nl::Op::del, 22, 0, nullptr)));
    rib->sync();
    EXPECT_EQ(lookup("10.80.1.1").kind, NextHopKind::drop_no_route);
    EXPECT_EQ(lookup("10.81.1.1").kind, NextHopKind::forward);
    EXPECT_EQ(lookup("10.81.1.1").port, 0);
    EXPECT_EQ(lookup("10.82.1.1").kind, NextHopKind::drop_no_route);
    EXPECT_EQ(sync->learned_routes(), 1u);
    // What the kernel says next (group 31's deletion, group 30's new members) changes nothing.
    EXPECT_FALSE(apply(object(nl::Op::del, 31, 0, nullptr)));
    EXPECT_FALSE(apply(object(nl::Op::add, 30, 0, nullptr, {{21, 1}})));
    // A blackhole object: its routes discard (RouteThroughABlackholeObjectDiscards).
    auto bh = object(nl::Op::add, 40, 0, nullptr);
    bh.blackhole = true;
    apply(bh);
    EXPECT_TRUE(apply(route_nh(nl::Op::add, "10.83.0.0/16", 40)));
    rib->sync();
    EXPECT_EQ(lookup("10.83.1.1").kind, NextHopKind::discard);
    // An object replaced onto one of our ports brings its route in.
    apply(object(nl::Op::add, 41, 99, "192.168.0.1"));
    EXPECT_FALSE(apply(route_nh(nl::Op::add, "10.84.0.0/16", 41)));
    EXPECT_TRUE(apply(object(nl::Op::add, 41, kIf0, "10.0.1.7")));
    rib->sync();
    EXPECT_EQ(lookup("10.84.1.1").port, 0);
}

// With nexthop_compat_mode 1 (the default) the route also carries the object's next hops: used
// when the object is unknown (a kernel whose objects cannot be dumped); the object wins when
// known.
TEST_F(RouteSyncTest, CompatNextHopsOnlyForAnUnknownObject) {
    apply(neigh(nl::Op::add, kIf0, "10.0.1.7", "02:00:00:00:aa:07"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    auto r = route(nl::Op::add, "10.80.0.0/16", {{kIf0, "10.0.1.7"}}, RTPROT_BGP);
    r.nh_id = 50;
    EXPECT_TRUE(apply(r));
    rib->sync();
    EXPECT_EQ(lookup("10.80.1.1").port, 0);
    EXPECT_EQ(sync->stats().unsupported, 0u);
    // The object arrives (another gateway than the route's copy): it is the truth.
    EXPECT_TRUE(apply(object(nl::Op::add, 50, kIf1, "10.0.2.7")));
    rib->sync();
    EXPECT_EQ(lookup("10.80.1.1").port, 1);
    EXPECT_FALSE(apply(r));  // the same route again: the object still decides
}

// After an overrun the dump brings objects and routes again: objects the kernel no longer has
// are gone with their routes.
TEST_F(RouteSyncTest, ResyncRebuildsNexthopObjects) {
    apply(neigh(nl::Op::add, kIf0, "10.0.1.7", "02:00:00:00:aa:07"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    apply(object(nl::Op::add, 21, kIf0, "10.0.1.7"));
    apply(object(nl::Op::add, 22, kIf1, "10.0.2.7"));
    apply(route_nh(nl::Op::add, "10.80.0.0/16", 21));
    apply(route_nh(nl::Op::add, "10.81.0.0/16", 22));
    rib->sync();
    sync->begin_resync();
    apply_addresses();
    apply(neigh(nl::Op::add, kIf0, "10.0.1.7", "02:00:00:00:aa:07"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    apply(object(nl::Op::add, 21, kIf1, "10.0.2.7"));  // changed while notifications were lost
    apply(route_nh(nl::Op::add, "10.80.0.0/16", 21));
    EXPECT_TRUE(sync->end_resync());
    rib->sync();
    EXPECT_EQ(lookup("10.80.1.1").port, 1);
    EXPECT_EQ(lookup("10.81.1.1").kind, NextHopKind::drop_no_route);
    // Object 22 is gone: a later notification naming it changes nothing.
    EXPECT_FALSE(apply(object(nl::Op::del, 22, 0, nullptr)));
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
    apply_addresses();
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

// One prefix, several kernel routes of different metrics (a BGP route and a floating static
// behind it): the switch uses the one the kernel prefers, the lowest metric through its ports,
// and when that one goes the next takes over instead of the prefix being withdrawn.
TEST_F(RouteSyncTest, RoutesOfOnePrefixByMetric) {
    apply(neigh(nl::Op::add, kIf0, "10.0.1.7", "02:00:00:00:aa:07"));
    apply(neigh(nl::Op::add, kIf0, "10.0.1.8", "02:00:00:00:aa:08"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    auto metric = [](nl::RouteMsg m, uint32_t prio) {
        m.priority = prio;
        return m;
    };
    auto via = [&]() { return lookup("10.30.0.9").dst_mac; };
    EXPECT_TRUE(apply(metric(route(nl::Op::add, "10.30.0.0/24", {{kIf0, "10.0.1.7"}}, RTPROT_STATIC), 200)));
    rib->sync();
    EXPECT_EQ(via(), maca("02:00:00:00:aa:07"));
    EXPECT_EQ(routes().at("10.30.0.0/24").origin, "static");
    // A better one (BGP, metric 20) wins; a worse one (metric 100) changes nothing; a better one
    // through another interface of the namespace is not the switch's and changes nothing.
    EXPECT_TRUE(apply(metric(route(nl::Op::add, "10.30.0.0/24", {{kIf1, "10.0.2.7"}}), 20)));
    EXPECT_FALSE(apply(metric(route(nl::Op::add, "10.30.0.0/24", {{kIf0, "10.0.1.8"}}), 100)));
    EXPECT_FALSE(apply(metric(route(nl::Op::add, "10.30.0.0/24", {{99, "192.168.0.1"}}), 5)));
    rib->sync();
    EXPECT_EQ(via(), maca("02:00:00:00:bb:07"));
    EXPECT_EQ(routes().at("10.30.0.0/24").origin, "bird");
    EXPECT_EQ(sync->learned_routes(), 1u);
    EXPECT_EQ(sync->kernel_routes(), 3u);
    // BGP withdraws: the next one (metric 100), not nothing.
    EXPECT_TRUE(apply(metric(route(nl::Op::del, "10.30.0.0/24", {{kIf1, "10.0.2.7"}}), 20)));
    rib->sync();
    EXPECT_EQ(via(), maca("02:00:00:00:aa:08"));
    // Replacing the route in use (same metric) moves it; replacing one behind it does not.
    apply(neigh(nl::Op::add, kIf1, "10.0.2.8", "02:00:00:00:bb:08"));
    EXPECT_TRUE(apply(metric(route(nl::Op::add, "10.30.0.0/24", {{kIf1, "10.0.2.8"}}), 100)));
    EXPECT_FALSE(apply(metric(route(nl::Op::add, "10.30.0.0/24", {{kIf0, "10.0.1.8"}}, RTPROT_STATIC), 200)));
    rib->sync();
    EXPECT_EQ(via(), maca("02:00:00:00:bb:08"));
    // BGP comes back, and goes again: the replaced routes are the ones left.
    EXPECT_TRUE(apply(metric(route(nl::Op::add, "10.30.0.0/24", {{kIf1, "10.0.2.7"}}), 20)));
    rib->sync();
    EXPECT_EQ(via(), maca("02:00:00:00:bb:07"));
    EXPECT_TRUE(apply(metric(route(nl::Op::del, "10.30.0.0/24", {}), 20)));
    EXPECT_TRUE(apply(metric(route(nl::Op::del, "10.30.0.0/24", {}), 100)));
    rib->sync();
    EXPECT_EQ(via(), maca("02:00:00:00:aa:08"));  // the static, as replaced
    EXPECT_EQ(routes().at("10.30.0.0/24").origin, "static");
    // A route moving off the switch's ports leaves the others; the last one gone: no route.
    EXPECT_TRUE(apply(metric(route(nl::Op::add, "10.30.0.0/24", {{99, "192.168.0.1"}}), 200)));
    rib->sync();
    EXPECT_EQ(lookup("10.30.0.9").kind, NextHopKind::drop_no_route);
    EXPECT_TRUE(apply(metric(route(nl::Op::add, "10.30.0.0/24", {{kIf0, "10.0.1.7"}}), 300)));
    EXPECT_TRUE(apply(metric(route(nl::Op::del, "10.30.0.0/24", {}), 300)));
    EXPECT_FALSE(apply(metric(route(nl::Op::del, "10.30.0.0/24", {}), 300)));  // not there
    rib->sync();
    EXPECT_EQ(lookup("10.30.0.9").kind, NextHopKind::drop_no_route);
    EXPECT_EQ(sync->learned_routes(), 0u);
    EXPECT_EQ(sync->kernel_routes(), 0u);
    EXPECT_EQ(sync->stats().routes_removed, 2u);  // withdrawn twice: 200 off our ports, 300 deleted
}

// The same with kernel nexthop objects (FRR's routes) beside a plain static: an object deleted
// deletes its route, and the static takes over; an object moved off the switch's ports leaves
// the static in use until it comes back; a resync whose dump no longer has the preferred route
// (its object still there) installs the next.
TEST_F(RouteSyncTest, ObjectRoutesAndAFloatingStaticByMetric) {
    apply(neigh(nl::Op::add, kIf0, "10.0.1.7", "02:00:00:00:aa:07"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    apply(object(nl::Op::add, 41, kIf1, "10.0.2.7"));
    nl::RouteMsg bgp = route_nh(nl::Op::add, "10.31.0.0/16", 41);
    bgp.priority = 20;
    nl::RouteMsg st = route(nl::Op::add, "10.31.0.0/16", {{kIf0, "10.0.1.7"}}, RTPROT_STATIC);
    st.priority = 250;
    EXPECT_TRUE(apply(bgp));
    EXPECT_FALSE(apply(st));
    rib->sync();
    EXPECT_EQ(lookup("10.31.0.1").port, 1);
    // The object moves to an interface that is not the switch's: the static is used meanwhile.
    EXPECT_TRUE(apply(object(nl::Op::add, 41, 99, "192.168.0.1")));
    rib->sync();
    EXPECT_EQ(lookup("10.31.0.1").port, 0);
    EXPECT_EQ(routes().at("10.31.0.0/16").origin, "static");
    EXPECT_TRUE(apply(object(nl::Op::add, 41, kIf1, "10.0.2.7")));
    rib->sync();
    EXPECT_EQ(lookup("10.31.0.1").port, 1);
    EXPECT_EQ(routes().at("10.31.0.0/16").origin, "bgp");
    // Deleting the object deletes the BGP route (no route message in compat mode 0).
    EXPECT_TRUE(apply(object(nl::Op::del, 41, kIf1, "10.0.2.7")));
    rib->sync();
    EXPECT_EQ(lookup("10.31.0.1").port, 0);
    EXPECT_EQ(sync->kernel_routes(), 1u);
    // Back, then lost in a socket overrun: the dump has only the static.
    apply(object(nl::Op::add, 41, kIf1, "10.0.2.7"));
    EXPECT_TRUE(apply(bgp));
    rib->sync();
    EXPECT_EQ(lookup("10.31.0.1").port, 1);
    sync->begin_resync();
    apply_addresses();
    apply(neigh(nl::Op::add, kIf0, "10.0.1.7", "02:00:00:00:aa:07"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    apply(object(nl::Op::add, 41, kIf1, "10.0.2.7"));  // the object stays, its route went
    EXPECT_FALSE(apply(st));
    EXPECT_TRUE(sync->end_resync());
    rib->sync();
    EXPECT_EQ(lookup("10.31.0.1").port, 0);
    EXPECT_EQ(sync->learned_routes(), 1u);
    EXPECT_EQ(sync->kernel_routes(), 1u);
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
// An interface set down or back up asks for a re-dump (the kernel deletes routes through a
// downed interface without a message). Down: the dump no longer has the route through it, and
// a floating static through the other port takes over.
TEST_F(RouteSyncTest, InterfaceGoingDownOrComingBackUpAsksForAResync) {
    apply(neigh(nl::Op::add, kIf0, "10.0.1.7", "02:00:00:00:aa:07"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    nl::RouteMsg bgp = route(nl::Op::add, "10.32.0.0/16", {{kIf0, "10.0.1.7"}});
    bgp.priority = 32;
    nl::RouteMsg st = route(nl::Op::add, "10.32.0.0/16", {{kIf1, "10.0.2.7"}}, RTPROT_STATIC);
    st.priority = 500;
    apply(bgp);
    apply(st);
    rib->sync();
    EXPECT_EQ(lookup("10.32.0.1").port, 0);
    EXPECT_FALSE(sync->take_resync_request());
    apply(link(kIf0, "p0", false));
    EXPECT_TRUE(sync->take_resync_request());
    EXPECT_FALSE(sync->take_resync_request());
    rib->sync();
    EXPECT_EQ(lookup("10.32.0.1").port, 1);  // at once, not at the end of the dump
    sync->begin_resync();
    apply_addresses();
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    apply(st);  // the kernel deleted the route through p0
    EXPECT_TRUE(sync->end_resync());
    rib->sync();
    EXPECT_EQ(lookup("10.32.0.1").port, 1);
    apply(link(kIf0, "p0", true));
    EXPECT_TRUE(sync->take_resync_request());
    EXPECT_FALSE(sync->take_resync_request());
}

// Routes that discard (`ip route add blackhole|unreachable|prohibit P`): the kernel drops, so
// the switch installs a discard next hop (blackhole: drop reason route_discard) or a reject one
// (unreachable, prohibit: punted for the kernel's ICMP answer where there are host interfaces,
// else route_discard) instead of routing by a shorter prefix (in a fabric: back up a default
// route, a loop until the TTL runs out). By metric with the prefix's other routes, whatever the
// ports' state; IPv4 and IPv6.
TEST_F(RouteSyncTest, DiscardRoutesDropByMetricWhateverThePorts) {
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    apply(neigh(nl::Op::add, kIf1, "fd00:2::7", "02:00:00:00:bb:07"));
    nl::RouteMsg dflt = route(nl::Op::add, "0.0.0.0/0", {{kIf1, "10.0.2.7"}});
    nl::RouteMsg bh = route(nl::Op::add, "10.72.0.0/16", {}, RTPROT_STATIC);
    bh.type = RTN_BLACKHOLE;
    nl::RouteMsg unreach = route(nl::Op::add, "10.74.0.0/16", {}, RTPROT_STATIC);
    unreach.type = RTN_UNREACHABLE;
    unreach.priority = 10;
    nl::RouteMsg uni = route(nl::Op::add, "10.74.0.0/16", {{kIf1, "10.0.2.7"}});
    uni.priority = 20;
    nl::RouteMsg prohibit6 = route(nl::Op::add, "fd00:72::/32", {}, RTPROT_STATIC);
    prohibit6.type = RTN_PROHIBIT;
    for (const auto &m : {dflt, bh, unreach, prohibit6}) EXPECT_TRUE(apply(m));
    EXPECT_FALSE(apply(uni));  // behind the unreachable route
    rib->sync();
    EXPECT_EQ(lookup("10.72.3.4").kind, NextHopKind::discard);
    EXPECT_EQ(lookup("10.73.3.4").port, 1);  // the default route
    EXPECT_EQ(lookup("10.74.3.4").kind, NextHopKind::reject);
    EXPECT_EQ(lookup6("fd00:72::1").kind, NextHopKind::reject);
    const RouteView v = routes().at("10.72.0.0/16");
    EXPECT_EQ(v.source, RouteSource::learned);
    EXPECT_EQ(v.origin, "static");
    EXPECT_FALSE(v.via);
    EXPECT_TRUE(v.installed);
    EXPECT_EQ(sync->learned_routes(), 4u);
    EXPECT_EQ(sync->kernel_routes(), 5u);
    // Every port without carrier: a discard route still applies.
    for (auto [ifx, name] : {std::pair{kIf0, "p0"}, std::pair{kIf1, "p1"}}) {
        nl::LinkMsg l = link(ifx, name, true);
        l.oper_up = false;
        apply(l);
    }
    rib->sync();
    EXPECT_EQ(lookup("10.72.3.4").kind, NextHopKind::discard);
    EXPECT_EQ(lookup("10.74.3.4").kind, NextHopKind::reject);
    apply(link(kIf0, "p0", true));
    apply(link(kIf1, "p1", true));
    // The unreachable route (metric 10) deleted: the metric-20 route through p1 takes over; a
    // blackhole replacing the route in use, and gone again.
    unreach.op = nl::Op::del;
    EXPECT_TRUE(apply(unreach));
    rib->sync();
    EXPECT_EQ(lookup("10.74.3.4").port, 1);
    EXPECT_EQ(lookup("10.74.3.4").kind, NextHopKind::forward);
    nl::RouteMsg bh20 = uni;
    bh20.type = RTN_BLACKHOLE;
    bh20.nexthops.clear();
    EXPECT_TRUE(apply(bh20));
    rib->sync();
    EXPECT_EQ(lookup("10.74.3.4").kind, NextHopKind::discard);
    EXPECT_TRUE(apply(uni));
    rib->sync();
    EXPECT_EQ(lookup("10.74.3.4").kind, NextHopKind::forward);
    bh.op = nl::Op::del;
    EXPECT_TRUE(apply(bh));
    rib->sync();
    EXPECT_EQ(lookup("10.72.3.4").port, 1);  // by the default route again
    EXPECT_EQ(lookup("10.72.3.4").kind, NextHopKind::forward);
}

// FRR's zebra installs a blackhole as a route naming a blackhole nexthop object: a discard
// route too, until the object is replaced by a next hop.
TEST_F(RouteSyncTest, RouteThroughABlackholeObjectDiscards) {
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    nl::NexthopMsg bh = object(nl::Op::add, 50, 0, nullptr);
    bh.blackhole = true;
    apply(bh);
    EXPECT_TRUE(apply(route_nh(nl::Op::add, "10.75.0.0/16", 50)));
    rib->sync();
    EXPECT_EQ(lookup("10.75.0.1").kind, NextHopKind::discard);
    EXPECT_EQ(routes().at("10.75.0.0/16").origin, "bgp");
    EXPECT_TRUE(apply(object(nl::Op::add, 50, kIf1, "10.0.2.7")));
    rib->sync();
    EXPECT_EQ(lookup("10.75.0.1").kind, NextHopKind::forward);
    EXPECT_EQ(lookup("10.75.0.1").port, 1);
    EXPECT_TRUE(apply(bh));
    rib->sync();
    EXPECT_EQ(lookup("10.75.0.1").kind, NextHopKind::discard);
}

// A route for a TOS (`ip route add P tos 0x10 via G metric M`) is not the prefix's route: the
// FIB routes by destination only, so it is not followed, even with the metric of the route in
// use (the kernel keeps both), and its deletion changes nothing.
TEST_F(RouteSyncTest, RoutesForATosAreNotFollowed) {
    apply(neigh(nl::Op::add, kIf0, "10.0.1.7", "02:00:00:00:aa:07"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    nl::RouteMsg bgp = route(nl::Op::add, "10.36.0.0/16", {{kIf0, "10.0.1.7"}});
    bgp.priority = 32;
    nl::RouteMsg tos = route(nl::Op::add, "10.36.0.0/16", {{kIf1, "10.0.2.7"}}, RTPROT_BOOT);
    tos.priority = 32;
    tos.tos = 0x10;
    EXPECT_TRUE(apply(bgp));
    const uint64_t unsupported = sync->stats().unsupported;
    EXPECT_FALSE(apply(tos));
    EXPECT_EQ(sync->stats().unsupported, unsupported + 1);
    rib->sync();
    EXPECT_EQ(lookup("10.36.0.1").port, 0);
    EXPECT_EQ(routes().at("10.36.0.0/16").origin, "bird");
    EXPECT_EQ(sync->kernel_routes(), 1u);
    tos.op = nl::Op::del;
    EXPECT_FALSE(apply(tos));
    rib->sync();
    EXPECT_EQ(lookup("10.36.0.1").port, 0);
    EXPECT_EQ(sync->learned_routes(), 1u);
    // A TOS route alone is not followed either.
    nl::RouteMsg tos_only = route(nl::Op::add, "10.37.0.0/16", {{kIf1, "10.0.2.7"}});
    tos_only.tos = 0x08;
    EXPECT_FALSE(apply(tos_only));
    rib->sync();
    EXPECT_EQ(lookup("10.37.0.1").kind, NextHopKind::drop_no_route);
}

// A pulled cable (the host interface loses carrier, stays up): the kernel keeps its routes
// through it, flagged linkdown, and sends nothing about them. The route in use whose every
// port is down steps back for the next metric with a port up, at the link message; with the
// carrier back it is preferred again. Routes without a choice stay (their port withdraws them
// in the RIB and brings them back). The same for a route through a kernel nexthop object.
TEST_F(RouteSyncTest, CarrierLossMovesToTheNextMetricWithAPortUp) {
    apply(neigh(nl::Op::add, kIf0, "10.0.1.7", "02:00:00:00:aa:07"));
    apply(neigh(nl::Op::add, kIf1, "10.0.2.7", "02:00:00:00:bb:07"));
    nl::RouteMsg bgp = route(nl::Op::add, "10.33.0.0/16", {{kIf0, "10.0.1.7"}});
    bgp.priority = 32;
    nl::RouteMsg st = route(nl::Op::add, "10.33.0.0/16", {{kIf1, "10.0.2.7"}}, RTPROT_STATIC);
    st.priority = 500;
    nl::RouteMsg st2 = route(nl::Op::add, "10.33.0.0/16", {{kIf1, "10.0.2.7"}}, RTPROT_STATIC);
    st2.priority = 600;
    nl::RouteMsg alone = route(nl::Op::add, "10.34.0.0/16", {{kIf0, "10.0.1.7"}});
    apply(object(nl::Op::add, 42, kIf0, "10.0.1.7"));
    nl::RouteMsg obj = route_nh(nl::Op::add, "10.35.0.0/16", 42);
    obj.priority = 20;
    nl::RouteMsg obj_st = route(nl::Op::add, "10.35.0.0/16", {{kIf1, "10.0.2.7"}}, RTPROT_STATIC);
    obj_st.priority = 250;
    for (const auto &m : {bgp, st, st2, alone, obj, obj_st}) apply(m);
    rib->sync();
    EXPECT_EQ(lookup("10.33.0.1").port, 0);
    EXPECT_EQ(lookup("10.34.0.1").port, 0);
    EXPECT_EQ(lookup("10.35.0.1").port, 0);
    EXPECT_EQ(sync->learned_routes(), 3u);
    EXPECT_EQ(sync->kernel_routes(), 6u);

    nl::LinkMsg lost = link(kIf0, "p0", true);
    lost.oper_up = false;
    EXPECT_TRUE(apply(lost));
    EXPECT_FALSE(sync->take_resync_request()) << "the kernel deleted nothing: no re-dump";
    rib->sync();
    EXPECT_EQ(lookup("10.33.0.1").port, 1);
    EXPECT_EQ(routes().at("10.33.0.0/16").origin, "static");
    EXPECT_EQ(lookup("10.34.0.1").kind, NextHopKind::drop_no_route);  // no other route
    EXPECT_EQ(lookup("10.35.0.1").port, 1);
    EXPECT_EQ(routes().at("10.35.0.0/16").origin, "static");
    EXPECT_EQ(sync->learned_routes(), 3u);
    EXPECT_EQ(sync->kernel_routes(), 6u);
    // While p0 is down the kernel changes the metric-500 route: the switch follows it, and a
    // delete of it moves on to the metric-600 one, not back to the route through p0.
    nl::RouteMsg st_moved = st;
    st_moved.nexthops[0].gateway = ipa("10.0.2.8");
    apply(neigh(nl::Op::add, kIf1, "10.0.2.8", "02:00:00:00:bb:08"));
    EXPECT_TRUE(apply(st_moved));
    rib->sync();
    EXPECT_EQ(lookup("10.33.0.1").dst_mac, maca("02:00:00:00:bb:08"));
    nl::RouteMsg st_del = st;
    st_del.op = nl::Op::del;
    EXPECT_TRUE(apply(st_del));
    rib->sync();
    EXPECT_EQ(lookup("10.33.0.1").dst_mac, maca("02:00:00:00:bb:07"));
    EXPECT_EQ(sync->kernel_routes(), 5u);

    EXPECT_TRUE(apply(link(kIf0, "p0", true)));
    EXPECT_FALSE(sync->take_resync_request());
    rib->sync();
    EXPECT_EQ(lookup("10.33.0.1").port, 0);
    EXPECT_EQ(routes().at("10.33.0.0/16").origin, "bird");
    EXPECT_EQ(lookup("10.34.0.1").port, 0);
    EXPECT_EQ(lookup("10.35.0.1").port, 0);
    EXPECT_EQ(routes().at("10.35.0.0/16").origin, "bgp");
    EXPECT_EQ(sync->learned_routes(), 3u);

    // Both ports down: the lowest metric stays installed (nothing forwards) and serves again
    // with its port.
    EXPECT_TRUE(apply(lost));
    nl::LinkMsg lost1 = link(kIf1, "p1", true);
    lost1.oper_up = false;
    EXPECT_TRUE(apply(lost1));
    rib->sync();
    EXPECT_EQ(lookup("10.33.0.1").kind, NextHopKind::drop_no_route);
    EXPECT_EQ(sync->learned_routes(), 3u);
    EXPECT_TRUE(apply(link(kIf0, "p0", true)));
    rib->sync();
    EXPECT_EQ(lookup("10.33.0.1").port, 0);
    EXPECT_EQ(routes().at("10.33.0.0/16").origin, "bird");
    EXPECT_FALSE(sync->take_resync_request());
    // Set down while without carrier: the kernel deletes its IPv4 routes, so a re-dump; the
    // carrier coming back while it is down asks for none, being set up again does.
    apply(link(kIf1, "p1", false));
    EXPECT_TRUE(sync->take_resync_request());
    nl::LinkMsg carrier_while_down = link(kIf1, "p1", false);
    carrier_while_down.oper_up = true;
    apply(carrier_while_down);
    EXPECT_FALSE(sync->take_resync_request());
    apply(link(kIf1, "p1", true));
    EXPECT_TRUE(sync->take_resync_request());
}

// Random sequences of what the kernel says (routes of several metrics, plain and through
// nexthop objects, objects replaced and deleted, carrier lost and back, re-dumps) against a
// model of the kernel: after each step the route the switch has for each prefix is the one
// the rule names (the lowest metric with a path through a port that is up; else the lowest
// with a path through the ports), built from the model's next hops, not by RouteSync; the
// counts match, and the FIB forwards exactly the prefixes with a live route.
TEST_F(RouteSyncTest, MatchesAModelOfTheKernelOverRandomSequences) {
    struct Hop {
        int ifindex;
        IpAddr gw;
        uint32_t weight;
    };
    struct KRoute {
        uint8_t protocol;
        uint32_t nh_id;
        std::vector<Hop> hops;
        bool discard = false;  // a blackhole route
        bool reject = false;   // with discard: an unreachable route instead
    };
    const std::vector<std::string> prefixes = {"10.40.0.0/16", "10.41.0.0/16", "10.42.0.0/16",
                                               "fd00:40::/32"};
    const std::vector<uint32_t> metrics = {10, 20, 30};
    const std::vector<std::pair<uint8_t, std::string>> protocols = {
        {12, "bird"}, {RTPROT_STATIC, "static"}, {RTPROT_BOOT, "boot"}, {RTPROT_BGP, "bgp"}};
    // By family: IPv4 routes and objects 1-3 take IPv4 gateways, IPv6 ones and objects 4-6 IPv6.
    const std::vector<std::pair<int, const char *>> gateways4 = {
        {kIf0, "10.0.1.7"}, {kIf0, "10.0.1.8"}, {kIf1, "10.0.2.7"}, {kIf1, "10.0.2.8"},
        {99, "192.168.0.1"}};
    const std::vector<std::pair<int, const char *>> gateways6 = {
        {kIf0, "fd00:1::7"}, {kIf0, "fe80::7"}, {kIf1, "fd00:2::7"}, {kIf1, "fe80::8"},
        {99, "fd99::1"}};
    std::vector<std::pair<int, const char *>> gateways = gateways4;
    gateways.insert(gateways.end(), gateways6.begin(), gateways6.end());
    auto port_of = [](int ifindex) { return ifindex == kIf0 ? 0 : ifindex == kIf1 ? 1 : -1; };
    const std::vector<uint32_t> seeds = {1, 2, 3, 4, 5, 6};
    // What the sequences reached, so they are known to exercise the rule: a route of higher
    // metric in use because the lower one's ports are down, every port of the installed route
    // down, an object's route installed, an IPv6 route installed.
    size_t backup_in_use = 0, all_down = 0, object_installed = 0, v6_installed = 0, discards = 0;
    for (uint32_t seed : seeds) {
        // A fresh switch per seed: the fixture's is rebuilt.
        TearDown();
        SetUp();
        for (const auto &[ifx, gw] : gateways)
            if (ifx != 99) apply(neigh(nl::Op::add, ifx, gw, "02:00:00:00:cc:01"));
        std::mt19937 g(seed);
        auto upto = [&](int n) { return int(g() % uint32_t(n)); };
        std::map<std::pair<std::string, uint32_t>, KRoute> kernel;  // (prefix, metric)
        std::map<uint32_t, Hop> objects;                             // single next hops
        bool carrier[2] = {true, true};
        auto hop_msg = [](const Hop &h) {
            nl::NextHopMsg m;
            m.ifindex = h.ifindex;
            m.gateway = h.gw;
            m.weight = h.weight;
            return m;
        };
        auto route_msg = [&](nl::Op op, const std::pair<std::string, uint32_t> &k, const KRoute &r) {
            nl::RouteMsg m = route(op, k.first.c_str(), {}, r.protocol);
            m.priority = k.second;
            m.nh_id = r.nh_id;
            if (r.discard) m.type = r.reject ? RTN_UNREACHABLE : RTN_BLACKHOLE;
            for (const Hop &h : r.hops) m.nexthops.push_back(hop_msg(h));
            return m;
        };
        auto object_msg = [&](nl::Op op, uint32_t id, const Hop &h) {
            return object(op, id, h.ifindex, h.gw.str().c_str());
        };
        auto link_msg = [&](int port) {
            nl::LinkMsg m = link(port ? kIf1 : kIf0, port ? "p1" : "p0", true);
            m.oper_up = carrier[port];
            return m;
        };
        // The model's paths of a kernel route through the switch's ports.
        auto paths = [&](const KRoute &r) {
            std::vector<LearnedPath> out;
            std::vector<Hop> hops = r.hops;
            if (r.nh_id) hops = {objects.at(r.nh_id)}, hops[0].weight = 1;
            for (const Hop &h : hops)
                if (port_of(h.ifindex) >= 0)
                    out.push_back(LearnedPath{uint8_t(port_of(h.ifindex)), h.gw, h.weight});
            return out;
        };
        auto v6 = [](const std::string &p) { return p.find(':') != std::string::npos; };
        bool backup = false, object = false;  // of the last expected()
        auto expected = [&](const std::string &p) -> std::optional<LearnedRoute> {
            std::optional<LearnedRoute> first, live;
            backup = object = false;
            for (uint32_t metric : metrics) {  // ascending
                auto it = kernel.find({p, metric});
                if (it == kernel.end()) continue;
                LearnedRoute r;
                for (const auto &[proto, name] : protocols)
                    if (proto == it->second.protocol) r.origin = name;
                r.paths = paths(it->second);
                r.discard = it->second.discard;
                r.reject = it->second.reject;
                if (r.paths.empty() && !r.discard) continue;
                bool up = r.discard;  // it applies whatever the ports
                for (const LearnedPath &lp : r.paths) up |= carrier[lp.port];
                if (up) {
                    live = r;
                    backup = first.has_value();
                    object = it->second.nh_id != 0;
                    break;
                }
                if (!first) first = r, object = it->second.nh_id != 0;
            }
            return live ? live : first;
        };
        auto dump = [&] {
            sync->begin_resync();
            apply(link_msg(0));
            apply(link_msg(1));
            apply_addresses();
            for (const auto &[ifx, gw] : gateways)
                if (ifx != 99) apply(neigh(nl::Op::add, ifx, gw, "02:00:00:00:cc:01"));
            for (const auto &[id, h] : objects) apply(object_msg(nl::Op::add, id, h));
            for (const auto &[k, r] : kernel) apply(route_msg(nl::Op::add, k, r));
            sync->end_resync();
        };
        for (int step = 0; step < 400; step++) {
            const std::string where = "seed " + std::to_string(seed) + " step " + std::to_string(step);
            const int op = upto(100);
            const std::pair<std::string, uint32_t> k{prefixes[size_t(upto(int(prefixes.size())))],
                                                     metrics[size_t(upto(3))]};
            const auto &gws = v6(k.first) ? gateways6 : gateways4;
            const uint32_t first_id = v6(k.first) ? 4 : 1;  // the family's objects
            if (op < 35) {  // a route added or replaced
                KRoute r{protocols[size_t(upto(4))].first, 0, {}};
                const uint32_t id = first_id + uint32_t(upto(3));
                if (upto(100) < 10) {
                    r.discard = true;
                    r.reject = upto(2) == 0;
                } else if (objects.count(id) && upto(100) < 40) {
                    r.nh_id = id;
                } else {
                    for (int n = 1 + upto(2); n > 0; n--) {
                        const auto &[ifx, gw] = gws[size_t(upto(int(gws.size())))];
                        r.hops.push_back(Hop{ifx, ipa(gw), uint32_t(1 + upto(3))});
                    }
                }
                kernel[k] = r;
                apply(route_msg(nl::Op::add, k, r));
            } else if (op < 55) {  // a route deleted (or one the kernel does not have)
                auto it = kernel.find(k);
                KRoute r{12, 0, {}};
                if (it != kernel.end()) r = it->second, kernel.erase(it);
                apply(route_msg(nl::Op::del, k, r));
            } else if (op < 70) {  // an object added or replaced
                const uint32_t id = first_id + uint32_t(upto(3));
                const auto &[ifx, gw] = gws[size_t(upto(int(gws.size())))];
                objects[id] = Hop{ifx, ipa(gw), 1};
                apply(object_msg(nl::Op::add, id, objects[id]));
            } else if (op < 75) {  // an object deleted: the kernel deletes its routes, silently
                if (objects.empty()) continue;
                auto it = std::next(objects.begin(), upto(int(objects.size())));
                const uint32_t id = it->first;
                apply(object_msg(nl::Op::del, id, it->second));
                objects.erase(it);
                std::erase_if(kernel, [&](const auto &e) { return e.second.nh_id == id; });
            } else if (op < 93) {  // carrier lost or back
                const int port = upto(2);
                carrier[port] = upto(100) < 55;
                apply(link_msg(port));
                (void)sync->take_resync_request();
            } else {  // a socket overrun: the whole state again
                dump();
            }
            size_t cands = 0, installed = 0;
            for (const auto &[key, r] : kernel) cands += r.discard || r.nh_id || !paths(r).empty();
            rib->sync();
            for (const std::string &p : prefixes) {
                const auto want = expected(p);
                const auto got = rib->learned(*parse_prefix(p.c_str()));
                ASSERT_EQ(got.has_value(), want.has_value()) << where << " " << p;
                const std::string dst = p.substr(0, p.find('/'));
                auto fib_nh = [&] { return v6(p) ? lookup6(dst.c_str()) : lookup(dst.c_str()); };
                if (!want) {
                    EXPECT_EQ(fib_nh().kind, NextHopKind::drop_no_route) << where << " " << p;
                    continue;
                }
                installed++;
                backup_in_use += backup;
                object_installed += object;
                v6_installed += v6(p);
                ASSERT_EQ(got->origin, want->origin) << where << " " << p;
                ASSERT_EQ(got->discard, want->discard) << where << " " << p;
                ASSERT_EQ(got->reject, want->reject) << where << " " << p;
                discards += want->discard;
                ASSERT_EQ(got->paths.size(), want->paths.size()) << where << " " << p;
                bool up = false;
                for (size_t i = 0; i < want->paths.size(); i++) {
                    EXPECT_EQ(got->paths[i].port, want->paths[i].port) << where << " " << p;
                    EXPECT_EQ(got->paths[i].via, want->paths[i].via) << where << " " << p;
                    EXPECT_EQ(got->paths[i].weight, want->paths[i].weight) << where << " " << p;
                    up |= carrier[want->paths[i].port];
                }
                if (want->discard) {
                    EXPECT_EQ(fib_nh().kind, want->reject ? NextHopKind::reject : NextHopKind::discard)
                        << where << " " << p;
                    continue;
                }
                EXPECT_EQ(fib_nh().kind == NextHopKind::drop_no_route, !up) << where << " " << p;
                all_down += !up;
            }
            ASSERT_EQ(sync->kernel_routes(), cands) << where;
            ASSERT_EQ(sync->learned_routes(), installed) << where;
            if (::testing::Test::HasFailure()) return;
        }
    }
    EXPECT_GT(backup_in_use, 100u);
    EXPECT_GT(all_down, 100u);
    EXPECT_GT(object_installed, 100u);
    EXPECT_GT(v6_installed, 100u);
    EXPECT_GT(discards, 100u);
    std::printf("steps x prefixes: a backup in use %zu, every port down %zu, an object's route %zu, "
                "IPv6 %zu, a blackhole %zu\n",
                backup_in_use, all_down, object_installed, v6_installed, discards);
}

}  // namespace
}  // namespace rocesw::test
