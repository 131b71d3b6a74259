// RoCEv2 packets on the wire: Ethernet / IPv4 or IPv6 / UDP 4791 / BTH / [RETH | AETH] /
// payload / pad / ICRC. Builds the packets a RoCE NIC sends for RC RDMA WRITE (first, middle,
// last, only), ACK/NAK and CNP, and parses them back. Frame lengths exclude the FCS.
//
//   BTH (12 B): opcode | SE M Pad(2) TVer(4) | P_Key(16) | FECN BECN resv6 | dest QP(24) |
//               A resv7 | PSN(24)
//   RETH (16 B): virtual address(64) | R_Key(32) | DMA length(32)     — on WRITE first/only
//   AETH (4 B):  syndrome(8) | MSN(24)                                  — on ACK
//   CNP: BTH opcode 0x81, BECN set, 16 bytes of zero, ICRC.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace rocesw::roce {

inline constexpr uint16_t kRoceUdpPort = 4791;
inline constexpr uint32_t kBthLen = 12, kRethLen = 16, kAethLen = 4, kIcrcLen = 4;
inline constexpr uint32_t kCnpPadLen = 16;
inline constexpr uint32_t kPsnMask = 0xFFFFFF;

enum class Opcode : uint8_t {
    write_first = 0x06,
    write_middle = 0x07,
    write_last = 0x08,
    write_only = 0x0A,
    ack = 0x11,
    cnp = 0x81,
};

// AETH syndromes (IBA 9.7.5.1): bits 7..5 = 000 ACK (low 5 bits: credit count), 011 NAK
// (low 5 bits: 0 = PSN sequence error).
inline constexpr uint8_t kSyndromeAck =
    0x1F;  // ACK, credits "invalid" (end-to-end flow control off)
inline constexpr uint8_t kSyndromeNakPsnSeq = 0x60;

inline bool is_write(uint8_t op) {
    return op >= 0x06 && op <= 0x0B;
}
inline bool opcode_has_reth(uint8_t op) {
    return op == 0x06 || op == 0x0A || op == 0x0B;
}
inline bool opcode_ends_message(uint8_t op) {
    return op == 0x08 || op == 0x09 || op == 0x0A || op == 0x0B;
}

// ECN field of the IP header.
enum class Ecn : uint8_t { not_ect = 0, ect1 = 1, ect0 = 2, ce = 3 };

struct L2L3 {
    std::array<uint8_t, 6> src_mac{}, dst_mac{};
    bool is_v6 = false;
    uint32_t src_ip4 = 0, dst_ip4 = 0;  // host byte order
    std::array<uint8_t, 16> src_ip6{}, dst_ip6{};
    uint8_t dscp = 26;
    Ecn ecn = Ecn::ect0;
    uint8_t ttl = 64;
    uint16_t ip_id = 0;
    uint16_t udp_src = 0xC000;
    uint32_t flow_label = 0;  // IPv6 only, 20 bits
};

struct BthFields {
    uint8_t opcode = 0;
    bool solicited = false;
    bool migreq = false;
    uint8_t pad = 0;  // pad count, filled by the builder
    uint16_t pkey = 0xFFFF;
    bool fecn = false, becn = false;
    uint32_t dest_qp = 0;  // 24 bits
    bool ack_req = false;
    uint32_t psn = 0;  // 24 bits
};

struct Reth {
    uint64_t va = 0;
    uint32_t rkey = 0;
    uint32_t dma_len = 0;
};

struct Aeth {
    uint8_t syndrome = kSyndromeAck;
    uint32_t msn = 0;  // 24 bits
};

// What build_packet writes after the BTH: RETH when bth.opcode carries one, AETH for ACK, the
// 16 zero bytes for CNP, then `payload_len` bytes of payload (from `payload`, or a byte pattern
// derived from the PSN when null), zero pad to 4 bytes, ICRC.
struct PacketSpec {
    L2L3 l;
    BthFields bth;
    Reth reth;
    Aeth aeth;
    const uint8_t *payload = nullptr;
    uint32_t payload_len = 0;
};

// Length of the frame build_packet writes (FCS excluded).
uint32_t packet_len(const PacketSpec &s);
// Writes the frame to buf (capacity `cap`); returns its length, 0 when it does not fit.
uint32_t build_packet(uint8_t *buf, uint32_t cap, const PacketSpec &s);

// Convenience builders.
PacketSpec cnp_spec(const L2L3 &l, uint32_t dest_qp);
PacketSpec ack_spec(const L2L3 &l, uint32_t dest_qp, uint32_t psn, uint8_t syndrome, uint32_t msn);

// A parsed RoCEv2 frame. Offsets are from the frame start.
struct ParsedRoce {
    bool is_v6 = false;
    bool vlan = false;
    uint8_t pcp = 0;
    std::array<uint8_t, 6> src_mac{}, dst_mac{};
    uint32_t src_ip4 = 0, dst_ip4 = 0;
    std::array<uint8_t, 16> src_ip6{}, dst_ip6{};
    uint8_t dscp = 0;
    Ecn ecn = Ecn::not_ect;
    uint16_t udp_src = 0;
    BthFields bth;
    Reth reth;
    Aeth aeth;
    uint32_t payload_off = 0, payload_len = 0;  // pad excluded
    bool icrc_ok = false;
};

enum class ParseResult : uint8_t {
    ok,
    not_roce,   // not IPv4/IPv6 UDP to 4791 (ARP, PFC, other traffic)
    truncated,  // claims to be RoCEv2 but a header or the ICRC is missing
    bad_icrc,   // only when check_icrc
};

ParseResult parse_packet(const uint8_t *f, uint32_t len, bool check_icrc, ParsedRoce *out);

// Per-QP UDP source port: 0xC000 | 14 bits of a hash of the QP and the local address, so the
// QPs between two hosts spread over ECMP paths.
uint16_t udp_src_port_for_qp(uint32_t local_ip, uint32_t qpn);

inline uint32_t psn_add(uint32_t psn, uint32_t n) {
    return (psn + n) & kPsnMask;
}
// Signed distance a - b in the 24-bit PSN space (-2^23 .. 2^23-1).
inline int32_t psn_diff(uint32_t a, uint32_t b) {
    int32_t d = int32_t((a - b) & kPsnMask);
    return d >= 0x800000 ? d - 0x1000000 : d;
}

}  // namespace rocesw::roce
