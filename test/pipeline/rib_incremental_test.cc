// The incremental Rib::sync against the full recompute (doc/control-plane.md, "Incremental
// sync"). Random sequences of every mutator (learned single- and multi-path routes with and
// without gateway, withdrawals, neighbours appearing and going, ports down and up, address
// changes, static and multipath config, policy overrides; overlapping prefixes, IPv4 and IPv6)
// drive three Ribs:
// - `inc` syncs incrementally;
// - `full` recomputes every prefix at each sync (mark_all_dirty: what every sync did before),
//   and must agree with `inc` exactly: routes with their next-hop ids, groups with their ids and
//   slots, id usage, the Fibs' next hops and lookups;
// - after each sync, a full recompute of `inc` itself must find nothing to do (no Fib op, no
//   group published);
// - every few syncs, and at the end, a fresh Rib given the same final inputs and synced once
//   must give the same routes, next hops, group members and Fib lookups (ids aside: they
//   depend on the history).
#include <gtest/gtest.h>

#include <random>

#include <cstring>

#include "fixture.h"
#include "lb/policy.h"

namespace rocesw::test {
namespace {

constexpr int kPorts = 3;

std::vector<IfAddr> base_addrs(int port) {
    const std::string n = std::to_string(port + 1);
    return {ifa(("10.0." + n + ".1/24").c_str()), ifa(("fd00:" + n + "::1/64").c_str())};
}

// The inputs as the test set them, to build a fresh Rib from.
struct Inputs {
    std::vector<std::vector<IfAddr>> addrs;
    std::vector<bool> up = std::vector<bool>(kPorts, true);
    std::vector<RouteConfig> statics;
    std::vector<MultipathRouteConfig> multipath;
    std::map<std::string, std::tuple<uint8_t, IpAddr, MacAddr>> neighbours;  // the kernel's, "port ip"
    std::vector<NeighbourConfig> config_neighbours;  // the config's, which win over the kernel's
    std::map<std::string, std::pair<IpPrefix, LearnedRoute>> learned;
    Inputs() {
        for (int i = 0; i < kPorts; i++) addrs.push_back(base_addrs(i));
    }
};

std::vector<RibPort> rib_ports(const Inputs &in) {
    std::vector<RibPort> ports;
    for (int i = 0; i < kPorts; i++)
        ports.push_back({numbered("p", unsigned(i)),
                         MacAddr{{0x02, 0, 0, 0, 0, uint8_t(0x10 + i)}}, in.addrs[size_t(i)]});
    return ports;
}

struct TestRib {
    std::unique_ptr<Fib> fib;
    std::unique_ptr<Rib> rib;
    explicit TestRib(const Inputs &in) {
        FibParams p;
        p.compact = true;
        p.single_copy = true;
        p.ipv4_max_routes = 1024;
        p.ipv6_max_routes = 1024;
        p.max_nexthops = 4096;
        fib = std::make_unique<Fib>(unique_name("ribinc"), p, nullptr);
        rib = std::make_unique<Rib>(*fib, rib_ports(in));
    }
};

uint32_t lookup(const Fib &f, const IpAddr &a) {
    const FibTables *t = f.reader();
    if (!a.is_v6) {
        uint32_t ip = a.v4, nh;
        fib_lookup4_bulk(t, &ip, &nh, 1);
        return nh;
    }
    uint8_t ip[1][16];
    std::memcpy(ip[0], a.v6.data(), 16);
    uint32_t nh;
    fib_lookup6_bulk(t, ip, &nh, 1);
    return nh;
}

// A next hop as text, a group by what it holds (its id depends on the history).
std::string describe(const Rib &rib, const NextHop &nh, bool with_policy) {
    std::string s = std::to_string(int(nh.kind)) + " port " + std::to_string(nh.port) + " " +
                    nh.dst_mac.str();
    if (nh.kind != NextHopKind::ecmp_group) return s;
    for (const auto &g : rib.groups()) {
        if (g.id != nh.group) continue;
        s += " group of " + std::to_string(g.routes) + " from " + g.prefix.str();
        if (with_policy) s += " policy " + g.policy;
        std::set<std::string> members;
        for (const auto &m : g.members)
            members.insert(m.via.str() + "@" + std::to_string(m.port) + " w" +
                           std::to_string(m.weight) + (m.alive ? " " + m.mac.str() : " dead"));
        for (const auto &m : members) s += " [" + m + "]";
        return s;
    }
    return s + " group " + std::to_string(nh.group) + " missing";
}

// The fields both comparisons require equal of routes x and y; returns the route's label.
std::string expect_same_route(const RouteView &x, const RouteView &y, const std::string &where) {
    const std::string p = where + " " + x.prefix.str();
    EXPECT_EQ(x.source, y.source) << p;
    EXPECT_EQ(x.origin, y.origin) << p;
    EXPECT_EQ(x.via, y.via) << p;
    EXPECT_EQ(x.installed, y.installed) << p;
    return p;
}

// Exact: routes, ids, groups, Fib next hops (the same history, `full` recomputing everything).
void expect_identical(const TestRib &a, const TestRib &b, const std::string &where) {
    auto ra = a.rib->routes(), rb = b.rib->routes();
    ASSERT_EQ(ra.size(), rb.size()) << where;
    for (size_t i = 0; i < ra.size(); i++) {
        const auto &x = ra[i], &y = rb[i];
        ASSERT_EQ(x.prefix, y.prefix) << where;
        const std::string p = expect_same_route(x, y, where);
        EXPECT_EQ(x.nh, y.nh) << p;
        EXPECT_EQ(x.nexthop_id, y.nexthop_id) << p;
        if (x.installed) {
            EXPECT_EQ(a.fib->reader()->nexthops[x.nexthop_id], y.nh) << p;
        }
    }
    auto ga = a.rib->groups(), gb = b.rib->groups();
    ASSERT_EQ(ga.size(), gb.size()) << where;
    for (size_t i = 0; i < ga.size(); i++) {
        EXPECT_EQ(ga[i].id, gb[i].id) << where;
        EXPECT_EQ(ga[i].prefix, gb[i].prefix) << where;
        EXPECT_EQ(ga[i].routes, gb[i].routes) << where;
        EXPECT_EQ(ga[i].policy, gb[i].policy) << where;
        EXPECT_EQ(ga[i].policy_overridden, gb[i].policy_overridden) << where;
        ASSERT_EQ(ga[i].members.size(), gb[i].members.size()) << where;
        for (size_t j = 0; j < ga[i].members.size(); j++) {
            const auto &m = ga[i].members[j], &n = gb[i].members[j];
            EXPECT_EQ(m.slot, n.slot) << where;
            EXPECT_EQ(m.via, n.via) << where;
            EXPECT_EQ(m.port, n.port) << where;
            EXPECT_EQ(m.weight, n.weight) << where;
            EXPECT_EQ(m.alive, n.alive) << where;
            EXPECT_EQ(m.mac, n.mac) << where;
        }
    }
    EXPECT_EQ(a.rib->id_usage(), b.rib->id_usage()) << where;
    EXPECT_EQ(a.rib->route_counts(), b.rib->route_counts()) << where;
    EXPECT_EQ(a.rib->route_count(false), b.rib->route_count(false)) << where;
    EXPECT_EQ(a.rib->route_count(true), b.rib->route_count(true)) << where;
}

// Semantic: a Rib with another history (fresh) holds the same routes, next hops and groups, and
// its Fib answers `probes` the same way.
void expect_equivalent(const TestRib &a, const TestRib &b, const std::vector<IpAddr> &probes,
                       const std::string &where) {
    auto ra = a.rib->routes(), rb = b.rib->routes();
    ASSERT_EQ(ra.size(), rb.size()) << where;
    for (size_t i = 0; i < ra.size(); i++) {
        const auto &x = ra[i], &y = rb[i];
        ASSERT_EQ(x.prefix, y.prefix) << where;
        const std::string p = expect_same_route(x, y, where);
        EXPECT_EQ(describe(*a.rib, x.nh, false), describe(*b.rib, y.nh, false)) << p;
    }
    for (const IpAddr &ip : probes) {
        uint32_t ia = lookup(*a.fib, ip), ib = lookup(*b.fib, ip);
        ASSERT_EQ(ia == kNoRouteNh, ib == kNoRouteNh) << where << " " << ip.str();
        if (ia == kNoRouteNh) continue;
        EXPECT_EQ(describe(*a.rib, a.fib->reader()->nexthops[ia], false),
                  describe(*b.rib, b.fib->reader()->nexthops[ib], false))
            << where << " " << ip.str();
    }
    EXPECT_EQ(a.rib->route_counts(), b.rib->route_counts()) << where;
}

TestRib fresh_from(const Inputs &in) {
    TestRib t(in);
    for (int i = 0; i < kPorts; i++) t.rib->set_port_up(uint8_t(i), in.up[size_t(i)]);
    t.rib->set_static(in.statics, in.config_neighbours);
    t.rib->set_multipath(in.multipath);
    for (const auto &[k, n] : in.neighbours)
        t.rib->add_neighbour(std::get<0>(n), std::get<1>(n), std::get<2>(n));
    for (const auto &[k, r] : in.learned) t.rib->set_learned(r.first, r.second);
    t.rib->sync();
    return t;
}

struct Random {
    std::mt19937 g;
    explicit Random(uint32_t seed) : g(seed) {}
    int upto(int n) { return int(g() % uint32_t(n)); }  // 0..n-1
    bool chance(int percent) { return upto(100) < percent; }
    template <class T>
    const T &pick(const std::vector<T> &v) {
        return v[size_t(upto(int(v.size())))];
    }
};

void run_sequence(uint32_t seed, int steps) {
    Random rnd(seed);
    std::vector<IpPrefix> pool4, pool6;
    for (const char *s : {"10.7.0.0/16", "10.7.1.0/24", "10.7.1.128/25", "10.7.1.129/32",
                          "10.0.2.0/24", "10.0.1.1/32", "10.0.2.2/32", "10.0.2.3/32",
                          "10.0.3.0/24", "10.0.4.0/24", "10.0.4.1/32", "10.9.0.0/16",
                          "0.0.0.0/0", "10.0.0.0/8"})
        pool4.push_back(*parse_prefix(s));
    for (int i = 0; i < 16; i++)
        pool4.push_back(IpPrefix{IpAddr{false, (10u << 24) | (50u << 16) | (uint32_t(i) << 8), {}}, 24});
    for (const char *s : {"fd00:7::/48", "fd00:7:0:1::/64", "fd00:2::2/128", "fd00:2::/64",
                          "fd00:1::1/128", "fd00:9::/32", "::/0", "fd00:4::/64"})
        pool6.push_back(*parse_prefix(s));
    std::vector<std::vector<IpAddr>> gw4(kPorts + 1), gw6(kPorts + 1);
    for (int p = 0; p < kPorts; p++)
        for (int h = 2; h <= 4; h++) {
            gw4[size_t(p)].push_back(ipa(("10.0." + std::to_string(p + 1) + "." + std::to_string(h)).c_str()));
            gw6[size_t(p)].push_back(ipa(("fd00:" + std::to_string(p + 1) + "::" + std::to_string(h)).c_str()));
        }
    gw4[kPorts] = {ipa("10.0.4.2"), ipa("10.0.4.3")};  // the subnet an address change adds
    gw6[kPorts] = {ipa("fd00:4::2"), ipa("fe80::2")};
    std::vector<IpAddr> all_gw;
    for (const auto &v : {gw4, gw6})
        for (const auto &g : v) all_gw.insert(all_gw.end(), g.begin(), g.end());
    const std::vector<MacAddr> macs = {maca("02:00:00:00:aa:01"), maca("02:00:00:00:aa:02"),
                                       maca("02:00:00:00:aa:03")};
    const std::vector<std::string> origins = {"bgp", "bird", "boot"};
    std::vector<std::string> policies = lb_policy_names();
    policies.push_back("");

    std::vector<IpAddr> probes = all_gw;
    for (const auto &v : {pool4, pool6})
        for (const auto &p : v) {
            probes.push_back(p.addr);
            IpAddr last = p.addr;
            if (!last.is_v6 && p.len < 32) last.v4 |= (p.len == 0 ? ~0u : (1u << (32 - p.len)) - 1);
            probes.push_back(last);
        }

    auto gateway = [&](bool v6, int port) -> IpAddr {
        const auto &g = v6 ? gw6 : gw4;
        if (rnd.chance(20)) return rnd.pick(g[kPorts]);
        return rnd.pick(g[size_t(rnd.chance(80) ? port : rnd.upto(kPorts))]);
    };

    Inputs in;
    TestRib inc(in), full(in);
    auto both = [&](auto &&f) {
        f(*inc.rib);
        f(*full.rib);
    };
    int syncs = 0;
    // What the sequence reached, so it is known to exercise every source and next-hop kind.
    std::set<std::string> seen;
    size_t evaluated = 0, ops = 0;
    for (int step = 0; step < steps; step++) {
        const bool fam6 = rnd.chance(35);
        const IpPrefix p = fam6 ? rnd.pick(pool6) : rnd.pick(pool4);
        const int op = rnd.upto(100);
        if (op < 30) {  // learned route: 1-3 paths, with or without gateway
            LearnedRoute r{rnd.pick(origins), {}};
            const int n = rnd.chance(50) ? 1 : 2 + rnd.upto(2);
            for (int i = 0; i < n; i++) {
                const int port = rnd.upto(kPorts + (rnd.chance(3) ? 1 : 0));  // rarely no port
                std::optional<IpAddr> via;
                if (!rnd.chance(15)) via = gateway(fam6, port);
                r.paths.push_back(LearnedPath{uint8_t(port), via, uint32_t(1 + rnd.upto(3))});
            }
            in.learned[p.str()] = {p, r};
            both([&](Rib &x) { x.set_learned(p, r); });
        } else if (op < 42) {
            in.learned.erase(p.str());
            both([&](Rib &x) { x.del_learned(p); });
        } else if (op < 60) {  // neighbour appears or changes MAC
            const int port = rnd.upto(kPorts);
            const IpAddr ip = gateway(rnd.chance(35), port);
            const MacAddr mac = rnd.pick(macs);
            in.neighbours[std::to_string(port) + " " + ip.str()] = {uint8_t(port), ip, mac};
            both([&](Rib &x) { x.add_neighbour(uint8_t(port), ip, mac); });
        } else if (op < 72) {  // neighbour fails
            if (!in.config_neighbours.empty() && rnd.chance(25)) {  // the kernel's delete of a
                const NeighbourConfig &n = rnd.pick(in.config_neighbours);  // configured address
                const uint8_t port = uint8_t(n.port[1] - '0');
                in.neighbours.erase(std::to_string(port) + " " + n.ip.str());
                both([&](Rib &x) { x.del_neighbour(port, n.ip); });
                continue;
            }
            if (in.neighbours.empty()) continue;
            auto it = std::next(in.neighbours.begin(), rnd.upto(int(in.neighbours.size())));
            const uint8_t port = std::get<0>(it->second);
            const IpAddr ip = std::get<1>(it->second);
            in.neighbours.erase(it);
            both([&](Rib &x) { x.del_neighbour(port, ip); });
        } else if (op < 80) {  // port down or up
            const int port = rnd.upto(kPorts);
            const bool up = rnd.chance(60);
            in.up[size_t(port)] = up;
            both([&](Rib &x) { x.set_port_up(uint8_t(port), up); });
        } else if (op < 86) {  // addresses change
            const int port = rnd.upto(kPorts);
            std::vector<IfAddr> a = base_addrs(port);
            switch (rnd.upto(5)) {
                case 0: break;
                case 1: a.push_back(ifa("10.0.4.1/24")); a.push_back(ifa("fd00:4::1/64")); break;
                case 2: a.erase(a.begin()); break;
                case 3: a.push_back(ifa("fe80::1/64")); break;
                case 4: a.push_back(ifa("10.7.1.129/32")); break;
            }
            in.addrs[size_t(port)] = a;
            both([&](Rib &x) { x.set_port_addrs(uint8_t(port), a); });
        } else if (op < 89) {  // static config (its neighbours replace the config's, not the kernel's)
            std::vector<RouteConfig> routes;
            for (int i = rnd.upto(5); i > 0; i--) {
                const bool v6 = rnd.chance(35);
                const int port = rnd.upto(kPorts);
                routes.push_back({v6 ? rnd.pick(pool6) : rnd.pick(pool4), gateway(v6, port),
                                  rnd.chance(50) ? numbered("p", unsigned(port)) : ""});
            }
            std::vector<NeighbourConfig> neigh;
            for (int i = rnd.upto(4); i > 0; i--) {
                const int port = rnd.upto(kPorts);
                const IpAddr ip = gateway(rnd.chance(35), port);
                neigh.push_back({ip, rnd.pick(macs), numbered("p", unsigned(port))});
            }
            in.statics = routes;
            in.config_neighbours = neigh;
            both([&](Rib &x) { x.set_static(routes, neigh); });
        } else if (op < 93) {  // multipath config
            std::vector<MultipathRouteConfig> routes;
            for (int i = rnd.upto(3); i > 0; i--) {
                const bool v6 = rnd.chance(35);
                MultipathRouteConfig r{v6 ? rnd.pick(pool6) : rnd.pick(pool4), {}, rnd.pick(policies)};
                for (int j = 1 + rnd.upto(3); j > 0; j--) {
                    const int port = rnd.upto(kPorts);
                    r.paths.push_back({gateway(v6, port),
                                       rnd.chance(50) ? numbered("p", unsigned(port)) : "",
                                       uint32_t(1 + rnd.upto(3))});
                }
                routes.push_back(r);
            }
            in.multipath = routes;
            both([&](Rib &x) { x.set_multipath(routes); });
        } else if (op < 95) {  // a policy override (syncs)
            const std::string policy = rnd.pick(lb_policy_names());
            const std::string target = rnd.chance(50) ? "all" : p.str();
            full.rib->mark_all_dirty();
            both([&](Rib &x) { x.set_policy(target, policy); });
        }
        if (!rnd.chance(30) && step != steps - 1) continue;
        const std::string where = "seed " + std::to_string(seed) + " step " + std::to_string(step);
        inc.rib->sync();
        evaluated += inc.rib->last_sync().evaluated;
        ops += inc.rib->last_sync().ops;
        for (const auto &r : inc.rib->routes()) {
            seen.insert(std::string(route_source_name(r.source)) + (r.prefix.addr.is_v6 ? "6" : "4"));
            seen.insert("kind " + std::to_string(int(r.nh.kind)));
            if (!r.installed) seen.insert("refused");
        }
        full.rib->mark_all_dirty();
        full.rib->sync();
        expect_identical(inc, full, where);
        inc.rib->mark_all_dirty();
        inc.rib->sync();
        EXPECT_EQ(inc.rib->last_sync().ops, 0u) << where << ": a full recompute changed the Fib";
        EXPECT_EQ(inc.rib->last_sync().groups_published, 0u) << where;
        if (::testing::Test::HasFailure()) return;
        if (++syncs % 40 == 0 || step == steps - 1) {
            TestRib ref = fresh_from(in);
            expect_equivalent(inc, ref, probes, where + " (fresh)");
            if (::testing::Test::HasFailure()) return;
        }
    }
    for (const char *k : {"local4", "local6", "connected4", "connected6", "neighbour4",
                          "neighbour6", "static4", "static6", "learned4", "learned6", "kind 1",
                          "kind 2", "kind 3", "kind 4", "kind 5"})
        EXPECT_TRUE(seen.count(k)) << "seed " << seed << " never had " << k;
    EXPECT_FALSE(seen.count("refused"));
    std::printf("seed %u: %d syncs, %zu prefixes recomputed, %zu Fib ops\n", seed, syncs,
                evaluated, ops);
}

// A group's first route (its `prefix`, what `rocectl lb groups` shows) as routes join and
// leave, the first among them: a flapping first route, a route joining before the first or
// between the first and the second, the second leaving, the first leaving when the next one is
// known and when it is not. After every sync `inc` must equal the full recompute, and the
// group's prefix must be its smallest route.
TEST(RibIncremental, AGroupKeepsItsFirstRouteAsRoutesComeAndGo) {
    Inputs in;
    TestRib inc(in), full(in);
    const LearnedRoute a{"bgp",
                         {LearnedPath{0, ipa("10.0.1.2"), 1}, LearnedPath{1, ipa("10.0.2.2"), 1}}};
    const LearnedRoute b{"bgp",
                         {LearnedPath{1, ipa("10.0.2.3"), 1}, LearnedPath{2, ipa("10.0.3.3"), 1}}};
    auto prefix = [](int i) {
        return IpPrefix{IpAddr{false, (10u << 24) | (50u << 16) | (uint32_t(i) << 8), {}}, 24};
    };
    for (Rib *r : {inc.rib.get(), full.rib.get()}) {
        r->add_neighbour(0, ipa("10.0.1.2"), maca("02:00:00:00:aa:01"));
        r->add_neighbour(1, ipa("10.0.2.2"), maca("02:00:00:00:aa:02"));
        for (int i = 0; i < 64; i++) r->set_learned(prefix(i), b);  // group b between a's routes
    }
    std::set<int> in_a;
    int step = 0;
    auto apply = [&](int i, bool add) {
        for (Rib *r : {inc.rib.get(), full.rib.get()}) {
            if (add) {
                r->set_learned(prefix(i), a);
            } else {
                r->set_learned(prefix(i), b);
            }
        }
        if (add) {
            in_a.insert(i);
        } else {
            in_a.erase(i);
        }
        const std::string where = "step " + std::to_string(step++) + (add ? " +" : " -") +
                                  std::to_string(i);
        inc.rib->sync();
        full.rib->mark_all_dirty();
        full.rib->sync();
        expect_identical(inc, full, where);
        if (in_a.empty()) return;
        const int first = *in_a.begin();
        const auto routes = inc.rib->routes();
        auto r = std::find_if(routes.begin(), routes.end(),
                              [&](const RouteView &v) { return v.prefix == prefix(first); });
        ASSERT_NE(r, routes.end()) << where;
        ASSERT_EQ(r->nh.kind, NextHopKind::ecmp_group) << where;
        bool found = false;
        for (const auto &g : inc.rib->groups())
            if (g.id == r->nh.group) {
                found = true;
                EXPECT_EQ(g.prefix, prefix(first)) << where;
                EXPECT_EQ(g.routes, in_a.size()) << where;
            }
        EXPECT_TRUE(found) << where;
    };
    apply(30, true);  // a's only route
    apply(50, true);  // a second
    for (int k = 0; k < 3; k++) {  // the first flaps with its second known, and then not
        apply(30, false);
        apply(30, true);
    }
    apply(10, true);  // before the first: 10, 30, 50
    apply(20, true);  // between the first and the second: 10, 20, 30, 50
    apply(40, true);   // after the second
    apply(10, false);  // the first leaves: its second is the first (20)
    apply(10, true);   // 10, 20, 30, 40, 50
    apply(20, false);  // the second leaves: not known
    apply(10, false);  // the first leaves, the next found by the scan: 30
    apply(30, false);  // and again: 40
    apply(40, false);  // the last but one: 50 alone
    apply(5, true);    // before it: 5, 50
    apply(5, false);   // 50 alone again
    apply(60, true);
    apply(50, false);  // 60
    apply(60, false);  // none: the group goes
    apply(1, true);    // a group again
    // A burst of changes in one sync: several of a's routes leave and join, the first twice.
    for (int i : {3, 7, 9, 11}) apply(i, true);
    for (Rib *r : {inc.rib.get(), full.rib.get()}) {
        r->set_learned(prefix(1), b);
        r->set_learned(prefix(3), b);
        r->set_learned(prefix(2), a);
        r->set_learned(prefix(9), b);
    }
    in_a = {2, 7, 11};
    apply(63, true);
}

TEST(RibIncremental, MatchesTheFullRecomputeOverRandomSequences) {
    for (uint32_t seed = 1; seed <= 8; seed++) run_sequence(seed, 1500);
}

}  // namespace
}  // namespace rocesw::test
