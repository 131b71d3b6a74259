// Validating parser: Ethernet, one 802.1Q tag, ARP, IPv4 (IHL, total length, checksum), IPv6,
// UDP and the RoCEv2 BTH on UDP port 4791. Reads the frame once and either fills a PacketMeta
// or names the reason the frame must be dropped. It never reads past `len`.
//
// Reads: frame bytes. Writes: *meta. Counters: none (the caller charges the drop reason).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/drop_reason.h"
#include "pkt/meta.h"

namespace rocesw {

inline constexpr uint16_t kRoceV2Port = 4791;
inline constexpr uint16_t kBthLen = 12;
inline constexpr uint16_t kIcrcLen = 4;

struct ParseOptions {
    uint32_t max_l3_len = 1500;  // ingress port MTU: longer IP packets are frame_too_long
    bool verify_ipv4_checksum = true;
    bool accept_lldp = false;  // untagged LLDP -> L3Type::lldp (a host interface takes it)
};

// Returns nullopt when the frame is valid (meta filled), otherwise the drop reason.
// `frame` is the start of the Ethernet header, `len` the frame length without FCS.
std::optional<DropReason> parse_frame(const uint8_t *frame, uint32_t len, const ParseOptions &opt,
                                      PacketMeta *meta);

}  // namespace rocesw
