// Answers the few packets addressed to the switch itself that a router must answer before any
// control plane runs: ARP requests and IPv6 neighbour solicitations for its addresses (so hosts
// can resolve their gateway), and ICMP/ICMPv6 echo requests (so hosts can ping it). Each
// function turns the request into its reply in place and returns the reply's frame length,
// or 0 when the packet is not one it answers (the caller counts it as local_unhandled, or
// as consumed for ARP replies). The reply leaves through the port it arrived on.
//
// Reads: frame bytes at the offsets in PacketMeta. Writes: the frame (up to `cap` bytes).
#pragma once

#include <cstdint>
#include <span>

#include "pkt/addr.h"
#include "pkt/meta.h"

namespace rocesw {

// The frame is an ARP packet (meta.l3 == arp). Returns the reply length, or 0 (not a request
// for one of `addrs`: consumed, nothing to send).
uint32_t local_arp(uint8_t *f, uint32_t len, const PacketMeta &m, const MacAddr &port_mac,
                   std::span<const IfAddr> addrs);

// The frame is IPv4 or IPv6 addressed to the switch (or an IPv6 NS to a solicited-node group).
uint32_t local_ip(uint8_t *f, uint32_t len, uint32_t cap, const PacketMeta &m,
                  const MacAddr &port_mac, std::span<const IfAddr> addrs);

// True for an IPv6 neighbour solicitation (ICMPv6 135) with hop limit 255.
bool is_neighbour_solicitation(const uint8_t *f, const PacketMeta &m);

}  // namespace rocesw
