// rtnetlink parsing. Everything is read with memcpy from checked offsets: the buffer comes
// from the kernel, but the parser is fuzzed and must hold for any bytes.
#include "ctrl/netlink_msg.h"

#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <array>
#include <cstring>
#include <string_view>

namespace rocesw::nl {

namespace {

template <typename T>
T load(const uint8_t *p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

size_t align4(size_t n) {
    return (n + 3) & ~size_t(3);
}

// Thrown (and caught in parse_one) for a malformed message; the text goes to errors.
struct Malformed {
    std::string what;
};

[[noreturn]] void bad(std::string what) {
    throw Malformed{std::move(what)};
}

struct Attr {
    uint16_t type;  // with NLA_F_NESTED / NLA_F_NET_BYTEORDER masked off
    std::span<const uint8_t> data;
};

// The attributes in `b`, each checked against what is left of it. Fewer than 4 trailing bytes
// are padding and ignored, as the kernel's own nla_ok() does.
std::vector<Attr> attrs(std::span<const uint8_t> b, const char *where) {
    std::vector<Attr> out;
    size_t off = 0;
    while (b.size() - off >= sizeof(rtattr)) {
        const uint16_t len = load<uint16_t>(b.data() + off);
        const uint16_t type = load<uint16_t>(b.data() + off + 2) & NLA_TYPE_MASK;
        if (len < sizeof(rtattr))
            bad(std::string(where) + "attribute type " + std::to_string(type) + " rta_len " +
                std::to_string(len) + " < 4");
        if (len > b.size() - off)
            bad(std::string(where) + "attribute type " + std::to_string(type) + " rta_len " +
                std::to_string(len) + " past the message (" + std::to_string(b.size() - off) +
                " bytes left)");
        out.push_back({type, b.subspan(off + sizeof(rtattr), len - sizeof(rtattr))});
        off += align4(len);
        if (off > b.size()) break;  // the last attribute's padding may be missing
    }
    return out;
}

uint32_t attr_u32(const Attr &a, const char *name) {
    if (a.data.size() != 4)
        bad(std::string(name) + " length " + std::to_string(a.data.size()) + ", expected 4");
    return load<uint32_t>(a.data.data());
}

const char *family_name(uint8_t family) {
    return family == AF_INET ? "AF_INET" : family == AF_INET6 ? "AF_INET6" : "AF_?";
}

IpAddr ip_from(std::span<const uint8_t> d, uint8_t family, const char *name) {
    const size_t want = family == AF_INET ? 4 : 16;
    if (d.size() != want)
        bad(std::string(name) + " length " + std::to_string(d.size()) + ", expected " +
            std::to_string(want) + " for " + family_name(family));
    IpAddr a;
    if (family == AF_INET) {
        a.v4 = (uint32_t(d[0]) << 24) | (uint32_t(d[1]) << 16) | (uint32_t(d[2]) << 8) | d[3];
    } else {
        a.is_v6 = true;
        std::memcpy(a.v6.data(), d.data(), 16);
    }
    return a;
}

std::optional<MacAddr> mac_from(std::span<const uint8_t> d) {
    // Other lengths are legitimate (IP tunnels carry 4 or 16 bytes, some devices none): no MAC.
    if (d.size() != 6) return std::nullopt;
    MacAddr m;
    std::memcpy(m.b.data(), d.data(), 6);
    return m;
}

IpPrefix prefix_of(IpAddr a, uint8_t len) {
    if (a.is_v6) {
        for (size_t i = 0; i < 16; i++) {
            const int keep = int(len) - int(i) * 8;
            if (keep <= 0)
                a.v6[i] = 0;
            else if (keep < 8)
                a.v6[i] &= uint8_t(0xff00u >> keep);
        }
    } else {
        a.v4 = len == 0 ? 0 : a.v4 & (0xffffffffu << (32 - len));
    }
    return IpPrefix{a, len};
}

// The fixed header after nlmsghdr, or a "truncated" error.
template <typename T>
T fixed(std::span<const uint8_t> payload, const char *name) {
    if (payload.size() < sizeof(T))
        bad(std::string(name) + " truncated (" + std::to_string(payload.size()) + " of " +
            std::to_string(sizeof(T)) + " bytes)");
    return load<T>(payload.data());
}

// A parsed message, nothing (skipped), or an exception (malformed).
using Parsed = std::optional<Message>;

Parsed parse_link(uint16_t type, std::span<const uint8_t> p) {
    const auto ifi = fixed<ifinfomsg>(p, "ifinfomsg");
    if (ifi.ifi_family != AF_UNSPEC) return std::nullopt;  // AF_BRIDGE port info etc.
    LinkMsg m;
    m.op = type == RTM_NEWLINK ? Op::add : Op::del;
    m.ifindex = ifi.ifi_index;
    m.flags = ifi.ifi_flags;
    m.admin_up = ifi.ifi_flags & IFF_UP;
    m.oper_up = ifi.ifi_flags & (IFF_RUNNING | IFF_LOWER_UP);
    for (const auto &a : attrs(p.subspan(NLMSG_ALIGN(sizeof(ifinfomsg))), "")) {
        switch (a.type) {
            case IFLA_IFNAME: {
                const auto *s = reinterpret_cast<const char *>(a.data.data());
                m.name.assign(s, strnlen(s, a.data.size()));
                break;
            }
            case IFLA_ADDRESS:
                m.mac = mac_from(a.data);
                break;
            case IFLA_MTU:
                m.mtu = attr_u32(a, "IFLA_MTU");
                break;
        }
    }
    return m;
}

Parsed parse_addr(uint16_t type, std::span<const uint8_t> p) {
    const auto ifa = fixed<ifaddrmsg>(p, "ifaddrmsg");
    if (ifa.ifa_family != AF_INET && ifa.ifa_family != AF_INET6) return std::nullopt;
    const uint8_t max_len = ifa.ifa_family == AF_INET ? 32 : 128;
    if (ifa.ifa_prefixlen > max_len)
        bad("ifa_prefixlen " + std::to_string(ifa.ifa_prefixlen) + " > " + std::to_string(max_len));
    AddrMsg m;
    m.op = type == RTM_NEWADDR ? Op::add : Op::del;
    m.ifindex = int32_t(ifa.ifa_index);
    m.scope = ifa.ifa_scope;
    m.flags = ifa.ifa_flags;
    std::optional<IpAddr> local, address;
    for (const auto &a : attrs(p.subspan(NLMSG_ALIGN(sizeof(ifaddrmsg))), "")) {
        switch (a.type) {
            case IFA_LOCAL:
                local = ip_from(a.data, ifa.ifa_family, "IFA_LOCAL");
                break;
            case IFA_ADDRESS:
                address = ip_from(a.data, ifa.ifa_family, "IFA_ADDRESS");
                break;
            case IFA_FLAGS:
                m.flags = attr_u32(a, "IFA_FLAGS");
                break;
        }
    }
    // On a point-to-point link IFA_ADDRESS is the peer and IFA_LOCAL ours; otherwise they are
    // equal (IPv4) or IFA_LOCAL is absent (IPv6).
    if (!local && !address) bad("no IFA_LOCAL or IFA_ADDRESS");
    m.addr.addr = local ? *local : *address;
    m.addr.len = ifa.ifa_prefixlen;
    return m;
}

Parsed parse_neigh(uint16_t type, std::span<const uint8_t> p) {
    const auto nd = fixed<ndmsg>(p, "ndmsg");
    if (nd.ndm_family != AF_INET && nd.ndm_family != AF_INET6) return std::nullopt;
    NeighMsg m;
    m.op = type == RTM_NEWNEIGH ? Op::add : Op::del;
    m.ifindex = nd.ndm_ifindex;
    m.state = nd.ndm_state;
    m.flags = nd.ndm_flags;
    bool have_dst = false;
    for (const auto &a : attrs(p.subspan(NLMSG_ALIGN(sizeof(ndmsg))), "")) {
        switch (a.type) {
            case NDA_DST:
                m.ip = ip_from(a.data, nd.ndm_family, "NDA_DST");
                have_dst = true;
                break;
            case NDA_LLADDR:
                m.mac = mac_from(a.data);
                break;
        }
    }
    if (!have_dst) bad("no NDA_DST");
    return m;
}

// RTA_VIA: struct rtvia { sa_family_t rtvia_family; u8 rtvia_addr[]; }.
IpAddr via_from(std::span<const uint8_t> d) {
    if (d.size() < 2) bad("RTA_VIA length " + std::to_string(d.size()) + " < 2");
    const uint16_t fam = load<uint16_t>(d.data());
    if (fam != AF_INET && fam != AF_INET6)
        bad("RTA_VIA family " + std::to_string(fam) + " is not AF_INET or AF_INET6");
    return ip_from(d.subspan(2), uint8_t(fam), "RTA_VIA address");
}

std::vector<NextHopMsg> multipath(std::span<const uint8_t> d, uint8_t family) {
    std::vector<NextHopMsg> out;
    size_t off = 0;
    for (int n = 1; off < d.size(); n++) {
        const std::string entry = "RTA_MULTIPATH entry " + std::to_string(n) + " ";
        const size_t left = d.size() - off;
        if (left < sizeof(rtnexthop))
            bad(entry + "truncated (" + std::to_string(left) + " of " +
                std::to_string(sizeof(rtnexthop)) + " bytes)");
        const auto nh = load<rtnexthop>(d.data() + off);
        if (nh.rtnh_len < sizeof(rtnexthop))
            bad(entry + "length " + std::to_string(nh.rtnh_len) + " < " +
                std::to_string(sizeof(rtnexthop)));
        if (nh.rtnh_len > left)
            bad(entry + "length " + std::to_string(nh.rtnh_len) + " past the attribute (" +
                std::to_string(left) + " bytes left)");
        NextHopMsg h;
        h.ifindex = nh.rtnh_ifindex;
        h.weight = uint32_t(nh.rtnh_hops) + 1;
        h.flags = nh.rtnh_flags;
        h.onlink = nh.rtnh_flags & RTNH_F_ONLINK;
        const auto inner = d.subspan(off + sizeof(rtnexthop), nh.rtnh_len - sizeof(rtnexthop));
        for (const auto &a : attrs(inner, entry.c_str())) {
            if (a.type == RTA_GATEWAY)
                h.gateway = ip_from(a.data, family, "RTA_GATEWAY");
            else if (a.type == RTA_VIA)
                h.gateway = via_from(a.data);
        }
        out.push_back(h);
        off += align4(nh.rtnh_len);
    }
    return out;
}

Parsed parse_route(uint16_t type, uint16_t nl_flags, std::span<const uint8_t> p) {
    const auto rtm = fixed<rtmsg>(p, "rtmsg");
    if (rtm.rtm_family != AF_INET && rtm.rtm_family != AF_INET6) return std::nullopt;
    const uint8_t max_len = rtm.rtm_family == AF_INET ? 32 : 128;
    if (rtm.rtm_dst_len > max_len)
        bad("rtm_dst_len " + std::to_string(rtm.rtm_dst_len) + " > " + std::to_string(max_len));
    RouteMsg m;
    m.op = type == RTM_NEWROUTE ? Op::add : Op::del;
    m.family = rtm.rtm_family;
    m.table = rtm.rtm_table;
    m.protocol = rtm.rtm_protocol;
    m.type = rtm.rtm_type;
    m.scope = rtm.rtm_scope;
    m.tos = rtm.rtm_tos;
    m.append = nl_flags & NLM_F_APPEND;
    IpAddr dst;
    dst.is_v6 = rtm.rtm_family == AF_INET6;
    int32_t oif = 0;
    bool have_oif = false;
    std::optional<IpAddr> gateway;
    std::optional<std::vector<NextHopMsg>> paths;
    // Attributes are all checked even when the route is skipped below, so a malformed
    // message is reported as such whatever else it says.
    for (const auto &a : attrs(p.subspan(NLMSG_ALIGN(sizeof(rtmsg))), "")) {
        switch (a.type) {
            case RTA_DST:
                dst = ip_from(a.data, rtm.rtm_family, "RTA_DST");
                break;
            case RTA_TABLE:
                m.table = attr_u32(a, "RTA_TABLE");
                break;
            case RTA_PRIORITY:
                m.priority = attr_u32(a, "RTA_PRIORITY");
                break;
            case RTA_OIF:
                oif = int32_t(attr_u32(a, "RTA_OIF"));
                have_oif = true;
                break;
            case RTA_GATEWAY:
                gateway = ip_from(a.data, rtm.rtm_family, "RTA_GATEWAY");
                break;
            case RTA_VIA:
                gateway = via_from(a.data);
                break;
            case RTA_NH_ID:
                m.nh_id = attr_u32(a, "RTA_NH_ID");
                break;
            case RTA_MULTIPATH:
                paths = multipath(a.data, rtm.rtm_family);
                break;
        }
    }
    if (rtm.rtm_src_len > 0 || (rtm.rtm_flags & RTM_F_CLONED)) return std::nullopt;
    m.dst = prefix_of(dst, rtm.rtm_dst_len);
    if (paths) {
        m.nexthops = std::move(*paths);
    } else if (have_oif || gateway) {
        NextHopMsg h;
        h.ifindex = oif;
        h.gateway = gateway;
        h.flags = uint8_t(rtm.rtm_flags & 0xff);  // single path: RTNH_F_* live in rtm_flags
        h.onlink = rtm.rtm_flags & RTNH_F_ONLINK;
        m.nexthops.push_back(h);
    }
    return m;
}

// RTM_NEWNEXTHOP / RTM_DELNEXTHOP: struct nhmsg, then NHA_* attributes. A group's NHA_GROUP is
// an array of struct nexthop_grp (8 bytes each); a deletion carries at least NHA_ID.
Parsed parse_nexthop(uint16_t type, std::span<const uint8_t> p) {
    const auto nh = fixed<nhmsg>(p, "nhmsg");
    if (nh.nh_family != AF_INET && nh.nh_family != AF_INET6 && nh.nh_family != AF_UNSPEC)
        return std::nullopt;
    NexthopMsg m;
    m.op = type == RTM_NEWNEXTHOP ? Op::add : Op::del;
    m.family = nh.nh_family;
    m.protocol = nh.nh_protocol;
    m.flags = uint8_t(nh.nh_flags & 0xff);
    m.onlink = nh.nh_flags & RTNH_F_ONLINK;
    bool fdb = false;
    for (const auto &a : attrs(p.subspan(NLMSG_ALIGN(sizeof(nhmsg))), "")) {
        switch (a.type) {
            case NHA_ID:
                m.id = attr_u32(a, "NHA_ID");
                break;
            case NHA_OIF:
                m.ifindex = int32_t(attr_u32(a, "NHA_OIF"));
                break;
            case NHA_GATEWAY:
                if (nh.nh_family == AF_UNSPEC) bad("NHA_GATEWAY with nh_family AF_UNSPEC");
                m.gateway = ip_from(a.data, nh.nh_family, "NHA_GATEWAY");
                break;
            case NHA_BLACKHOLE:
                m.blackhole = true;
                break;
            case NHA_FDB:
                fdb = true;
                break;
            case NHA_GROUP: {
                constexpr size_t kEntry = sizeof(nexthop_grp);
                if (a.data.empty() || a.data.size() % kEntry)
                    bad("NHA_GROUP length " + std::to_string(a.data.size()) +
                        " is not a positive multiple of " + std::to_string(kEntry));
                for (size_t off = 0; off < a.data.size(); off += kEntry) {
                    const auto g = load<nexthop_grp>(a.data.data() + off);
                    if (g.id == 0)
                        bad("NHA_GROUP entry " + std::to_string(off / kEntry + 1) + " has id 0");
                    m.group.push_back({g.id, uint32_t(g.weight) + 1});
                }
                break;
            }
        }
    }
    if (m.id == 0) bad("no NHA_ID");
    if (fdb) return std::nullopt;
    return m;
}

// NLMSG_ERROR payload: int error, the original header (and more), then with NLM_F_ACK_TLVS
// extended-ACK attributes after the echoed request.
void parse_error(uint16_t nl_flags, std::span<const uint8_t> p, ParseResult &r) {
    if (p.size() < sizeof(int32_t)) bad("truncated (" + std::to_string(p.size()) + " of 4 bytes)");
    const int32_t e = load<int32_t>(p.data());
    if (e == 0) return;
    r.error = e;
    if (!(nl_flags & NLM_F_ACK_TLVS) || p.size() < sizeof(nlmsgerr)) return;
    // With NLM_F_CAPPED only the request's header is echoed, else the whole request.
    size_t off = sizeof(nlmsgerr);
    if (!(nl_flags & NLM_F_CAPPED)) {
        const uint32_t req_len = load<uint32_t>(p.data() + offsetof(nlmsgerr, msg));
        if (req_len < sizeof(nlmsghdr) || req_len - sizeof(nlmsghdr) > p.size() - off) return;
        off += align4(req_len - sizeof(nlmsghdr));
        if (off > p.size()) return;
    }
    for (const auto &a : attrs(p.subspan(off), "extended ACK ")) {
        if (a.type == NLMSGERR_ATTR_MSG) {
            const auto *s = reinterpret_cast<const char *>(a.data.data());
            r.error_msg.assign(s, strnlen(s, a.data.size()));
        }
    }
}

}  // namespace

bool NeighMsg::usable() const {
    constexpr uint16_t ok =
        NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP;
    return op == Op::add && mac && (state & ok) && !(state & (NUD_FAILED | NUD_INCOMPLETE));
}

ParseResult parse(std::span<const uint8_t> buf) {
    ParseResult r;
    size_t off = 0;
    while (off < buf.size()) {
        const size_t left = buf.size() - off;
        if (left < sizeof(nlmsghdr)) {
            r.errors.push_back(std::to_string(left) +
                               " trailing bytes after the last message "
                               "(offset " +
                               std::to_string(off) + "), too few for a nlmsghdr");
            break;
        }
        const auto h = load<nlmsghdr>(buf.data() + off);
        const std::string where = std::string(msg_type_name(h.nlmsg_type));
        const std::string at = " (message at offset " + std::to_string(off) + ")";
        if (h.nlmsg_len < sizeof(nlmsghdr)) {
            r.errors.push_back(where + ": nlmsg_len " + std::to_string(h.nlmsg_len) + " < " +
                               std::to_string(sizeof(nlmsghdr)) + at +
                               "; rest of the buffer dropped");
            break;
        }
        if (h.nlmsg_len > left) {
            r.errors.push_back(where + ": nlmsg_len " + std::to_string(h.nlmsg_len) +
                               " past the buffer (" + std::to_string(left) + " bytes left)" + at +
                               "; rest of the buffer dropped");
            break;
        }
        const auto payload = buf.subspan(off + sizeof(nlmsghdr), h.nlmsg_len - sizeof(nlmsghdr));
        if (h.nlmsg_flags & NLM_F_DUMP_INTR) r.dump_interrupted = true;
        try {
            Parsed m;
            switch (h.nlmsg_type) {
                case NLMSG_NOOP:
                    break;
                case NLMSG_DONE:
                    r.done = true;
                    // A dump that failed half-way ends with DONE carrying the negative errno.
                    if (payload.size() >= 4 && load<int32_t>(payload.data()) < 0)
                        r.error = load<int32_t>(payload.data());
                    break;
                case NLMSG_ERROR:
                    parse_error(h.nlmsg_flags, payload, r);
                    break;
                case NLMSG_OVERRUN:
                    bad("data lost");
                case RTM_NEWLINK:
                case RTM_DELLINK:
                    m = parse_link(h.nlmsg_type, payload);
                    goto check;
                case RTM_NEWADDR:
                case RTM_DELADDR:
                    m = parse_addr(h.nlmsg_type, payload);
                    goto check;
                case RTM_NEWNEIGH:
                case RTM_DELNEIGH:
                    m = parse_neigh(h.nlmsg_type, payload);
                    goto check;
                case RTM_NEWNEXTHOP:
                case RTM_DELNEXTHOP:
                    m = parse_nexthop(h.nlmsg_type, payload);
                    goto check;
                case RTM_NEWROUTE:
                case RTM_DELROUTE:
                    m = parse_route(h.nlmsg_type, h.nlmsg_flags, payload);
                check:
                    if (m)
                        r.msgs.push_back(std::move(*m));
                    else
                        r.skipped++;
                    break;
                default:
                    r.skipped++;
                    break;
            }
        } catch (const Malformed &e) {
            r.errors.push_back(where + ": " + e.what + at);
        }
        off += align4(h.nlmsg_len);  // may step past the end: the loop then stops
    }
    return r;
}

const char *rt_protocol_name(uint8_t proto) {
    // All 256 names built once (thread-safe static initialisation), so pointers stay valid.
    static const std::array<std::string, 256> names = [] {
        std::array<std::string, 256> n;
        for (size_t i = 0; i < n.size(); i++) n[i] = "proto-" + std::to_string(i);
        n[RTPROT_REDIRECT] = "redirect";
        n[RTPROT_KERNEL] = "kernel";
        n[RTPROT_BOOT] = "boot";
        n[RTPROT_STATIC] = "static";
        n[RTPROT_RA] = "ra";
        n[RTPROT_ZEBRA] = "zebra";
        n[RTPROT_BIRD] = "bird";
        n[RTPROT_DHCP] = "dhcp";
        n[RTPROT_BGP] = "bgp";
        n[RTPROT_ISIS] = "isis";
        n[RTPROT_OSPF] = "ospf";
        return n;
    }();
    return names[proto].c_str();
}

const char *msg_type_name(uint16_t type) {
    switch (type) {
        case NLMSG_NOOP:
            return "NLMSG_NOOP";
        case NLMSG_ERROR:
            return "NLMSG_ERROR";
        case NLMSG_DONE:
            return "NLMSG_DONE";
        case NLMSG_OVERRUN:
            return "NLMSG_OVERRUN";
        case RTM_NEWLINK:
            return "RTM_NEWLINK";
        case RTM_DELLINK:
            return "RTM_DELLINK";
        case RTM_NEWADDR:
            return "RTM_NEWADDR";
        case RTM_DELADDR:
            return "RTM_DELADDR";
        case RTM_NEWROUTE:
            return "RTM_NEWROUTE";
        case RTM_DELROUTE:
            return "RTM_DELROUTE";
        case RTM_NEWNEIGH:
            return "RTM_NEWNEIGH";
        case RTM_DELNEIGH:
            return "RTM_DELNEIGH";
        case RTM_NEWNEXTHOP:
            return "RTM_NEWNEXTHOP";
        case RTM_DELNEXTHOP:
            return "RTM_DELNEXTHOP";
        case RTM_NEWRULE:
            return "RTM_NEWRULE";
        case RTM_DELRULE:
            return "RTM_DELRULE";
    }
    thread_local std::string s;
    s = "type-" + std::to_string(type);
    return s.c_str();
}

}  // namespace rocesw::nl
