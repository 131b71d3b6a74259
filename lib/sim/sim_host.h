// Hosts in the simulator: the interface the engine drives, and a constant-rate UDP
// sender/sink (the ns-3 cross-check's traffic and the exact small cases).
//
// SimHost is what the lib/roce HostSet will implement when it has its virtual-time API: the
// engine hands it the frames that arrived on its one port, asks when it next wants to run, and
// runs it, collecting the frames it sends. A host sends only while its wire is idle (the
// engine tells it when the wire is free), so frames wait in the host, not on the link.
//
// UdpHost frames and their schedule are lib/roce's (roce/udp_flow.h: rocehost sends the same):
// packet k of a flow at t_k = start + floor(k * (frame + 24) * 8 * 1e12 / rate) for t_k < stop,
// stamped with t_k. PFC: a received PFC
// frame pauses the flows of each enabled priority for quanta x 512 bit times at the host's
// port rate (0 quanta: resume); 802.3x PAUSE pauses every flow.
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

#include "config/config.h"
#include "roce/udp_flow.h"
#include "sim/event_queue.h"

struct rte_mbuf;
struct rte_mempool;

namespace rocesw::sim {

inline constexpr TimePs kNever = std::numeric_limits<TimePs>::max();

class SimHost {
  public:
    virtual ~SimHost() = default;
    // Frames that arrived on the host's port at `now`; the host owns (and frees) them.
    virtual void on_rx(rte_mbuf **frames, uint16_t n, TimePs now) = 0;
    // The earliest time the host wants to run, given that its wire is free at `wire_free`
    // (kNever: nothing until a frame arrives).
    virtual TimePs next_event(TimePs wire_free) const = 0;
    // Runs at `now`; appends the frames to send on its port, in order (the engine serialises
    // them back to back from max(now, wire_free)).
    virtual void run(TimePs now, TimePs wire_free, std::vector<rte_mbuf *> &out) = 0;
};

struct UdpFlowSpec {
    uint32_t src = 0, dst = 0;        // host node ids
    uint64_t rate_bps = 0;            // wire bit rate (see above)
    uint32_t frame_bytes = 1000;      // Ethernet header to payload end, FCS excluded; >= 66
    TimePs start = 0, stop = kNever;  // packets generated in [start, stop)
    uint8_t dscp = 0;
    bool ecn = false;  // ECT(0)
    uint16_t sport = 10000, dport = 100;
    uint8_t priority = 0;  // PFC priority that pauses it (set by the engine: the TC)
    uint32_t line = 0;     // scenario line, for messages
};

// Per-flow results (and every delivery): lib/roce's, which rocehost's UDP flows count with too.
using roce::UdpDelivery;
using roce::UdpFlowStats;
using roce::UdpRecorder;

struct UdpHostParams {
    uint32_t node = 0;
    uint32_t ip = 0;        // host byte order (sim::host_address)
    MacAddr mac, peer_mac;  // this host's NIC, the switch port it is cabled to
    uint64_t port_rate_bps = 0;
    rte_mempool *pool = nullptr;
};

class UdpHost final : public SimHost {
  public:
    // `flows`: every flow of the run (ids are indices); this host sends those with src == node.
    UdpHost(const UdpHostParams &p, const std::vector<UdpFlowSpec> &flows, UdpRecorder &rec);

    void on_rx(rte_mbuf **frames, uint16_t n, TimePs now) override;
    TimePs next_event(TimePs wire_free) const override;
    void run(TimePs now, TimePs wire_free, std::vector<rte_mbuf *> &out) override;

    // What on_rx makes of a frame: a UDP flow's (an 'RSIM' payload), a MAC control frame.
    static bool is_udp_flow_frame(const rte_mbuf *m);
    static bool is_mac_control(const rte_mbuf *m);

    uint64_t pause_frames() const { return pause_frames_; }
    uint64_t rx_other() const { return rx_other_; }

  private:
    struct Flow {
        uint32_t id;
        const UdpFlowSpec *spec;
        roce::UdpSchedule sched;  // the next packet and its generation time
    };
    TimePs due(const Flow &f) const;  // its generation time, or later while paused
    rte_mbuf *build(const Flow &f);

    UdpHostParams p_;
    UdpRecorder &rec_;
    std::vector<Flow> flows_;
    std::array<TimePs, 8> paused_until_{};
    uint64_t pause_frames_ = 0, rx_other_ = 0;
};

}  // namespace rocesw::sim
