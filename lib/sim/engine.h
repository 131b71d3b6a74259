// The rocesim engine: switches (the real pipeline, SimSwitch) and hosts (SimHost) joined by
// links (link.h) and driven by the event queue (event_queue.h) in virtual time.
//
// Events (kind):
//   arrive     a frame's last bit reaches (node, port): into the switch's SimPorts RX, then the
//              switch runs (worker.poll_once(now_ns)); or to the host's on_rx, then the host's
//              next wake-up is rescheduled.
//   wire_free  a switch port whose egress was refused (wire busy) can send again: run it.
//   poll       the time the switch's egress says it next can do something by itself
//              (Egress::next_event_ns: a received PFC pause expiring, an XOFF refresh, a
//              watchdog deadline, the shaper): run it then. An idle switch has no event.
//   host       a host's timer (pacing, pause expiry, wire free): run it.
//   link       a link goes down or up (arg: index of the LinkEvent); routing is recomputed
//   reroute    ... this long after (the convergence delay): changed switches get new routes.
//   sample     queue-depth and port-counter samples, every sample_interval while other
//              events remain.
//
// The run ends at s.until or with the last event that can do work: samples do not keep it
// going, nor does a pending poll or host wake-up that its node no longer asks for (its latest
// answer was "nothing": a poll for the refresh of an XOFF an XON has since ended, a host's
// timer for a flow that has completed). Such an event still runs if the run reaches it, as it
// always did, so everything up to the end is unchanged. summary.json's simulated_time_ns is
// the last event's time.
//
// Time is integer picoseconds; a switch sees now_ns = floor(t / 1000). Frames are rte_mbufs
// from one mempool; on a link a frame occupies max(pkt_len, 60) + 4 (FCS) + 20 bytes, the same
// wire bytes the QoS egress charges (QosPlan::wire_bytes).
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "port/port_io.h"
#include "sim/event_queue.h"
#include "sim/fct.h"
#include "sim/link.h"
#include "sim/roce_hosts.h"
#include "sim/routing.h"
#include "sim/scenario.h"
#include "sim/sim_host.h"
#include "sim/sim_switch.h"

struct rte_mempool;

namespace rocesw::sim {

class Engine;

// A switch's ports in virtual time. rx_burst returns frames that have arrived (the engine
// pushes them at their arrival time); tx_burst takes one frame when the port's wire is idle
// at the engine's current picosecond (and none while it is busy: the engine then schedules a
// wire_free wake-up), so queues build in the switch's QoS queues, where ECN and PFC act. A
// port whose link is down takes everything and the link drops it (counted there).
class SimPorts final : public PortIo {
  public:
    SimPorts(Engine &e, uint32_t node, uint16_t n_ports) : e_(e), node_(node), rx_(n_ports) {}
    uint16_t rx_burst(uint16_t port, uint16_t queue, rte_mbuf **pkts, uint16_t n) override;
    uint16_t tx_burst(uint16_t port, uint16_t queue, rte_mbuf **pkts, uint16_t n) override;

    void push_rx(uint16_t port, rte_mbuf *m) {
        rx_[port].push_back(m);
        pending_++;
    }
    bool rx_pending() const { return pending_ != 0; }
    // Ports whose tx_burst refused a frame since the last call (bit per port).
    uint32_t take_refused() {
        uint32_t r = refused_;
        refused_ = 0;
        return r;
    }
    ~SimPorts() override;

