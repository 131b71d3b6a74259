// Classification: the traffic class (TC) of every packet, from the ingress port's trust mode
// and maps. Runs once per received burst, after the parser and before routing.
//
//   trust dscp:  IPv4/IPv6 -> DSCP_TO_TC_MAP[dscp]; anything else (ARP) -> default_tc
//   trust dot1p: 802.1Q-tagged -> DOT1P_TO_TC_MAP[pcp]; untagged -> default_tc
//
// The queue and the priority group are not stored: the egress stage looks them up from the TC
// (egress port's TC_TO_QUEUE_MAP, ingress port's TC_TO_PRIORITY_GROUP_MAP) when it enqueues.
// Local replies take the plan's switch_tc (network control, TC7 by default) through
// classify_switch_originated; the host-interface thread gives what the kernel sends the same TC.
//
// Reads: PacketMeta l3, flags (kFlagVlan), dscp, pcp. Writes: PacketMeta tc. Counters: none.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "pkt/meta.h"
#include "qos/plan.h"

struct rte_mbuf;

namespace rocesw {

inline uint8_t classify_tc(const PacketMeta &m, const PortQos &q) {
    if (q.trust == Trust::dscp) {
        const bool ip = m.l3 == L3Type::ipv4 || m.l3 == L3Type::ipv6;
        return ip ? q.dscp_to_tc[m.dscp & 63] : q.default_tc;
    }
    return (m.flags & kFlagVlan) ? q.dot1p_to_tc[m.pcp & 7] : q.default_tc;
}

// classify_tc for a packet known to be IPv4 or IPv6 and untagged (the parser's fast path took
// it): no test of l3 or of the tag.
inline uint8_t classify_tc_untagged_ip(const PacketMeta &m, const PortQos &q) {
    return q.trust == Trust::dscp ? q.dscp_to_tc[m.dscp & 63] : q.default_tc;
}

// classify_tc_untagged_ip for every DSCP, as one table (`q` null: no QoS plan, TC 0): the worker
// fills it once per burst and looks the fast path's packets up in it, with no test of the trust
// mode per packet.
inline void untagged_ip_tc_table(const PortQos *q, std::array<uint8_t, kNumDscp> &out) {
    if (!q)
        out.fill(0);
    else if (q->trust == Trust::dscp)
        out = q->dscp_to_tc;
    else
        out.fill(q->default_tc);
}

// The TC every DSCP of `t` (untagged_ip_tc_table's) maps to, or -1 when they differ.
inline int uniform_tc(const std::array<uint8_t, kNumDscp> &t) {
    static_assert(kNumDscp == 64);
    // The four 16-byte quarters equal the first, whose two halves are its first byte repeated.
    using V = uint64_t __attribute__((vector_size(16)));
    V q[4];
    std::memcpy(q, t.data(), sizeof q);
    const V d = (q[1] ^ q[0]) | (q[2] ^ q[0]) | (q[3] ^ q[0]);
    const uint64_t b = uint64_t(t[0]) * 0x0101010101010101ull;
    return (d[0] | d[1] | (q[0][0] ^ b) | (q[0][1] ^ b)) ? -1 : int(t[0]);
}

// Sets tc on metas[0..n).
void classify_burst(PacketMeta *const *metas, uint16_t n, const PortQos &q);

// The same over mbufs (PacketMeta in the private area).
void classify_mbufs(rte_mbuf *const *pkts, uint16_t n, const PortQos &q);

inline void classify_switch_originated(PacketMeta &m, const QosPlan &plan) {
    m.tc = plan.switch_tc;
}

}  // namespace rocesw
