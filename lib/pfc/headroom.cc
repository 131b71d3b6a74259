#include "pfc/headroom.h"

#include <cstdio>

#include "pfc/frame.h"

namespace rocesw {

namespace {
constexpr uint32_t kFrameOverhead = 14 + 4 + 20;  // Ethernet header, FCS, preamble + IFG
constexpr double kCableNsPerMeter = 5.0;
}  // namespace

HeadroomResult compute_headroom(const HeadroomInput &in) {
    HeadroomResult r;
    const uint64_t peer_frame = in.peer_mtu + kFrameOverhead;
    const uint64_t our_frame = in.mtu + kFrameOverhead;
    const uint64_t pfc_frame = kMacControlFrameLen + 4 + 20;
    r.detection = uint64_t(in.burst ? in.burst - 1 : 0) * peer_frame +
                  bytes_in_ns(in.speed_bps, double(in.poll_ns));
    r.egress = in.tx_ring_bytes + our_frame;
    r.link = pfc_frame + bytes_in_ns(in.speed_bps, 2 * in.cable_m * kCableNsPerMeter);
    r.peer = uint64_t(in.peer_response_quanta) * kQuantumBits / 8 + peer_frame;
    r.headroom_bytes = r.detection + r.egress + r.link + r.peer;
    r.xon_offset_bytes = 2 * peer_frame;
    return r;
}

std::string HeadroomResult::explain() const {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "detection (rest of the RX burst + one poll): %llu\n"
                  "our egress (TX ring cap + one frame):        %llu\n"
                  "link (PFC frame + 2 x cable delay):          %llu\n"
                  "peer (response time + one frame):            %llu\n"
                  "headroom (BUFFER_PROFILE xoff) at least:     %llu\n"
                  "xon_offset:                                  %llu\n",
                  (unsigned long long)detection, (unsigned long long)egress,
                  (unsigned long long)link, (unsigned long long)peer,
                  (unsigned long long)headroom_bytes, (unsigned long long)xon_offset_bytes);
    return buf;
}

}  // namespace rocesw