  private:
    Engine &e_;
    uint32_t node_;
    struct Fifo {
        std::vector<rte_mbuf *> v;
        size_t head = 0;
        void push_back(rte_mbuf *m) { v.push_back(m); }
        size_t size() const { return v.size() - head; }
    };
    std::vector<Fifo> rx_;
    size_t pending_ = 0;
    uint32_t refused_ = 0;
};

// Event kinds, in the order of Engine's Kind (events_by_kind, summary.json "event_kinds").
inline constexpr const char *kEventKindNames[] = {"arrive", "wire_free", "poll", "host",
                                                 "link_change", "reroute", "sample", "host_event"};
inline constexpr size_t kEventKinds = std::size(kEventKindNames);

struct EngineStats {
    uint64_t events = 0;
    // Per kind (kEventKindNames), and the popped events that did nothing because a later
    // schedule replaced them (a superseded host wake-up or switch poll): deterministic for
    // a given scenario, so a test can bound the work a run does by the packets it moves.
    std::array<uint64_t, kEventKinds> events_by_kind{};
    uint64_t stale_events = 0;
    uint64_t frames = 0;      // frames put on a wire
    uint64_t frame_hops = 0;  // frames delivered at the other end of a link
    uint64_t pfc_frames = 0;  // PFC/PAUSE frames seen on wires
    uint64_t link_down_drops = 0, lost_in_flight = 0, lost_error = 0;
    TimePs first_link_drop = kNever, last_link_drop = 0;
    uint64_t switch_polls = 0, repolls = 0, reroutes = 0;
    uint64_t routes_refused = 0;
    uint64_t host_rx_other = 0;
    // Host events: PFC frames the engine sent for a storming or slow host, frames a slow
    // receiver held (and the most bytes it held at once).
    uint64_t storm_frames = 0, slow_pause_frames = 0, slow_held_frames = 0;
    uint64_t slow_held_max_bytes = 0;
    TimePs now = 0;
};

// A switch node's ports as the engine builds it: p0.., the simulator's MACs, each link's
// rate, the scenario's MTU.
std::vector<SimSwitchPort> sim_switch_ports(const Scenario &s, uint32_t node);
// Per node, the classification of the switch port host `node` is cabled to (PortQos{} for
// switches and hosts not cabled to a switch): what a flow's pg and a UDP flow's DSCP resolve
// against (the lab description; the engine reads the same from its switches' plans).
std::vector<PortQos> host_access_classes(const Scenario &s);

class Engine {
  public:
    // EAL must be initialised. Builds switches, hosts, links and routes. `out_dir` must exist
    // ("" writes no files: tests that read the stats only). Throws on set-up errors.
    Engine(const Scenario &s, const std::string &out_dir);
    ~Engine();

    // Runs to s.until (or until nothing is left); `progress`, when set, is called about every
    // 2^16 events with the engine (for a terminal progress line).
    void run(void (*progress)(const Engine &, void *) = nullptr, void *arg = nullptr);
    // Writes the end-of-run files (udp_flows.csv, udp_delays.csv, summary.json). The wall
    // times (set-up: building switches and tables; run: the event loop) and `peak_rss_kb` go
    // into summary.json only.
    void finish(double setup_s, double wall_s, long peak_rss_kb);

    const EngineStats &stats() const { return st_; }
    const UdpRecorder &udp() const { return udp_; }
    // The lib/roce hosts (null when the run has no RoCE traffic).
    const RoceHosts *roce() const { return roce_.get(); }
    const Topology &topology() const { return s_.topo; }
    const SimSwitch *switch_at(uint32_t node) const { return nodes_[node].sw.get(); }
    const Link &link(uint32_t i) const { return links_[i]; }
    // Drops by reason, summed over every switch.
    std::array<uint64_t, kDropReasonCount> drops() const;
    // The accounting identity of every switch (doc/accounting.md), summed; `unbalanced` names
    // the switches whose identity does not hold (empty: all balanced - what every run must end
    // with).
    struct AccountingSummary {
        uint32_t switches = 0;
        AccountingPort total;
        std::vector<std::string> unbalanced;  // "<switch>: <verdict>"
    };
    AccountingSummary accounting() const;
    TimePs now() const { return q_.now(); }

    // Addresses the engine gives every (node, port): MAC 02:nn:nn:nn:00:pp, and for neighbour
    // resolution the lab's (sim/lab.h, what rocelab's real engine configures): a switch port
    // toward a switch its end of the link's /31, any other port 10.128.n.p (10.128/9, node <
    // 32768, port < 256). Fabric next hops, and so the ECMP members' hash keys, are the same in both
    // engines.
    static MacAddr port_mac(uint32_t node, uint16_t port);
    uint32_t port_addr(uint32_t node, uint16_t port) const;
    static constexpr uint8_t kKinds = 8;  // Kind's values (kEventKindNames)

