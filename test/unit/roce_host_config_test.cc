// rocehost's configuration loader: a full file, defaults, and one clear error per mistake.
#include <gtest/gtest.h>

#include <string>

#include "host_config.h"
#include "config_message.h"

namespace rocesw::rocehost {
namespace {

const std::string kBase = R"(
rocehost: {name: t, mtu: 2048, duration_ms: 500, rto_us: 3000, window: 64, sample_us: 250}
traffic: {data_dscp: 3, data_ecn: ect1, data_priority: 4, cnp_dscp: 46, cnp_priority: 5, pfc_priorities: [3, 4]}
dcqcn: {enabled: false, g: 0.0625, rate_ai: 5M, rate_hai: 50M, byte_counter: 32767, rate_reduce_period_us: 4, cnp_interval_us: 4}
hosts:
  - {name: h1, device: "net_ring0", mac: "02:00:00:00:01:02", ip: 10.0.1.2/24, gateway: 10.0.1.1, gateway_mac: "02:00:00:00:01:01", line_rate: 25G}
peers:
  - {name: h2, ip: 10.0.2.2}
  - {name: h3, ip: 10.0.3.2}
)";

HostRunConfig load(const std::string &extra) {
    return load_host_config_string(kBase + extra, "t.yaml");
}

std::string error_of(const std::string &yaml) {
    try {
        load_host_config_string(yaml, "t.yaml");
    } catch (const ConfigError &e) {
        return test::without_line(e, "t.yaml");
    }
    return "no error";
}

TEST(HostConfig, LoadsEveryFieldWithUnits) {
    auto c =
        load("workload: {pattern: incast, receiver: h3, senders: [h1, h2], size: 64K, count: 2}\n");
    EXPECT_EQ(c.run.mtu, 2048u);
    EXPECT_EQ(c.run.duration_ns, 500'000'000u);
    EXPECT_EQ(c.run.rto_ns, 3'000'000u);
    EXPECT_EQ(c.run.window, 64u);
    EXPECT_EQ(c.run.sample_ns, 250'000u);
    EXPECT_EQ(c.traffic.data_dscp, 3);
    EXPECT_EQ(c.traffic.data_ecn, roce::Ecn::ect1);
    EXPECT_EQ(c.traffic.pfc_mask, 0x18);
    EXPECT_EQ(c.traffic.cnp_dscp, 46);
    EXPECT_EQ(c.traffic.ack_prio(), 4);  // unset: the data priority
    EXPECT_FALSE(c.dcqcn_enabled);
    EXPECT_DOUBLE_EQ(c.dcqcn.g, 0.0625);
    EXPECT_EQ(c.dcqcn.rate_ai_bps, 5'000'000u);
    EXPECT_EQ(c.dcqcn.rate_hai_bps, 50'000'000u);
    EXPECT_EQ(c.dcqcn.byte_counter_bytes, 32767u);
    EXPECT_EQ(c.dcqcn.rate_reduce_period_ns, 4'000u);
    EXPECT_EQ(c.dcqcn.cnp_interval_ns, 4'000u);
    ASSERT_EQ(c.hosts.size(), 3u);
    EXPECT_TRUE(c.hosts[0].local());
    EXPECT_FALSE(c.hosts[1].local());
    EXPECT_EQ(c.hosts[0].line_rate_bps, 25'000'000'000u);
    EXPECT_EQ(c.hosts[0].ip.addr.v4, 0x0A000102u);
    ASSERT_TRUE(c.hosts[0].gateway_mac);
    EXPECT_EQ(c.workload.spec.pattern, roce::Pattern::incast);
    EXPECT_EQ(c.workload.spec.receiver, 2u);
    EXPECT_EQ(c.workload.spec.size_bytes, 64'000u);
    EXPECT_EQ(roce::generate_workload(c.workload.spec).size(), 4u);
}

TEST(HostConfig, DefaultsFollowTheNvidiaRoceConvention) {
    auto c = load_host_config_string(
        "hosts: [{name: a, device: x, mac: '02:00:00:00:00:01', ip: 10.0.0.1/24}]\n", "t.yaml");
    EXPECT_EQ(c.traffic.data_dscp, 26);
    EXPECT_EQ(c.traffic.data_priority, 3);
    EXPECT_EQ(c.traffic.cnp_dscp, 48);
    EXPECT_EQ(c.traffic.cnp_priority, 6);
    // ACKs follow the data class unless told otherwise (ConnectX: the QP's class).
    EXPECT_EQ(c.traffic.ack_dscp, 26);
    EXPECT_FALSE(c.traffic.ack_priority);
    EXPECT_EQ(c.traffic.ack_prio(), 3);
    EXPECT_TRUE(c.dcqcn_enabled);
    EXPECT_EQ(c.dcqcn.cnp_interval_ns, 50'000u);
    EXPECT_EQ(roce::generate_workload(c.workload.spec).size(), 0u);
}

TEST(HostConfig, AckClassIsConfigurable) {
    std::string y = kBase;
    y.replace(y.find("pfc_priorities"), 0, "ack_dscp: 48, ack_priority: 6, ");
    auto c = load_host_config_string(y, "t.yaml");
    EXPECT_EQ(c.traffic.ack_dscp, 48);
    EXPECT_EQ(c.traffic.ack_prio(), 6);
    y = kBase;
    y.replace(y.find("pfc_priorities"), 0, "ack_priority: 8, ");
    EXPECT_EQ(error_of(y), "t.yaml: traffic.ack_priority: 8 is out of range 0..7");
}

TEST(HostConfig, AcceptsIpv6Hosts) {
    auto c = load_host_config_string(
        "hosts: [{name: a, device: x, mac: '02:00:00:00:00:01', ip: 'fd00:1::2/64', "
        "gateway: 'fd00:1::1'}]\npeers: [{name: b, ip: 'fd00:2::2'}]\n",
        "t.yaml");
    EXPECT_TRUE(c.hosts[0].ip.addr.is_v6);
    EXPECT_EQ(c.hosts[0].ip.len, 64);
    EXPECT_TRUE(c.hosts[1].ip.addr.is_v6);
    EXPECT_EQ(c.hosts[1].ip.len, 128);
    ASSERT_TRUE(c.hosts[0].gateway);
}

// rocelab's real engine: the flows a scenario expands to, each with its own start; ids in start
// order, ties in list order.
TEST(HostConfig, ListWorkloadKeepsEachFlowsStart) {
    HostRunConfig c = load(
        "workload:\n  pattern: list\n  flows:\n"
        "    - {src: h1, dst: h3, size: 2M, start_ns: 5000000}\n"
        "    - {src: h1, dst: h2, size: 1000, start_ns: 0}\n"
        "    - {src: h2, dst: h1, size: 1000}\n");
    auto flows = roce::generate_workload(c.workload.spec);
    ASSERT_EQ(flows.size(), 3u);
    EXPECT_EQ(flows[0].id, 0u);
    EXPECT_EQ(flows[0].dst, 1u);  // h2, start 0, listed before the next start-0 flow
    EXPECT_EQ(flows[1].src, 1u);
    EXPECT_EQ(flows[1].start_ns, 0u);
    EXPECT_EQ(flows[2].size_bytes, 2'000'000u);
    EXPECT_EQ(flows[2].start_ns, 5'000'000u);
    EXPECT_EQ(flows[2].dst, 2u);
}

// A list flow's own class (rocelab: a scenario flow's resolved pg); fields left out are the
// run's traffic class (kBase: data DSCP 3, priority 4; ACKs with the data).
TEST(HostConfig, ListFlowsCarryTheirOwnClass) {
    HostRunConfig c = load(
        "workload:\n  pattern: list\n  flows:\n"
        "    - {src: h1, dst: h2, size: 1000}\n"
        "    - {src: h1, dst: h3, size: 1000, class: {data_dscp: 8, data_priority: 0, "
        "ack_dscp: 8, ack_priority: 0}}\n"
        "    - {src: h1, dst: h3, size: 1000, class: {data_priority: 1}}\n");
    auto flows = roce::generate_workload(c.workload.spec);
    ASSERT_EQ(flows.size(), 3u);
    EXPECT_FALSE(flows[0].cls.has_value());
    EXPECT_EQ(flows[1].cls, (roce::FlowClass{8, 0, 8, 0}));
    EXPECT_EQ(flows[2].cls, (roce::FlowClass{3, 1, 26, 4}));
    EXPECT_EQ(error_of(kBase + "workload: {pattern: list, flows: [{src: h1, dst: h2, size: 1, "
                               "class: {data_priority: 8}}]}\n"),
              "t.yaml: workload.flows[0].class.data_priority: 8 is out of range 0..7");
    EXPECT_EQ(error_of(kBase + "workload: {pattern: list, flows: [{src: h1, dst: h2, size: 1, "
                               "class: {pg: 1}}]}\n"),
              "t.yaml: workload.flows[0].class: unknown field 'pg'");
}

// UDP flows (rocesim's udp_flows in rocehost): times on the workload's clock.
TEST(HostConfig, UdpFlows) {
    HostRunConfig c = load(
        "udp_flows:\n"
        "  - {src: h1, dst: h2, rate: 600M, frame_bytes: 1000, start_ns: 5000, stop_ns: 20000000, "
        "dscp: 8, ecn: true, priority: 0, sport: 10001, dport: 200}\n"
        "  - {src: h1, dst: h3, rate: 1G}\n");
    ASSERT_EQ(c.udp_flows.size(), 2u);
    const roce::UdpFlowConfig &u = c.udp_flows[0];
    EXPECT_EQ(u.src, 0u);
    EXPECT_EQ(u.dst, 1u);
    EXPECT_EQ(u.rate_bps, 600'000'000u);
    EXPECT_EQ(u.frame_bytes, 1000u);
    EXPECT_EQ(u.start_ns, 5000u);
    EXPECT_EQ(u.stop_ns, 20'000'000u);
    EXPECT_EQ(u.dscp, 8);
    EXPECT_TRUE(u.ecn);
    EXPECT_EQ(u.priority, 0);
    EXPECT_EQ(u.sport, 10001);
    EXPECT_EQ(u.dport, 200);
    EXPECT_EQ(c.udp_flows[1].stop_ns, UINT64_MAX);  // until the run ends
    EXPECT_EQ(c.udp_flows[1].frame_bytes, 1000u);
    EXPECT_EQ(error_of(kBase + "udp_flows: [{src: h2, dst: h1, rate: 1G}]\n"),
              "t.yaml: udp_flows[0].src: 'h2' is a peer, not a local host");
    EXPECT_EQ(error_of(kBase + "udp_flows: [{src: h1, dst: h2}]\n"),
              "t.yaml: udp_flows[0]: src, dst and rate are required");
    EXPECT_EQ(error_of(kBase +
                       "udp_flows: [{src: h1, dst: h2, rate: 1G, start_ns: 5, stop_ns: 5}]\n"),
              "t.yaml: udp_flows[0].stop_ns: must be after start_ns");
}

TEST(HostConfig, FaultsOnTheWorkloadClock) {
    HostRunConfig c = load(
        "faults:\n"
        "  - {host: h1, pfc_storm: {at_us: 200, until_us: 2500, priority: 3, interval_us: 100}}\n"
        "  - {host: h1, slow_receiver: {at_us: 1000, until_us: 2000, xoff_bytes: 32K}}\n"
        "  - {host: h1, pfc_storm: {at_us: 1, until_us: 2, max_catch_up: 8}}\n");
    ASSERT_EQ(c.faults.size(), 3u);
    EXPECT_EQ(c.faults[0].max_catch_up, 256u);  // default
    EXPECT_EQ(c.faults[2].max_catch_up, 8u);
    EXPECT_EQ(c.faults[0].kind, roce::HostFault::pfc_storm);
    EXPECT_EQ(c.faults[0].host, 0u);
    EXPECT_EQ(c.faults[0].at_ns, 200'000u);
    EXPECT_EQ(c.faults[0].until_ns, 2'500'000u);
    EXPECT_EQ(c.faults[0].interval_ns, 100'000u);
    EXPECT_EQ(c.faults[1].kind, roce::HostFault::slow_receiver);
    EXPECT_EQ(c.faults[1].xoff_bytes, 32'000u);
    EXPECT_EQ(c.faults[1].priority, 3u);       // default
    EXPECT_EQ(c.faults[1].interval_ns, 1000u);  // default 1 us
    EXPECT_EQ(error_of(kBase + "faults: [{host: h2, pfc_storm: {at_us: 1, until_us: 2}}]\n"),
              "t.yaml: faults[0].host: 'h2' is a peer, not a local host");
    EXPECT_EQ(error_of(kBase + "faults: [{host: h1}]\n"),
              "t.yaml: faults[0]: needs exactly one of pfc_storm, slow_receiver");
    EXPECT_EQ(error_of(kBase + "faults: [{host: h1, pfc_storm: {at_us: 5, until_us: 5}}]\n"),
              "t.yaml: faults[0].pfc_storm.until_us: must be after at_us");
    EXPECT_EQ(error_of(kBase + "faults: [{host: h1, slow_receiver: {at_us: 5}}]\n"),
              "t.yaml: faults[0].slow_receiver: at_us and until_us are required");
    EXPECT_EQ(error_of(kBase + "faults: [{host: h1, slow_receiver: {at_us: 1, until_us: 2, "
                               "max_catch_up: 4}}]\n"),
              "t.yaml: faults[0].slow_receiver.max_catch_up: only for pfc_storm");
}

const std::string kTwoLocal = R"(
hosts:
  - {name: a, device: "net_ring0", mac: "02:00:00:00:01:02", ip: 10.0.1.2/24}
  - {name: b, device: "net_ring1", mac: "02:00:00:00:01:03", ip: 10.0.1.3/24}
  - {name: c, device: "net_ring2", mac: "02:00:00:00:01:04", ip: 10.0.1.4/24}
peers:
  - {name: p, ip: 10.0.2.2}
)";

TEST(HostConfig, JobsNameLocalRanksInRingOrder) {
    auto c = load_host_config_string(
        kTwoLocal +
            "jobs:\n"
            "  - {kind: ring_allreduce, hosts: [c, a, b], bytes: 1M, iterations: 3, "
            "compute_gap_ns: 200000, start_ns: 5000}\n"
            "  - {kind: all_to_all, hosts: [a, b], bytes: 4096, schedule: pairwise, "
            "step_gap_ns: 100}\n",
        "t.yaml");
    ASSERT_EQ(c.jobs.size(), 2u);
    EXPECT_EQ(c.jobs[0].spec.kind, roce::Collective::ring_allreduce);
    EXPECT_EQ(c.jobs[0].spec.hosts, (std::vector<uint32_t>{2, 0, 1}));
    EXPECT_EQ(c.jobs[0].spec.bytes_per_rank, 1'000'000u);
    EXPECT_EQ(c.jobs[0].spec.iterations, 3u);
    EXPECT_EQ(c.jobs[0].spec.compute_gap_ns, 200'000u);
    EXPECT_EQ(c.jobs[0].start_ns, 5'000u);
    EXPECT_EQ(c.jobs[1].spec.kind, roce::Collective::all_to_all);
    EXPECT_EQ(c.jobs[1].spec.a2a, roce::AllToAllSchedule::pairwise);
    EXPECT_EQ(c.jobs[1].spec.iterations, 1u);  // default
    EXPECT_EQ(c.jobs[1].spec.step_gap_ns, 100u);
}

// A job's own class (rocelab: the job's pg resolved at each rank's switch port): one for every
// rank, or one per rank in `hosts`' order (null: the run's traffic class; here the defaults,
// data DSCP 26 priority 3, ACKs with the data). A job without one, or a host not a rank, gets
// none.
TEST(HostConfig, JobsCarryTheirRanksClasses) {
    auto c = load_host_config_string(
        kTwoLocal +
            "jobs:\n"
            "  - {kind: ring_allreduce, hosts: [c, a, b], bytes: 3000, class: {data_dscp: 8, "
            "data_priority: 0}}\n"
            "  - {kind: all_to_all, hosts: [a, b, c], bytes: 3000, class: [{data_dscp: 48, "
            "data_priority: 6, ack_dscp: 48, ack_priority: 6}, null, {data_priority: 1}]}\n"
            "  - {kind: all_to_all, hosts: [a, b], bytes: 3000}\n",
        "t.yaml");
    ASSERT_EQ(c.jobs.size(), 3u);
    const roce::FlowClass pg0{8, 0, 26, 3};
    EXPECT_EQ(c.jobs[0].rank_class.size(), 3u);
    for (uint32_t h : {0u, 1u, 2u}) EXPECT_EQ(c.jobs[0].class_of(h), pg0) << h;
    EXPECT_EQ(c.jobs[1].class_of(0), (roce::FlowClass{48, 6, 48, 6}));
    EXPECT_EQ(c.jobs[1].class_of(1), std::nullopt);
    EXPECT_EQ(c.jobs[1].class_of(2), (roce::FlowClass{26, 1, 26, 3}));
    EXPECT_TRUE(c.jobs[2].rank_class.empty());
    EXPECT_EQ(c.jobs[2].class_of(0), std::nullopt);
    EXPECT_EQ(c.jobs[2].class_of(2), std::nullopt);  // not a rank
}

TEST(HostConfig, JobErrorsNameTheField) {
    auto job = [](const std::string &j) { return error_of(kTwoLocal + "jobs: [" + j + "]\n"); };
    EXPECT_EQ(job("{kind: ring, hosts: [a, b], bytes: 1}"),
              "t.yaml: jobs[0].kind: 'ring' is not one of ring_allreduce, all_to_all");
    EXPECT_EQ(job("{kind: all_to_all, hosts: [a], bytes: 1}"),
              "t.yaml: jobs[0].hosts: a list of at least two host names is required");
    EXPECT_EQ(job("{kind: all_to_all, hosts: [a, p], bytes: 1}"),
              "t.yaml: jobs[0].hosts[1]: 'p' is a peer: a job's hosts must all be local hosts");
    EXPECT_EQ(job("{kind: all_to_all, hosts: [a, b, a], bytes: 1}"),
              "t.yaml: jobs[0].hosts[2]: 'a' is listed twice");
    EXPECT_EQ(job("{kind: all_to_all, hosts: [a, b]}"),
              "t.yaml: jobs[0].bytes: required field missing");
    EXPECT_EQ(job("{kind: all_to_all, hosts: [a, b], bytes: 1, schedule: ring}"),
              "t.yaml: jobs[0].schedule: 'ring' is not one of simultaneous, pairwise");
    EXPECT_EQ(job("{kind: all_to_all, hosts: [a, b], bytes: 1, iterations: 0}"),
              "t.yaml: jobs[0].iterations: 0 is out of range 1..1000000");
    EXPECT_EQ(job("{kind: all_to_all, hosts: [a, b], bytes: 1, class: [{data_priority: 0}]}"),
              "t.yaml: jobs[0].class: one class per host is required (2 hosts, 1 given)");
    EXPECT_EQ(job("{kind: all_to_all, hosts: [a, b], bytes: 1, class: [null, 3]}"),
              "t.yaml: jobs[0].class[1]: expected a class {data_dscp, data_priority, ack_dscp, "
              "ack_priority} or null");
    EXPECT_EQ(job("{kind: all_to_all, hosts: [a, b], bytes: 1, class: 3}"),
              "t.yaml: jobs[0].class: expected a class {data_dscp, data_priority, ack_dscp, "
              "ack_priority} or a list of one per host");
    EXPECT_EQ(job("{kind: all_to_all, hosts: [a, b], bytes: 1, class: [null, {pg: 3}]}"),
              "t.yaml: jobs[0].class[1]: unknown field 'pg'");
    EXPECT_EQ(job("{kind: all_to_all, hosts: [a, b], bytes: 1, class: {data_dscp: 64}}"),
              "t.yaml: jobs[0].class.data_dscp: 64 is out of range 0..63");
}

TEST(HostConfig, ErrorsNameTheFileAndField) {
    // The shape of every loader's unknown-field message (was "t.yaml: bogus: unknown field").
    EXPECT_EQ(error_of(kBase + "bogus: 1\n"), "t.yaml: unknown field 'bogus'");
    EXPECT_EQ(error_of("hosts: []\n"), "t.yaml: hosts: a list of at least one host is required");
    EXPECT_EQ(error_of("rocehost: {mtu: 1000}\n" + kBase.substr(kBase.find("hosts:"))),
              "t.yaml: rocehost.mtu: 1000 is not one of 256, 512, 1024, 2048, 4096");
    EXPECT_EQ(
        error_of("hosts: [{name: a, device: x, mac: '01:00:00:00:00:01', ip: 10.0.0.1/24}]\n"),
        "t.yaml: hosts[0].mac: not a unicast MAC address");
    EXPECT_EQ(error_of("hosts: [{name: a, device: x, mac: '02:00:00:00:00:01', ip: 10.0.0.1/24, "
                       "gateway: 10.9.9.9}]\n"),
              "t.yaml: hosts[0].gateway: not in the host's subnet 10.0.0.0/24");
    EXPECT_EQ(error_of(kBase + "workload: {pattern: incast, receiver: h9}\n"),
              "t.yaml: workload.receiver: no host or peer named 'h9'");
    EXPECT_EQ(error_of(kBase + "workload: {pattern: cdf}\n"),
              "t.yaml: workload.cdf: required by pattern cdf");
    EXPECT_EQ(error_of(kBase + "workload: {pattern: ring}\n"),
              "t.yaml: workload.pattern: 'ring' is not a pattern (pairs, incast, all_to_all, "
              "permutation, cdf, list)");
    EXPECT_EQ(error_of(kBase + "workload: {pattern: list}\n"),
              "t.yaml: workload.flows: required by pattern list");
    EXPECT_EQ(error_of(kBase + "workload: {pattern: list, flows: [{src: h1, dst: h9, size: 1}]}\n"),
              "t.yaml: workload.flows[0].dst: no host or peer named 'h9'");
    EXPECT_EQ(error_of(kBase + "workload: {pattern: list, flows: [{src: h1, size: 1}]}\n"),
              "t.yaml: workload.flows[0]: src, dst and size are required");
    EXPECT_EQ(error_of(kBase + "workload: {pattern: pairs, pairs: [[h1, h1]]}\n"),
              "t.yaml: workload: a flow from a host to itself");
    EXPECT_EQ(error_of(kBase + "  - {name: h6, ip: 'fd00::2'}\n"),
              "t.yaml: peers[2].ip: 'fd00::2' is IPv6 but hosts[0] is not: one family per run");
    EXPECT_EQ(error_of(kBase + "workload: {size: 12Q}\n"),
              "t.yaml: workload.size: '12Q' is not a size in bytes (e.g. 4096, 64K, 1M)");
}

}  // namespace
}  // namespace rocesw::rocehost
