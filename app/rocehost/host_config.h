// rocehost configuration: the emulated hosts (one DPDK port each), the remote peers, the
// traffic classes, DCQCN parameters and the workload. Loaded from YAML and validated in full;
// errors read "<file>: <field>: <problem>". See doc/rocehost.md for every field.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "roce/dcqcn.h"
#include "roce/packet.h"
#include "roce/workload.h"

namespace rocesw::rocehost {

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

struct TrafficConfig {
    uint8_t data_dscp = 26;
    roce::Ecn data_ecn = roce::Ecn::ect0;
    uint8_t data_priority = 3;  // 802.1p priority of the data QPs (PFC pauses it)
    uint8_t cnp_dscp = 48;
    uint8_t cnp_priority = 6;
    uint8_t ack_dscp = 26;
    uint8_t pfc_mask = 1 << 3;  // priorities honored as lossless
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

struct WorkloadConfig {
    roce::WorkloadSpec spec;
    std::string cdf_file;
};

struct HostRunConfig {
    std::string source;
    RunConfig run;
    TrafficConfig traffic;
    roce::DcqcnParams dcqcn;
    bool dcqcn_enabled = true;
    std::vector<HostConfig> hosts;  // local hosts first (in file order), then peers
    WorkloadConfig workload;
    int host_index(const std::string &name) const;
};

HostRunConfig load_host_config_file(const std::string &path);
HostRunConfig load_host_config_string(const std::string &yaml, const std::string &source,
                                      const std::string &base_dir = ".");

}  // namespace rocesw::rocehost
