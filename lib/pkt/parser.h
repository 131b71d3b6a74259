// Validating parser: Ethernet, one 802.1Q tag, ARP, IPv4 (IHL, total length, checksum), IPv6,
// UDP and the RoCEv2 BTH on UDP port 4791. Reads the frame once and either fills a PacketMeta
// or names the reason the frame must be dropped. It never reads past `len`.
//
// Reads: frame bytes. Writes: *meta. Counters: none (the caller charges the drop reason).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

#include "common/drop_reason.h"
#include "pkt/bytes.h"
#include "pkt/meta.h"

namespace rocesw {

inline constexpr uint16_t kRoceV2Port = 4791;
inline constexpr uint16_t kBthLen = 12;
inline constexpr uint16_t kIcrcLen = 4;

struct ParseOptions {
    uint32_t max_l3_len = 1500;  // ingress port MTU: longer IP packets are frame_too_long
    bool verify_ipv4_checksum = true;
    bool accept_lldp = false;  // untagged LLDP -> L3Type::lldp (a host interface takes it)
};

// The general parser: every frame, every check, the drop reason for a bad one.
// Returns nullopt when the frame is valid (meta filled), otherwise the drop reason.
// `frame` is the start of the Ethernet header, `len` the frame length without FCS.
std::optional<DropReason> parse_frame_general(const uint8_t *frame, uint32_t len,
                                              const ParseOptions &opt, PacketMeta *meta);

namespace parse_detail {
inline uint16_t be16(const uint8_t *p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return __builtin_bswap16(v);
}
inline uint32_t be32(const uint8_t *p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return __builtin_bswap32(v);
}
}  // namespace parse_detail

// The common frame in one pass with fixed offsets: untagged, unicast destination MAC, IPv4
// without options, not a fragment, UDP (RoCEv2 or not). Returns true with *meta filled exactly
// as parse_frame_general fills it; false for anything else (meta then undefined), which the
// general parser decides, drop reason included. It never accepts a frame the general parser
// refuses (unit test ParserFastPath.* and the fuzz target compare the two).
inline bool parse_ipv4_udp_fast(const uint8_t *f, uint32_t len, const ParseOptions &opt,
                                PacketMeta *m) {
    using parse_detail::be16;
    using parse_detail::be32;
    constexpr uint32_t kL3 = 14, kIpHdr = 20, kUdp = 8;
    if (len < kL3 + kIpHdr + kUdp) return false;
    if ((f[0] | f[6]) & 1) return false;  // group destination or multicast source
    // EtherType 0x0800 and version/IHL 0x45 (bytes 12..14).
    if (be32(f + 12) >> 8 != 0x080045u) return false;
    const uint8_t *ip = f + kL3;
    const uint32_t total = be16(ip + 2);
    if (total < kIpHdr + kUdp || total > len - kL3 || total > opt.max_l3_len) return false;
    if (ip[9] != kProtoUdp || (be16(ip + 6) & 0x3FFF)) return false;  // UDP, MF = 0, offset 0
    if (opt.verify_ipv4_checksum) {
        // ipv4_header_checksum_ok for exactly 20 bytes, written out (no loop to unroll).
        uint32_t w[5];
        std::memcpy(w, ip, sizeof w);
        uint64_t sum = uint64_t(w[0]) + w[1] + w[2] + w[3] + w[4];
        sum = (sum & 0xFFFFFFFFu) + (sum >> 32);
        sum = (sum & 0xFFFFFFFFu) + (sum >> 32);
        sum = (sum & 0xFFFF) + (sum >> 16);
        sum = (sum & 0xFFFF) + (sum >> 16);
        if (sum != 0xFFFF) return false;
    }
    const uint32_t src = be32(ip + 12);
    if ((src >> 28) == 0xE || src == 0xFFFFFFFFu || (src >> 24) == 127) return false;
    const uint8_t *l4 = ip + kIpHdr;
    const uint32_t udp_len = be16(l4 + 4);
    if (udp_len < kUdp || udp_len > total - kIpHdr) return false;
    const uint16_t dport = be16(l4 + 2);
    uint16_t flags = kFlagL4;
    uint8_t opcode = 0;
    uint32_t qp = 0, psn = 0;
    if (dport == kRoceV2Port) {
        if (udp_len - kUdp < kBthLen + kIcrcLen) return false;
        const uint8_t *bth = l4 + kUdp;
        opcode = bth[0];
        qp = be32(bth + 4) & 0x00FFFFFFu;
        psn = be32(bth + 8) & 0x00FFFFFFu;
        flags |= kFlagRoce;
    }
    std::memset(m, 0, sizeof *m);
    m->l3_offset = kL3;
    m->l4_offset = kL3 + kIpHdr;
    m->l3_len = uint16_t(total);
    m->flags = flags;
    m->l3 = L3Type::ipv4;
    m->ip_proto = kProtoUdp;
    m->ttl = ip[8];
    m->dscp = ip[1] >> 2;
    m->ecn = ip[1] & 3;
    m->src_port = be16(l4);
    m->dst_port = dport;
    m->src_ip4 = src;
    m->dst_ip4 = be32(ip + 16);
    m->bth_opcode = opcode;
    m->dest_qp = qp;
    m->psn = psn;
    return true;
}

// Returns nullopt when the frame is valid (meta filled), otherwise the drop reason.
// `frame` is the start of the Ethernet header, `len` the frame length without FCS.
// The common frame takes the inline fast path; every other frame the general parser.
inline std::optional<DropReason> parse_frame(const uint8_t *frame, uint32_t len,
                                             const ParseOptions &opt, PacketMeta *meta) {
    if (parse_ipv4_udp_fast(frame, len, opt, meta)) [[likely]]
        return std::nullopt;
    return parse_frame_general(frame, len, opt, meta);
}

}  // namespace rocesw
