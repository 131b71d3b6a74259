// IEEE 802.1Qbb PFC and 802.3x PAUSE frames (MAC control, EtherType 0x8808): build and
// validate. Header-only, no DPDK: roceswd, rocehost and the tests share it.
//
//   DA 01:80:C2:00:00:01 | SA | 0x8808 | opcode 0x0101 | enable vector (16 bits, bit n =
//   priority n, upper byte 0) | 8 x 16-bit pause time in quanta, priority 0 first | pad to 60
//   (64 on the wire with the FCS). 802.3x PAUSE: opcode 0x0001 and one 16-bit time.
// One quantum is 512 bit times; a time of 0 for an enabled priority is XON (resume).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "pkt/bytes.h"

namespace rocesw {

inline constexpr std::array<uint8_t, 6> kMacControlDst = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
inline constexpr uint16_t kOpcodePause = 0x0001;
inline constexpr uint16_t kOpcodePfc = 0x0101;
inline constexpr uint32_t kMacControlFrameLen = 60;  // minimum frame, FCS excluded
inline constexpr uint32_t kPfcFieldsLen = 14 + 2 + 2 + 16;  // header, opcode, vector, 8 timers
inline constexpr uint32_t kPauseFieldsLen = 14 + 2 + 2;     // header, opcode, one timer
inline constexpr uint32_t kNumPriorities = 8;
inline constexpr uint32_t kQuantumBits = 512;

// Why a received MAC-control frame was refused (counted per port; nothing is paused).
#define ROCESW_MAC_CONTROL_ERRORS(X)                                        \
    X(bad_dst, "destination is not 01:80:C2:00:00:01")                     \
    X(tagged, "MAC-control frames are never VLAN-tagged")                  \
    X(truncated, "shorter than 60 bytes (FCS excluded)")                   \
    X(bad_opcode, "opcode is neither PFC (0x0101) nor PAUSE (0x0001)")     \
    X(bad_vector, "PFC priority-enable vector has bits in its upper byte")

enum class MacControlError : uint8_t {
#define X(name, text) name,
    ROCESW_MAC_CONTROL_ERRORS(X)
#undef X
        none
};
inline constexpr size_t kMacControlErrorCount = size_t(MacControlError::none);

constexpr std::string_view mac_control_error_name(MacControlError e) {
    constexpr std::array<std::string_view, kMacControlErrorCount> names = {
#define X(name, text) #name,
        ROCESW_MAC_CONTROL_ERRORS(X)
#undef X
    };
    return size_t(e) < kMacControlErrorCount ? names[size_t(e)] : "none";
}

struct MacControlFrame {
    bool pfc = true;      // false: 802.3x global PAUSE (one timer, in quanta[0])
    uint8_t enable = 0;   // PFC: priorities the frame speaks for
    std::array<uint16_t, kNumPriorities> quanta{};
};

// Validates a frame whose EtherType (at offset 12, untagged) or inner EtherType (tagged) is
// 0x8808. `len` excludes the FCS. Returns MacControlError::none and fills *out when valid.
inline MacControlError parse_mac_control(const uint8_t *f, uint32_t len, MacControlFrame *out) {
    if (len < 14 || std::memcmp(f, kMacControlDst.data(), 6) != 0) return MacControlError::bad_dst;
    if (rd16(f + 12) != 0x8808) return MacControlError::tagged;
    if (len < kMacControlFrameLen) return MacControlError::truncated;
    const uint16_t op = rd16(f + 14);
    if (op == kOpcodePfc) {
        const uint16_t vec = rd16(f + 16);
        if (vec & 0xFF00) return MacControlError::bad_vector;
        out->pfc = true;
        out->enable = uint8_t(vec);
        for (uint32_t p = 0; p < kNumPriorities; p++) out->quanta[p] = rd16(f + 18 + 2 * p);
        return MacControlError::none;
    }
    if (op == kOpcodePause) {
        out->pfc = false;
        out->enable = 0xFF;
        out->quanta = {};
        out->quanta[0] = rd16(f + 16);
        return MacControlError::none;
    }
    return MacControlError::bad_opcode;
}

// Writes a 60-byte PFC frame to buf (at least 60 bytes): `enable` the priorities it speaks for,
// quanta[p] their times (0 = XON). Returns the length.
inline uint32_t build_pfc_frame(uint8_t *buf, const std::array<uint8_t, 6> &src, uint8_t enable,
                                const std::array<uint16_t, kNumPriorities> &quanta) {
    std::memset(buf, 0, kMacControlFrameLen);
    std::memcpy(buf, kMacControlDst.data(), 6);
    std::memcpy(buf + 6, src.data(), 6);
    wr16(buf + 12, 0x8808);
    wr16(buf + 14, kOpcodePfc);
    wr16(buf + 16, enable);
    for (uint32_t p = 0; p < kNumPriorities; p++)
        wr16(buf + 18 + 2 * p, (enable >> p) & 1 ? quanta[p] : 0);
    return kMacControlFrameLen;
}

// Writes a 60-byte 802.3x PAUSE frame; returns the length.
inline uint32_t build_pause_frame(uint8_t *buf, const std::array<uint8_t, 6> &src,
                                  uint16_t quanta) {
    std::memset(buf, 0, kMacControlFrameLen);
    std::memcpy(buf, kMacControlDst.data(), 6);
    std::memcpy(buf + 6, src.data(), 6);
    wr16(buf + 12, 0x8808);
    wr16(buf + 14, kOpcodePause);
    wr16(buf + 16, quanta);
    return kMacControlFrameLen;
}

// Pause time of `quanta` at `rate_bps`, in ns, rounded up (0 quanta -> 0).
constexpr uint64_t pause_quanta_to_ns(uint32_t quanta, uint64_t rate_bps) {
    if (!rate_bps) return 0;
    const unsigned __int128 bits = (unsigned __int128)quanta * kQuantumBits * 1'000'000'000ull;
    return uint64_t((bits + rate_bps - 1) / rate_bps);
}

static_assert(pause_quanta_to_ns(1, 10'000'000'000ull) == 52);  // 51.2 ns, rounded up
static_assert(pause_quanta_to_ns(0xFFFF, 100'000'000'000ull) == 335540);  // 335.54 us

}  // namespace rocesw
