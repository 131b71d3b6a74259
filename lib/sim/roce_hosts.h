// The real lib/roce hosts in the simulator: one roce::HostSet holds every host of the topology
// (host index i is the i-th host node, port i of its PortIo), and each host node's SimHost
// (RoceSimHost) runs its own host only (HostSet::poll_host), so an event costs one host's work.
//
//   frames from the link    -> HostSet::on_rx(i, ...) at floor(t / 1000) ns
//   when does it run        -> HostSet::next_event_ns(i), never before its wire is free when
//                              it has frames ready (a refused frame, a queued ACK/CNP)
//   what it sends           -> HostPorts::tx_burst takes one frame, and only while the host's
//                              wire is idle: the host's own pacers (line rate, the QP's DCQCN
//                              rate) decide when a packet is due, the link serialises it, and
//                              PFC pauses act on frames still in the host.
//
// Flows (RoCE WRITE messages, one QP each) come from flow.txt, roce_flows and the cdf/incast
// workloads (added at set-up with their start times) and from collective jobs (a roce::JobRunner,
// rocehost's too: a rank's next step's flows are added once its sends completed and its
// receives arrived). Each completion writes an
// HPCC fct.txt line (sport from SourcePorts in the order flows are added, standalone FCT from
// the path at the time the flow was added).
#pragma once

#include <cstdint>
#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "port/port_io.h"
#include "qos/plan.h"
#include "roce/collective.h"
#include "roce/host_config.h"
#include "roce/host_set.h"
#include "sim/fct.h"
#include "sim/routing.h"
#include "sim/scenario.h"
#include "sim/sim_host.h"
#include "sim/workload.h"

struct rte_mempool;

namespace rocesw::sim {

// The hosts' side of the links: tx takes one frame while the wire is idle (the caller arms
// it before each poll); frames arrive through HostSet::on_rx, so rx_burst has nothing.
class HostPorts final : public PortIo {
  public:
    uint16_t rx_burst(uint16_t, uint16_t, rte_mbuf **, uint16_t) override { return 0; }
    uint16_t tx_burst(uint16_t, uint16_t, rte_mbuf **pkts, uint16_t n) override {
        if (!n || !idle_) return 0;
        out_->push_back(pkts[0]);
        idle_ = false;
        return 1;
    }
    void arm(std::vector<rte_mbuf *> *out, bool idle) {
        out_ = out;
        idle_ = idle;
    }

  private:
    std::vector<rte_mbuf *> *out_ = nullptr;
    bool idle_ = false;
};

// Per flow, what fct.txt and the jobs need beyond the HostSet's Flow.
struct SimFlowInfo {
    uint32_t src = 0, dst = 0;  // node ids
    uint16_t sport = 0, dport = 0;
    uint64_t standalone_ns = 0;
};

// The class of a flow with priority group `pg` from a host whose switch port classifies as
// `access` (HPCC: pg is the switch queue and the PFC priority; here TC pg, priority pg): unset
// when `t` already is TC pg (data DSCP maps to TC pg at the access port, data priority pg);
// else data DSCP = t's if it maps to TC pg, or the lowest DSCP that does, priority pg;
// ACK/NAKs follow (as HPCC's take the data's pg) when t gives them the data's class, else keep
// theirs. Throws std::runtime_error "pg N: no DSCP maps to TC N at <where>" when none does.
// The one resolution of a pg: rocesim's hosts and the lab description (rocelab's real
// engine) both call it.
std::optional<roce::FlowClass> resolve_flow_class(const PortQos &access,
                                                  const roce::TrafficConfig &t, uint8_t pg,
                                                  const std::string &where);
// The priorities the hosts honour PFC for: t's, plus every pg that a flow or a collective job
// of its own class uses and that its sender's switch port treats as lossless. `access[node]`:
// the classification of the switch port host `node` is cabled to. Throws as resolve_flow_class.
uint8_t hosts_pfc_mask(const Scenario &s, const roce::TrafficConfig &t,
                       const std::vector<PortQos> &access);
// The PFC priority of a UDP flow: the TC its DSCP maps to at its sender's switch port.
inline uint8_t udp_flow_priority(const PortQos &access, uint8_t dscp) {
    return access.dscp_to_tc[dscp & 63];
}
// Where a flow from host `node` resolves its class, for messages.
std::string flow_class_where(const Scenario &s, uint32_t node);

class RoceHosts {
  public:
    // `hosts[i]` is host node `nodes[i]`, cabled to a switch port classifying as `access[i]`;
    // `routing` must outlive this (standalone FCTs). `fct` (may be null) receives fct.txt
    // lines. Throws std::runtime_error when a flow's pg has no class (flow_class).
    RoceHosts(const Scenario &s, std::vector<roce::HostConfig> hosts, std::vector<uint32_t> nodes,
              std::vector<PortQos> access, const EcmpRouting &routing, rte_mempool *pool,
              std::FILE *fct);

