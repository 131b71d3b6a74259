// Emulated RoCEv2 hosts (rocehost's engine, and the simulator's hosts): each local host owns one
// port of a PortIo (port i = cfg.hosts[i], queue 0) and runs, on every poll:
//
//   receive: ARP and ND answered and learned; PFC/PAUSE frames set the pause timers; RoCEv2 data
//     -> receiver QP, which answers ACK/NAK and, on CE, a CNP limited per QP (DCQCN NP);
//     ACK/NAK -> sender QP; CNP -> the QP's DCQCN reaction point (RP);
//   then: flows whose start time has come are posted; unresolved next hops are solicited (every
//     50 ms until answered); control frames (ACK, NAK, CNP, ARP, ND) leave unless their priority
//     is paused; then data, round robin over the started flows whose next hop is resolved,
//     whose priority is not paused and whose QP pacer (DCQCN rate) and host pacer (line rate)
//     allow it; UDP flows (HostRunConfig::udp_flows, roce/udp_flow.h) go ahead of the data,
//     each packet once its schedule says and its priority is not paused.
//
// Time is an argument, as in the switch's Worker: nothing here reads a clock or calls ethdev.
//
// Driving it
//  - Wall clock (app/rocehost): call poll(now) in a loop; stop at finished(now).
//  - Virtual time (tests, the simulator): no tick is needed. After anything happened at time t
//    (a frame delivered to a host, or poll(t) itself), call poll(t) again until it returns 0
//    (nothing received or sent), then advance to next_event_ns(): the earliest time at which
//    a host has work that no arriving frame causes (a flow starting, a pacer allowing the next
//    data packet, a pause ending, a DCQCN timer or deferred rate decrease, a QP retransmission
//    timeout, an ARP/ND retry, a byte-timeline sample). Frames reach a host either through the
//    PortIo's rx_burst during poll, or pushed with on_rx(host, pkts, n, t) followed by poll(t).
//  - Results: flows(), hosts(), receivers; roce/host_results.h writes them.
//
// Frames are rte_mbufs from `pool`. When the same mbufs go straight into a switch Worker (the
// simulator, the pipeline tests), the pool must carry the PacketMeta private area
// (pkt/mbuf_meta.h: kMbufPrivSize), as the switch's pools do.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <unordered_map>
#include <vector>

#include "port/port_io.h"
#include "roce/dcqcn.h"
#include "roce/host_config.h"
#include "roce/pacer.h"
#include "roce/pause.h"
#include "roce/qp.h"
#include "roce/results.h"
#include "roce/udp_flow.h"

struct rte_mbuf;
struct rte_mempool;

