// Internet checksum helpers (RFC 1071, RFC 1624).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pkt/bytes.h"

namespace rocesw {

// One's-complement sum of `len` bytes folded to 16 bits, not inverted.
inline uint32_t csum_partial(const uint8_t *p, size_t len, uint32_t sum = 0) {
    while (len >= 2) {
        sum += rd16(p);
        p += 2;
        len -= 2;
    }
    if (len) sum += uint32_t(p[0]) << 8;
    return sum;
}

inline uint16_t csum_fold(uint32_t sum) {
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    return static_cast<uint16_t>(sum);
}

// The value to store in a checksum field covering these bytes (with the field zeroed).
inline uint16_t csum_finish(uint32_t sum) {
    return static_cast<uint16_t>(~csum_fold(sum));
}

// True when an IPv4 header of `hdr_len` bytes (20..60, a multiple of 4, checksum included) has
// a valid checksum: its one's-complement sum is 0xFFFF, that is the plain sum of its 16-bit
// words is a nonzero multiple of 0xFFFF. As 2^16 = 1 modulo 0xFFFF, native 32-bit words summed
// into 64 bits (no overflow) have the same remainder up to a factor 2^8 (byte order), which
// keeps a zero remainder zero; the compiler turns "% 0xFFFF == 0" into a multiply and a compare.
// The fixed 20 bytes are summed without a loop, so a caller passing 20 gets straight-line code.
inline bool ipv4_header_checksum_ok(const uint8_t *ip, size_t hdr_len) {
    uint64_t sum = uint64_t(rd32_native(ip)) + rd32_native(ip + 4) + rd32_native(ip + 8) +
                   rd32_native(ip + 12) + rd32_native(ip + 16);
    for (size_t i = 20; i + 4 <= hdr_len; i += 4) sum += rd32_native(ip + i);  // options
    return sum != 0 && sum % 0xFFFF == 0;
}

// RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), for one 16-bit word changing from m to m'.
inline uint16_t csum_update16(uint16_t hc, uint16_t old_word, uint16_t new_word) {
    uint32_t sum = static_cast<uint16_t>(~hc);
    sum += static_cast<uint16_t>(~old_word);
    sum += new_word;
    return static_cast<uint16_t>(~csum_fold(sum));
}

// Decrements the TTL of the IPv4 header at `ip` and patches its checksum incrementally. The
// TTL must be at least 1 (the forwarding path drops a TTL of 0 or 1 first). RFC 1624: the word
// (TTL, protocol) falls by 0x0100, so the checksum rises by 0x0100 with the end-around carry.
// Read little-endian the checksum is byte-swapped, so that is + 1 (ones' complement sums do not
// depend on byte order); a carry out or a result of 0xFFFF adds the end-around 1 (0xFFFF becomes
// 0, as a full computation gives it). Equal to a full recomputation for every TTL from 1 and
// every checksum (Checksum.TtlDecrementMatchesFullRecomputeForEveryTtl,
// Checksum.TtlDecrementWordIsTheBytewiseUpdate).
inline void ipv4_decrement_ttl(uint8_t *ip) {
#if defined(__x86_64__) && defined(__GNUC__)
    // Three read-modify-write instructions, no register but the address: the TTL byte - 1; the
    // checksum word (read little-endian: c) becomes c + 2 - (c < 0xFFFE) modulo 2^16, that is
    // c + 1 with the end-around 1 for 0xFFFE and 0xFFFF (the carry of cmpw is c < 0xFFFE;
    // sbbw $-2 subtracts 0xFFFE and that carry).
    using U16 = uint16_t __attribute__((may_alias));
    __asm__("subb $1, %0\n\t"
            "cmpw $0xfffe, %1\n\t"
            "sbbw $-2, %1"
            : "+m"(ip[8]), "+m"(*reinterpret_cast<U16 *>(ip + 10))
            :
            : "cc");
#else
    if constexpr (std::endian::native == std::endian::little) {
        // Bytes 8..11 (TTL, protocol, checksum) as one little-endian word, one load and one store:
        // + 0xFFFF is the TTL's - 1 (at least 1: no borrow past it) and the checksum's + 1; a
        // checksum of 0xFFFE or 0xFFFF (the word from 0xFFFE0000) takes the end-around 1 as well,
        // its carry out of the word dropped (0xFFFE becomes 0, 0xFFFF 1).
        uint32_t w;
        std::memcpy(&w, ip + 8, 4);
        w += w >= 0xFFFE0000u ? 0x1FFFFu : 0xFFFFu;
        std::memcpy(ip + 8, &w, 4);
    } else {
        uint32_t sum = uint32_t(rd16(ip + 10)) + 0x0100;
        sum += sum >= 0xFFFF;
        wr16(ip + 10, uint16_t(sum));
        ip[8]--;
    }
#endif
}

// The ICMPv6 checksum (RFC 4443 2.3) of the `len`-byte message at `icmp` (its checksum field
// zeroed) inside the IPv6 packet whose fixed header is at `ip6`: the pseudo-header holds the
// source and destination addresses, the upper-layer length and next header 58.
inline uint16_t icmp6_checksum(const uint8_t *ip6, const uint8_t *icmp, uint32_t len) {
    uint32_t sum = csum_partial(ip6 + 8, 32);  // source and destination
    sum += len >> 16;
    sum += len & 0xFFFF;
    sum += kProtoIcmpv6;
    return csum_finish(csum_partial(icmp, len, sum));
}

// Rewrites the TOS byte (DSCP/ECN) of the IPv4 header at `ip`, patching the checksum.
inline void ipv4_set_tos(uint8_t *ip, uint8_t tos) {
    uint16_t old_word = rd16(ip);  // version/IHL, TOS
    ip[1] = tos;
    wr16(ip + 10, csum_update16(rd16(ip + 10), old_word, rd16(ip)));
}

}  // namespace rocesw
