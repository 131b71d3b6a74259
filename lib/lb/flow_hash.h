// The flow hash every load-balancing decision starts from: the 5-tuple including the UDP source
// port (RoCEv2 puts its entropy there), optionally the BTH destination QP, mixed with a
// per-switch seed so two tiers with the same member count do not pick the same way (polarize).
//
// Reads only the parse-once record, plus the IPv6 addresses at l3_offset (the parser validated
// the header; the route stage reads the destination the same way). No state, no allocation.
#pragma once

#include <rte_hash_crc.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "config/config.h"
#include "pkt/meta.h"

namespace rocesw {

struct FlowHashParams {
    uint64_t seed = 0;
    bool symmetric = false;  // hash(a->b) == hash(b->a)
    bool dest_qp = false;    // include BTH dest QP for RoCEv2 packets
    FlowHashFn fn = FlowHashFn::crc32c;
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

// One CRC32C step over 8 bytes. With SSE4.2 known at compile time (the builds' -march), the
// instruction itself: rte_hash_crc_8byte tests DPDK's runtime choice of algorithm on every call
// and returns 32 bits the next step widens again. Otherwise DPDK's (table fallback included).
// Same values either way (lb_group_test FlowHash.Crc32cStepIsDpdks).
[[gnu::always_inline]] inline uint64_t lb_crc32c_8byte(uint64_t data, uint64_t crc) {
#if defined(__SSE4_2__) && defined(__x86_64__)
    return __builtin_ia32_crc32di(crc, data);
#else
    return rte_hash_crc_8byte(data, uint32_t(crc));
#endif
}

// The two endpoints and the L4 word of a packet, as the hash functions read them. `a` and `b`
// are the addresses: IPv4 in the low 32 bits of a[0] and b[0]; IPv6 as two native 64-bit words
// each for crc32c, folded to a[0] and b[0] (w0 ^ mix64(w1)) for mix64. With kSymmetric the
// endpoints (address, then port) are in a canonical order.
struct FlowKey {
    uint64_t a[2], b[2];
    uint64_t ports;  // source port << 48 | destination port << 32 | protocol << 24 | [dest QP]
    bool v6;
};

// kIpv4: the packet is IPv4 (the caller knows its family): no test of m.l3.
template <FlowHashFn kFn, bool kSymmetric, bool kDestQp, bool kIpv4 = false>
[[gnu::always_inline]] inline FlowKey flow_key(const PacketMeta &m, const uint8_t *l3) {
    FlowKey k;
    k.v6 = !kIpv4 && m.l3 == L3Type::ipv6;
    if (k.v6) [[unlikely]] {
        std::memcpy(k.a, l3 + 8, 16);
        std::memcpy(k.b, l3 + 24, 16);
        if constexpr (kFn == FlowHashFn::mix64) {
            k.a[0] ^= lb_mix64(k.a[1]);
            k.b[0] ^= lb_mix64(k.b[1]);
            k.a[1] = k.b[1] = 0;
        }
    } else {
        k.a[0] = m.src_ip4;
        k.b[0] = m.dst_ip4;
        k.a[1] = k.b[1] = 0;
    }
    // Ports only with kFlagL4, selected without a branch.
    const uint32_t l4 = (m.flags & kFlagL4) ? 0xFFFFFFFFu : 0u;
    uint32_t sp = m.src_port & l4, dp = m.dst_port & l4;
    if constexpr (kSymmetric) {
        const bool swap = k.a[0] != k.b[0]   ? k.a[0] > k.b[0]
                          : k.a[1] != k.b[1] ? k.a[1] > k.b[1]
                                             : sp > dp;
        if (swap) {
            for (int i = 0; i < 2; i++) {
                uint64_t t = k.a[i];
                k.a[i] = k.b[i];
                k.b[i] = t;
            }
            uint32_t u = sp;
            sp = dp;
            dp = u;
        }
    }
    k.ports = uint64_t(sp) << 48 | uint64_t(dp) << 32 | uint64_t(m.ip_proto) << 24;
    if constexpr (kDestQp)
        if (m.flags & kFlagRoce) k.ports |= m.dest_qp & 0xFFFFFF;
    return k;
}

// The IPv4 words of flow_key without the symmetric swap, each from one load: the addresses
// (source << 32 | destination) and the ports (source << 16 | destination) are adjacent fields
// of PacketMeta, read as one little-endian word and rotated into that order.
struct FlowKey4 {
    uint64_t ab;     // a[0] << 32 | b[0]
    uint64_t ports;  // FlowKey::ports
};

template <bool kDestQp>
[[gnu::always_inline]] inline FlowKey4 flow_key4(const PacketMeta &m) {
    static_assert(std::endian::native == std::endian::little);
    static_assert(offsetof(PacketMeta, dst_ip4) == offsetof(PacketMeta, src_ip4) + 4);
    static_assert(offsetof(PacketMeta, dst_port) == offsetof(PacketMeta, src_port) + 2);
    uint64_t addrs;  // destination << 32 | source
    uint32_t ports;  // destination << 16 | source
    std::memcpy(&addrs, reinterpret_cast<const uint8_t *>(&m) + offsetof(PacketMeta, src_ip4), 8);
    std::memcpy(&ports, reinterpret_cast<const uint8_t *>(&m) + offsetof(PacketMeta, src_port), 4);
    // All ones with kFlagL4, else 0: the flag's bit shifted to the sign and spread (two shifts).
    constexpr int kL4Bit = std::countr_zero(uint32_t(kFlagL4));
    static_assert(uint32_t(kFlagL4) == 1u << kL4Bit);
    const uint32_t l4 = uint32_t(int32_t(uint32_t(m.flags) << (31 - kL4Bit)) >> 31);
    FlowKey4 k{std::rotl(addrs, 32),
               uint64_t(std::rotl(ports, 16) & l4) << 32 | uint64_t(m.ip_proto) << 24};
    if constexpr (kDestQp)
        if (m.flags & kFlagRoce) k.ports |= m.dest_qp & 0xFFFFFF;
    return k;
}

// mix64: three murmur3 finalizers over seed, a, b and the L4 word.
[[gnu::always_inline]] inline uint64_t flow_hash_mix64(const FlowKey &k, uint64_t seed) {
    uint64_t h = lb_mix64(seed ^ k.a[0]);
    h = lb_mix64(h ^ (k.b[0] + 0x9e3779b97f4a7c15ull));
    return lb_mix64(h ^ k.ports);
}

// flow_hash_crc32c of an IPv4 key (the same two chains).
[[gnu::always_inline]] inline uint64_t flow_hash_crc32c4(const FlowKey4 &k, uint64_t seed) {
    uint64_t lo = uint32_t(seed), hi = uint32_t(seed >> 32) ^ 0x9e3779b9u;
    lo = lb_crc32c_8byte(k.ab, lo);
    lo = lb_crc32c_8byte(k.ports, lo);
    hi = lb_crc32c_8byte(k.ports, hi);
    hi = lb_crc32c_8byte(k.ab, hi);
    return hi << 32 | lo;
}

// crc32c: two CRC32C chains over the same words (8 bytes per crc32q instruction; DPDK's table
// fallback where the CPU has none), in opposite orders so the halves are not one affine
// function of each other: the low half picks the bucket, the high half tags flowlet entries.
// CRC is linear: distinct inputs differing in a few bits never collide in the low bits, and
// the seed shifts every flow's value by one constant (tiers still differ: their bucket tables
// are drawn from member keys). The chains are independent, so they overlap: IPv4 costs two
// instructions of latency.
[[gnu::always_inline]] inline uint64_t flow_hash_crc32c(const FlowKey &k, uint64_t seed) {
    uint64_t lo = uint32_t(seed), hi = uint32_t(seed >> 32) ^ 0x9e3779b9u;
    if (k.v6) [[unlikely]] {
        lo = lb_crc32c_8byte(k.a[0], lo);
        lo = lb_crc32c_8byte(k.a[1], lo);
        lo = lb_crc32c_8byte(k.b[0], lo);
        lo = lb_crc32c_8byte(k.b[1], lo);
        lo = lb_crc32c_8byte(k.ports, lo);
        hi = lb_crc32c_8byte(k.ports, hi);
        hi = lb_crc32c_8byte(k.b[1], hi);
        hi = lb_crc32c_8byte(k.b[0], hi);
        hi = lb_crc32c_8byte(k.a[1], hi);
        hi = lb_crc32c_8byte(k.a[0], hi);
        return hi << 32 | lo;
    }
    return flow_hash_crc32c4({k.a[0] << 32 | k.b[0], k.ports}, seed);
}

// The flow hash of a packet from its FlowKey: any address family (kIpv4: IPv4), any parameters.
template <FlowHashFn kFn, bool kSymmetric, bool kDestQp, bool kIpv4 = false>
[[gnu::always_inline]] inline uint64_t flow_hash_key(const PacketMeta &m, const uint8_t *l3,
                                                     uint64_t seed) {
    const FlowKey k = flow_key<kFn, kSymmetric, kDestQp, kIpv4>(m, l3);
    if constexpr (kFn == FlowHashFn::crc32c)
        return flow_hash_crc32c(k, seed);
    else
        return flow_hash_mix64(k, seed);
}

// The same out of line: where IPv4 has a path of its own, IPv6's longer one would take the
// registers of the burst loop the IPv4 path is inlined in.
template <FlowHashFn kFn, bool kSymmetric, bool kDestQp>
[[gnu::noinline]] uint64_t flow_hash_key_cold(const PacketMeta &m, const uint8_t *l3,
                                              uint64_t seed) {
    return flow_hash_key<kFn, kSymmetric, kDestQp>(m, l3, seed);
}

// The flow hash with the parameters that change its shape fixed at compile time, so a burst
// loop (LoadBalancer::resolve) carries no per-packet test of them. Always inlined: it is a
// few instructions, less than the call. `l3` points at the IP header (frame + meta.l3_offset)
// and is only read for IPv6; or it is a callable returning that pointer, called only for IPv6
// (the balancer's burst loop: IPv4 packets then never load the mbuf's data pointer).
template <FlowHashFn kFn, bool kSymmetric, bool kDestQp, typename L3>
[[gnu::always_inline]] inline uint64_t flow_hash_t(const PacketMeta &m, const L3 &l3,
                                                   uint64_t seed) {
    const auto l3_ptr = [&]() -> const uint8_t * {
        if constexpr (std::is_invocable_v<const L3 &>)
            return m.l3 == L3Type::ipv6 ? l3() : nullptr;
        else
            return l3;
    };
    if constexpr (kFn == FlowHashFn::crc32c && !kSymmetric) {
        if (m.l3 != L3Type::ipv6) [[likely]]
            return flow_hash_crc32c4(flow_key4<kDestQp>(m), seed);
        return flow_hash_key_cold<kFn, kSymmetric, kDestQp>(m, l3_ptr(), seed);
    }
    return flow_hash_key<kFn, kSymmetric, kDestQp>(m, l3_ptr(), seed);
}

// flow_hash_t of an IPv4 packet (m.l3 == L3Type::ipv4, which the caller knows: the route
// stage's IPv4 list), without the test of the family: the same value
// (FlowHash.Ipv4VariantIsTheGeneralOne).
template <FlowHashFn kFn, bool kSymmetric, bool kDestQp>
[[gnu::always_inline]] inline uint64_t flow_hash_ipv4_t(const PacketMeta &m, uint64_t seed) {
    if constexpr (kFn == FlowHashFn::crc32c && !kSymmetric)
        return flow_hash_crc32c4(flow_key4<kDestQp>(m), seed);
    else
        return flow_hash_key<kFn, kSymmetric, kDestQp, true>(m, nullptr, seed);
}

// Calls f.template operator()<kFn, kSymmetric, kDestQp>() with the instantiation `p` selects:
// the one place the runtime parameters become template arguments.
template <typename F>
decltype(auto) with_flow_hash(const FlowHashParams &p, F &&f) {
    auto by_fn = [&]<bool kS, bool kQ>() -> decltype(auto) {
        return p.fn == FlowHashFn::crc32c ? f.template operator()<FlowHashFn::crc32c, kS, kQ>()
                                          : f.template operator()<FlowHashFn::mix64, kS, kQ>();
    };
    if (p.symmetric)
        return p.dest_qp ? by_fn.template operator()<true, true>()
                         : by_fn.template operator()<true, false>();
    return p.dest_qp ? by_fn.template operator()<false, true>()
                     : by_fn.template operator()<false, false>();
}

// The flow hash of one packet. The value is part of the behaviour (it picks the bucket, the
// flowlet entry and, with the seed, the member): tests pin both functions' values
// (lb_group_test FlowHash.*).
inline uint64_t flow_hash(const PacketMeta &m, const uint8_t *l3, const FlowHashParams &p) {
    return with_flow_hash(p, [&]<FlowHashFn kFn, bool kS, bool kQ>() {
        return flow_hash_t<kFn, kS, kQ>(m, l3, p.seed);
    });
}

}  // namespace rocesw
