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
#include <type_traits>

#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

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
    // Written into the record as they are (PacketMeta::in_port, rx_ns_lo): the receiving
    // worker sets them per burst, so that the parser's whole-word stores carry them instead of
    // the worker storing them again after the parse.
    uint8_t in_port = 0;
    uint32_t rx_ns_lo = 0;
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
// stage of tools/callgrind-stages).
inline uint32_t word(const uint8_t *p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
// 16-byte masked compares, (bytes & mask) == want, with GCC/Clang vector extensions: one
// xor and one test instruction on x86 (SSE4.1's ptest).
using V16 = uint8_t __attribute__((vector_size(16)));
inline V16 load16(const uint8_t *p) {
    V16 v;
    std::memcpy(&v, p, 16);
    return v;
}
// One 16-byte store of v at p (unaligned).
inline void store16(uint8_t *p, V16 v) {
#if defined(__SSE4_1__)
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p), reinterpret_cast<__m128i>(v));
#else
    std::memcpy(p, &v, 16);
#endif
}
// (v & mask) == 0
inline bool none_set(V16 v, V16 mask) {
#if defined(__SSE4_1__)
    return _mm_testz_si128(reinterpret_cast<__m128i>(v), reinterpret_cast<__m128i>(mask));
#else
    uint64_t w[2];
    const V16 x = v & mask;
    std::memcpy(w, &x, 16);
    return (w[0] | w[1]) == 0;
#endif
}

// ipv4_header_checksum_ok (pkt/checksum.h) for exactly 20 bytes whose byte 7 is zero (no
// fragment offset). 2^16 = 1 modulo 0xFFFF, so the header's 16-bit one's-complement sum is
// 0xFFFF exactly when the sum of any split of it into words is 0 modulo 0xFFFF (the sum is
// nonzero: byte 0 is 0x45). Bytes 0..7 make a word below 2^56, so adding bytes 16..19 to it
// cannot carry; adding bytes 8..15 can, and the carry (2^64 = 1 modulo 0xFFFF) is added back.
// ipv4_header20_sum is that sum; the test is ipv4_header20_checksum_ok's.
inline uint64_t ipv4_header20_sum(const uint8_t *ip) {
    static_assert(std::endian::native == std::endian::little, "byte 7 is the top byte");
    uint64_t a, b;
    std::memcpy(&a, ip, 8);
    std::memcpy(&b, ip + 8, 8);
    uint64_t s = a + word(ip + 16);
    const bool carry = __builtin_add_overflow(s, b, &s);  // add, adc: no compare for the carry
    return s + carry;
}
inline bool ipv4_header20_checksum_ok(const uint8_t *ip) {
    return ipv4_header20_sum(ip) % 0xFFFF == 0;
}
// s % 0xFFFF == 0 as the compiler tests it: s times the inverse of 0xFFFF modulo 2^64 is at
// most (2^64 - 1) / 0xFFFF exactly for the multiples of 0xFFFF (0xFFFF is odd).
inline constexpr uint64_t kSumMul = 0xFFFEFFFEFFFEFFFFull, kSumMax = 0x0001000100010001ull;
static_assert(uint64_t(0xFFFF * kSumMul) == 1 && kSumMax == ~uint64_t(0) / 0xFFFF);

