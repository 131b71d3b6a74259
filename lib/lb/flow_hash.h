// The flow hash every load-balancing decision starts from: the 5-tuple including the UDP source
// port (RoCEv2 puts its entropy there), optionally the BTH destination QP, mixed with a
// per-switch seed so two tiers with the same member count do not pick the same way (polarize).
//
// Reads only the parse-once record, plus the IPv6 addresses at l3_offset (the parser validated
// the header; the route stage reads the destination the same way). No state, no allocation.
#pragma once

#include <cstdint>
#include <cstring>

#include "pkt/meta.h"

namespace rocesw {

struct FlowHashParams {
    uint64_t seed = 0;
    bool symmetric = false;  // hash(a->b) == hash(b->a)
    bool dest_qp = false;    // include BTH dest QP for RoCEv2 packets
};

// murmur3's 64-bit finalizer: every input bit affects every output bit.
inline uint64_t lb_mix64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

// The flow hash with the parameters that change its shape fixed at compile time, so a burst
// loop (LoadBalancer::resolve) carries no per-packet test of them. Always inlined: it is a
// dozen multiplies and shifts, less than the call. `l3` points at the IP header (frame +
// meta.l3_offset) and is only read for IPv6.
template <bool kSymmetric, bool kDestQp>
[[gnu::always_inline]] inline uint64_t flow_hash_t(const PacketMeta &m, const uint8_t *l3,
                                                   uint64_t seed) {
    uint64_t a, b;  // the two endpoint addresses, folded to 64 bits each
    if (m.l3 == L3Type::ipv6) [[unlikely]] {
        uint64_t w[4];
        std::memcpy(w, l3 + 8, 32);
        a = w[0] ^ lb_mix64(w[1]);
        b = w[2] ^ lb_mix64(w[3]);
    } else {
        a = m.src_ip4;
        b = m.dst_ip4;
    }
    // Ports only with kFlagL4, selected without a branch.
    const uint32_t l4 = (m.flags & kFlagL4) ? 0xFFFFFFFFu : 0u;
    uint32_t sp = m.src_port & l4, dp = m.dst_port & l4;
    if constexpr (kSymmetric) {
        if (a > b || (a == b && sp > dp)) {
            uint64_t t = a;
            a = b;
            b = t;
            uint32_t u = sp;
            sp = dp;
            dp = u;
        }
    }
    uint64_t ports = uint64_t(sp) << 48 | uint64_t(dp) << 32 | uint64_t(m.ip_proto) << 24;
    if constexpr (kDestQp)
        if (m.flags & kFlagRoce) ports |= m.dest_qp & 0xFFFFFF;
    uint64_t h = lb_mix64(seed ^ a);
    h = lb_mix64(h ^ (b + 0x9e3779b97f4a7c15ull));
    return lb_mix64(h ^ ports);
}

// The flow hash of one packet. The value is part of the behaviour (it picks the bucket, the
// flowlet entry and, with the seed, the member): tests pin it (lb_group_test FlowHash.*).
inline uint64_t flow_hash(const PacketMeta &m, const uint8_t *l3, const FlowHashParams &p) {
    if (p.symmetric)
        return p.dest_qp ? flow_hash_t<true, true>(m, l3, p.seed)
                         : flow_hash_t<true, false>(m, l3, p.seed);
    return p.dest_qp ? flow_hash_t<false, true>(m, l3, p.seed)
                     : flow_hash_t<false, false>(m, l3, p.seed);
}

}  // namespace rocesw