    // The class of a flow from host node `src` with priority group `pg`: resolve_flow_class
    // at its switch port with hosts.traffic.
    std::optional<roce::FlowClass> flow_class(uint32_t src, uint8_t pg) const;
    ~RoceHosts();

    int index(uint32_t node) const { return node < index_.size() ? index_[node] : -1; }
    void on_rx(uint32_t node, rte_mbuf **frames, uint16_t n, TimePs now);
    TimePs next_event(uint32_t node, TimePs wire_free) const;
    void run(uint32_t node, TimePs now, TimePs wire_free, std::vector<rte_mbuf *> &out);
    // Handles the completions since the last call (fct.txt, jobs) and appends the nodes that
    // got new flows (their wake-up must be recomputed).
    void on_completions(TimePs now, std::vector<uint32_t> &woken);

    // flows.csv, qp_rates.csv, ... and rocehost's summary (roce/host_results.h) into `dir`
    // (created), jobs.csv into `jobs_dir`. Returns false when a file cannot be written.
    bool write_results(const std::string &dir, const std::string &jobs_dir, TimePs now) const;

    const roce::HostSet &host_set() const { return *hs_; }
    const std::vector<SimFlowInfo> &flow_info() const { return info_; }
    const roce::JobRunner &jobs() const { return jobs_; }
    uint64_t fct_lines() const { return fct_ ? fct_->lines() : 0; }

  private:
    uint32_t add(const FlowRecord &f, uint64_t start_ns);
    void add_job_flows(const std::vector<roce::JobRunner::Start> &starts, uint64_t now_ns,
                       std::vector<uint32_t> *woken);

    const Scenario &s_;
    const EcmpRouting &routing_;
    roce::HostRunConfig cfg_;
    std::vector<uint32_t> nodes_;
    std::vector<int> index_;  // node -> host index (-1: not a host)
    std::vector<PortQos> access_;  // host index -> its switch port's classification
    HostPorts io_;
    std::unique_ptr<roce::HostSet> hs_;
    std::unique_ptr<FctWriter> fct_;
    SourcePorts sports_;
    std::vector<SimFlowInfo> info_;
    roce::JobRunner jobs_;
    std::vector<uint32_t> done_;
    std::vector<roce::HostSet::Received> received_;
};

class RoceSimHost final : public SimHost {
  public:
    RoceSimHost(RoceHosts &h, uint32_t node) : h_(h), node_(node) {}
    void on_rx(rte_mbuf **frames, uint16_t n, TimePs now) override { h_.on_rx(node_, frames, n, now); }
    TimePs next_event(TimePs wire_free) const override { return h_.next_event(node_, wire_free); }
    void run(TimePs now, TimePs wire_free, std::vector<rte_mbuf *> &out) override {
        h_.run(node_, now, wire_free, out);
    }

  private:
    RoceHosts &h_;
    uint32_t node_;
};

// A host with UDP flows in a run that also has RoCE traffic: one NIC, two senders. Frames in:
// the UDP flows' ('RSIM' payload) to the UdpHost, PFC/PAUSE frames to both (each honours
// them for its own priorities), everything else to the RoCE host. Frames out: one per run
// (the wire is idle only for one), from the sender whose next frame is due first (ties: UDP);
// the other still runs its timers, seeing a busy wire.
class MixedSimHost final : public SimHost {
  public:
    MixedSimHost(std::unique_ptr<UdpHost> udp, std::unique_ptr<RoceSimHost> roce,
                 rte_mempool *pool)
        : udp_(std::move(udp)), roce_(std::move(roce)), pool_(pool) {}
    void on_rx(rte_mbuf **frames, uint16_t n, TimePs now) override;
    TimePs next_event(TimePs wire_free) const override {
        return std::min(udp_->next_event(wire_free), roce_->next_event(wire_free));
    }
    void run(TimePs now, TimePs wire_free, std::vector<rte_mbuf *> &out) override;
    uint64_t pfc_clone_failures() const { return clone_failed_; }

  private:
    std::unique_ptr<UdpHost> udp_;
    std::unique_ptr<RoceSimHost> roce_;
    rte_mempool *pool_;
    uint64_t clone_failed_ = 0;
};

}  // namespace rocesw::sim