// Frame bytes 0..31 of the fast path's frame, as two 16-byte masked compares: the group bits of
// both MACs clear, EtherType 0x0800, version/IHL 0x45; MF = 0, fragment offset 0, protocol UDP.
// The constants are byte arrays (a vector type's constexpr bit_cast is not supported by every
// compiler), loaded as vectors at the compare.
struct FastHeader {
    alignas(16) std::array<uint8_t, 32> mask, want;
    static constexpr bool kSrcBelow224 = false;  // ipv4_udp_fast tests the source octet
    static bool checksum_ok(const uint8_t *ip) { return ipv4_header20_checksum_ok(ip); }
    bool matches(const uint8_t *f) const {
        return none_set(load16(f) ^ load16(want.data()), load16(mask.data())) &&
               none_set(load16(f + 16) ^ load16(want.data() + 16), load16(mask.data() + 16));
    }
};
// FastHeader's test with three more, for the worker's port fast path (PortFastPath): the TTL
// (frame byte 22) at least 2, the first octets of the source and destination addresses (bytes 26
// and 30) below 224. Bytes 16..31 as one saturating add and one all-bits-set test: a header byte
// becomes all ones where it equals the wanted one (xor with the wanted byte's complement,
// `nwant`), the TTL byte where it is at least 2 (itself plus 0xFD, saturated: `add`), an octet
// byte where it is at most 223 (its complement, at least 32, plus 0xDF, saturated); `mask`
// selects the bits that must be set (SSE4.1's ptest, carry flag). kSrcBelow224: the source
// octet test that is left is 127's (ipv4_udp_fast).
struct FastHeaderTtl {
    alignas(16) std::array<uint8_t, 16> mask0, want0;  // bytes 0..15, as FastHeader's
    alignas(16) std::array<uint8_t, 16> mask1, nwant1, add1;  // bytes 16..31
    static constexpr size_t kTtl = 14 + 8, kSrc0 = 14 + 12, kDst0 = 14 + 16;
    static constexpr bool kSrcBelow224 = true;
    // The checksum test's two constants (kSumMul, kSumMax), as members: PortFastPath hides
    // their values from the compiler, so that the test reads them from the object (operands in
    // memory) instead of materializing both 64-bit constants per packet.
    uint64_t sum_mul = 0, sum_max = 0;
    explicit constexpr FastHeaderTtl(const FastHeader &h) : mask0{}, want0{}, mask1{}, nwant1{}, add1{} {
        for (size_t i = 0; i < 16; i++) {
            mask0[i] = h.mask[i];
            want0[i] = h.want[i];
            mask1[i] = h.mask[16 + i];
            nwant1[i] = uint8_t(~h.want[16 + i]);
        }
        mask1[kTtl - 16] = 0xFF;
        nwant1[kTtl - 16] = 0;
        add1[kTtl - 16] = 0xFD;
        sum_mul = kSumMul;
        sum_max = kSumMax;
        for (size_t at : {kSrc0, kDst0}) {
            mask1[at - 16] = 0xFF;
            nwant1[at - 16] = 0xFF;  // the octet's complement: 255 - octet
            add1[at - 16] = 0xDF;    // 255 - octet + 223 saturates exactly for octet <= 223
        }
    }
    bool matches(const uint8_t *f) const {
        if (!none_set(load16(f) ^ load16(want0.data()), load16(mask0.data()))) return false;
#if defined(__SSE4_1__)
        const __m128i v = _mm_adds_epu8(
            reinterpret_cast<__m128i>(load16(f + 16) ^ load16(nwant1.data())),
            reinterpret_cast<__m128i>(load16(add1.data())));
        return _mm_testc_si128(v, reinterpret_cast<__m128i>(load16(mask1.data())));
#else
        const V16 x = load16(f + 16) ^ load16(nwant1.data());
        const V16 a = load16(add1.data());
        const V16 s = x + a;
        const V16 v = s | V16(s < x);  // saturated: a carry gives 0xFF
        return none_set(~v, load16(mask1.data()));
#endif
    }
    bool checksum_ok(const uint8_t *ip) const {
        return ipv4_header20_sum(ip) * sum_mul <= sum_max;
    }
};

inline constexpr FastHeader kFastHeader = [] {
    FastHeader h{};
    auto &mask = h.mask;
    auto &want = h.want;
    mask[0] = mask[6] = 0x01;  // destination, source MAC: group bit
    mask[12] = mask[13] = mask[14] = 0xFF;
    want[12] = 0x08, want[13] = 0x00, want[14] = 0x45;
    mask[14 + 6] = 0x3F, mask[14 + 7] = 0xFF;  // IP flags/fragment offset without DF, reserved
    mask[14 + 9] = 0xFF, want[14 + 9] = kProtoUdp;
    return h;
}();

