// What one simulation run is: the fabric, the switch profile, the traffic, the timed events.
// Built from the command line (HPCC files) and/or the native YAML scenario (load_scenario;
// the YAML reading is all in scenario.cc, on config/yaml_doc.h's YamlReader). Errors throw
// InputError "<file>:<line>: <field>: <problem>".
//
// YAML scenario (every key optional except a topology, given here or by --topology):
//   topology: {type: star|leaf_spine|fat_tree|three_tier|file, hosts: 2, leaves: 2,
//              spines: 2, hosts_per_leaf: 2, oversubscription: "3:1", k: 4, file: topo.txt,
//              pods: 5, tors_per_pod: 4, aggs_per_pod: 4, hosts_per_tor: 16,
//              cores_per_agg: 4, link_rate: 100Gbps, fabric_rate: 100Gbps, link_delay: 1us}
//   qos_profile: config/qos/nvidia-roce.yaml   (relative to the scenario file; default:
//                                               the SONiC default profile)
//   mtu: 9000                                  (L3 MTU of every switch port)
//   lb: {policy: hash, seed: 24301, flowlet_gap_us: 50, switches: {20: spray},
//        plugins: [two_choices.so]}           (policy plugins, relative to the scenario file)
//   sample_interval: 10us                      (queue-depth samples; 0/absent: none)
//   delays: true                               (udp_delays.csv: one line per delivery)
//   mbufs: 32767                               (frames that can exist at once)
//   until: 10ms
//   seed: 1
//   udp_flows:                                 (may be mixed with RoCE traffic)
//     - {src: 0, dst: 2, rate: 50Gbps, size: 1000, start: 0us, stop: 100us, dscp: 26,
//        ecn: false, sport: 10000, dport: 100}
//   hosts:                                     (the lib/roce hosts: RoCE flows, workloads)
//     dcqcn: {profile: nvidia, ...}             (rocehost's dcqcn fields and profiles)
//     traffic: {data_dscp: 26, data_priority: 3, cnp_dscp: 48, cnp_priority: 6, ack_dscp: 26,
//               data_ecn: ect0, pfc_priorities: [3]}
//     mtu: 1000, ack_every: 16, window: 0, rto: 1ms, byte_samples: 10us,
//     standalone_header: 48
//   roce_flows:
//     - {src: 0, dst: 2, size: 1000000, start: 10us, dport: 100, pg: 3}   (pg: the flow's TC;
//       also on workloads; flow.txt's pg column)
//   workloads:
//     - {type: cdf, cdf: websearch.txt, load: 0.3, duration: 10ms, start: 0us, hosts: [..]}
//     - {type: incast, senders: [0, 1], receiver: 2, size: 1000000, start: 0us}
//     - {type: ring_allreduce|all_to_all, hosts: [0, 1, 2, 3], bytes: 1000000,
//        iterations: 2, compute_gap: 10us, step_gap: 0us, schedule: pairwise, start: 0us}
//   events:
//     - {at: 50us, link_down: [4, 6], convergence: 10us}   (the link between nodes 4 and 6;
//     - {at: 90us, link_up: 3, convergence: 10us}           or a link index)
//     - {at: 1ms, pfc_storm: 2, until: 2ms, priority: 3, interval: 1us}
//     - {at: 1ms, slow_receiver: 2, until: 2ms, xoff: 65536, priority: 3}
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "qos/qos_config.h"
#include "roce/dcqcn.h"
#include "roce/host_config.h"
#include "sim/fct.h"
#include "sim/sim_host.h"
#include "sim/topology.h"
#include "sim/workload.h"

