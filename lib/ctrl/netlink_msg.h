// rtnetlink message translation for the control plane (linux-cp pattern): routing daemons
// (BIRD, FRR) install routes in the kernel of the switch's network namespace, and the switch
// follows links, addresses, neighbours and routes over NETLINK_ROUTE. This file only turns
// received bytes into plain structs; applying them to the RIB is someone else's job, and the
// socket lives in netlink_socket.h.
//
// parse() is pure and takes untrusted bytes (it is fuzzed, test/fuzz/fuzz_netlink.cc): every
// length (nlmsg_len, rta_len, rtnh_len, address and MAC lengths) is checked before it is used,
// and nothing is read outside `buf`.
//
// What the kernel sends (6.18, from the captures in test/data/netlink; regenerate them with
// test/data/gen_netlink_msgs.py to re-check on another kernel):
//   - Multipath weights: rtnh_hops is weight - 1 (`weight 3` arrives as hops 2).
//   - IPv6 multipath: dumps and notifications carry RTA_MULTIPATH in one message, like IPv4
//     (since 4.11; older kernels sent one RTM_NEWROUTE per next hop, not handled here).
//     `ip -6 route append` is notified as RTM_NEWROUTE with NLM_F_CREATE | NLM_F_APPEND whose
//     RTA_MULTIPATH holds every next hop of the route, old and new: treat it as a replace.
//     RouteMsg::append records the flag for logging only. The order differs from a dump's
//     (the appended hop comes first), so treat next hops as a set, never by position.
//   - An IPv4 route via an IPv6 gateway (RFC 5549) carries RTA_VIA, not RTA_GATEWAY; the
//     next hop's gateway is then IPv6 while the route is IPv4.
//   - Single-path routes put the next-hop flags (RTNH_F_ONLINK, RTNH_F_LINKDOWN...) in
//     rtm_flags; multipath routes have them per rtnexthop. Both end up in NextHopMsg::flags.
//   - IPv6 blackhole/unreachable/prohibit routes come with RTA_OIF = lo (ifindex 1), IPv4 ones
//     without RTA_OIF: the former have one next hop (ifindex 1, no gateway), the latter none.
//   - Tables above 255 are only in RTA_TABLE (rtm_table is then RT_TABLE_COMPAT, 252).
//   - Every address adds kernel routes (protocol kernel): IPv4 the prefix route (table main,
//     scope link) and local + broadcast routes in table local (255); IPv6 the prefix route,
//     a local /128 in table local, and per interface fe80::/64 (main) and ff00::/8 (local,
//     type multicast). Link-local addresses are ordinary RTM_NEWADDR with scope link (253).
//   - Deleting an address: RTM_DELADDR, then RTM_DELROUTE for its prefix, broadcast and local
//     routes, then RTM_DELNEIGH for neighbours that no longer resolve.
//   - Deleting a neighbour: RTM_NEWNEIGH with NUD_FAILED, then RTM_DELNEIGH with NUD_FAILED;
//     neither carries NDA_LLADDR (mac = nullopt). Key deletions on (ifindex, ip).
//   - Setting a link admin down: RTM_NEWLINK without IFF_UP, RTM_DELNEIGH for its neighbours,
//     RTM_DELROUTE for each IPv6 route via it and RTM_DELADDR for its IPv6 addresses (unless
//     keep_addr_on_down). IPv4 routes via it are flushed WITHOUT any RTM_DELROUTE: on link
//     down, drop the IPv4 routes through that ifindex yourself (or re-dump). Losing carrier
//     only (peer down) keeps the routes, flagged RTNH_F_LINKDOWN, and clears oper_up.
//   - Cached/cloned routes (RTM_F_CLONED: IPv6 exceptions, PMTU) only appear in dumps that
//     ask for them; they are counted as skipped, like source-routed (rtm_src_len > 0) ones.
//   - Kernel nexthop objects: a route naming one carries RTA_NH_ID, plus the object's next
//     hops (RTA_GATEWAY/RTA_OIF or RTA_MULTIPATH) only with net.ipv4.nexthop_compat_mode 1 (the
//     default, per namespace). Replacing an object is notified as RTM_NEWNEXTHOP, and as
//     RTM_NEWROUTE for each route using it only in compat mode 1. Deleting one: RTM_DELNEXTHOP
//     for it and for each group it leaves empty, RTM_NEWNEXTHOP for each group it leaves; the
//     routes naming any of them are deleted WITHOUT RTM_DELROUTE in either mode. Group weights
//     are stored less one (nexthop_grp.weight 2 is `weight 3`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "pkt/addr.h"