// Stores PacketMeta bytes 0..15 as four little-endian words: (l3_offset, l4_offset),
// (l3_len, flags), (l3, ip_proto, ttl, dscp), (ecn, pcp, vid).
inline void put_meta_words(PacketMeta *m, uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3) {
    static_assert(std::endian::native == std::endian::little);
    static_assert(offsetof(PacketMeta, l4_offset) == 2 && offsetof(PacketMeta, l3_len) == 4 &&
                  offsetof(PacketMeta, flags) == 6 && offsetof(PacketMeta, l3) == 8 &&
                  offsetof(PacketMeta, ip_proto) == 9 && offsetof(PacketMeta, ttl) == 10 &&
                  offsetof(PacketMeta, dscp) == 11 && offsetof(PacketMeta, ecn) == 12 &&
                  offsetof(PacketMeta, pcp) == 13 && offsetof(PacketMeta, vid) == 14);
    const uint32_t w[4] = {w0, w1, w2, w3};
    std::memcpy(m, w, sizeof w);
}

// Stores PacketMeta bytes 32..43, the later stages' part: zero, but for in_port and rx_ns_lo
// from the options. Two whole-word stores; both parsers end with it.
inline void put_meta_tail(PacketMeta *m, const ParseOptions &opt) {
    static_assert(std::endian::native == std::endian::little);
    static_assert(offsetof(PacketMeta, nexthop) == 32 && offsetof(PacketMeta, rx_ns_lo) == 36 &&
                  offsetof(PacketMeta, in_port) == 40 && offsetof(PacketMeta, out_port) == 41 &&
                  offsetof(PacketMeta, tc) == 42 && offsetof(PacketMeta, spare) == 43 &&
                  sizeof(PacketMeta) == 44);
    const uint64_t hop_rx = uint64_t(opt.rx_ns_lo) << 32;  // nexthop 0, rx_ns_lo
    const uint32_t ports = opt.in_port;                    // in_port, out_port, tc, spare 0
    std::memcpy(reinterpret_cast<uint8_t *>(m) + 32, &hop_rx, 8);
    std::memcpy(reinterpret_cast<uint8_t *>(m) + 40, &ports, 4);
}

// First octets of an IPv4 source the fast path leaves to the general parser: 127/8 and 224/4
// are refused there, 255/8 holds the limited broadcast (refused) and class E (accepted).
inline constexpr std::array<bool, 256> kSlowSrcOctet = [] {
    std::array<bool, 256> t{};
    t[127] = t[255] = true;
    for (int o = 224; o < 240; o++) t[o] = true;
    return t;
}();

// The fast path's record bytes 8..15 (put_meta_head's: l3 IPv4, protocol UDP, TTL 0, DSCP,
// ECN, PCP 0, VID 0) by TOS byte: one load and an or of the TTL instead of
// the shifts and masks that split the TOS byte.
inline constexpr std::array<uint64_t, 256> kTosWords = [] {
    std::array<uint64_t, 256> t{};
    for (uint32_t tos = 0; tos < 256; tos++)
        t[tos] = uint64_t(L3Type::ipv4) | uint64_t(kProtoUdp) << 8 | uint64_t(tos >> 2) << 24 |
                 uint64_t(tos & 3u) << 32;
    return t;
}();

// Stores the fast path's PacketMeta bytes 0..15 (l3_offset 14, l4_offset 34, l3_len `total`,
// `kFlags`, l3 IPv4, ip_proto UDP, ttl, dscp and ecn from `tos`, pcp 0, vid 0) of the IPv4
// header at `ip`: bytes 8..15 but the TTL come from the TOS byte's table entry (kTosWords).
// With SSE4.1 one 16-byte store of a constant, the entry inserted as the upper half and a
// shuffle of header bytes 0..15 (the total length's bytes swapped into bytes 4..5, the TTL
// into byte 10); else four 32-bit words (put_meta_words).
template <uint16_t kFlags>
inline void put_meta_head(PacketMeta *m, [[maybe_unused]] const uint8_t *ip,
                          [[maybe_unused]] uint32_t total, uint8_t tos,
                          [[maybe_unused]] uint8_t ttl) {
    constexpr uint32_t kW0 = 14 | (14 + 20) << 16;  // l3_offset, l4_offset
#if defined(__SSE4_1__)
    static_assert(offsetof(PacketMeta, l3_len) == 4 && offsetof(PacketMeta, ttl) == 10);
    static constexpr std::array<uint8_t, 16> kHeadShuffle = {
        0x80, 0x80, 0x80, 0x80, 3, 2, 0x80, 0x80, 0x80, 0x80, 8, 0x80, 0x80, 0x80, 0x80, 0x80};
    const __m128i c = _mm_set_epi32(0, 0, int(uint32_t(kFlags) << 16), int(kW0));
    const __m128i h = _mm_insert_epi64(c, int64_t(kTosWords[tos]), 1);
    const __m128i v = _mm_shuffle_epi8(reinterpret_cast<__m128i>(load16(ip)),
                                       reinterpret_cast<__m128i>(load16(kHeadShuffle.data())));
    store16(reinterpret_cast<uint8_t *>(m), reinterpret_cast<V16>(_mm_or_si128(h, v)));
#else
    const uint64_t w23 = kTosWords[tos] | uint64_t(ttl) << 16;
    put_meta_words(m, kW0, total | uint32_t(kFlags) << 16, uint32_t(w23), uint32_t(w23 >> 32));
#endif
}

}  // namespace parse_detail

