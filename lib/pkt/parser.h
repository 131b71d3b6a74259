// Validating parser: Ethernet, one 802.1Q tag, ARP, IPv4 (IHL, total length, checksum), IPv6,
// UDP and the RoCEv2 BTH on UDP port 4791. Reads the frame once and either fills a PacketMeta
// or names the reason the frame must be dropped. It never reads past `len`.
//
// Reads: frame bytes. Writes: *meta. Counters: none (the caller charges the drop reason).
#pragma once

#include <array>
#include <bit>
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
// rd32_native (pkt/bytes.h) here, so that the fast path's code stays in this file (the parse
// stage of tools/callgrind-stages). Compared masked against bytes4(): one load and one compare
// for several header fields, whatever the host byte order.
inline uint32_t word(const uint8_t *p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
constexpr uint32_t bytes4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
    return std::bit_cast<uint32_t>(std::array<uint8_t, 4>{a, b, c, d});
}
// First octets of an IPv4 source the fast path leaves to the general parser: 127/8 and 224/4
// are refused there, 255/8 holds the limited broadcast (refused) and class E (accepted).
inline constexpr std::array<bool, 256> kSlowSrcOctet = [] {
    std::array<bool, 256> t{};
    t[127] = t[255] = true;
    for (int o = 224; o < 240; o++) t[o] = true;
    return t;
}();
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
    using parse_detail::bytes4;
    using parse_detail::word;
    constexpr uint32_t kL3 = 14, kIpHdr = 20, kUdp = 8;
    if (len < kL3 + kIpHdr + kUdp) return false;
    if ((f[0] | f[6]) & 1) return false;  // group destination or multicast source
    const uint8_t *ip = f + kL3;
    // EtherType 0x0800 and version/IHL 0x45 (bytes 12..14).
    if ((word(f + 12) & bytes4(0xFF, 0xFF, 0xFF, 0)) != bytes4(0x08, 0x00, 0x45, 0)) return false;
    // MF = 0, fragment offset 0 and protocol UDP (IP bytes 6..9, the TTL between them).
    if ((word(ip + 6) & bytes4(0x3F, 0xFF, 0, 0xFF)) != bytes4(0, 0, 0, kProtoUdp)) return false;
    // 28 <= total <= len - 14 in one unsigned compare (len >= 42 above), then the port MTU.
    const uint32_t total = be16(ip + 2);
    if (total - (kIpHdr + kUdp) > len - (kL3 + kIpHdr + kUdp) || total > opt.max_l3_len)
        return false;
    if (opt.verify_ipv4_checksum) {
        // ipv4_header_checksum_ok (pkt/checksum.h) for exactly 20 bytes, written out here;
        // the sum is nonzero, its first byte being 0x45.
        const uint64_t sum =
            uint64_t(word(ip)) + word(ip + 4) + word(ip + 8) + word(ip + 12) + word(ip + 16);
        if (sum % 0xFFFF != 0) return false;
    }
    if (parse_detail::kSlowSrcOctet[ip[12]]) return false;
    const uint8_t *l4 = ip + kIpHdr;
    const uint32_t udp_len = be16(l4 + 4);
    // 8 <= udp_len <= total - 20 in one unsigned compare (total >= 28 above).
    if (udp_len - kUdp > total - (kIpHdr + kUdp)) return false;
    const uint32_t ports = be32(l4);  // source << 16 | destination
    const uint8_t tos = ip[1], ttl = ip[8];
    const uint32_t src = be32(ip + 12), dst = be32(ip + 16);
    // Every read is done: the stores below could alias the frame for all the compiler knows.
    uint16_t flags = kFlagL4;
    uint8_t opcode = 0;
    uint32_t qp = 0, psn = 0;
    if (uint16_t(ports) == kRoceV2Port) {
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
    m->ttl = ttl;
    m->dscp = tos >> 2;
    m->ecn = tos & 3;
    m->src_port = uint16_t(ports >> 16);
    m->dst_port = uint16_t(ports);
    m->src_ip4 = src;
    m->dst_ip4 = dst;
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
