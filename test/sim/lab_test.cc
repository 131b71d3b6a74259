// The lab description (rocesim --emit-lab): a 2x2 leaf-spine expanded into ports, addresses,
// the simulator's ECMP routes, flows with fct.txt's source ports and standalone FCTs, events.
#include <gtest/gtest.h>

#include "sim/lab.h"

namespace rocesw::sim {
namespace {

using nlohmann::json;

Scenario leaf_spine() {
    Scenario s;
    parse_scenario(R"(
topology: {type: leaf_spine, leaves: 2, spines: 2, hosts_per_leaf: 2, link_rate: 1Gbps,
           link_delay: 1us}
lb: {policy: hash, switches: {7: flowlet}}
sample_interval: 100us
hosts: {mtu: 1024, dcqcn: {profile: nvidia, rate_ai: 40M}}
roce_flows:
  - {src: 1, dst: 3, size: 1000, start: 20us}
  - {src: 0, dst: 2, size: 1000000, start: 10us}
  - {src: 0, dst: 1, size: 1000, start: 30us}
events:
  - {at: 40us, link_down: [4, 6], convergence: 10us}
  - {at: 1ms, pfc_storm: 2, until: 2ms, priority: 3, interval: 1us}
)",
                   "ls.yaml", s);
    return s;
}

TEST(LabDescription, LeafSpineNodesPortsAndAddresses) {
    json lab = lab_description(leaf_spine());
    EXPECT_EQ(lab["format"], kLabFormat);
    EXPECT_EQ(lab["sample_interval_ns"], 100'000u);  // the real engine's trace interval
    ASSERT_EQ(lab["nodes"].size(), 8u);  // hosts 0-3, leaves 4-5, spines 6-7
    const json &h0 = lab["nodes"][0];
    EXPECT_EQ(h0["kind"], "host");
    EXPECT_EQ(h0["ip"], "11.0.0.1/24");
    EXPECT_EQ(h0["address_hex"], "0b000001");
    EXPECT_EQ(h0["gateway"], "11.0.0.254");
    EXPECT_EQ(h0["gateway_mac"], "02:00:00:04:00:00");
    EXPECT_EQ(h0["switch"], 4);
    const json &leaf = lab["nodes"][4];
    EXPECT_EQ(leaf["kind"], "switch");
    ASSERT_EQ(leaf["ports"].size(), 4u);
    EXPECT_EQ(leaf["ports"][0]["ipv4"], "11.0.0.254/24");
    EXPECT_EQ(leaf["ports"][0]["peer"], 0);
    EXPECT_EQ(leaf["ports"][2]["peer"], 6);
    EXPECT_EQ(leaf["ports"][2]["rate_bps"], 1'000'000'000u);
    EXPECT_EQ(leaf["ports"][2]["delay_ps"], 1'000'000u);
    // Fabric link 4 (leaf 4 - spine 6): 10.0.0.8/31, the lower node id takes the even address.
    EXPECT_EQ(leaf["ports"][2]["link"], 4);
    EXPECT_EQ(leaf["ports"][2]["ipv4"], "10.0.0.8/31");
    EXPECT_EQ(lab["nodes"][6]["ports"][0]["ipv4"], "10.0.0.9/31");
    EXPECT_EQ(lab["nodes"][6]["ports"][0]["mac"], "02:00:00:06:00:00");
    EXPECT_EQ(lab["nodes"][7]["lb_policy"], "flowlet");
    EXPECT_EQ(leaf["lb_policy"], "hash");
    EXPECT_EQ(lab["links"].size(), 8u);
}

TEST(LabDescription, RoutesAreTheSimulatorsEcmp) {
    json lab = lab_description(leaf_spine());
    // Leaf 4 reaches hosts 2 and 3 over both spines (ascending port); its own hosts are
    // connected, so they have no route.
    const json &r = lab["nodes"][4]["routes"];
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0]["dst"], 2);
    EXPECT_EQ(r[0]["prefix"], "11.0.2.0/24");
    ASSERT_EQ(r[0]["next_hops"].size(), 2u);
    EXPECT_EQ(r[0]["next_hops"][0], json({{"port", 2}, {"neighbour", 6}, {"via", "10.0.0.9"}}));
    EXPECT_EQ(r[0]["next_hops"][1], json({{"port", 3}, {"neighbour", 7}, {"via", "10.0.0.11"}}));
    // A spine: one next hop per host, the host's leaf, via the leaf's end of the link.
    const json &sr = lab["nodes"][6]["routes"];
    ASSERT_EQ(sr.size(), 4u);
    EXPECT_EQ(sr[0]["next_hops"],
              json::array({{{"port", 0}, {"neighbour", 4}, {"via", "10.0.0.8"}}}));
    EXPECT_EQ(sr[3]["next_hops"][0]["neighbour"], 5);
}

TEST(LabDescription, FlowsInStartOrderWithFctFields) {
    json lab = lab_description(leaf_spine());
    const json &f = lab["flows"];
    ASSERT_EQ(f.size(), 3u);
    EXPECT_EQ(f[0]["src"], 0);  // 10 us
    EXPECT_EQ(f[0]["start_ns"], 10'000u);
    EXPECT_EQ(f[0]["sport"], 10000);
    EXPECT_EQ(f[1]["src"], 1);  // 20 us
    EXPECT_EQ(f[1]["sport"], 10000);
    EXPECT_EQ(f[2]["sport"], 10001);  // host 0's second flow
    EXPECT_EQ(f[0]["hops"], 4);
    // HPCC's standalone FCT of 1 MB over four 1 Gb/s, 1 us links: base RTT 2 x 4 us +
    // 4 x 8000 ns; 1000 packets x 1048 B at 1 Gb/s.
    EXPECT_EQ(f[0]["standalone_fct_ns"], 8'000u + 32'000u + 8'384'000u);
    EXPECT_EQ(f[2]["hops"], 2);
    EXPECT_EQ(lab["hosts_profile"]["dcqcn"], json({{"profile", "nvidia"}, {"rate_ai", "40M"}}));
    EXPECT_EQ(lab["hosts_profile"]["mtu"], 1024);
}

// Flows with a pg of their own: the class rocesim's hosts resolve (resolve_flow_class at the
// sender's switch port), the priorities the hosts honour PFC for, a UDP flow's priority (its
// DSCP's TC). The built-in SONiC profile: DSCP 8 -> TC 0, DSCP 3 -> TC 3, DSCP 26 -> TC 1,
// TCs 3 and 4 lossless; hosts.traffic's defaults (DSCP 26, priority 3) are not TC 3 there.
TEST(LabDescription, FlowClassesAsTheSimulatorResolvesThem) {
    Scenario s;
    parse_scenario(R"(
topology: {type: star, hosts: 3, link_rate: 1Gbps, link_delay: 1us}
roce_flows:
  - {src: 0, dst: 1, size: 1000}
  - {src: 0, dst: 1, size: 1000, pg: 0}
  - {src: 1, dst: 2, size: 1000, pg: 3}
udp_flows:
  - {src: 2, dst: 0, rate: 1Mbps, stop: 1ms, dscp: 3}
)",
                   "c.yaml", s);
    json lab = lab_description(s);
    EXPECT_EQ(lab["flows"][0]["class"], nullptr);
    EXPECT_EQ(lab["flows"][1]["class"],
              json({{"data_dscp", 8}, {"data_priority", 0}, {"ack_dscp", 8}, {"ack_priority", 0}}));
    EXPECT_EQ(lab["flows"][2]["class"],
              json({{"data_dscp", 3}, {"data_priority", 3}, {"ack_dscp", 3}, {"ack_priority", 3}}));
    EXPECT_EQ(lab["hosts_profile"]["pfc_priorities"], json({3}));  // pg 0 is lossy
    EXPECT_EQ(lab["udp_flows"][0]["priority"], 3);
    EXPECT_EQ(lab["udp_flows"][0]["stop_ns"], 1'000'000);
}

// A collective job's pg: each rank's class as a flow's (the real engine hands them to rocehost,
// whose job flows leave in them), its lossless pg among the priorities the hosts honour; a job
// without a pg has every rank in hosts.traffic's class.
TEST(LabDescription, JobClassesPerRankAsTheSimulatorResolvesThem) {
    Scenario s;
    parse_scenario(R"(
topology: {type: star, hosts: 3, link_rate: 1Gbps, link_delay: 1us}
workloads:
  - {type: ring_allreduce, hosts: [2, 0, 1], bytes: 3000, pg: 4}
  - {type: all_to_all, hosts: [0, 1], bytes: 3000}
)",
                   "c.yaml", s);
    json lab = lab_description(s);
    ASSERT_EQ(lab["jobs"].size(), 2u);
    const json pg4 = {{"data_dscp", 4}, {"data_priority", 4}, {"ack_dscp", 4}, {"ack_priority", 4}};
    EXPECT_EQ(lab["jobs"][0]["pg"], 4);
    EXPECT_EQ(lab["jobs"][0]["classes"], json({pg4, pg4, pg4}));
    EXPECT_EQ(lab["jobs"][1]["classes"], json({nullptr, nullptr}));
    EXPECT_EQ(lab["hosts_profile"]["pfc_priorities"], json({3, 4}));
}