namespace rocesw::sim {

struct LinkEvent {
    TimePs at = 0;
    uint32_t link = 0;
    bool up = false;
    TimePs convergence = 0;  // routes recomputed and installed this long after the change
};

// A host misbehaving for a while (the engine, not the host model, does it):
//   pfc_storm      the host's NIC sends PFC XOFF (quanta 0xFFFF) for `priority` every
//                  `interval` from `at` to `until` (a stuck NIC or driver), then one XON;
//   slow_receiver  the host stops taking frames from its port from `at` to `until`: they
//                  wait in its RX buffer; above `xoff` bytes the NIC pauses `priority` (XOFF
//                  refreshed every `interval`, XON when the buffer drains at `until`).
struct HostEvent {
    enum Kind : uint8_t { pfc_storm, slow_receiver } kind = pfc_storm;
    TimePs at = 0, until = 0;
    uint32_t node = 0;
    uint8_t priority = 3;
    TimePs interval = 1 * kPsPerUs;
    uint64_t xoff_bytes = 65536;
};

// The lib/roce hosts (RoceHosts): used as soon as a scenario has RoCE traffic.
struct RoceHostSpec {
    roce::DcqcnParams dcqcn;  // the paper's values unless a profile is given
    std::string dcqcn_profile = "paper";
    bool dcqcn_enabled = true;
    roce::TrafficConfig traffic;
    uint32_t mtu = 1000;  // RoCE payload per packet: HPCC's PACKET_PAYLOAD_SIZE
    uint32_t ack_every = 16, window = 0;
    uint64_t rto_ns = 1'000'000;
    uint64_t byte_samples_ns = 0;  // flow_bytes.csv period (0: none)
    StandaloneModel standalone;
    // flows.csv's ideal FCT: unset, each flow's from its path (roce::path_ideal_fct_ns); set,
    // its bytes at the sender's line rate + this, as rocehost's base_rtt_us.
    std::optional<uint64_t> base_rtt_ns;
    // The `hosts.dcqcn` and `hosts.traffic` sections as written (JSON, every scalar a string;
    // "" when absent), for the lab description: rocehost reads them with the same reader
    // (roce/host_config_yaml.h), so the real engine's hosts get exactly these settings.
    std::string dcqcn_text, traffic_text;
};

struct CollectiveWorkload {
    CollectiveSpec spec;
    uint64_t start_ns = 0;
};

struct Scenario {
    std::string source;  // the scenario file, for messages ("" when none)
    Topology topo;
    bool has_topology = false;
    QosConfig qos = default_qos_config();
    std::string qos_source = "built-in SONiC default";
    uint32_t mtu = 9000;
    std::string lb_policy = "hash";
    uint64_t lb_seed = 0x5eed;
    uint32_t flowlet_gap_us = 50;
    std::map<uint32_t, std::string> lb_per_switch;  // node -> policy
    std::vector<std::string> lb_plugins;  // loaded policy plugins (lb/plugin.h), absolute paths
    std::vector<UdpFlowSpec> udp;
    std::vector<FlowRecord> flows;  // RoCE flows: HPCC flow.txt, roce_flows, cdf/incast workloads
    std::vector<CollectiveWorkload> jobs;
    RoceHostSpec roce;
    bool roce_hosts = false;  // a `hosts` section (RoCE hosts even without flows)
    std::vector<LinkEvent> events;
    std::vector<HostEvent> host_events;
    TimePs until = 0;            // 0: until no event is left
    TimePs sample_interval = 0;  // 0: no queue samples
    bool delays = true;
    uint32_t mbufs = 32767;
    bool compact_fib = true;  // `fib: compact` (RIB-only tables) or `fib: full` (DIR-24-8 + lpm6)
    uint64_t seed = 1;
};

// Reads a YAML scenario into `s` (whose topology may already come from --topology; a
// topology in the file then is an error). Throws InputError.
void load_scenario(const std::string &path, Scenario &s);
void parse_scenario(const std::string &yaml, const std::string &source, Scenario &s);
// RoCE hosts are used: RoCE flows, collective jobs or a `hosts` section.
inline bool uses_roce(const Scenario &s) {
    return s.roce_hosts || !s.flows.empty() || !s.jobs.empty();
}

}  // namespace rocesw::sim
