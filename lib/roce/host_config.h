// The configuration of a set of emulated RoCEv2 hosts (a HostSet, roce/host_set.h): the hosts
// (local ones first, then peers in other processes), the traffic classes, DCQCN parameters, the
// run's limits and the workload. Plain data: rocehost loads it from YAML
// (app/rocehost/host_config.h, doc/rocehost.md lists every field); tests and the simulator may
// fill it in directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pkt/addr.h"
#include "roce/collective.h"
#include "roce/dcqcn.h"
#include "roce/packet.h"
#include "roce/workload.h"

namespace rocesw::roce {

struct HostConfig {
    std::string name;
    std::string device;  // DPDK vdev string; empty for a peer (another process)
    MacAddr mac;
    IfAddr ip;  // address and subnet
    std::optional<IpAddr> gateway;
    std::optional<MacAddr> gateway_mac;  // static; otherwise resolved by ARP
    uint64_t line_rate_bps = 10'000'000'000;
    bool local() const { return !device.empty(); }
};

// The classes of the frames a host sends: a DSCP (on the wire) and a priority (the PFC
// priority that pauses it; frames carry no VLAN tag). Defaults: NVIDIA's RoCE convention (data
// DSCP 26 / priority 3, lossless; CNP DSCP 48 / priority 6, which config/qos/nvidia-roce.yaml
// maps to strict TC 6) and ConnectX's ACKs, which belong to the QP's traffic class: they leave
// and pause with the data. HPCC's ns-3 hosts send ACKs on a class of their own, never paused:
// ack_dscp 48, ack_priority 6 puts them with the CNPs.
struct TrafficConfig {
    uint8_t data_dscp = 26;
    Ecn data_ecn = Ecn::ect0;
    uint8_t data_priority = 3;  // 802.1p priority of the data QPs (PFC pauses it)
    uint8_t cnp_dscp = 48;
    uint8_t cnp_priority = 6;
    uint8_t ack_dscp = 26;                // ACK/NAK, Not-ECT
    std::optional<uint8_t> ack_priority;  // ACK/NAK; unset: data_priority
    uint8_t pfc_mask = 1 << 3;            // priorities honored as lossless
    uint8_t ack_prio() const { return ack_priority.value_or(data_priority); }
};

struct RunConfig {
    std::string name = "rocehost";
    std::string file_prefix;  // EAL --file-prefix; default rocehost-<name>-<pid>
    uint32_t memory_mb = 256;
    uint32_t mbufs = 8191;
    uint32_t mtu = 1024;                    // RoCE path MTU: payload bytes per packet, 256..4096
    uint64_t duration_ns = 10'000'000'000;  // hard stop
    uint64_t start_delay_ns = 200'000'000;  // before the first flow (ARP, peers starting)
    uint64_t linger_ns = 200'000'000;       // after the last local flow completes
    uint32_t ack_every = 16;                // request an ACK every N packets (and on the last)
    uint32_t window = 0;                    // packets in flight per QP before an ACK (0: unlimited)
    uint64_t rto_ns = 20'000'000;  // go back to the first unacknowledged PSN after this (NICs: ms)
    uint64_t base_rtt_ns = 0;      // added to the ideal FCT
    uint64_t pacer_slack_ns = 2'000;
    bool verify_icrc = true;
    bool exit_when_done = true;  // exit once local flows are done (+linger); receivers: run
                                 // until duration or a signal
    std::string out_dir = "rocehost-out";
    uint64_t idle_sleep_us = 20;   // nap when nothing happened for a while (shared cores)
    uint64_t sample_ns = 100'000;  // per-flow byte timeline period (flow_bytes.csv); 0 = off
};

// A local host misbehaving for a while (rocesim's host events, which rocelab's real engine
// hands to rocehost; doc/rocehost.md, "Host faults"). Times are on the workload's clock (0 =
// start_delay after the start):
//   pfc_storm      the host's NIC sends PFC XOFF (quanta 0xFFFF) for `priority` every
//                  `interval` from `at` to `until` (a stuck NIC), then one XON;
//   slow_receiver  the host stops taking frames from its port from `at` to `until`: they wait
//                  in its RX buffer; at `xoff_bytes` held the NIC pauses `priority` (XOFF
//                  refreshed every `interval`), at `until` it takes them and sends XON.
struct HostFault {
    enum Kind : uint8_t { pfc_storm, slow_receiver } kind = pfc_storm;
    uint32_t host = 0;  // index in HostRunConfig::hosts (a local host)
    uint64_t at_ns = 0, until_ns = 0;
    uint8_t priority = 3;
    uint64_t interval_ns = 1'000;
    uint64_t xoff_bytes = 65536;
    // pfc_storm: the most frames one poll sends to catch up with the schedule after the loop
    // came back late; the older frames the schedule owes beyond it are skipped (counted).
    uint32_t max_catch_up = 256;
};

// A constant-rate UDP flow from a local host (rocesim's udp_flows, which rocelab's real engine
// hands to rocehost; roce/udp_flow.h: frames, schedule, counts). Times are on the workload's
// clock (0 = start_delay after the start); IPv4 only.
struct UdpFlowConfig {
    uint32_t src = 0, dst = 0;  // indexes in HostRunConfig::hosts (src a local host)
    uint64_t rate_bps = 0;      // wire bit rate (frame + FCS + preamble/IFG)
    uint32_t frame_bytes = 1000;  // Ethernet header to payload end, FCS excluded
    uint64_t start_ns = 0, stop_ns = UINT64_MAX;
    uint8_t dscp = 0;
    bool ecn = false;      // ECT(0)
    uint8_t priority = 0;  // the PFC priority that pauses it (rocesim: its DSCP's TC)
    uint16_t sport = 10000, dport = 100;
};

// A collective job among local hosts (roce/collective.h; rocelab's real engine passes the
// scenario's jobs): spec.hosts are indexes into HostRunConfig::hosts, start_ns is on the
// workload's clock.
struct JobConfig {
    CollectiveSpec spec;
    uint64_t start_ns = 0;
    // Each rank's own class (in spec.hosts order; rocelab: the job's pg as rocesim resolves it
    // at the rank's switch port), unset: the run's TrafficConfig. Empty: every rank unset.
    std::vector<std::optional<FlowClass>> rank_class;

    // The class of the job's flows sent by host index `src` (a rank).
    std::optional<FlowClass> class_of(uint32_t src) const {
        for (size_t r = 0; r < spec.hosts.size() && r < rank_class.size(); r++)
            if (spec.hosts[r] == src) return rank_class[r];
        return std::nullopt;
    }
};

struct WorkloadConfig {
    WorkloadSpec spec;
    std::string cdf_file;
};

struct HostRunConfig {
    std::string source;
    RunConfig run;
    TrafficConfig traffic;
    DcqcnParams dcqcn;
    bool dcqcn_enabled = true;
    std::vector<HostConfig> hosts;  // local hosts first (in file order), then peers
    WorkloadConfig workload;
    std::vector<HostFault> faults;
    std::vector<UdpFlowConfig> udp_flows;
    std::vector<JobConfig> jobs;
    int host_index(const std::string &name) const {
        for (size_t i = 0; i < hosts.size(); i++)
            if (hosts[i].name == name) return int(i);
        return -1;
    }
};

}  // namespace rocesw::roce