TEST(LabDescription, EventsInTimeOrder) {
    json lab = lab_description(leaf_spine());
    const json &e = lab["events"];
    ASSERT_EQ(e.size(), 2u);
    EXPECT_EQ(e[0]["kind"], "link_down");
    EXPECT_EQ(e[0]["at_ns"], 40'000u);
    EXPECT_EQ(e[0]["a"], 4);
    EXPECT_EQ(e[0]["b"], 6);
    EXPECT_EQ(e[0]["link"], 4);
    EXPECT_EQ(e[0]["convergence_ns"], 10'000u);
    // Once converged: leaf 4 reaches hosts 2, 3 through spine 7 only, leaf 5 hosts 0, 1 the
    // same, and spine 6 reaches hosts 0 and 1 the long way, through leaf 5 (shortest paths
    // over the links that are up; switches may transit).
    const json &ra = e[0]["routes_after"];
    ASSERT_EQ(ra["4"].size(), 2u);
    EXPECT_EQ(ra["4"][0]["next_hops"],
              json::array({{{"port", 3}, {"neighbour", 7}, {"via", "10.0.0.11"}}}));
    EXPECT_EQ(ra["5"][0]["dst"], 0);
    EXPECT_EQ(ra["5"][0]["next_hops"].size(), 1u);
    EXPECT_EQ(ra["5"][0]["next_hops"][0]["neighbour"], 7);
    ASSERT_EQ(ra["6"].size(), 4u);
    EXPECT_EQ(ra["6"][0]["dst"], 0);
    EXPECT_EQ(ra["6"][0]["next_hops"],
              json::array({{{"port", 1}, {"neighbour", 5}, {"via", "10.0.0.12"}}}));
    EXPECT_EQ(ra["6"][2]["next_hops"].size(), 1u);
    EXPECT_EQ(e[1]["kind"], "pfc_storm");
    EXPECT_EQ(e[1]["host"], 2);
    EXPECT_EQ(e[1]["until_ns"], 2'000'000u);
}

}  // namespace
}  // namespace rocesw::sim
