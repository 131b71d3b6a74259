// Classes of packets punted to the kernel's host interfaces (doc/control-plane.md). Each has
// its own control-plane policing rate, so a flood of one cannot starve another (ARP vs BGP).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace rocesw {

#define ROCESW_PUNT_CLASSES(X)                                                  \
    X(arp, 600, "ARP requests and replies")                                     \
    X(nd, 600, "IPv6 neighbour/router solicitations and advertisements")        \
    X(icmp, 600, "ICMP/ICMPv6 to a switch address")                            \
    X(bgp, 2000, "TCP port 179 to a switch address")                            \
    X(l4, 1000, "other TCP/UDP to a switch address")                            \
    X(lldp, 100, "LLDP frames")                                                 \
    X(ttl, 200, "routed packets whose TTL/hop limit expires (ICMP time exceeded)") \
    X(unreachable, 200, "routed packets to an unreachable/prohibit route (ICMP unreachable)") \
    X(mtu, 200, "routed packets above the egress MTU (ICMP frag needed, packet too big)") \
    X(glean, 200, "routed packets whose next hop is not resolved yet")          \
    X(other, 100, "other packets to a switch address")

enum class PuntClass : uint8_t {
#define X(name, pps, text) name,
    ROCESW_PUNT_CLASSES(X)
#undef X
        count
};

inline constexpr size_t kPuntClassCount = static_cast<size_t>(PuntClass::count);

constexpr std::string_view punt_class_name(PuntClass c) {
    constexpr std::array<std::string_view, kPuntClassCount> names = {
#define X(name, pps, text) #name,
        ROCESW_PUNT_CLASSES(X)
#undef X
    };
    return static_cast<size_t>(c) < kPuntClassCount ? names[static_cast<size_t>(c)] : "?";
}

constexpr std::string_view punt_class_text(PuntClass c) {
    constexpr std::array<std::string_view, kPuntClassCount> texts = {
#define X(name, pps, text) text,
        ROCESW_PUNT_CLASSES(X)
#undef X
    };
    return static_cast<size_t>(c) < kPuntClassCount ? texts[static_cast<size_t>(c)] : "?";
}

// Default policing rates, packets per second.
inline constexpr std::array<uint32_t, kPuntClassCount> kPuntDefaultPps = {
#define X(name, pps, text) pps,
    ROCESW_PUNT_CLASSES(X)
#undef X
};

}  // namespace rocesw