  private:
    friend class SimPorts;
    enum Kind : uint8_t { arrive, wire_free, poll, host, link_change, reroute, sample, host_event };
    static_assert(host_event + 1 == kKinds);
    struct Node {
        std::unique_ptr<SimPorts> ports;
        std::unique_ptr<SimSwitch> sw;
        std::unique_ptr<SimHost> host;
        std::vector<TimePs> wake_at;  // switch: pending wire_free per port (0: none)
        TimePs repoll_at = 0;  // the pending poll (egress next_event_ns)
        TimePs host_at = kNever;  // host: the pending wake-up
        // The pending poll / host wake-up is still asked for (it counts in live_).
        bool poll_live = false, host_live = false;
        uint64_t host_gen = 0;
        // slow_receiver: frames held until slow_until; the PFC pause it has sent.
        TimePs slow_until = 0;
        std::vector<rte_mbuf *> held;
        uint64_t held_bytes = 0;
        bool rx_xoff = false;
    };
    struct InFlight {
        rte_mbuf *m;
        uint32_t link;
        uint32_t gen;
        uint8_t dir;  // 0: a -> b
    };

    uint16_t switch_tx(uint32_t node, uint16_t port, rte_mbuf **pkts, uint16_t n);
    void transmit(uint32_t node, uint16_t port, rte_mbuf *m);
    void observe_pfc(uint32_t node, uint16_t port, const rte_mbuf *m);
    void on_arrive(const Event &e);
    // Schedules an event that can do work (arrivals, wire_free, link and host events): the
    // run lasts while one is pending (live_). Polls and host wake-ups count through set_live:
    // one per node while its switch's egress or its host asks for it.
    void schedule_live(TimePs t, Kind kind, uint32_t node = 0, uint16_t port = 0,
                       uint64_t arg = 0);
    void set_live(bool &flag, bool live);
    void run_switch(uint32_t node);
    void run_host(uint32_t node);
    void schedule_host(uint32_t node);
    void install_routes(uint32_t node);
    void write_samples();
    void write_port_samples(unsigned long t_ns);
    void write_links();
    void on_host_event(const Event &e);
    void send_host_pfc(uint32_t node, uint8_t priority, uint16_t quanta);
    void deliver_to_host(uint32_t node, rte_mbuf *m);
    LinkDirection &dir_of(uint32_t node, uint16_t port) {
        return links_[s_.topo.ports(node)[port].link].from(node);
    }

    Scenario s_;
    std::string out_;
    rte_mempool *pool_ = nullptr;
    EventQueue q_;
    std::vector<Link> links_;
    EcmpRouting routing_;
    std::vector<Node> nodes_;
    std::vector<InFlight> inflight_;
    std::vector<uint32_t> free_slots_;
    UdpRecorder udp_;
    std::unique_ptr<RoceHosts> roce_;
    std::vector<uint32_t> woken_;
    std::vector<rte_mbuf *> host_out_;
    EngineStats st_;
    uint64_t live_ = 0;  // pending events that can do work (schedule_live)
    std::FILE *pfc_f_ = nullptr, *queue_f_ = nullptr, *fct_f_ = nullptr, *port_f_ = nullptr;
    // port_samples.csv: the last values written per (node, port), to write only changes.
    std::vector<std::array<uint64_t, 6>> port_last_;
};

// EAL for a simulation: --no-huge --no-pci, a file prefix of its own ("rocesim<pid>"), one
// lcore, `memory_mb` of (virtual) memory. Returns false (and prints why) on failure.
bool sim_eal_init(const char *argv0, uint64_t memory_mb);
// EAL memory a run needs: the switches' tables (mostly untouched virtual memory, see
// sim_switch.h) and the mbuf pool.
uint64_t sim_eal_memory_mb(const Scenario &s);
void sim_eal_cleanup();

}  // namespace rocesw::sim
