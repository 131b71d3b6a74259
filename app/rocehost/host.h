// The rocehost emulator: every local host on its own DPDK port, one polling loop.
//
// Per loop iteration and host: receive a burst (ARP answered and learned; PFC/PAUSE frames
// set the pause timers; RoCEv2 data -> receiver QP, which answers ACK/NAK and, on CE, a CNP
// limited per QP; ACK/NAK -> sender QP; CNP -> the QP's DCQCN reaction point), then send
// control frames (ACK, NAK, CNP, ARP) unless their priority is paused, then data: round robin
// over the started flows whose next hop is resolved, whose priority is not paused and whose
// QP pacer (DCQCN rate) and host pacer (line rate) allow it.
#pragma once

#include <rte_mbuf.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "host_config.h"
#include "roce/dcqcn.h"
#include "roce/pacer.h"
#include "roce/pause.h"
#include "roce/qp.h"
#include "roce/results.h"

namespace rocesw::rocehost {

inline constexpr uint32_t kQpnBase = 0x100;  // flow i uses QP number kQpnBase + i at both ends

struct Flow {
    roce::FlowSpec spec;
    uint32_t qpn = 0;
    int host = -1;  // local host index, -1 when the source is another process
    roce::SendQp qp;
    roce::DcqcnRp rp;
    roce::Pacer pacer;
    std::vector<roce::RateChange> trace;
    std::vector<roce::ByteSample> bytes;  // sent/acknowledged timeline (flow_bytes.csv)
    bool started = false, done = false;
    uint64_t start_ns = 0, finish_ns = 0;
    uint64_t cnps_rx = 0, packets_tx = 0;
    uint16_t udp_src = 0;
};

struct RecvEntry {
    roce::RecvQp qp;
    roce::CnpLimiter np;
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
};

struct Host {
    HostConfig cfg;
    uint16_t port_id = 0;
    std::map<NeighKey, MacAddr> neigh;  // ARP (IPv4) and ND (IPv6) results, static gateway
    uint64_t next_arp_ns = 0;
    roce::PauseState pause;
    std::vector<roce::PauseEvent> pause_trace;
    roce::Pacer line;
    std::vector<uint32_t> pending;  // local flows not yet started, by start time
    size_t next_pending = 0;
    std::vector<uint32_t> active;  // started, not done
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
};

class Emulator {
  public:
    // `hosts[i]` for i < n_local are on ports `port_ids[i]`.
    Emulator(const HostRunConfig &cfg, const std::vector<uint16_t> &port_ids, rte_mempool *pool,
             uint64_t tsc_hz);
    // Runs until done (see RunConfig) or *stop. Returns the run's duration in ns.
    uint64_t run(const std::atomic<bool> &stop);
    // Writes flows.csv, qp_rates.csv, flow_bytes.csv, receivers.csv, hosts.csv, pauses.csv and
    // summary.json to `dir`, prints the summary to stdout. Returns false when a file cannot be
    // written.
    bool write_results(const std::string &dir, uint64_t run_ns) const;

  private:
    uint64_t now_ns() const;
    void poll_rx(Host &h, uint64_t now);
    void handle_arp(Host &h, const uint8_t *f, uint32_t len);
    void handle_roce(Host &h, const uint8_t *f, uint32_t len, uint64_t now);
    void send_ctl(Host &h, const roce::PacketSpec &s, uint8_t prio);
    void send_arp(Host &h, uint16_t op, const MacAddr &dst_mac, uint32_t dst_ip,
                  const MacAddr &target_mac);
    // ICMPv6 neighbour solicitation (type 135) or advertisement (136) for `target`.
    void send_nd(Host &h, uint8_t type, const MacAddr &dst_mac, const IpAddr &dst_ip,
                 const IpAddr &target);
    void handle_nd(Host &h, const uint8_t *f, uint32_t len);
    void solicit(Host &h, const IpAddr &nh);
    void flush_ctl(Host &h, uint64_t now);
    void start_flows(Host &h, uint64_t now);
    void send_data(Host &h, uint64_t now);
    void sample_bytes(uint64_t now);
    bool next_hop_mac(Host &h, const IpAddr &dst, MacAddr *mac, IpAddr *nh);
    roce::L2L3 base_l2l3(Host &h, const MacAddr &dst_mac, const IpAddr &dst) const;
    rte_mbuf *alloc(Host &h, uint32_t len);

    const HostRunConfig &cfg_;
    rte_mempool *pool_;
    uint64_t tsc0_ = 0;
    double ns_per_tsc_ = 1;
    std::vector<Host> hosts_;  // local hosts only
    std::vector<Flow> flows_;  // every flow of the workload (remote ones are never started)
    uint32_t local_flows_ = 0, done_flows_ = 0;
    uint64_t last_done_ns_ = 0;
    uint64_t next_sample_ns_ = 0;
    // Scheduling jitter seen by the polling loop while local flows are active: the longest gap
    // between two iterations and how many gaps exceeded 100 us and 1 ms.
    uint64_t gap_max_ns_ = 0, gaps_100us_ = 0, gaps_1ms_ = 0;
};

}  // namespace rocesw::rocehost