namespace parse_detail {
inline uint16_t word16(const uint8_t *p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}
static_assert(std::endian::native == std::endian::little);
inline constexpr uint16_t kRoceV2PortInFrame = uint16_t(kRoceV2Port >> 8 | kRoceV2Port << 8);

// PacketMeta bytes 16..31 of an untagged IPv4 UDP packet (src_ip4, dst_ip4, src_port,
// dst_port in host order; dest_qp, the BTH's 24-bit destination QP with kRoce, else 0): with
// SSE4.1 (SSSE3's pshufb) one 16-byte load of the IPv4 addresses and UDP ports, each field's bytes
// reversed by one shuffle, and for RoCEv2 one more load and shuffle for the QP, or'd in; else the
// fields one by one.
#if defined(__SSE4_1__)
using AddrPortsQp = V16;
// Shuffles: lane i takes byte k of the load (0x80: zero). From the source address (IPv4 byte
// 12): the two addresses and the two ports, each field's bytes reversed; from the UDP header:
// the BTH's bytes 5..7 (UDP bytes 13..15) reversed into lanes 12..14.
inline constexpr std::array<uint8_t, 16> kAddrPortsShuffle = {3, 2, 1,  0,  7,    6,    5,    4,
                                                              9, 8, 11, 10, 0x80, 0x80, 0x80, 0x80};
inline constexpr std::array<uint8_t, 16> kQpShuffle = {
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 15, 14, 13, 0x80};
inline V16 shuffle(V16 v, const std::array<uint8_t, 16> &lanes) {
    return reinterpret_cast<V16>(_mm_shuffle_epi8(reinterpret_cast<__m128i>(v),
                                                  reinterpret_cast<__m128i>(load16(lanes.data()))));
}
// `ip` the IPv4 header (20 bytes), `l4` the UDP header, with the BTH after it for kRoce: reads
// ip[12..27] (the UDP header's first 8 bytes) and for kRoce l4[0..15].
template <bool kRoce>
inline AddrPortsQp addr_ports_qp(const uint8_t *ip, const uint8_t *l4) {
    V16 v = shuffle(load16(ip + 12), kAddrPortsShuffle);
    if constexpr (kRoce) v |= shuffle(load16(l4), kQpShuffle);
    return v;
}
inline void put_addr_ports_qp(PacketMeta *m, AddrPortsQp a) {
    static_assert(offsetof(PacketMeta, src_ip4) == 16 && offsetof(PacketMeta, dst_ip4) == 20 &&
                  offsetof(PacketMeta, src_port) == 24 && offsetof(PacketMeta, dst_port) == 26 &&
                  offsetof(PacketMeta, dest_qp) == 28);
    store16(reinterpret_cast<uint8_t *>(m) + 16, a);
}
#else
struct AddrPortsQp {
    uint32_t src, dst, ports, qp;  // ports: source << 16 | destination
};
template <bool kRoce>
inline AddrPortsQp addr_ports_qp(const uint8_t *ip, const uint8_t *l4) {
    // RDMA's 24-bit destination QP: BTH bytes 5..7 (bytes 4..7 read as one word).
    return {be32(ip + 12), be32(ip + 16), be32(l4), kRoce ? be32(l4 + 8 + 4) & 0x00FFFFFFu : 0};
}
inline void put_addr_ports_qp(PacketMeta *m, AddrPortsQp a) {
    m->src_ip4 = a.src;
    m->dst_ip4 = a.dst;
    m->src_port = uint16_t(a.ports >> 16);
    m->dst_port = uint16_t(a.ports);
    m->dest_qp = a.qp;
}
#endif

// parse_ipv4_udp_fast's body, for the frame bytes 0..31 that `hdr` accepts, with the record's
// bytes 32.. stored by `put_tail(m)`; frames shorter than kMinLen (at least 42, the headers)
// are left to the general parser.
template <uint32_t kMinLen, class Header, class PutTail>
[[gnu::always_inline]] inline bool ipv4_udp_fast(const uint8_t *f, uint32_t len,
                                                 const Header &hdr, uint32_t max_l3_len,
                                                 bool verify_ipv4_checksum, PacketMeta *m,
                                                 PutTail put_tail) {
    constexpr uint32_t kL3 = 14, kIpHdr = 20, kUdp = 8;
    static_assert(kMinLen >= kL3 + kIpHdr + kUdp);
    if (len < kMinLen) return false;
    const uint8_t *ip = f + kL3;
    // Unicast MACs, EtherType 0x0800, version/IHL 0x45, not a fragment, protocol UDP.
    if (!hdr.matches(f)) return false;
    // 28 <= total <= len - 14 in one unsigned compare (len >= 42 above), then the port MTU.
    const uint32_t total = be16(ip + 2);
    if (total - (kIpHdr + kUdp) > len - (kL3 + kIpHdr + kUdp) || total > max_l3_len)
        return false;
    if (verify_ipv4_checksum && !hdr.checksum_ok(ip)) return false;
    if constexpr (Header::kSrcBelow224) {
        if (ip[12] == 127) return false;  // the rest of kSlowSrcOctet is 224 and above
    } else if (kSlowSrcOctet[ip[12]]) {
        return false;
    }
    const uint8_t *l4 = ip + kIpHdr;
    const uint32_t udp_len = be16(l4 + 4);
    // 8 <= udp_len <= total - 20 in one unsigned compare (total >= 28 above).
    if (udp_len - kUdp > total - (kIpHdr + kUdp)) return false;
    // RoCEv2 and plain UDP each with a copy of the record's stores (its flags and QP constants
    // of the copy): no join of the two paths halfway through the record.
    auto put = [&](auto roce_c) __attribute__((always_inline)) {
        constexpr bool kRoce = decltype(roce_c)::value;
        const uint8_t tos = ip[1], ttl = ip[8];  // SSE4.1: put_meta_head reads the TTL itself
        // Bytes 16..31 (put_addr_ports_qp): read here, stored after bytes 0..15.
        const AddrPortsQp a = addr_ports_qp<kRoce>(ip, l4);
        // Every read is done: the stores below could alias the frame for all the compiler
        // knows. Bytes 0..15 of the meta built in registers (the compiler's merging of the
        // field stores does worse), then the rest: every byte written once.
        put_meta_head<kRoce ? kFlagL4 | kFlagRoce : kFlagL4>(m, ip, total, tos, ttl);
        put_addr_ports_qp(m, a);
        put_tail(m);
    };
    // The destination port, 4791, compared as the frame holds it (no byte swap).
    if (word16(l4 + 2) == kRoceV2PortInFrame) {
        if (udp_len - kUdp < kBthLen + kIcrcLen) return false;
        put(std::true_type{});
    } else {
        put(std::false_type{});
    }
    return true;
}
}  // namespace parse_detail

