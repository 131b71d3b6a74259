// RoCEv2 invariant CRC (ICRC): CRC-32 (the Ethernet polynomial, reflected, as zlib's crc32)
// over a pseudo-packet: 8 bytes of 0xFF standing for the InfiniBand LRH, then the IP header,
// UDP header, BTH and everything up to the ICRC, with the fields a network may rewrite masked
// to ones — IPv4 TOS (DSCP+ECN), TTL and header checksum; IPv6 traffic class, flow label and
// hop limit; the UDP checksum; the BTH reserved byte (FECN/BECN). The 32-bit result is stored
// least significant byte first (as scapy.contrib.roce and the NICs do).
#pragma once

#include <cstddef>
#include <cstdint>

namespace rocesw::roce {

// Plain CRC-32 update (state starts at 0xFFFFFFFF, finish with ~state).
uint32_t crc32_update(uint32_t state, const uint8_t *p, size_t len);

// ICRC of the RoCEv2 packet whose IP header starts at `l3` and whose UDP payload (BTH onwards,
// ICRC excluded) ends at l3 + l3_len_without_icrc. Returns the CRC value (store with wr_icrc).
// `is_v6` selects the IP masking. The caller has validated the lengths.
uint32_t icrc_compute(const uint8_t *l3, size_t l3_len_without_icrc, bool is_v6);

inline void wr_icrc(uint8_t *p, uint32_t icrc) {
    p[0] = uint8_t(icrc);
    p[1] = uint8_t(icrc >> 8);
    p[2] = uint8_t(icrc >> 16);
    p[3] = uint8_t(icrc >> 24);
}
inline uint32_t rd_icrc(const uint8_t *p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace rocesw::roce
