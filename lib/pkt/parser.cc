#include "pkt/parser.h"

#include <bit>
#include <cstring>

#include "pkt/bytes.h"
#include "pkt/checksum.h"

namespace rocesw {

namespace {

constexpr uint32_t kEthLen = 14, kVlanLen = 4, kIpv4MinLen = 20, kIpv6Len = 40, kUdpLen = 8;
constexpr uint32_t kArpEthIpv4Len = 28;

// Fills the L4 part of meta from `l4` with `avail` bytes of IP payload.
// `check_udp_len` is false for a first fragment, whose UDP length covers later fragments.
std::optional<DropReason> parse_l4(const uint8_t *l4, uint32_t avail, uint8_t proto,
                                   bool check_udp_len, PacketMeta *m) {
    if (proto == kProtoUdp) {
        if (avail < kUdpLen) return DropReason::udp_truncated;
        uint16_t udp_len = rd16(l4 + 4);
        if (check_udp_len && (udp_len < kUdpLen || udp_len > avail))
            return DropReason::udp_length_bad;
        m->src_port = rd16(l4);
        m->dst_port = rd16(l4 + 2);
        m->flags |= kFlagL4;
        if (m->dst_port == kRoceV2Port) {
            uint32_t payload = (check_udp_len ? udp_len : avail) - kUdpLen;
            if (payload < kBthLen + kIcrcLen) return DropReason::bth_truncated;
            m->dest_qp = rd24(l4 + kUdpLen + 5);  // the opcode and PSN stay in the frame
            m->flags |= kFlagRoce;
        }
    } else if (proto == kProtoTcp && avail >= 4) {
        // Only the ports are needed (for hashing); the rest of TCP is the endpoints' business.
        m->src_port = rd16(l4);
        m->dst_port = rd16(l4 + 2);
        m->flags |= kFlagL4;
    }
    return std::nullopt;
}

std::optional<DropReason> parse_ipv4(const uint8_t *ip, uint32_t avail, const ParseOptions &opt,
                                     PacketMeta *m) {
    if (avail < kIpv4MinLen) return DropReason::ipv4_truncated;
    if ((ip[0] >> 4) != 4) return DropReason::ip_version_bad;
    uint32_t hdr_len = (ip[0] & 0x0F) * 4u;
    if (hdr_len < kIpv4MinLen) return DropReason::ipv4_ihl_bad;
    uint32_t total = rd16(ip + 2);
    if (hdr_len > avail || total < hdr_len || total > avail) return DropReason::ipv4_length_bad;
    if (opt.verify_ipv4_checksum && !ipv4_header_checksum_ok(ip, hdr_len))
        return DropReason::ipv4_checksum_bad;
    if (hdr_len > kIpv4MinLen) return DropReason::ipv4_options;
    if (total > opt.max_l3_len) return DropReason::frame_too_long;

    uint32_t src = rd32(ip + 12);
    // Multicast (224/4), limited broadcast and loopback (127/8) are never valid sources.
    if ((src >> 28) == 0xE || src == 0xFFFFFFFFu || (src >> 24) == 127)
        return DropReason::ipv4_src_bad;

    m->l3 = L3Type::ipv4;
    m->l3_len = static_cast<uint16_t>(total);
    m->dscp = ip[1] >> 2;
    m->ecn = ip[1] & 3;
    m->ttl = ip[8];
    m->ip_proto = ip[9];
    m->src_ip4 = src;
    m->dst_ip4 = rd32(ip + 16);

    uint16_t frag = rd16(ip + 6);
    bool more_fragments = frag & 0x2000;
    uint16_t frag_offset = frag & 0x1FFF;
    if (more_fragments || frag_offset) m->flags |= kFlagFragment;
    if (frag_offset) return std::nullopt;  // later fragments carry no L4 header

    m->l4_offset = static_cast<uint16_t>(m->l3_offset + hdr_len);
    return parse_l4(ip + hdr_len, total - hdr_len, m->ip_proto, !more_fragments, m);
}

std::optional<DropReason> parse_ipv6(const uint8_t *ip, uint32_t avail, const ParseOptions &opt,
                                     PacketMeta *m) {
    if (avail < kIpv6Len) return DropReason::ipv6_truncated;
    if ((ip[0] >> 4) != 6) return DropReason::ip_version_bad;
    uint32_t total = kIpv6Len + rd16(ip + 4);
    if (total > avail) return DropReason::ipv6_length_bad;
    if (total > opt.max_l3_len) return DropReason::frame_too_long;
    const uint8_t *src = ip + 8;
    // Multicast (ff00::/8) or the loopback ::1, as two 8-byte words: GCC calls memcmp for a
    // 16-byte compare (~8 cycles a packet with the call, BM_WorkerPollPass6).
    uint64_t src_hi, src_lo;
    std::memcpy(&src_hi, src, 8);
    std::memcpy(&src_lo, src + 8, 8);
    constexpr uint64_t kOneLo = std::endian::native == std::endian::little ? uint64_t(1) << 56 : 1;
    if (src[0] == 0xFF || (src_hi == 0 && src_lo == kOneLo)) return DropReason::ipv6_src_bad;

    uint8_t tclass = static_cast<uint8_t>((ip[0] & 0x0F) << 4 | ip[1] >> 4);
    m->l3 = L3Type::ipv6;
    m->l3_len = static_cast<uint16_t>(total);
    m->dscp = tclass >> 2;
    m->ecn = tclass & 3;
    m->ip_proto = ip[6];
    m->ttl = ip[7];
    // Extension headers are forwarded untouched; only a directly following UDP/TCP is parsed.
    if (m->ip_proto != kProtoUdp && m->ip_proto != kProtoTcp) return std::nullopt;
    m->l4_offset = static_cast<uint16_t>(m->l3_offset + kIpv6Len);
    return parse_l4(ip + kIpv6Len, total - kIpv6Len, m->ip_proto, true, m);
}

}  // namespace

std::optional<DropReason> parse_frame_general(const uint8_t *f, uint32_t len,
                                              const ParseOptions &opt, PacketMeta *m) {
    std::memset(m, 0, sizeof(*m));
    parse_detail::put_meta_tail(m, opt);
    if (len < kEthLen) return DropReason::eth_truncated;
    if (f[6] & 1) return DropReason::src_mac_multicast;
    if (f[0] & 1) {
        static constexpr uint8_t kBcast[6] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
        m->flags |= std::memcmp(f, kBcast, 6) == 0 ? kFlagDstBcast : kFlagDstMcast;
    }
    uint32_t off = 12;
    uint16_t etype = rd16(f + off);
    if (etype == kEtherTypeQinQ) return DropReason::vlan_stacked;
    if (etype == kEtherTypeVlan) {
        if (len < kEthLen + kVlanLen) return DropReason::vlan_truncated;
        uint16_t tci = rd16(f + 14);
        m->pcp = static_cast<uint8_t>(tci >> 13);
        m->vid = tci & 0x0FFF;
        m->flags |= kFlagVlan;
        off += kVlanLen;
        etype = rd16(f + off);
        if (etype == kEtherTypeVlan || etype == kEtherTypeQinQ) return DropReason::vlan_stacked;
    }
    uint32_t l3_off = off + 2;
    m->l3_offset = static_cast<uint16_t>(l3_off);
    const uint8_t *l3 = f + l3_off;
    uint32_t avail = len - l3_off;
    switch (etype) {
        case kEtherTypeIpv4:
            return parse_ipv4(l3, avail, opt, m);
        case kEtherTypeIpv6:
            return parse_ipv6(l3, avail, opt, m);
        case kEtherTypeArp:
            // Ethernet/IPv4 requests and replies only: any other hardware or protocol type,
            // address length or opcode is malformed here, never "consumed".
            if (avail < kArpEthIpv4Len || rd16(l3) != 1 || rd16(l3 + 2) != kEtherTypeIpv4 ||
                l3[4] != 6 || l3[5] != 4 || (rd16(l3 + 6) != 1 && rd16(l3 + 6) != 2))
                return DropReason::arp_invalid;
            m->l3 = L3Type::arp;
            m->l3_len = kArpEthIpv4Len;
            return std::nullopt;
        case kEtherTypeMacControl:
            // PFC / PAUSE: the frame is validated by lib/pfc (tagged ones are refused there).
            m->l3 = L3Type::mac_control;
            return std::nullopt;
        case kEtherTypeLldp:
            // Untagged LLDP, for a host interface to receive (ParseOptions::accept_lldp).
            if (!opt.accept_lldp || (m->flags & kFlagVlan)) return DropReason::ethertype_unsupported;
            m->l3 = L3Type::lldp;
            return std::nullopt;
        default:
            return DropReason::ethertype_unsupported;
    }
}

}  // namespace rocesw
