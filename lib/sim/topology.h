// The fabric a simulation runs on: nodes (hosts and switches) and full-duplex links with a
// rate, a propagation delay and an error rate. Built by the HPCC ns-3 parser (parse_topology)
// or by the generators (topo_gen.h); both give the same structure.
//
// Node ids are 0..n-1 as in HPCC's files. Ports: a node's port p is its p-th link in the order
// the links were added (HPCC numbers the same devices from 1, device 0 being loopback).
//
// Errors in input files throw InputError, whose message names the file, the line and the
// field: "topo.txt:4: field 3 (rate): '100Gbs' is not a rate (e.g. 100Gbps, 25Gbps, 1Gbps)".
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/event_queue.h"

namespace rocesw::sim {

struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class NodeKind : uint8_t { host, switch_node };

struct TopoLink {
    uint32_t a = 0, b = 0;
    uint16_t port_a = 0, port_b = 0;  // the link's port index at a and at b
    uint64_t rate_bps = 0;
    TimePs delay_ps = 0;
    double error_rate = 0;
};

struct PortRef {
    uint32_t link = 0;  // index into Topology::links
    uint32_t peer = 0;  // node at the other end
    uint16_t peer_port = 0;
};

class Topology {
  public:
    // Adds a node; returns its id.
    uint32_t add_node(NodeKind k, std::string name = {});
    // Adds a link between two existing, distinct nodes; returns its index.
    uint32_t add_link(uint32_t a, uint32_t b, uint64_t rate_bps, TimePs delay_ps,
                      double error_rate = 0);

    uint32_t node_count() const { return uint32_t(kind_.size()); }
    uint32_t link_count() const { return uint32_t(links_.size()); }
    uint32_t host_count() const { return hosts_; }
    uint32_t switch_count() const { return node_count() - hosts_; }
    NodeKind kind(uint32_t n) const { return kind_[n]; }
    bool is_switch(uint32_t n) const { return kind_[n] == NodeKind::switch_node; }
    bool is_host(uint32_t n) const { return kind_[n] == NodeKind::host; }
    const std::string &name(uint32_t n) const { return names_[n]; }
    const std::vector<TopoLink> &links() const { return links_; }
    const TopoLink &link(uint32_t i) const { return links_[i]; }
    const std::vector<PortRef> &ports(uint32_t n) const { return ports_[n]; }
    // Host node ids, ascending.
    std::vector<uint32_t> hosts() const;
    std::vector<uint32_t> switches() const;
    // The rate of a host's first port (its NIC), 0 for a host without links.
    uint64_t host_rate_bps(uint32_t host) const;

    // Writes the topology in HPCC's topology.txt format (format_rate, format_delay, error rate
    // as %.6f): parse_topology reads it back to the same topology.
    std::string to_hpcc() const;

  private:
    std::vector<NodeKind> kind_;
    std::vector<std::string> names_;
    std::vector<TopoLink> links_;
    std::vector<std::vector<PortRef>> ports_;
    uint32_t hosts_ = 0;
};

// A flow of HPCC's flow.txt: `src dst pg dport size start_seconds`.
struct FlowRecord {
    uint32_t src = 0, dst = 0;
    // Priority group: the TC (queue, PFC priority) of the flow's packets, as HPCC's pg is
    // the switch queue (RoceHosts::flow_class); unset: the hosts' traffic class. flow.txt
    // always sets it (HPCC's traffic_gen writes 3).
    std::optional<uint8_t> pg{};
    uint16_t dport = 100;  // fct_analysis.py selects 100 (normal) or 200 (incast)
    uint64_t size_bytes = 0;
    uint64_t start_ns = 0;  // start_seconds, exact to the nanosecond (rounded half up below)
    uint32_t line = 0;      // source line (0 for generated flows)
};

// ns-3 DataRate strings: a decimal number and a unit: bps, b/s, Kbps/kbps, Mbps, Gbps, Tbps
// (also Kb/s ...), or byte units Bps, KBps, MBps, GBps (x8). Returns bit/s; throws
// std::invalid_argument if malformed or not a whole number of bit/s.
uint64_t parse_rate_bps(std::string_view s);
// ns-3 Time strings: a decimal number and a unit s, ms, us, ns, ps (a bare number is seconds,
// as in ns-3). Returns picoseconds; throws std::invalid_argument if malformed or not a whole
// number of picoseconds.
TimePs parse_delay_ps(std::string_view s);
// "100Gbps", "2500Mbps", "1bps": the shortest exact ns-3 spelling.
std::string format_rate(uint64_t bps);
// "1000ns" when a whole number of ns, else "1500ps".
std::string format_delay(TimePs ps);

// HPCC topology.txt. `source` names the file in errors. Text after the declared links is
// ignored (HPCC stops reading there too).
Topology parse_topology(std::string_view text, const std::string &source);
Topology load_topology(const std::string &path);

// HPCC flow.txt: first the count, then that many flows; text after them is ignored (HPCC's
// own flow.txt carries a trailing explanation). Hosts are checked against `topo`: src and dst
// must be distinct hosts. The order of the file is kept (HPCC requires ascending start times;
// we accept any order, the engine schedules by time).
std::vector<FlowRecord> parse_flows(std::string_view text, const std::string &source,
                                    const Topology &topo);
std::vector<FlowRecord> load_flows(const std::string &path, const Topology &topo);
// Writes flows in flow.txt format (start as %.9f seconds, exact from ns).
std::string format_flows(const std::vector<FlowRecord> &flows);

}  // namespace rocesw::sim
