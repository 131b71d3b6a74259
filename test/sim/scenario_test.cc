// The YAML scenario reader (lib/sim/scenario.cc, on config/yaml_doc.h's YamlReader): every bad
// value is refused at load with "<file>:<line>: <field>: <problem>", by the same rules as
// roceswd's config (decimal integers, true/false, no unknown or repeated fields), and the
// simulator's own values (ns-3 rates and times) by theirs. No EAL: parsing only.
#include <gtest/gtest.h>

#include <string>

#include "sim/scenario.h"

namespace rocesw::sim {
namespace {

const char *kStar = "topology: {type: star, hosts: 3}\n";

// The error parse_scenario throws for `yaml` read as "s.yaml" ("" when it reads).
std::string error_of(const std::string &yaml) {
    Scenario s;
    try {
        parse_scenario(yaml, "s.yaml", s);
    } catch (const InputError &e) {
        return e.what();
    }
    return "";
}

TEST(SimScenarioReader, ReadsEveryKindOfValue) {
    Scenario s;
    parse_scenario(std::string(kStar) + R"(mtu: 1500
until: 2.5us
sample_interval: 250ps
delays: false
mbufs: 4096
fib: full
seed: 42
lb: {policy: flowlet, seed: 7, flowlet_gap_us: 20us, switches: {3: spray}}
udp_flows:
  - {src: 0, dst: 1, rate: 2.5Gbps, size: 1K, start: 1us, stop: 2us, ecn: true}
roce_flows:
  - {src: 1, dst: 2, size: 64K, start: 3us, pg: 3}
events:
  - {at: 1us, pfc_storm: 2, until: 2us, xoff: 64K}
)",
                   "s.yaml", s);
    EXPECT_EQ(s.mtu, 1500u);
    EXPECT_EQ(s.until, 2'500'000u);
    EXPECT_EQ(s.sample_interval, 250u);
    EXPECT_FALSE(s.delays);
    EXPECT_EQ(s.mbufs, 4096u);
    EXPECT_FALSE(s.compact_fib);
    EXPECT_EQ(s.seed, 42u);
    EXPECT_EQ(s.lb_policy, "flowlet");
    EXPECT_EQ(s.lb_seed, 7u);
    EXPECT_EQ(s.flowlet_gap_us, 20u);
    EXPECT_EQ(s.lb_per_switch.at(3), "spray");
    ASSERT_EQ(s.udp.size(), 1u);
    EXPECT_EQ(s.udp[0].rate_bps, 2'500'000'000u);
    EXPECT_EQ(s.udp[0].frame_bytes, 1000u);
    EXPECT_EQ(s.udp[0].line, 11u);
    EXPECT_TRUE(s.udp[0].ecn);
    ASSERT_EQ(s.flows.size(), 1u);
    EXPECT_EQ(s.flows[0].size_bytes, 64'000u);
    EXPECT_EQ(s.flows[0].start_ns, 3000u);
    EXPECT_EQ(s.flows[0].pg, 3);
    ASSERT_EQ(s.host_events.size(), 1u);
    EXPECT_EQ(s.host_events[0].xoff_bytes, 64'000u);
}

TEST(SimScenarioReader, BadValuesNameFileLineAndField) {
    // The simulator's own values.
    EXPECT_EQ(error_of("topology: {type: star, link_rate: 100Gbs}\n"),
              "s.yaml:1: topology.link_rate: '100Gbs' is not a rate (e.g. 100Gbps, 25Gbps): "
              "unknown unit 'Gbs'");
    EXPECT_EQ(error_of(std::string(kStar) + "until: 10\n"),
              "s.yaml:2: until: '10' is not a time (e.g. 10us, 1ms, 500ns): no unit");
    EXPECT_EQ(error_of(std::string(kStar) + "roce_flows:\n  - {src: 0, dst: 9, size: 1000}\n"),
              "s.yaml:3: roce_flows[0].dst: 9 is not a node (0..3)");
    EXPECT_EQ(error_of(std::string(kStar) + "roce_flows:\n  - {src: 0, dst: 3, size: 1000}\n"),
              "s.yaml:3: roce_flows[0].dst: 3 is not a host");
    // The rules every config file of ours follows.
    EXPECT_EQ(error_of(std::string(kStar) + "lb: {seed: 0x5eed}\n"),
              "s.yaml:2: lb.seed: expected an integer, got '0x5eed'");
    EXPECT_EQ(error_of(std::string(kStar) + "delays: yes\n"),
              "s.yaml:2: delays: expected true or false, got 'yes'");
    EXPECT_EQ(error_of(std::string(kStar) + "mtu: 1500\nmtus: 9000\n"),
              "s.yaml:3: unknown field 'mtus'");
    EXPECT_EQ(error_of(std::string(kStar) + "mtu: 1500\nmtu: 9000\n"),
              "s.yaml:3: duplicate field 'mtu'");
    EXPECT_EQ(error_of(std::string(kStar) + "mtu: 100\n"),
              "s.yaml:2: mtu: 100 is out of range 576..9216");
    EXPECT_EQ(error_of(std::string(kStar) + "roce_flows:\n  - {src: 0, dst: 1, size: 1000, "
                                            "pg: 8}\n"),
              "s.yaml:3: roce_flows[0].pg: 8 is out of range 0..7");
    EXPECT_EQ(error_of(std::string(kStar) + "roce_flows:\n  - {src: 0, dst: 1}\n"),
              "s.yaml:3: roce_flows[0].size: required field missing");
    EXPECT_EQ(error_of(std::string(kStar) + "fib: small\n"),
              "s.yaml:2: fib: 'small' is not one of compact, full");
    EXPECT_EQ(error_of(std::string(kStar) + "workloads:\n  - {type: cdf2}\n"),
              "s.yaml:3: workloads[0].type: 'cdf2' is not one of cdf, incast, ring_allreduce, "
              "all_to_all");
    EXPECT_EQ(error_of(std::string(kStar) + "events:\n  - {at: 2us, pfc_storm: 0, until: 1us}\n"),
              "s.yaml:3: events[0].until: must be after at");
    EXPECT_EQ(error_of(std::string(kStar) + "events:\n  - {at: 2us, link_down: [0, 1]}\n"),
              "s.yaml:3: events[0].link_down: no link between 0 and 1");
    EXPECT_EQ(error_of(std::string(kStar) + "lb: {policy: random}\n"),
              "s.yaml:2: lb.policy: 'random' is not one of hash, flowlet, adaptive, spray");
    EXPECT_EQ(error_of("topology: {type: star, hosts: 40}\n"),
              "s.yaml:1: topology.hosts: 40 is out of range 1..31");
    EXPECT_EQ(error_of("topology: {hosts: 2}\n"),
              "s.yaml:1: topology.type: missing (star, leaf_spine, fat_tree, three_tier or file)");
    EXPECT_EQ(error_of("udp_flows: []\n"),
              "s.yaml:1: udp_flows: flows and events need a topology (here or --topology)");
    // The hosts' sections are rocehost's reader: the same message shape.
    EXPECT_EQ(error_of(std::string(kStar) + "hosts:\n  dcqcn: {profile: fast}\n")
                  .rfind("s.yaml:3: hosts.dcqcn.profile: ", 0),
              0u);
    // Not YAML at all, and a missing file.
    EXPECT_EQ(error_of("topology: [star\n").rfind("s.yaml: line ", 0), 0u);
    Scenario s;
    EXPECT_THROW(load_scenario("/nonexistent/s.yaml", s), InputError);
}

}  // namespace
}  // namespace rocesw::sim