namespace rocesw::roce {

inline constexpr uint32_t kQpnBase = 0x100;  // flow i uses QP number kQpnBase + i at both ends
inline constexpr uint64_t kNeverNs = std::numeric_limits<uint64_t>::max();

// One flow of the workload (one RDMA WRITE message on its own QP).
struct Flow {
    FlowSpec spec;
    uint32_t qpn = 0;
    int host = -1;  // local host index, -1 when the source is another process
    SendQp qp;
    DcqcnRp rp;
    Pacer pacer;
    std::vector<RateChange> trace;
    std::vector<ByteSample> bytes;  // sent/acknowledged timeline (flow_bytes.csv)
    bool started = false, done = false;
    uint64_t start_ns = 0, finish_ns = 0;
    uint64_t cnps_rx = 0, packets_tx = 0;
    uint16_t udp_src = 0;
};

// The receiving half of a QP at a host, created by the first packet from (source, QPN).
struct RecvEntry {
    RecvQp qp;
    CnpLimiter np;
    IpAddr src_ip;
    uint32_t qpn = 0;
};

// Neighbour-table key: IPv6 as is, IPv4 as ::ffff:a.b.c.d.
using NeighKey = std::array<uint8_t, 16>;
NeighKey neigh_key(const IpAddr &a);

struct HostCounters {
    uint64_t rx_frames = 0, tx_frames = 0, tx_data = 0, tx_bytes = 0;
    uint64_t rx_roce = 0, rx_not_roce = 0, rx_bad_icrc = 0, rx_truncated = 0, rx_not_for_us = 0;
    uint64_t rx_unknown_qp = 0;
    uint64_t arp_requests_rx = 0, arp_replies_tx = 0, arp_requests_tx = 0;
    uint64_t mac_control_rx = 0, mac_control_bad = 0;
    uint64_t cnps_tx = 0, cnps_rx = 0, acks_rx = 0, naks_rx = 0;
    uint64_t alloc_failures = 0, tx_retries = 0;
    // Host faults (HostRunConfig::faults): PFC frames the NIC sent, frames a slow receiver held.
    uint64_t pfc_xoff_tx = 0, pfc_xon_tx = 0, held_frames = 0, held_max_bytes = 0;
    // PFC storms: frames sent (XOFF on the storm's schedule, the closing XON) and frames the
    // schedule owed after a late poll beyond HostFault::max_catch_up, skipped. Their sum is the
    // storm's schedule: what a NIC at line rate sends, and rocesim's storm_frames.
    uint64_t storm_frames = 0, storm_frames_skipped = 0;
    uint64_t udp_tx = 0, udp_rx = 0;  // UDP flows' frames (roce/udp_flow.h)
};

// A fault of one host while it runs (HostRunConfig::faults[index]).
struct FaultState {
    uint32_t index = 0;
    uint64_t next_ns = 0;  // the next storm frame (on the storm's schedule) or XOFF refresh
    bool on = false, done = false;
};

// One emulated host: its neighbours, PFC pause state, line-rate pacer, flows and receivers.
struct Host {
    HostConfig cfg;
    uint16_t port = 0;                  // PortIo port index
    std::map<NeighKey, MacAddr> neigh;  // ARP (IPv4) and ND (IPv6) results, static gateway
    uint64_t next_arp_ns = 0;
    PauseState pause;
    std::vector<PauseEvent> pause_trace;
    Pacer line;
    std::vector<uint32_t> pending;  // local flows not yet started, by start time
    size_t next_pending = 0;
    std::vector<uint32_t> active;  // started, not retired
    size_t rr = 0;
    std::unordered_map<uint64_t, RecvEntry> recv;
    struct Ctl {
        rte_mbuf *m;
        uint8_t prio;
    };
    std::vector<Ctl> ctl;             // control frames waiting
    std::vector<rte_mbuf *> backlog;  // data frames the device did not take yet
    uint16_t ip_id = 0;
    HostCounters c;
    std::vector<FaultState> faults;
    const HostFault *slow = nullptr;  // a slow_receiver fault holding the RX side
    std::vector<rte_mbuf *> held;     // frames a slow receiver has not taken yet
    uint64_t held_bytes = 0;
    bool rx_xoff = false;               // the slow receiver paused its peer
    std::vector<PauseEvent> pfc_sent;  // PFC frames this host's NIC sent (faults)
    // UDP flows this host sends (HostRunConfig::udp_flows[flow]); they honour PFC for every
    // priority, as rocesim's UdpHost does (the switch pauses only lossless ones anyway).
    struct Udp {
        uint32_t flow;
        UdpSchedule sched;
    };
    std::vector<Udp> udp;
    PauseState udp_pause;
};

class HostSet {
  public:
    // The first `n_local` of cfg.hosts are emulated here, host i on port i (queue 0) of `io`;
    // the others are peers (another process, or hosts of another HostSet). `cfg`, `io` and
    // `pool` must outlive the HostSet.
    HostSet(const HostRunConfig &cfg, size_t n_local, PortIo &io, rte_mempool *pool);
    ~HostSet();  // frees the frames still queued
    HostSet(const HostSet &) = delete;
    HostSet &operator=(const HostSet &) = delete;

    // Every local host once at now_ns: a burst from its port (on_rx), flow starts, next-hop
    // solicitation, control frames, data; then the byte-timeline sample. Returns the frames
    // received plus the frames handed to the PortIo (0: nothing moved).
    uint32_t poll(uint64_t now_ns);
    // Frames received by local host `host` at now_ns (pushed by a simulator): handled and freed.
    // Replies are queued and leave at the next poll.
    void on_rx(size_t host, rte_mbuf **pkts, uint16_t n, uint64_t now_ns);
    // The earliest time a poll has work that no frame arrival causes; a time at or before the
    // last poll means "poll again now" (frames waiting for a device that refused them);
    // kNeverNs when only a frame can wake a host.
    uint64_t next_event_ns() const;