// The common frame in one pass with fixed offsets: untagged, unicast destination MAC, IPv4
// without options, not a fragment, UDP (RoCEv2 or not). Returns true with *meta filled exactly
// as parse_frame_general fills it; false for anything else (meta then undefined), which the
// general parser decides, drop reason included. It never accepts a frame the general parser
// refuses (unit test ParserFastPath.* and the fuzz target compare the two).
inline bool parse_ipv4_udp_fast(const uint8_t *f, uint32_t len, const ParseOptions &opt,
                                PacketMeta *m) {
    return parse_detail::ipv4_udp_fast<42>(f, len, parse_detail::kFastHeader, opt.max_l3_len,
                                       opt.verify_ipv4_checksum, m, [&](PacketMeta *r) {
                                           parse_detail::put_meta_tail(r, opt);
                                       });
}

// The fast path bound to one ingress port, made once per burst (the worker's): it takes only
// frames to the port's own MAC address (a frame to another one goes to the general parser,
// which the caller then drops as dst_mac_mismatch), with the options' in_port and rx_ns_lo,
// and writes the record's bytes 32..47 as one 16-byte store, so the record must have 4
// writable bytes after it (an mbuf's private area: DPDK rounds it up to 8 bytes, 48). It leaves
// a TTL of 0 or 1 to the general parser, so that every packet it took can be forwarded without
// a TTL test (the worker's plain runs: Worker::forward_to).
// Where it accepts a frame, parse_ipv4_udp_fast accepts it with the same record (bytes 0..43),
// the frame's destination is `mac`, its TTL is at least 2, the first octets of its source and
// destination addresses are below 224 (no multicast or broadcast destination: the worker's
// accept step has no such test after it) and the frame has at least kMinFrame bytes (unit
// tests: fast_path_agrees in ParserCases.* and ParserFastPath.* runs it with the frame's own, a
// group and another destination; ParserFastPath.PortFastPathLeavesOctetsFrom224ToTheGeneralParser).
class PortFastPath {
  public:
    // The shortest frame it takes: Ethernet's minimum without the FCS (what a wire delivers:
    // shorter frames come padded). Every frame it took is then at least as long as the egress
    // pads frames to (QosPlan::min_frame_bytes), with no per-packet test of that (the worker's
    // BurstSummary::min_len).
    static constexpr uint32_t kMinFrame = 60;

