// Every packet the switch does not forward leaves through exactly one of these reasons.
// The names are stable: they appear in rocectl, telemetry and Prometheus labels.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace rocesw {

#define ROCESW_DROP_REASONS(X)                                                           \
    X(eth_truncated, "frame shorter than an Ethernet header")                            \
    X(vlan_truncated, "802.1Q tag cut short")                                            \
    X(vlan_stacked, "stacked VLAN tags (QinQ) are not supported")                        \
    X(src_mac_multicast, "source MAC is multicast or broadcast")                         \
    X(dst_mac_mismatch, "destination MAC is neither the port's nor broadcast/multicast") \
    X(ethertype_unsupported, "EtherType is not IPv4, IPv6 or ARP")                       \
    X(frame_too_long, "frame longer than the ingress port's MTU allows")                 \
    X(ip_version_bad, "IP version field does not match the EtherType")                   \
    X(ipv4_truncated, "IPv4 header cut short")                                           \
    X(ipv4_ihl_bad, "IPv4 IHL below 5")                                                  \
    X(ipv4_length_bad, "IPv4 header or total length past the frame or below the header") \
    X(ipv4_checksum_bad, "IPv4 header checksum is wrong")                                \
    X(ipv4_options, "IPv4 options are not forwarded")                                    \
    X(ipv4_src_bad, "IPv4 source is multicast, broadcast or loopback")                   \
    X(ipv6_truncated, "IPv6 header cut short")                                           \
    X(ipv6_length_bad, "IPv6 payload length past the frame")                             \
    X(ipv6_src_bad, "IPv6 source is multicast or loopback")                              \
    X(udp_truncated, "UDP header cut short")                                             \
    X(udp_length_bad, "UDP length disagrees with the IP payload")                        \
    X(bth_truncated, "RoCEv2 packet shorter than BTH + ICRC")                            \
    X(l3_multicast, "IP multicast/broadcast destination is not routed")                  \
    X(ttl_expired, "TTL or hop limit is 0 or 1")                                         \
    X(no_route, "no route to the destination")                                           \
    X(no_neighbour, "next hop has no resolved neighbour MAC")                            \
    X(mtu_exceeded, "packet larger than the egress port's MTU")                          \
    X(local_unhandled, "addressed to the switch, no local handler")                      \
    X(arp_invalid, "malformed ARP packet")                                               \
    X(tx_full, "device TX ring full")                                                    \
    X(port_stopped, "egress port is not running")                                        \
    X(queue_full, "egress queue's packet slots are all used")                            \
    X(buffer_full, "lossy tail drop: queue threshold or shared pool exhausted")          \
    X(wred_drop, "WRED dropped a Not-ECT packet")                                        \
    X(headroom_exhausted, "lossless: PG headroom (or pool + headroom) exhausted")        \
    X(handoff_full, "another worker's handoff ring to the egress port was full")         \
    X(pfc_watchdog, "egress queue stormed by PFC, watchdog action drop")                 \
    X(mac_control_malformed, "malformed MAC-control (PFC/PAUSE) frame")                  \
    X(pause_ignored, "802.3x PAUSE or MAC-control frame the port does not honor")            \
    X(punt_policed, "to the control plane: over its class's policing rate")              \
    X(punt_queue_full, "to the control plane: the worker's punt queue was full")         \
    X(route_discard, "a route discards the destination (blackhole, unreachable, prohibit)")  \
    X(link_down, "egress port's link is down (its peer is gone)")

enum class DropReason : uint8_t {
#define X(name, text) name,
    ROCESW_DROP_REASONS(X)
#undef X
        count
};

inline constexpr size_t kDropReasonCount = static_cast<size_t>(DropReason::count);

constexpr std::string_view drop_reason_name(DropReason r) {
    constexpr std::array<std::string_view, kDropReasonCount> names = {
#define X(name, text) #name,
        ROCESW_DROP_REASONS(X)
#undef X
    };
    return static_cast<size_t>(r) < kDropReasonCount ? names[static_cast<size_t>(r)] : "?";
}

constexpr std::string_view drop_reason_text(DropReason r) {
    constexpr std::array<std::string_view, kDropReasonCount> texts = {
#define X(name, text) text,
        ROCESW_DROP_REASONS(X)
#undef X
    };
    return static_cast<size_t>(r) < kDropReasonCount ? texts[static_cast<size_t>(r)] : "?";
}

// Whether a reason is decided by the egress stage (queues, handoff rings, the device) and so
// charged to the egress port; every other reason is decided before the packet reaches the
// egress stage and charged to the ingress port (doc/accounting.md).
constexpr bool drop_at_egress(DropReason r) {
    switch (r) {
        case DropReason::tx_full:
        case DropReason::port_stopped:
        case DropReason::link_down:
        case DropReason::queue_full:
        case DropReason::buffer_full:
        case DropReason::wred_drop:
        case DropReason::headroom_exhausted:
        case DropReason::handoff_full:
        case DropReason::pfc_watchdog:
            return true;
        default:
            return false;
    }
}

}  // namespace rocesw
