// What one simulation run is: the fabric, the switch profile, the traffic, the timed events.
// Built from the command line (HPCC files) and/or the native YAML scenario (load_scenario;
// the YAML reading is all in scenario.cc). Errors throw InputError naming file, line, field.
//
// YAML scenario (every key optional except a topology, given here or by --topology):
//   topology: {type: star|leaf_spine|fat_tree|file, hosts: 2, leaves: 2, spines: 2,
//              hosts_per_leaf: 2, oversubscription: "3:1", k: 4, file: topo.txt,
//              link_rate: 100Gbps, fabric_rate: 100Gbps, link_delay: 1us}
//   qos_profile: config/qos/nvidia-roce.yaml   (relative to the scenario file; default:
//                                               the SONiC default profile)
//   mtu: 9000                                  (L3 MTU of every switch port)
//   lb: {policy: hash, seed: 0x5eed, flowlet_gap_us: 50, switches: {20: spray}}
//   sample_interval: 10us                      (queue-depth samples; 0/absent: none)
//   delays: true                               (udp_delays.csv: one line per delivery)
//   mbufs: 32767                               (frames that can exist at once)
//   until: 10ms
//   seed: 1
//   udp_flows:
//     - {src: 0, dst: 2, rate: 50Gbps, size: 1000, start: 0us, stop: 100us, dscp: 26,
//        ecn: false, sport: 10000, dport: 100}
//   events:
//     - {at: 50us, link_down: [4, 6], convergence: 10us}   (the link between nodes 4 and 6;
//     - {at: 90us, link_up: 3, convergence: 10us}           or a link index)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "qos/qos_config.h"
#include "sim/sim_host.h"
#include "sim/topology.h"

namespace rocesw::sim {

struct LinkEvent {
    TimePs at = 0;
    uint32_t link = 0;
    bool up = false;
    TimePs convergence = 0;  // routes recomputed and installed this long after the change
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
    std::vector<UdpFlowSpec> udp;
    std::vector<FlowRecord> flows;  // HPCC flow.txt (RoCE flows: need the lib/roce hosts)
    std::vector<LinkEvent> events;
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

}  // namespace rocesw::sim
