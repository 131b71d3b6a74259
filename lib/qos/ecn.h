// ECN marking (RFC 3168): an ECT(0) or ECT(1) packet becomes CE; CE stays CE; Not-ECT is never
// touched. IPv4 patches the header checksum incrementally (RFC 1624); IPv6 has none. Only the
// two ECN bits change, so DSCP is kept, and a RoCEv2 packet's ICRC, which masks the whole
// TOS/traffic-class byte, still verifies.
//
// Reads: PacketMeta l3, l3_offset, ecn. Writes: the IP header's ECN bits, PacketMeta ecn.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "pkt/checksum.h"
#include "pkt/meta.h"

namespace rocesw {

inline constexpr uint8_t kEcnNotEct = 0, kEcnEct1 = 1, kEcnEct0 = 2, kEcnCe = 3;

// Sets CE in the L3 header at `ip`. Returns true when the packet changed.
inline bool ecn_set_ce(uint8_t *ip, L3Type l3) {
    if (l3 == L3Type::ipv4) {
        uint8_t tos = ip[1];
        if ((tos & 3) == kEcnNotEct || (tos & 3) == kEcnCe) return false;
        ipv4_set_tos(ip, uint8_t(tos | kEcnCe));
        return true;
    }
    if (l3 == L3Type::ipv6) {
        // Version (4) | traffic class (8) | flow label (20): ECN is bits 4-5 of byte 1.
        uint8_t ecn = (ip[1] >> 4) & 3;
        if (ecn == kEcnNotEct || ecn == kEcnCe) return false;
        ip[1] = uint8_t(ip[1] | kEcnCe << 4);
        return true;
    }
    return false;
}

inline bool ecn_mark(rte_mbuf *m, PacketMeta *meta) {
    if (meta->ecn == kEcnNotEct || meta->ecn == kEcnCe) return false;
    if (!ecn_set_ce(rte_pktmbuf_mtod_offset(m, uint8_t *, meta->l3_offset), meta->l3)) return false;
    meta->ecn = kEcnCe;
    return true;
}

}  // namespace rocesw