namespace rocesw::nl {

enum class Op : uint8_t { add, del };

// RTM_NEWLINK / RTM_DELLINK (ifi_family AF_UNSPEC; AF_BRIDGE port messages are skipped).
struct LinkMsg {
    Op op;
    int32_t ifindex = 0;
    std::string name;            // IFLA_IFNAME
    std::optional<MacAddr> mac;  // IFLA_ADDRESS when it is 6 bytes
    uint32_t mtu = 0;            // IFLA_MTU
    bool admin_up = false;       // IFF_UP
    bool oper_up = false;        // IFF_RUNNING or IFF_LOWER_UP
    uint32_t flags = 0;          // ifi_flags (IFF_*) as given
};

// RTM_NEWADDR / RTM_DELADDR (AF_INET, AF_INET6).
struct AddrMsg {
    Op op;
    int32_t ifindex = 0;
    IfAddr addr;  // IFA_LOCAL when present (v4; v6 with a peer), else IFA_ADDRESS; ifa_prefixlen
    uint8_t scope = 0;   // RT_SCOPE_*: 0 universe, 253 link (fe80::/10), 254 host (127.0.0.1)
    uint32_t flags = 0;  // IFA_FLAGS if present, else ifa_flags (IFA_F_SECONDARY, _TENTATIVE...)
};

// RTM_NEWNEIGH / RTM_DELNEIGH (AF_INET, AF_INET6; AF_BRIDGE fdb entries are skipped).
struct NeighMsg {
    Op op;
    int32_t ifindex = 0;
    IpAddr ip;                   // NDA_DST
    std::optional<MacAddr> mac;  // NDA_LLADDR when it is 6 bytes (absent for INCOMPLETE/FAILED)
    uint16_t state = 0;          // NUD_* bits
    uint8_t flags = 0;           // NTF_* (NTF_ROUTER...)
    // op add, mac present, state has REACHABLE|STALE|DELAY|PROBE|PERMANENT|NOARP and
    // neither FAILED nor INCOMPLETE: an entry a worker can rewrite with.
    bool usable() const;
};

struct NextHopMsg {
    int32_t ifindex = 0;            // RTA_OIF / rtnh_ifindex; 0 when absent
    std::optional<IpAddr> gateway;  // RTA_GATEWAY, or RTA_VIA (then possibly v6 for a v4 route)
    uint32_t weight = 1;            // rtnh_hops + 1; 1 for a single-path route
    bool onlink = false;            // RTNH_F_ONLINK
    uint8_t flags = 0;              // RTNH_F_* as given (DEAD, LINKDOWN, ONLINK, ...)
};

// RTM_NEWROUTE / RTM_DELROUTE (AF_INET, AF_INET6; source-routed (rtm_src_len > 0) and
// cloned (RTM_F_CLONED) routes are skipped).
struct RouteMsg {
    Op op;
    uint8_t family = 0;     // AF_INET or AF_INET6 (of dst; a next hop may differ, see RTA_VIA)
    uint32_t table = 0;     // RTA_TABLE wins over rtm_table (which is 8 bits)
    uint8_t protocol = 0;   // RTPROT_*: rt_protocol_name()
    uint8_t type = 0;       // RTN_* (unicast, local, broadcast, blackhole, ...)
    uint8_t scope = 0;      // RT_SCOPE_*
    uint8_t tos = 0;        // rtm_tos: the IPv4 TOS the route is for (`ip route ... tos N`); 0: any
    IpPrefix dst;           // host bits cleared; default route = len 0
    uint32_t priority = 0;  // RTA_PRIORITY (metric)
    uint32_t nh_id = 0;     // RTA_NH_ID: the route's kernel nexthop object (NexthopMsg)
    // One entry for a single-path route (RTA_OIF and/or RTA_GATEWAY/RTA_VIA), all of
    // RTA_MULTIPATH otherwise; empty for blackhole/unreachable/prohibit IPv4 routes and routes
    // that only have nh_id (with net.ipv4.nexthop_compat_mode 1, the default, the kernel adds
    // the object's next hops too).
    std::vector<NextHopMsg> nexthops;
    bool append = false;  // NLM_F_APPEND on the notification (IPv6 append; still the full route)
};

// RTM_NEWNEXTHOP / RTM_DELNEXTHOP: a kernel nexthop object (Linux 5.3+; FRR's zebra installs
// its routes through them by default), either one next hop (NHA_OIF, NHA_GATEWAY), a blackhole
// or a group of other objects' ids with weights (NHA_GROUP). FDB next hops (NHA_FDB, for VXLAN)
// are skipped: no route uses them.
struct NexthopMsg {
    Op op;
    uint32_t id = 0;                // NHA_ID, never 0
    uint8_t family = 0;             // nh_family: AF_INET, AF_INET6, AF_UNSPEC (groups, blackholes)
    uint8_t protocol = 0;           // nh_protocol (RTPROT_*)
    int32_t ifindex = 0;            // NHA_OIF; 0 when absent
    std::optional<IpAddr> gateway;  // NHA_GATEWAY (the object's family)
    bool blackhole = false;         // NHA_BLACKHOLE
    bool onlink = false;            // RTNH_F_ONLINK in nh_flags
    uint8_t flags = 0;              // nh_flags' RTNH_F_* byte (DEAD, LINKDOWN, ONLINK, ...)
    struct Member {
        uint32_t id;
        uint32_t weight;  // nexthop_grp.weight + 1, as rtnh_hops
        bool operator==(const Member &) const = default;
    };
    std::vector<Member> group;  // NHA_GROUP; empty for a single next hop
    bool is_group() const { return !group.empty(); }
};

using Message = std::variant<LinkMsg, AddrMsg, NeighMsg, RouteMsg, NexthopMsg>;

struct ParseResult {
    std::vector<Message> msgs;
    // Well-formed messages of types/families we do not follow (AF_BRIDGE neigh and link,
    // RTM_NEWRULE, routes with rtm_src_len > 0, cloned routes, FDB next hops, unknown
    // families).
    size_t skipped = 0;
    // One line per malformed message, e.g. "RTM_NEWROUTE: RTA_MULTIPATH entry 2 length 4 <
    // 8 (message at offset 96)". Parsing continues with the next message while the outer
    // nlmsghdr length is sane, and stops when it is not.
    std::vector<std::string> errors;
    bool done = false;              // NLMSG_DONE seen (end of a dump)
    bool dump_interrupted = false;  // NLM_F_DUMP_INTR: the tables changed mid-dump; dump again
    int error = 0;  // NLMSG_ERROR (or NLMSG_DONE) with nonzero errno: negative, as the kernel
                    // gives it; 0 otherwise (an ACK is error 0)
    std::string error_msg;  // extended ACK text (NLMSGERR_ATTR_MSG) with `error`, if any
};

// A whole recv() buffer: any number of nlmsghdr (several datagrams may be concatenated, as
// each one is a sequence of 4-byte aligned messages).
ParseResult parse(std::span<const uint8_t> buf);

// "kernel", "boot", "static", "bird", "zebra", "bgp", "ospf", "isis", "ra", "dhcp",
// "redirect"; anything else "proto-<n>". Always a pointer to static storage (one string per
// value, built once), so it may be kept and used from any thread.
const char *rt_protocol_name(uint8_t proto);

// "RTM_NEWROUTE" etc., "NLMSG_DONE"; other types "type-<n>" in a thread_local buffer that the
// next call on the same thread overwrites. For messages.
const char *msg_type_name(uint16_t type);

}  // namespace rocesw::nl