    PortFastPath(const ParseOptions &opt, const uint8_t *mac)
        : hdr_(parse_detail::kFastHeader), max_l3_len_(opt.max_l3_len) {
        // The whole destination address compared, its group bit clear as the port's is.
        for (int i = 0; i < 6; i++) {
            hdr_.mask0[i] = 0xFF;
            hdr_.want0[i] = mac[i];
        }
        // A group address of the port's own (a misconfiguration): no frame takes this path.
        // total >= 28 > 0 fails the MTU test.
        if (mac[0] & 1) max_l3_len_ = 0;
#if defined(__GNUC__)
        __asm__("" : "+r"(hdr_.sum_mul), "+r"(hdr_.sum_max));  // values unknown to the compiler
#endif
        static_assert(std::endian::native == std::endian::little);
        const uint32_t tail[4] = {0, opt.rx_ns_lo, opt.in_port, 0};  // bytes 32..47
        std::memcpy(&tail_, tail, sizeof tail);
    }
    // parse_ipv4_udp_fast with verify_ipv4_checksum `verify`.
    [[gnu::always_inline]] bool parse(const uint8_t *f, uint32_t len, bool verify,
                                      PacketMeta *m) const {
        return parse_detail::ipv4_udp_fast<kMinFrame>(f, len, hdr_, max_l3_len_, verify, m,
                                           [&](PacketMeta *r) {
                                               static_assert(offsetof(PacketMeta, nexthop) == 32 &&
                                                             sizeof(PacketMeta) == 44);
                                               parse_detail::store16(reinterpret_cast<uint8_t *>(r) + 32,
                                                       tail_);
                                           });
    }

  private:
    parse_detail::FastHeaderTtl hdr_;
    parse_detail::V16 tail_;
    uint32_t max_l3_len_;
};

// The BTH fields no stage keeps in PacketMeta, read from the frame (valid with kFlagRoce).
inline uint8_t bth_opcode(const uint8_t *frame, const PacketMeta &m) {
    return frame[m.l4_offset + 8];
}
inline uint32_t bth_psn(const uint8_t *frame, const PacketMeta &m) {
    return rd24(frame + m.l4_offset + 8 + 9);
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
