// Headroom calculator: how many bytes a lossless PG must still absorb after the switch has
// decided to pause its peer. Pure arithmetic, no DPDK; used by build_qos_plan (automatic
// profiles and warnings) and by `rocectl headroom`.
//
// After the PG crosses its xoff threshold, bytes keep arriving until the peer stops:
//   detection   the rest of the RX burst that crossed it, plus one worker poll at line rate
//               (the owner evaluates PFC once per flush);
//   our egress  the PFC frame goes ahead of every queue but behind what the device TX ring
//               already holds (at most tx_ring_bytes) and the frame on the wire (our MTU);
//   the link    the PFC frame itself, twice the cable delay (5 ns/m: the frame travels out,
//               the last bytes travel back);
//   the peer    its response time (IEEE 802.1Qbb budget in quanta) and the frame it is sending
//               when it reacts (its MTU).
// Frame sizes are wire sizes (L3 MTU + 14 header + 4 FCS + 20 preamble/IFG).
#pragma once

#include <cstdint>
#include <string>

namespace rocesw {

struct HeadroomInput {
    uint64_t speed_bps = 10'000'000'000ull;
    double cable_m = 100;
    uint32_t mtu = 9216;       // this port's L3 MTU
    uint32_t peer_mtu = 9216;  // the peer's L3 MTU
    uint32_t peer_response_quanta = 394;
    uint64_t tx_ring_bytes = 25000;  // our device TX ring cap (wire bytes)
    uint32_t burst = 32;             // RX burst of the worker
    uint64_t poll_ns = 10'000;       // longest gap between two flushes of the port's owner
};

struct HeadroomResult {
    uint64_t detection = 0, egress = 0, link = 0, peer = 0;
    uint64_t headroom_bytes = 0;  // the sum: BUFFER_PROFILE xoff should be at least this
    uint64_t xon_offset_bytes = 0;  // resume this far below the threshold (two peer frames)
    std::string explain() const;    // one line per component
};

HeadroomResult compute_headroom(const HeadroomInput &in);

// The default shaper bucket depth and TX ring cap of a port (doc/qos.md): 20 us of its rate, at
// least 20 000 bytes (two jumbo frames). A worker that polls at most every 20 us then keeps the
// link busy, and a pause takes effect within that much data.
inline uint32_t default_port_burst_bytes(uint64_t rate_bps) {
    const uint64_t b = rate_bps / 8 * 20 / 1'000'000;
    return uint32_t(b > 20000 ? b : 20000);
}

// Bytes sent at `speed_bps` in `ns`, rounded up.
inline uint64_t bytes_in_ns(uint64_t speed_bps, double ns) {
    double b = double(speed_bps) * ns / 8e9;
    uint64_t r = uint64_t(b);
    return double(r) < b ? r + 1 : r;
}

}  // namespace rocesw