    // Virtual time, one host at a time (the simulator runs each host on its own events, so one
    // host's work does not cost a pass over all of them): the same as poll() for local host
    // `host` only (its burst from the PortIo, flow starts, next hops, control frames, data;
    // then the byte-timeline sample), and that host's next_event_ns().
    uint32_t poll_host(size_t host, uint64_t now_ns);
    uint64_t next_event_ns(size_t host) const;
    // Adds a flow to the workload while running (the simulator's flow.txt, CDF workloads and
    // collectives whose steps start on completions). Its id is its index; spec.src must be a
    // local host, spec.start_ns is on the same clock as the workload's (after start_delay_ns).
    // References to earlier flows stay valid (flows_ is a deque). Returns the index.
    uint32_t add_flow(const FlowSpec &spec);
    // Appends the indexes of the flows completed since the previous call, in completion order.
    void take_completed(std::vector<uint32_t> &out);
    // A message a local host received whole (its last packet accepted in order): the flow
    // (its QPN's index in the workload) and when. take_received appends those since the
    // previous call, in arrival order (collective jobs: a rank's step waits for its receive).
    struct Received {
        uint32_t flow = 0;
        uint64_t t_ns = 0;
    };
    void take_received(std::vector<Received> &out);

    // A started local flow is not done yet.
    bool active() const;
    // run.exit_when_done: there are local flows, all are done, and run.linger_ns has passed
    // since the last completed.
    bool finished(uint64_t now_ns) const;
    // Frees every queued frame (the end of a run). poll() may not be called afterwards.
    void release();

    const HostRunConfig &config() const { return cfg_; }
    const std::vector<Host> &hosts() const { return hosts_; }
    const std::deque<Flow> &flows() const { return flows_; }  // the whole workload
    uint32_t local_flows() const { return local_flows_; }
    // The UDP flows' counts (HostRunConfig::udp_flows order; sent by local senders, received
    // by local receivers), delays in ps.
    const UdpRecorder &udp() const { return udp_rec_; }
    uint32_t done_flows() const { return done_flows_; }

  private:
    uint32_t poll_one(Host &h, uint64_t now);
    void run_faults(Host &h, uint64_t now);
    void run_storm(Host &h, FaultState &fs, const HostFault &f, uint64_t now);
    void hold(Host &h, rte_mbuf **pkts, uint16_t n, uint64_t now);
    bool send_pfc(Host &h, uint8_t priority, uint16_t quanta, uint64_t now);
    void init_flow(Flow &f, const FlowSpec &spec);
    void handle_arp(Host &h, const uint8_t *f, uint32_t len);
    void handle_roce(Host &h, const uint8_t *f, uint32_t len, uint64_t now);
    void send_ctl(Host &h, const PacketSpec &s, uint8_t prio);
    // The 802.1p priority of a flow's data (its own class, or the run's).
    uint8_t data_priority(const Flow &f) const {
        return f.spec.cls ? f.spec.cls->data_priority : cfg_.traffic.data_priority;
    }
    void send_arp(Host &h, uint16_t op, const MacAddr &dst_mac, uint32_t dst_ip,
                  const MacAddr &target_mac);
    // ICMPv6 neighbour solicitation (type 135) or advertisement (136) for `target`.
    void send_nd(Host &h, uint8_t type, const MacAddr &dst_mac, const IpAddr &dst_ip,
                 const IpAddr &target);
    void handle_nd(Host &h, const uint8_t *f, uint32_t len);
    void solicit(Host &h, const IpAddr &nh);
    void resolve_next_hops(Host &h, uint64_t now);
    uint32_t flush_ctl(Host &h, uint64_t now);
    void start_flows(Host &h, uint64_t now);
    uint32_t send_data(Host &h, uint64_t now);
    uint32_t send_udp(Host &h, uint64_t now);
    bool udp_pending() const;
    rte_mbuf *build_data(Host &h, Flow &f, const MacAddr &mac, uint64_t now);
    void sample_bytes(uint64_t now);
    bool next_hop_mac(const Host &h, const IpAddr &dst, MacAddr *mac, IpAddr *nh) const;
    L2L3 base_l2l3(Host &h, const MacAddr &dst_mac, const IpAddr &dst) const;
    rte_mbuf *alloc(Host &h, uint32_t len);
    uint64_t host_next_event(const Host &h) const;

    const HostRunConfig &cfg_;
    PortIo &io_;
    rte_mempool *pool_;
    std::vector<Host> hosts_;  // local hosts only
    std::deque<Flow> flows_;  // every flow of the workload (remote ones are never started)
    std::vector<uint32_t> completed_;
    std::vector<Received> received_;
    uint32_t local_flows_ = 0, done_flows_ = 0;
    uint64_t last_done_ns_ = 0;
    uint64_t next_sample_ns_ = 0;
    uint64_t last_poll_ns_ = 0;
    UdpRecorder udp_rec_;
    uint64_t last_udp_ns_ = 0;  // the last UDP flow's schedule ended
};

}  // namespace rocesw::roce
