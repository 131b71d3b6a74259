// The lab description: a scenario expanded into what a fabric of real processes needs, as JSON
// (`rocesim --scenario F --emit-lab FILE.json`; doc/rocelab.md "The lab description"). One
// scenario parser (scenario.cc) serves both engines: rocelab reads this file, never the YAML.
//
// What it holds, all derived here from the Scenario:
//   nodes     every host and switch with its ports: link, peer, MAC (the simulator's
//             02:nn:nn:nn:00:pp), rate, delay, and the lab's IPv4 addressing:
//               host i        11.x.y.1/24 (x.y = i / 256, i % 256: rocesim's host address, so
//                             fct.txt's addresses are the same in both engines), its switch
//                             port 11.x.y.254/24 is the gateway;
//               fabric link l 10.0.0.0/8 + 2l /31: the lower-numbered node's port gets the even
//                             address (RFC 7938-style point-to-point links);
//   routes    per switch and destination host subnet, the next hops of rocesim's shortest-path
//             ECMP (EcmpRouting, ascending port) with the neighbour's address on that link;
//             destinations cabled to the switch itself are left out (connected);
//   flows     RoCE flows with fixed start times (roce_flows, flow.txt, cdf and incast
//             workloads) in start order, with HPCC's source port and standalone FCT as rocesim
//             writes them to fct.txt and the class rocesim's hosts give them
//             (resolve_flow_class); collective jobs (started by completions) as their specs,
//             with each job flow's standalone FCT (roce::make_collective's order); UDP flows with their PFC
//             priority (udp_flow_priority);
//   events    link down/up (link index, both ends, convergence) and host events;
//   settings  QoS profile path, switch MTU, LB policy and seed (per switch), the hosts'
//             profile (hosts.dcqcn and hosts.traffic as written, mtu, ack_every, window, rto,
//             the priorities they honour PFC for: hosts_pfc_mask).
#pragma once

#include <nlohmann/json.hpp>

#include "sim/scenario.h"

namespace rocesw::sim {

inline constexpr const char *kLabFormat = "rocelab-lab/1";

// The lab's addresses (see above), as dotted text.
std::string lab_host_ip(uint32_t host);               // "11.0.2.1"
std::string lab_host_gateway(uint32_t host);          // "11.0.2.254"
std::string lab_host_subnet(uint32_t host);           // "11.0.2.0/24"
std::string lab_link_ip(uint32_t link, bool b_side);  // "10.0.0.4" / "10.0.0.5"
// The same, as a number: 10.0.0.0 + 2 link (+1 on the b side, the higher node id). rocesim's
// switches use it as their fabric next hops (Engine::port_addr), so that an ECMP member's key
// (its next-hop address, lib/lb) and so a flow's hash choice are the same in both engines.
constexpr uint32_t lab_link_addr(uint32_t link, bool b_side) {
    return 0x0A000000u + 2 * link + (b_side ? 1 : 0);
}

nlohmann::json lab_description(const Scenario &s);

}  // namespace rocesw::sim
