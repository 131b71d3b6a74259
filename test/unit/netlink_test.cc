// rtnetlink translation test. The main vectors are real kernel messages captured by
// test/data/gen_netlink_msgs.py (dumps and notifications in a throw-away namespace); what each
// should say comes from `ip -j` (iproute2, an independent decoder) in expected.json. Then
// hand-built malformed messages: each gives an error or a skip, never a crash, and parsing
// resumes after it when the framing allows. Every buffer is an exactly-sized heap copy so
// that ASan catches a read past the end.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <iterator>
#include <string>
#include <vector>

#include "ctrl/netlink_msg.h"
#include "ctrl/netlink_socket.h"

#ifndef ROCESW_TEST_DATA
#error "ROCESW_TEST_DATA must name the test/data directory"
#endif

namespace rocesw::nl {
namespace {

using nlohmann::json;
using Bytes = std::vector<uint8_t>;

const std::string kDir = std::string(ROCESW_TEST_DATA "/netlink/");

Bytes read_file(const std::string &name) {
    std::ifstream in(kDir + name, std::ios::binary);
    EXPECT_TRUE(in) << "cannot open " << kDir + name;
    return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const json &expected() {
    static const json j = [] {
        std::ifstream in(kDir + "expected.json");
        return json::parse(in);
    }();
    return j;
}

int ifindex_of(const std::string &name) {
    return expected().at("ifindex").at(name).get<int>();
}

json mac_json(const std::optional<MacAddr> &m) {
    return m ? json(m->str()) : json(nullptr);
}

// The same normalised form the generator writes for ip -j output.
json to_json(const Message &msg) {
    return std::visit(
        [](const auto &m) -> json {
            using T = std::decay_t<decltype(m)>;
            const char *op = m.op == Op::add ? "add" : "del";
            if constexpr (std::is_same_v<T, LinkMsg>) {
                return {{"kind", "link"},         {"op", op},
                        {"ifindex", m.ifindex},   {"name", m.name},
                        {"mac", mac_json(m.mac)}, {"mtu", m.mtu},
                        {"admin_up", m.admin_up}, {"oper_up", m.oper_up}};
            } else if constexpr (std::is_same_v<T, AddrMsg>) {
                return {{"kind", "addr"},
                        {"op", op},
                        {"ifindex", m.ifindex},
                        {"addr", m.addr.str()},
                        {"scope", m.scope}};
            } else if constexpr (std::is_same_v<T, NeighMsg>) {
                return {{"kind", "neigh"},
                        {"op", op},
                        {"ifindex", m.ifindex},
                        {"ip", m.ip.str()},
                        {"mac", mac_json(m.mac)},
                        {"state", m.state},
                        {"router", (m.flags & NTF_ROUTER) != 0},
                        {"usable", m.usable()}};
            } else if constexpr (std::is_same_v<T, NexthopMsg>) {
                json group = json::array();
                for (const auto &g : m.group) group.push_back({{"id", g.id}, {"weight", g.weight}});
                return {{"kind", "nexthop"},
                        {"op", op},
                        {"id", m.id},
                        {"ifindex", m.ifindex},
                        {"gateway", m.gateway ? json(m.gateway->str()) : json(nullptr)},
                        {"blackhole", m.blackhole},
                        {"onlink", m.onlink},
                        {"group", group}};
            } else {
                json hops = json::array();
                for (const auto &h : m.nexthops)
                    hops.push_back({{"ifindex", h.ifindex},
                                    {"gateway", h.gateway ? json(h.gateway->str()) : json(nullptr)},
                                    {"weight", h.weight},
                                    {"onlink", h.onlink}});
                return {{"kind", "route"},
                        {"op", op},
                        {"family", m.family == AF_INET ? 4 : 6},
                        {"dst", m.dst.str()},
                        {"table", m.table},
                        {"protocol", m.protocol},
                        {"type", m.type},
                        {"scope", m.scope},
                        {"priority", m.priority},
                        {"nexthops", hops},
                        {"nh_id", m.nh_id}};
            }
        },
        msg);
}

json sorted(json a) {
    std::sort(a.begin(), a.end(), [](const json &x, const json &y) { return x.dump() < y.dump(); });
    return a;
}

// Every field the expectation names must be equal; fields it leaves out are not checked.
// Next hops compare as a set: a notification may list them in another order than a dump
// (see Notifications).
bool matches(const json &want, const json &got) {
    for (const auto &[k, v] : want.items()) {
        if (!got.contains(k)) return false;
        if (k == "nexthops" ? sorted(got.at(k)) != sorted(v) : got.at(k) != v) return false;
    }
    return true;
}

ParseResult parse_bytes(const Bytes &b) {
    // Exactly sized heap copy: ASan sees any overread.
    auto copy = std::make_unique<uint8_t[]>(b.size());
    if (!b.empty()) std::memcpy(copy.get(), b.data(), b.size());
    return parse(std::span<const uint8_t>(copy.get(), b.size()));
}

// --- kernel captures against ip -j -----------------------------------------------------------

TEST(NetlinkKernel, EveryCaptureMatchesIpJson) {
    size_t files = 0, checked = 0;
    for (const auto &[name, f] : expected().at("files").items()) {
        if (!f.contains("expect")) continue;
        SCOPED_TRACE(name);
        files++;
        const ParseResult r = parse_bytes(read_file(name));
        EXPECT_TRUE(r.errors.empty()) << r.errors.front();
        EXPECT_EQ(r.error, 0);
        EXPECT_FALSE(r.dump_interrupted);
        std::vector<json> got;
        for (const auto &m : r.msgs) got.push_back(to_json(m));
        std::vector<bool> used(got.size());
        for (const auto &want : f.at("expect")) {
            bool found = false;
            for (size_t i = 0; i < got.size() && !found; i++) {
                if (used[i] || !matches(want, got[i])) continue;
                used[i] = found = true;
            }
            std::string same_kind;
            if (!found)
                for (const auto &g : got)
                    if (g.at("kind") == want.at("kind")) same_kind += "\n  " + g.dump();
            EXPECT_TRUE(found) << "ip -j says " << want.dump() << "\nparsed:" << same_kind;
            checked++;
        }
        if (f.at("exact").get<bool>()) {
            EXPECT_TRUE(r.done) << "a dump ends with NLMSG_DONE";
            EXPECT_EQ(got.size(), f.at("expect").size());
            for (size_t i = 0; i < got.size(); i++)
                EXPECT_TRUE(used[i]) << "parsed but not in ip -j: " << got[i].dump();
            EXPECT_GE(r.skipped, f.at("skipped_min").get<size_t>());
        }
    }
    EXPECT_EQ(files, 17u);  // 5 dumps, 12 notification captures
    EXPECT_GE(checked, 90u);
}

// The same captures, with exact values written out: what the lead's RIB code relies on.
std::vector<RouteMsg> routes_of(const std::string &file) {
    std::vector<RouteMsg> out;
    for (const auto &m : parse_bytes(read_file(file)).msgs)
        if (auto *r = std::get_if<RouteMsg>(&m)) out.push_back(*r);
    return out;
}

const RouteMsg *find_route(const std::vector<RouteMsg> &rs, const std::string &dst,
                           uint32_t table = RT_TABLE_MAIN) {
    const RouteMsg *hit = nullptr;
    for (const auto &r : rs)
        if (r.dst.str() == dst && r.table == table) {
            EXPECT_EQ(hit, nullptr) << dst << " twice";
            hit = &r;
        }
    EXPECT_NE(hit, nullptr) << dst << " table " << table << " not found";
    return hit;
}

IpAddr ip(const char *s) {
    return *parse_ip(s);
}

TEST(NetlinkKernel, RoutesExactly) {
    const auto rs = routes_of("dump_route.bin");
    const int d0 = ifindex_of("d0"), d1 = ifindex_of("d1");

    const RouteMsg *mp = find_route(rs, "10.9.0.0/24");
    ASSERT_NE(mp, nullptr);
    EXPECT_EQ(mp->op, Op::add);
    EXPECT_EQ(mp->family, AF_INET);
    EXPECT_EQ(mp->type, RTN_UNICAST);
    EXPECT_EQ(mp->protocol, RTPROT_BOOT);
    ASSERT_EQ(mp->nexthops.size(), 2u);
    EXPECT_EQ(mp->nexthops[0].gateway, ip("10.1.0.2"));
    EXPECT_EQ(mp->nexthops[0].ifindex, d0);
    EXPECT_EQ(mp->nexthops[0].weight, 1u);
    EXPECT_EQ(mp->nexthops[1].gateway, ip("10.2.0.2"));
    EXPECT_EQ(mp->nexthops[1].ifindex, d1);
    EXPECT_EQ(mp->nexthops[1].weight, 3u);

    const RouteMsg *mp6 = find_route(rs, "2001:db8:9::/64");
    ASSERT_NE(mp6, nullptr);
    EXPECT_EQ(mp6->family, AF_INET6);
    EXPECT_EQ(mp6->priority, 1024u);
    ASSERT_EQ(mp6->nexthops.size(), 2u);  // IPv6 ECMP comes as RTA_MULTIPATH, one message
    EXPECT_EQ(mp6->nexthops[0].gateway, ip("2001:db8:1::2"));
    EXPECT_EQ(mp6->nexthops[0].weight, 1u);
    EXPECT_EQ(mp6->nexthops[1].gateway, ip("2001:db8:2::2"));
    EXPECT_EQ(mp6->nexthops[1].ifindex, d1);
    EXPECT_EQ(mp6->nexthops[1].weight, 2u);

    const RouteMsg *bird = find_route(rs, "10.20.0.0/16");
    ASSERT_NE(bird, nullptr);
    EXPECT_EQ(bird->protocol, RTPROT_BIRD);
    EXPECT_STREQ(rt_protocol_name(bird->protocol), "bird");
    EXPECT_EQ(bird->priority, 20u);
    ASSERT_EQ(bird->nexthops.size(), 1u);
    EXPECT_EQ(bird->nexthops[0].gateway, ip("10.1.0.2"));
    EXPECT_EQ(bird->nexthops[0].ifindex, d0);
    EXPECT_EQ(bird->nexthops[0].weight, 1u);

    EXPECT_EQ(find_route(rs, "10.21.0.0/16")->protocol, RTPROT_STATIC);
    EXPECT_EQ(find_route(rs, "10.22.0.0/16")->protocol, 186);
    EXPECT_STREQ(rt_protocol_name(186), "bgp");

    const RouteMsg *dev = find_route(rs, "10.23.0.0/24");
    ASSERT_EQ(dev->nexthops.size(), 1u);
    EXPECT_EQ(dev->nexthops[0].ifindex, d1);
    EXPECT_FALSE(dev->nexthops[0].gateway);
    EXPECT_EQ(dev->scope, RT_SCOPE_LINK);

    const RouteMsg *def4 = find_route(rs, "0.0.0.0/0");
    EXPECT_EQ(def4->dst.len, 0);
    EXPECT_EQ(def4->nexthops.at(0).gateway, ip("10.1.0.2"));
    EXPECT_EQ(find_route(rs, "::/0")->nexthops.at(0).gateway, ip("2001:db8:1::2"));

    const RouteMsg *bh = find_route(rs, "10.66.0.0/16");
    EXPECT_EQ(bh->type, RTN_BLACKHOLE);
    EXPECT_TRUE(bh->nexthops.empty());
    const RouteMsg *bh6 = find_route(rs, "2001:db8:66::/64");
    EXPECT_EQ(bh6->type, RTN_BLACKHOLE);
    ASSERT_EQ(bh6->nexthops.size(), 1u);  // IPv6: RTA_OIF = lo
    EXPECT_EQ(bh6->nexthops[0].ifindex, 1);
    EXPECT_EQ(find_route(rs, "10.67.0.0/16")->type, RTN_UNREACHABLE);

    EXPECT_EQ(find_route(rs, "10.30.0.0/24", 100)->nexthops.at(0).gateway, ip("10.1.0.2"));
    EXPECT_EQ(find_route(rs, "2001:db8:30::/64", 100)->nexthops.at(0).gateway, ip("2001:db8:1::2"));
    EXPECT_EQ(find_route(rs, "10.31.0.0/24", 1000)->table, 1000u);  // only RTA_TABLE holds it

    const RouteMsg *via = find_route(rs, "10.8.0.0/24");
    EXPECT_EQ(via->family, AF_INET);
    EXPECT_EQ(via->nexthops.at(0).gateway, ip("2001:db8:1::5"));  // RTA_VIA
    EXPECT_EQ(via->nexthops.at(0).ifindex, d0);

    const RouteMsg *onl = find_route(rs, "10.7.0.0/24");
    EXPECT_TRUE(onl->nexthops.at(0).onlink);
    const RouteMsg *onl_mp = find_route(rs, "10.6.0.0/24");
    ASSERT_EQ(onl_mp->nexthops.size(), 2u);
    EXPECT_TRUE(onl_mp->nexthops[0].onlink);
    EXPECT_FALSE(onl_mp->nexthops[1].onlink);

    EXPECT_EQ(find_route(rs, "10.5.0.5/32")->dst.len, 32);

    // Kernel routes for the addresses: table local (255), types local and broadcast.
    const RouteMsg *loc = find_route(rs, "10.1.0.1/32", RT_TABLE_LOCAL);
    EXPECT_EQ(loc->type, RTN_LOCAL);
    EXPECT_EQ(loc->protocol, RTPROT_KERNEL);
    EXPECT_EQ(loc->scope, RT_SCOPE_HOST);
    EXPECT_EQ(find_route(rs, "10.1.0.255/32", RT_TABLE_LOCAL)->type, RTN_BROADCAST);
    // Routes naming kernel nexthop objects (nexthop_compat_mode 1: the object's next hops too).
    const std::set<std::string> with_object = {"10.40.0.0/24", "10.41.0.0/24", "10.42.0.0/24",
                                               "10.44.0.0/24", "2001:db8:41::/64"};
    for (const auto &r : rs) {
        if (with_object.count(r.dst.str())) continue;
        EXPECT_EQ(r.nh_id, 0u) << r.dst.str();
    }
    const RouteMsg *obj = find_route(rs, "10.41.0.0/24");
    EXPECT_EQ(obj->nh_id, 15u);
    EXPECT_EQ(obj->protocol, 186);
    ASSERT_EQ(obj->nexthops.size(), 2u);
    EXPECT_EQ(obj->nexthops[0].gateway, ip("10.1.0.2"));
    EXPECT_EQ(obj->nexthops[1].gateway, ip("10.1.0.3"));
    EXPECT_EQ(obj->nexthops[1].weight, 3u);
    EXPECT_EQ(find_route(rs, "10.40.0.0/24")->nh_id, 11u);
    EXPECT_EQ(find_route(rs, "2001:db8:41::/64")->nh_id, 13u);
    EXPECT_EQ(find_route(rs, "10.42.0.0/24")->type, RTN_BLACKHOLE);
}

// RTM_NEWNEXTHOP from the kernel's dump, every kind `ip nexthop` makes.
TEST(NetlinkKernel, NexthopObjectsExactly) {
    std::map<uint32_t, NexthopMsg> by_id;
    const ParseResult r = parse_bytes(read_file("dump_nexthop.bin"));
    EXPECT_TRUE(r.errors.empty());
    for (const auto &m : r.msgs) {
        const auto *nh = std::get_if<NexthopMsg>(&m);
        ASSERT_NE(nh, nullptr);
        EXPECT_TRUE(by_id.emplace(nh->id, *nh).second) << nh->id << " twice";
    }
    ASSERT_EQ(by_id.size(), 8u);
    const int d0 = ifindex_of("d0");
    const NexthopMsg &one = by_id.at(11);
    EXPECT_EQ(one.op, Op::add);
    EXPECT_EQ(one.family, AF_INET);
    EXPECT_EQ(one.ifindex, d0);
    EXPECT_EQ(one.gateway, ip("10.1.0.2"));
    EXPECT_FALSE(one.is_group());
    EXPECT_FALSE(one.blackhole);
    EXPECT_EQ(by_id.at(13).family, AF_INET6);
    EXPECT_EQ(by_id.at(13).gateway, ip("2001:db8:1::2"));
    EXPECT_TRUE(by_id.at(14).onlink);
    EXPECT_EQ(by_id.at(14).gateway, ip("192.0.2.1"));
    const NexthopMsg &grp = by_id.at(15);
    EXPECT_EQ(grp.family, AF_UNSPEC);
    EXPECT_EQ(grp.ifindex, 0);
    EXPECT_FALSE(grp.gateway);
    const std::vector<NexthopMsg::Member> members = {{11, 1}, {12, 3}};
    EXPECT_EQ(grp.group, members);  // nexthop_grp.weight is weight - 1, as rtnh_hops
    EXPECT_TRUE(by_id.at(16).blackhole);
    EXPECT_EQ(by_id.at(17).group.size(), 1u);
    EXPECT_EQ(by_id.at(18).ifindex, d0);
    EXPECT_FALSE(by_id.at(18).gateway);
}

TEST(NetlinkKernel, LinksAddrsNeighsExactly) {
    const int d0 = ifindex_of("d0"), d1 = ifindex_of("d1");
    const auto links = parse_bytes(read_file("dump_link.bin"));
    bool saw_d0 = false, saw_lo = false;
    for (const auto &m : links.msgs) {
        const auto &l = std::get<LinkMsg>(m);
        if (l.name == "d0") {
            saw_d0 = true;
            EXPECT_EQ(l.ifindex, d0);
            EXPECT_EQ(l.mac, parse_mac("02:00:00:00:00:d0"));
            EXPECT_EQ(l.mtu, 9000u);
            EXPECT_TRUE(l.admin_up);
            EXPECT_TRUE(l.oper_up);
        } else if (l.name == "d1") {
            EXPECT_TRUE(l.admin_up);
            EXPECT_FALSE(l.oper_up);  // peer p1 is down: no carrier
        } else if (l.name == "lo") {
            saw_lo = true;
            EXPECT_EQ(l.ifindex, 1);
            EXPECT_EQ(l.mac, MacAddr{});  // 6 zero bytes
        }
    }
    EXPECT_TRUE(saw_d0 && saw_lo);

    const auto addrs = parse_bytes(read_file("dump_addr.bin"));
    int found = 0;
    for (const auto &m : addrs.msgs) {
        const auto &a = std::get<AddrMsg>(m);
        const std::string s = a.addr.str();
        if (s == "10.1.0.1/24") {
            found++;
            EXPECT_EQ(a.ifindex, d0);
            EXPECT_EQ(a.scope, RT_SCOPE_UNIVERSE);
        } else if (s == "2001:db8:2::1/64") {
            found++;
            EXPECT_EQ(a.ifindex, d1);
        } else if (s == "10.3.0.1/32") {
            found++;  // IFA_LOCAL, not the peer in IFA_ADDRESS
        } else if (s == "fe80::ff:fe00:d0/64") {
            found++;
            EXPECT_EQ(a.ifindex, d0);
            EXPECT_EQ(a.scope, RT_SCOPE_LINK);
        }
    }
    EXPECT_EQ(found, 4);

    const auto neighs = parse_bytes(read_file("dump_neigh.bin"));
    found = 0;
    for (const auto &m : neighs.msgs) {
        const auto &n = std::get<NeighMsg>(m);
        const std::string s = n.ip.str();
        if (s == "10.1.0.2") {
            found++;
            EXPECT_EQ(n.ifindex, d0);
            EXPECT_EQ(n.mac, parse_mac("02:00:00:00:01:02"));
            EXPECT_EQ(n.state, NUD_PERMANENT);
            EXPECT_TRUE(n.usable());
        } else if (s == "10.1.0.7") {
            found++;
            EXPECT_FALSE(n.mac);
            EXPECT_EQ(n.state, NUD_INCOMPLETE);
            EXPECT_FALSE(n.usable());
        } else if (s == "2001:db8:1::3") {
            found++;
            EXPECT_EQ(n.state, NUD_REACHABLE);
            EXPECT_EQ(n.flags & NTF_ROUTER, NTF_ROUTER);
            EXPECT_TRUE(n.usable());
        } else if (s == "10.2.0.2") {
            found++;
            EXPECT_EQ(n.state, NUD_STALE);
            EXPECT_TRUE(n.usable());
        }
    }
    EXPECT_EQ(found, 4);
}

TEST(NetlinkKernel, Notifications) {
    auto del = routes_of("mon_del_route.bin");
    ASSERT_EQ(del.size(), 1u);
    EXPECT_EQ(del[0].op, Op::del);
    EXPECT_EQ(del[0].dst.str(), "10.20.0.0/16");
    EXPECT_EQ(del[0].protocol, RTPROT_BIRD);

    // `ip neigh del`: RTM_NEWNEIGH then RTM_DELNEIGH, both in state FAILED and without the MAC.
    for (const char *f : {"mon_del_neigh.bin", "mon_del_neigh6.bin"}) {
        const auto r = parse_bytes(read_file(f));
        ASSERT_EQ(r.msgs.size(), 2u) << f;
        const auto &n = std::get<NeighMsg>(r.msgs[1]);
        EXPECT_EQ(n.op, Op::del);
        EXPECT_EQ(n.state, NUD_FAILED);
        EXPECT_FALSE(n.mac);
        EXPECT_FALSE(std::get<NeighMsg>(r.msgs[0]).usable());
    }

    del = routes_of("mon_del_route6_multipath.bin");
    ASSERT_EQ(del.size(), 1u);
    EXPECT_EQ(del[0].op, Op::del);
    EXPECT_EQ(del[0].nexthops.size(), 2u);

    // `ip -6 route append`: NLM_F_APPEND, and the notification holds the whole route (what
    // ip -j shows afterwards), but the appended next hop comes FIRST, the old one after it,
    // while a dump lists them in insertion order.
    const auto app = routes_of("mon_append_route6.bin");
    ASSERT_EQ(app.size(), 1u);
    EXPECT_EQ(app[0].op, Op::add);
    EXPECT_TRUE(app[0].append);
    EXPECT_EQ(app[0].dst.str(), "2001:db8:50::/64");
    const auto &after = expected().at("files").at("mon_append_route6.bin").at("expect");
    ASSERT_EQ(after.size(), 1u);
    EXPECT_TRUE(matches(after[0], to_json(app[0]))) << after[0].dump();
    ASSERT_EQ(app[0].nexthops.size(), 2u);
    EXPECT_EQ(app[0].nexthops[0].gateway, ip("2001:db8:2::2"));
    EXPECT_EQ(app[0].nexthops[1].gateway, ip("2001:db8:1::2"));

    // Address deleted on d1 (no carrier): its prefix route goes too, flagged RTNH_F_LINKDOWN.
    const auto gone = routes_of("mon_del_addr.bin");
    const RouteMsg *pfx = find_route(gone, "10.2.0.0/24");
    ASSERT_NE(pfx, nullptr);
    EXPECT_EQ(pfx->op, Op::del);
    EXPECT_EQ(pfx->nexthops.at(0).flags & RTNH_F_LINKDOWN, RTNH_F_LINKDOWN);

    // Link down: IPv6 routes via d0 are withdrawn one by one, IPv4 ones are not notified.
    const auto down_routes = routes_of("mon_link_down.bin");
    EXPECT_EQ(find_route(down_routes, "::/0")->op, Op::del);
    for (const auto &r : down_routes) EXPECT_EQ(r.family, AF_INET6) << r.dst.str();

    const auto down = parse_bytes(read_file("mon_link_down.bin"));
    EXPECT_TRUE(down.errors.empty());
    bool link = false;
    for (const auto &m : down.msgs)
        if (auto *l = std::get_if<LinkMsg>(&m); l && l->name == "d0") {
            link = true;
            EXPECT_EQ(l->op, Op::add);
            EXPECT_FALSE(l->admin_up);
        }
    EXPECT_TRUE(link);
}

// --- hand-built messages -------------------------------------------------------------------

// Builds nlmsghdr + fixed header + attributes; lengths may be set to lie afterwards.
struct Msg {
    Bytes b;
    explicit Msg(uint16_t type, uint16_t flags = 0) {
        b.resize(sizeof(nlmsghdr));
        put16(4, type);
        put16(6, flags);
    }
    void put16(size_t at, uint16_t v) { std::memcpy(&b[at], &v, 2); }
    void put32(size_t at, uint32_t v) { std::memcpy(&b[at], &v, 4); }
    template <typename T>
    Msg &fixed(const T &t) {
        raw(&t, sizeof(t));
        return *this;
    }
    Msg &raw(const void *p, size_t n) {
        const size_t at = b.size();
        b.resize(at + n);
        if (n) std::memcpy(&b[at], p, n);
        return *this;
    }
    // An attribute; `len_override` replaces rta_len.
    Msg &attr(uint16_t type, Bytes data, int len_override = -1) {
        const size_t at = b.size();
        b.resize(at + 4 + ((data.size() + 3) & ~size_t(3)));
        put16(at, uint16_t(len_override >= 0 ? len_override : int(4 + data.size())));
        put16(at + 2, type);
        if (!data.empty()) std::memcpy(&b[at + 4], data.data(), data.size());
        return *this;
    }
    Msg &attr32(uint16_t type, uint32_t v) {
        Bytes d(4);
        std::memcpy(d.data(), &v, 4);
        return attr(type, d);
    }
    Bytes done(int len_override = -1) {
        put32(0, len_override >= 0 ? uint32_t(len_override) : uint32_t(b.size()));
        b.resize((b.size() + 3) & ~size_t(3));  // the next message starts aligned, as the kernel's
        return b;
    }
};

Bytes cat(std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const auto &p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

rtmsg rt4(uint8_t dst_len = 24) {
    rtmsg r{};
    r.rtm_family = AF_INET;
    r.rtm_dst_len = dst_len;
    r.rtm_table = RT_TABLE_MAIN;
    r.rtm_protocol = RTPROT_STATIC;
    r.rtm_type = RTN_UNICAST;
    return r;
}

Bytes good_route() {
    return Msg(RTM_NEWROUTE).fixed(rt4()).attr(RTA_DST, {10, 9, 8, 77}).attr32(RTA_OIF, 7).done();
}

// rtnh and gw_attr size their vector once, as Msg does: a range inserted after a small
// fixed-size head makes GCC 12 at -O3 report a bogus -Warray-bounds in the reallocation.
Bytes rtnh(uint16_t len, uint8_t hops, int32_t ifindex, Bytes inner = {}) {
    Bytes b(8 + inner.size());
    std::memcpy(&b[0], &len, 2);
    b[3] = hops;
    std::memcpy(&b[4], &ifindex, 4);
    if (!inner.empty()) std::memcpy(&b[8], inner.data(), inner.size());
    return b;
}

Bytes gw_attr(Bytes addr) {
    Bytes a(4 + addr.size());
    const uint16_t len = uint16_t(4 + addr.size()), type = RTA_GATEWAY;
    std::memcpy(&a[0], &len, 2);
    std::memcpy(&a[2], &type, 2);
    if (!addr.empty()) std::memcpy(&a[4], addr.data(), addr.size());
    return a;
}

TEST(NetlinkParse, GoodRouteHostBitsClearedAndOneHop) {
    const auto r = parse_bytes(cat({good_route(), Msg(NLMSG_DONE).raw("\0\0\0\0", 4).done()}));
    ASSERT_TRUE(r.errors.empty()) << r.errors.front();
    ASSERT_EQ(r.msgs.size(), 1u);
    EXPECT_TRUE(r.done);
    const auto &m = std::get<RouteMsg>(r.msgs[0]);
    EXPECT_EQ(m.dst.str(), "10.9.8.0/24");
    EXPECT_EQ(m.table, RT_TABLE_MAIN);
    ASSERT_EQ(m.nexthops.size(), 1u);
    EXPECT_EQ(m.nexthops[0].ifindex, 7);
    EXPECT_FALSE(m.nexthops[0].gateway);
}

TEST(NetlinkParse, RouteTos) {
    rtmsg r = rt4();
    r.rtm_tos = 0x10;
    const auto t = parse_bytes(Msg(RTM_NEWROUTE).fixed(r).attr(RTA_DST, {10, 9, 8, 0}).attr32(RTA_OIF, 7).done());
    ASSERT_EQ(t.msgs.size(), 1u);
    EXPECT_EQ(std::get<RouteMsg>(t.msgs[0]).tos, 0x10);
    const auto plain = parse_bytes(good_route());
    ASSERT_EQ(plain.msgs.size(), 1u);
    EXPECT_EQ(std::get<RouteMsg>(plain.msgs[0]).tos, 0);
}

TEST(NetlinkParse, Ipv6HostBitsCleared) {
    rtmsg r = rt4(61);
    r.rtm_family = AF_INET6;
    Bytes dst(16, 0xff);
    const auto p = parse_bytes(Msg(RTM_NEWROUTE).fixed(r).attr(RTA_DST, dst).done());
    ASSERT_EQ(p.msgs.size(), 1u);
    EXPECT_EQ(std::get<RouteMsg>(p.msgs[0]).dst.str(), "ffff:ffff:ffff:fff8::/61");
}

TEST(NetlinkParse, MultipathWeightsAndNhId) {
    const Bytes mp = cat({rtnh(16, 0, 3, gw_attr({10, 0, 0, 1})),
                          rtnh(16, 4, 5, gw_attr({10, 0, 0, 2})), rtnh(8, 0, 9)});
    const auto p = parse_bytes(
        Msg(RTM_NEWROUTE).fixed(rt4()).attr(RTA_MULTIPATH, mp).attr32(RTA_NH_ID, 42).done());
    ASSERT_TRUE(p.errors.empty()) << p.errors.front();
    const auto &m = std::get<RouteMsg>(p.msgs.at(0));
    EXPECT_EQ(m.nh_id, 42u);
    EXPECT_EQ(m.dst.str(), "0.0.0.0/24");  // no RTA_DST: all zero
    ASSERT_EQ(m.nexthops.size(), 3u);
    EXPECT_EQ(m.nexthops[1].weight, 5u);
    EXPECT_EQ(m.nexthops[1].ifindex, 5);
    EXPECT_EQ(m.nexthops[1].gateway, ip("10.0.0.2"));
    EXPECT_FALSE(m.nexthops[2].gateway);
}

// A malformed message followed by a good one: one error, and the good one still parses.
void expect_error_then_good(const Bytes &bad, const std::string &needle) {
    const auto r = parse_bytes(cat({bad, good_route()}));
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_NE(r.errors[0].find(needle), std::string::npos) << r.errors[0];
    ASSERT_EQ(r.msgs.size(), 1u) << r.errors[0];
    EXPECT_EQ(std::get<RouteMsg>(r.msgs[0]).dst.str(), "10.9.8.0/24");
}

TEST(NetlinkParse, NlmsgLenBelowHeaderStops) {
    const auto r = parse_bytes(cat({Msg(RTM_NEWROUTE).done(8), good_route()}));
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_NE(r.errors[0].find("nlmsg_len 8 < 16"), std::string::npos) << r.errors[0];
    EXPECT_TRUE(r.msgs.empty());  // no sane framing: the rest is dropped
}

TEST(NetlinkParse, NlmsgLenPastBufferStops) {
    const Bytes b = cat({good_route(), Msg(RTM_NEWROUTE).fixed(rt4()).done(400)});
    const auto r = parse_bytes(b);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_NE(r.errors[0].find("past the buffer"), std::string::npos) << r.errors[0];
    EXPECT_EQ(r.msgs.size(), 1u);  // the message before it is kept
}

TEST(NetlinkParse, ShortTrailingBytes) {
    Bytes b = good_route();
    b.insert(b.end(), {1, 2, 3, 4, 5, 6});
    const auto r = parse_bytes(b);
    EXPECT_EQ(r.msgs.size(), 1u);
    EXPECT_EQ(r.errors.size(), 1u);
}

TEST(NetlinkParse, RtaLenBelowFour) {
    expect_error_then_good(Msg(RTM_NEWROUTE).fixed(rt4()).attr(RTA_DST, {10, 0, 0, 0}, 2).done(),
                           "rta_len 2 < 4");
}

TEST(NetlinkParse, RtaLenPastMessage) {
    expect_error_then_good(Msg(RTM_NEWROUTE).fixed(rt4()).attr(RTA_DST, {10, 0, 0, 0}, 40).done(),
                           "past the message");
}

TEST(NetlinkParse, RtaDstWrongLength) {
    expect_error_then_good(Msg(RTM_NEWROUTE).fixed(rt4()).attr(RTA_DST, {10, 0, 0}).done(),
                           "RTA_DST length 3, expected 4 for AF_INET");
}

TEST(NetlinkParse, RtaGatewayV6LengthOnV4Route) {
    expect_error_then_good(Msg(RTM_NEWROUTE).fixed(rt4()).attr(RTA_GATEWAY, Bytes(16)).done(),
                           "RTA_GATEWAY length 16");
}

TEST(NetlinkParse, DstLenTooLong) {
    expect_error_then_good(Msg(RTM_NEWROUTE).fixed(rt4(33)).done(), "rtm_dst_len 33 > 32");
}

TEST(NetlinkParse, MultipathEntryPastAttribute) {
    const Bytes mp = cat({rtnh(16, 0, 3, gw_attr({10, 0, 0, 1})), rtnh(40, 0, 4)});
    expect_error_then_good(Msg(RTM_NEWROUTE).fixed(rt4()).attr(RTA_MULTIPATH, mp).done(),
                           "RTA_MULTIPATH entry 2 length 40 past the attribute");
}

TEST(NetlinkParse, MultipathEntryBelowHeader) {
    const Bytes mp = cat({rtnh(8, 0, 3), rtnh(4, 0, 4)});
    expect_error_then_good(Msg(RTM_NEWROUTE).fixed(rt4()).attr(RTA_MULTIPATH, mp).done(),
                           "RTA_MULTIPATH entry 2 length 4 < 8");
}

TEST(NetlinkParse, MultipathEntryTruncated) {
    const Bytes mp = cat({rtnh(8, 0, 3), Bytes{1, 2, 3, 4}});
    expect_error_then_good(Msg(RTM_NEWROUTE).fixed(rt4()).attr(RTA_MULTIPATH, mp).done(),
                           "RTA_MULTIPATH entry 2 truncated");
}

TEST(NetlinkParse, MultipathInnerGatewayBad) {
    const Bytes mp = rtnh(15, 0, 3, gw_attr({10, 0, 0}));
    expect_error_then_good(Msg(RTM_NEWROUTE).fixed(rt4()).attr(RTA_MULTIPATH, mp).done(),
                           "RTA_GATEWAY length 3");
}

TEST(NetlinkParse, ViaBadFamily) {
    expect_error_then_good(Msg(RTM_NEWROUTE).fixed(rt4()).attr(RTA_VIA, {7, 0, 1, 2, 3, 4}).done(),
                           "RTA_VIA family 7");
}

TEST(NetlinkParse, TruncatedFixedHeaders) {
    ifinfomsg ifi{};
    expect_error_then_good(Msg(RTM_NEWLINK).raw(&ifi, 10).done(), "ifinfomsg truncated (10 of 16");
    expect_error_then_good(Msg(RTM_NEWROUTE).raw("\2\30", 2).done(), "rtmsg truncated");
    expect_error_then_good(Msg(RTM_NEWNEIGH).done(), "ndmsg truncated (0 of 12");
    expect_error_then_good(Msg(RTM_DELADDR).raw("\2", 1).done(), "ifaddrmsg truncated");
    expect_error_then_good(Msg(NLMSG_ERROR).raw("\0", 1).done(), "NLMSG_ERROR: truncated");
}

TEST(NetlinkParse, UnknownFamiliesAndTypesAreSkipped) {
    rtmsg mpls = rt4(20);
    mpls.rtm_family = 28;  // AF_MPLS
    ndmsg br{};
    br.ndm_family = AF_BRIDGE;
    ifinfomsg bri{};
    bri.ifi_family = AF_BRIDGE;
    rtmsg src = rt4();
    src.rtm_src_len = 16;
    rtmsg cloned = rt4();
    cloned.rtm_flags = RTM_F_CLONED;
    const auto r = parse_bytes(cat({
        Msg(RTM_NEWROUTE).fixed(mpls).attr(RTA_DST, {1, 2, 3}).done(),
        Msg(RTM_NEWNEIGH).fixed(br).attr(NDA_LLADDR, Bytes(6, 2)).done(),
        Msg(RTM_NEWLINK).fixed(bri).done(),
        Msg(RTM_NEWRULE).raw(Bytes(12).data(), 12).done(),
        Msg(RTM_NEWROUTE).fixed(src).attr(RTA_DST, {10, 0, 0, 0}).done(),
        Msg(RTM_NEWROUTE).fixed(cloned).attr(RTA_DST, {10, 0, 0, 0}).done(),
        good_route(),
    }));
    EXPECT_TRUE(r.errors.empty()) << r.errors.front();
    EXPECT_EQ(r.skipped, 6u);
    EXPECT_EQ(r.msgs.size(), 1u);
}

ndmsg nd4(uint16_t state) {
    ndmsg n{};
    n.ndm_family = AF_INET;
    n.ndm_ifindex = 4;
    n.ndm_state = state;
    return n;
}

TEST(NetlinkParse, NeighLladdr) {
    const auto r = parse_bytes(cat({
        Msg(RTM_NEWNEIGH)
            .fixed(nd4(NUD_REACHABLE))
            .attr(NDA_DST, {10, 0, 0, 5})
            .attr(NDA_LLADDR, {1, 2, 3})
            .done(),
        Msg(RTM_NEWNEIGH)
            .fixed(nd4(NUD_REACHABLE))
            .attr(NDA_DST, {10, 0, 0, 6})
            .attr(NDA_LLADDR, {})
            .done(),
        Msg(RTM_NEWNEIGH)
            .fixed(nd4(NUD_STALE))
            .attr(NDA_DST, {10, 0, 0, 7})
            .attr(NDA_LLADDR, {2, 0, 0, 0, 0, 7})
            .done(),
        Msg(RTM_NEWNEIGH)
            .fixed(nd4(NUD_REACHABLE | NUD_FAILED))
            .attr(NDA_DST, {10, 0, 0, 8})
            .attr(NDA_LLADDR, {2, 0, 0, 0, 0, 8})
            .done(),
        Msg(RTM_DELNEIGH)
            .fixed(nd4(NUD_REACHABLE))
            .attr(NDA_DST, {10, 0, 0, 9})
            .attr(NDA_LLADDR, {2, 0, 0, 0, 0, 9})
            .done(),
    }));
    ASSERT_TRUE(r.errors.empty()) << r.errors.front();
    ASSERT_EQ(r.msgs.size(), 5u);
    const auto n = [&](size_t i) { return std::get<NeighMsg>(r.msgs[i]); };
    EXPECT_FALSE(n(0).mac);  // 3-byte lladdr: no MAC, not an error
    EXPECT_FALSE(n(0).usable());
    EXPECT_FALSE(n(1).mac);
    EXPECT_EQ(n(2).mac, parse_mac("02:00:00:00:00:07"));
    EXPECT_EQ(n(2).ifindex, 4);
    EXPECT_EQ(n(2).ip, ip("10.0.0.7"));
    EXPECT_TRUE(n(2).usable());
    EXPECT_FALSE(n(3).usable());  // FAILED wins
    EXPECT_EQ(n(4).op, Op::del);
    EXPECT_FALSE(n(4).usable());
}

TEST(NetlinkParse, NeighLladdrTruncated) {
    // rta_len says 10, the message ends after 6 bytes of it.
    expect_error_then_good(Msg(RTM_NEWNEIGH)
                               .fixed(nd4(NUD_REACHABLE))
                               .attr(NDA_DST, {10, 0, 0, 5})
                               .attr(NDA_LLADDR, {1, 2, 3, 4, 5, 6}, 14)
                               .done(),
                           "past the message");
    expect_error_then_good(Msg(RTM_NEWNEIGH).fixed(nd4(NUD_REACHABLE)).done(), "no NDA_DST");
}

// Malformed nexthop objects (the well-formed ones are the kernel's, NexthopObjectsExactly).
TEST(NetlinkParse, NexthopMalformed) {
    nhmsg v4{};
    v4.nh_family = AF_INET;
    nhmsg any{};  // AF_UNSPEC: groups and blackholes
    expect_error_then_good(Msg(RTM_NEWNEXTHOP).fixed(v4).attr32(NHA_OIF, 3).done(), "no NHA_ID");
    expect_error_then_good(Msg(RTM_NEWNEXTHOP).fixed(v4).attr32(NHA_ID, 0).done(), "no NHA_ID");
    expect_error_then_good(
        Msg(RTM_NEWNEXTHOP).fixed(v4).attr32(NHA_ID, 5).attr(NHA_GATEWAY, {10, 0, 0}).done(),
        "NHA_GATEWAY length 3, expected 4");
    expect_error_then_good(
        Msg(RTM_NEWNEXTHOP).fixed(any).attr32(NHA_ID, 5).attr(NHA_GATEWAY, {10, 0, 0, 1}).done(),
        "NHA_GATEWAY with nh_family AF_UNSPEC");
    // NHA_GROUP: 8-byte entries (id, weight - 1, reserved), none of id 0.
    expect_error_then_good(Msg(RTM_NEWNEXTHOP)
                               .fixed(any)
                               .attr32(NHA_ID, 5)
                               .attr(NHA_GROUP, {7, 0, 0, 0, 0, 0})
                               .done(),
                           "NHA_GROUP length 6 is not a positive multiple of 8");
    expect_error_then_good(Msg(RTM_NEWNEXTHOP)
                               .fixed(any)
                               .attr32(NHA_ID, 5)
                               .attr(NHA_GROUP, {7, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
                               .done(),
                           "NHA_GROUP entry 2 has id 0");
    expect_error_then_good(Msg(RTM_NEWNEXTHOP).fixed(any).attr(NHA_ID, {1, 2}).done(),
                           "NHA_ID length 2, expected 4");
    // FDB next hops (VXLAN) and other families are skipped, not errors.
    const auto fdb = parse_bytes(
        Msg(RTM_NEWNEXTHOP).fixed(v4).attr32(NHA_ID, 9).attr(NHA_FDB, {}).done());
    EXPECT_TRUE(fdb.errors.empty());
    EXPECT_TRUE(fdb.msgs.empty());
    EXPECT_EQ(fdb.skipped, 1u);
    nhmsg bridge{};
    bridge.nh_family = AF_BRIDGE;
    EXPECT_EQ(parse_bytes(Msg(RTM_NEWNEXTHOP).fixed(bridge).attr32(NHA_ID, 9).done()).skipped, 1u);
    // A group's weights: weight - 1 in the byte.
    const auto g = parse_bytes(Msg(RTM_NEWNEXTHOP)
                                   .fixed(any)
                                   .attr32(NHA_ID, 5)
                                   .attr(NHA_GROUP, {7, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 254, 0, 0, 0})
                                   .done());
    ASSERT_TRUE(g.errors.empty()) << g.errors.front();
    const std::vector<NexthopMsg::Member> want = {{7, 1}, {8, 255}};
    EXPECT_EQ(std::get<NexthopMsg>(g.msgs.at(0)).group, want);
    const auto del = parse_bytes(Msg(RTM_DELNEXTHOP).fixed(any).attr32(NHA_ID, 5).done());
    EXPECT_EQ(std::get<NexthopMsg>(del.msgs.at(0)).op, Op::del);
}

TEST(NetlinkParse, LinkFields) {
    ifinfomsg ifi{};
    ifi.ifi_index = 9;
    ifi.ifi_flags = IFF_UP | IFF_LOWER_UP;
    const auto r = parse_bytes(Msg(RTM_NEWLINK)
                                   .fixed(ifi)
                                   .attr(IFLA_IFNAME, {'e', 't', 'h', '9', 0})
                                   .attr32(IFLA_MTU, 1500)
                                   .attr(IFLA_ADDRESS, {10, 1, 2, 3})
                                   .done());
    ASSERT_TRUE(r.errors.empty()) << r.errors.front();
    const auto &l = std::get<LinkMsg>(r.msgs.at(0));
    EXPECT_EQ(l.name, "eth9");
    EXPECT_EQ(l.ifindex, 9);
    EXPECT_EQ(l.mtu, 1500u);
    EXPECT_FALSE(l.mac);  // a 4-byte (tunnel) link address
    EXPECT_TRUE(l.admin_up);
    EXPECT_TRUE(l.oper_up);
    // IFLA_MTU of the wrong size is malformed.
    expect_error_then_good(Msg(RTM_NEWLINK).fixed(ifi).attr(IFLA_MTU, {1, 2}).done(),
                           "IFLA_MTU length 2");
}

TEST(NetlinkParse, ErrorAndAck) {
    nlmsgerr e{};
    e.error = -EEXIST;
    auto r = parse_bytes(Msg(NLMSG_ERROR).fixed(e).done());
    EXPECT_EQ(r.error, -EEXIST);
    e.error = 0;
    r = parse_bytes(Msg(NLMSG_ERROR).fixed(e).done());
    EXPECT_EQ(r.error, 0);
    EXPECT_TRUE(r.errors.empty());
    // Extended ACK: capped (only the request header echoed), with a message.
    e.error = -EINVAL;
    e.msg.nlmsg_len = 100;  // the original request's length; capped, so not echoed
    const char text[] = "Invalid prefix";
    r = parse_bytes(Msg(NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS)
                        .fixed(e)
                        .attr(NLMSGERR_ATTR_MSG, Bytes(text, text + sizeof(text)))
                        .done());
    EXPECT_EQ(r.error, -EINVAL);
    EXPECT_EQ(r.error_msg, "Invalid prefix");
}

TEST(NetlinkParse, ProtocolNames) {
    EXPECT_STREQ(rt_protocol_name(RTPROT_KERNEL), "kernel");
    EXPECT_STREQ(rt_protocol_name(RTPROT_BOOT), "boot");
    EXPECT_STREQ(rt_protocol_name(RTPROT_STATIC), "static");
    EXPECT_STREQ(rt_protocol_name(RTPROT_BIRD), "bird");
    EXPECT_STREQ(rt_protocol_name(RTPROT_ZEBRA), "zebra");
    EXPECT_STREQ(rt_protocol_name(186), "bgp");
    EXPECT_STREQ(rt_protocol_name(188), "ospf");
    EXPECT_STREQ(rt_protocol_name(187), "isis");
    EXPECT_STREQ(rt_protocol_name(RTPROT_RA), "ra");
    EXPECT_STREQ(rt_protocol_name(RTPROT_DHCP), "dhcp");
    EXPECT_STREQ(rt_protocol_name(RTPROT_REDIRECT), "redirect");
    EXPECT_STREQ(rt_protocol_name(99), "proto-99");
    EXPECT_STREQ(rt_protocol_name(0), "proto-0");
}

// Every prefix of every capture: never a crash, errors only where the cut falls.
TEST(NetlinkParse, EveryTruncationOfTheCaptures) {
    for (const char *f : {"dump_route.bin", "dump_neigh.bin", "mon_del_addr.bin"}) {
        const Bytes all = read_file(f);
        for (size_t n = 0; n <= all.size(); n++) {
            const auto r = parse_bytes(Bytes(all.begin(), all.begin() + long(n)));
            if (n == all.size()) {
                EXPECT_TRUE(r.errors.empty()) << f;
            }
        }
    }
}

// --- socket --------------------------------------------------------------------------------

TEST(NetlinkSocket, DumpLinksFindsLoopback) {
    NetlinkSocket s;
    std::vector<Message> links;
    std::string err;
    ASSERT_TRUE(s.dump(RTM_GETLINK, &links, &err)) << err;
    bool lo = false;
    for (const auto &m : links)
        if (auto *l = std::get_if<LinkMsg>(&m); l && l->name == "lo") {
            lo = true;
            EXPECT_EQ(l->ifindex, 1);
            EXPECT_EQ(l->op, Op::add);
        }
    EXPECT_TRUE(lo);
    std::vector<Message> routes;
    EXPECT_TRUE(s.dump(RTM_GETROUTE, &routes, &err)) << err;
    EXPECT_FALSE(s.dump(RTM_NEWLINK, &routes, &err));  // not a dump type
}

TEST(NetlinkSocket, OpenNonBlockingRecvReturnsZero) {
    NetlinkSocket s;
    std::string err;
    ASSERT_TRUE(s.open(false, 1 << 20, &err)) << err;
    EXPECT_GE(s.fd(), 0);
    std::span<const uint8_t> out;
    bool overrun = true;
    EXPECT_EQ(s.recv(&out, &overrun, &err), 0);
    EXPECT_FALSE(overrun);
    ASSERT_TRUE(s.request_dump(RTM_GETLINK, &err)) << err;
    // The reply arrives through recv() on the same socket.
    ParseResult all;
    for (int i = 0; i < 1000 && !all.done; i++) {
        const ssize_t n = s.recv(&out, &overrun, &err);
        ASSERT_GE(n, 0) << err;
        if (n == 0) {
            usleep(1000);
            continue;
        }
        auto p = parse(out);
        EXPECT_TRUE(p.errors.empty());
        all.done = p.done;
        for (auto &m : p.msgs) all.msgs.push_back(std::move(m));
    }
    EXPECT_TRUE(all.done);
    EXPECT_FALSE(all.msgs.empty());
}

}  // namespace
}  // namespace rocesw::nl
