// The parse-once record. The parser validates a frame and fills this; every later stage reads
// only this record (and the header offsets it holds), never re-parses. It lives in the mbuf's
// private area (see pkt/mbuf_meta.h), so it travels with the packet through the queues.
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/drop_reason.h"

namespace rocesw {

// mac_control: EtherType 0x8808 (PFC, PAUSE); validated by lib/pfc, never forwarded.
// lldp: EtherType 0x88CC, punted to the host interface when there is one (never forwarded).
enum class L3Type : uint8_t { none, ipv4, ipv6, arp, mac_control, lldp };

enum PktFlags : uint16_t {
    kFlagVlan = 1 << 0,      // an 802.1Q tag was present (pcp/vid valid)
    kFlagL4 = 1 << 1,        // l4_offset, src_port, dst_port valid (UDP or TCP first fragment)
    kFlagRoce = 1 << 2,      // UDP dst 4791 with a BTH: dest_qp valid (opcode, PSN in the frame)
    kFlagFragment = 1 << 3,  // IPv4 fragment (any)
    kFlagDstBcast = 1 << 4,  // destination MAC broadcast
    kFlagDstMcast = 1 << 5,  // destination MAC multicast (not broadcast)
};

struct PacketMeta {
    // Bytes 0..31: the parser's. Fields the parser fills together sit together, so that the
    // fast path (pkt/parser.h) writes them as a few whole-word stores.

    // Where the headers are, in bytes from the start of the frame.
    uint16_t l3_offset;  // 14, or 18 with a VLAN tag
    uint16_t l4_offset;  // valid with kFlagL4
    uint16_t l3_len;     // IPv4 total length / IPv6 40 + payload length
    uint16_t flags;

    L3Type l3;
    uint8_t ip_proto;  // IPv4 protocol / IPv6 next header
    uint8_t ttl;       // TTL / hop limit as received
    uint8_t dscp;      // 0..63
    uint8_t ecn;       // 0..3
    uint8_t pcp;       // 0..7 (0 when untagged)
    uint16_t vid;      // VLAN id (0 when untagged)

    // Host order, each pair adjacent and in this order (lb/flow_hash.h reads a pair as one word).
    uint32_t src_ip4, dst_ip4;    // IPv4 only; IPv6 addresses are read at l3_offset
    uint16_t src_port, dst_port;  // L4 ports
    uint32_t dest_qp;             // 24 bits, BTH destination QP (with kFlagRoce, else 0)
    // The BTH opcode and PSN are not kept: no stage reads them. bth_opcode() and bth_psn()
    // (pkt/parser.h) read them from the frame.

    // Bytes 32..43: later stages' (zero after parsing).
    uint32_t nexthop;   // next-hop id, set by the route stage
    uint32_t rx_ns_lo;  // low bits of the rx timestamp (ns), for latency measurement
    uint8_t in_port;    // ingress port index
    uint8_t out_port;   // set by the route stage
    uint8_t tc;         // traffic class, set by classification (0 without a QoS plan)
    uint8_t spare;      // zero; no padding anywhere (the parser tests compare metas bytewise)
};

static_assert(sizeof(PacketMeta) <= 64, "PacketMeta must fit one cache line");
static_assert(std::has_unique_object_representations_v<PacketMeta>, "PacketMeta has padding");

}  // namespace rocesw
