// The engine with the real switch pipeline, on cases whose answers follow from rates, sizes
// and delays alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/strings.h"
#include "sim/engine.h"
#include "sim_test_util.h"

namespace rocesw::sim {
namespace {

constexpr uint64_t k100G = 100'000'000'000ull;

// Wire time of a frame of `frame` bytes (FCS excluded, as the hosts count it) at `rate`.
TimePs wire_ps(uint32_t frame, uint64_t rate) {
    return TimePs(uint64_t(frame + 4 + 20) * 8 * kPsPerS / rate);
}

std::string tmpdir(const std::string &name) { return test::tmpdir("rocesim_test_", name); }
using test::slurp;

// One UDP flow host 0 -> switch 2 -> host 1; the ingress link is 100 Gb/s with 1 us, the
// egress 25 Gb/s with 500 ns; 20 Gb/s never queues. Every packet's one-way delay is the two
// serialisations plus the two propagation delays (the switch takes no virtual time), to the
// picosecond.
TEST(SimEngine, OneFlowDelayIsSerialisationPlusPropagation) {
    Scenario s;
    s.topo = parse_topology("3 1 2\n2\n0 2 100Gbps 1us 0\n2 1 25Gbps 500ns 0\n", "t.txt");
    s.has_topology = true;
    UdpFlowSpec f;
    f.src = 0;
    f.dst = 1;
    f.rate_bps = 20'000'000'000ull;
    f.frame_bytes = 1000;
    f.start = 3 * kPsPerUs + 7;  // off the ns grid on purpose
    f.stop = f.start + 50 * kPsPerUs;
    s.udp.push_back(f);
    Engine e(s, "");
    e.run();
    // The switch received the 123 frames and forwarded them all; nothing else.
    const AccountingPort t = test::expect_accounting_balanced(e);
    EXPECT_EQ(t.rx, 123u);
    EXPECT_EQ(t.forwarded, 123u);
    EXPECT_EQ(t.tx, 123u);
    EXPECT_EQ(t.local + t.punted + t.ingress_drops() + t.egress_drops() + t.queued, 0u);
    const TimePs expect =
        wire_ps(1000, k100G) + 1 * kPsPerUs + wire_ps(1000, 25'000'000'000ull) + 500 * kPsPerNs;
    EXPECT_EQ(expect, 81'920u + 1'000'000u + 327'680u + 500'000u);
    const auto &st = e.udp().stats()[0];
    // Packets every (1024 * 8 / 20e9) s = 409.6 ns over 50 us: 123 (k = 0..122).
    EXPECT_EQ(st.sent, 123u);
    EXPECT_EQ(st.received, 123u);
    ASSERT_EQ(e.udp().deliveries().size(), 123u);
    for (const auto &d : e.udp().deliveries()) EXPECT_EQ(d.received - d.sent, expect) << d.seq;
    EXPECT_EQ(e.stats().repolls, 0u);
    for (auto r : e.drops()) EXPECT_EQ(r, 0u);
    // The switch sent each frame in the ns it arrived: 123 frames of class 1 (DSCP 0 in
    // SONiC's default map), 0 ns each.
    const LatencySnapshot lat = e.switch_at(2)->latency();
    EXPECT_EQ(lat.tc[1].count, 123u);
    EXPECT_EQ(lat.tc[1].max, 0u);
    EXPECT_EQ(lat.tc[1].sum, 0u);
    for (unsigned c = 0; c < kLatClasses; c++) {
        if (c != 1) {
            EXPECT_EQ(lat.tc[c].count, 0u) << c;
        }
    }
}

// Two hosts send back to back at 100 Gb/s (1000-byte frames: S = 81.92 ns apart) into one
// 100 Gb/s port whose queue is drop-tail at 10,000 bytes (static threshold, no ECN, no PFC).
// Two frames arrive per S and one leaves, so the queue gains one frame per S: after the k-th
// pair it holds k frames (besides the one on the wire and the one handed to the device). The
// pair k = 11 finds it full: from then on the first frame of every pair (host 0's, whose
// arrival event comes first) is dropped, the second admitted. So with N = 200 frames each:
//   drops = N - 11 = 189, all host 0's; host 1 loses none;
//   a host-1 frame of the full queue waits for the wire frame, the device's frame and 9 queued
//   frames: delay = 2d + 2S (no queue) + 11 S.
TEST(SimEngine, DropTailBottleneckFollowsTheRates) {
    const std::string dir = tmpdir("droptail");
    const std::string dscp = "{" + join_n(64, ", ", [](int i) {
        return std::to_string(i) + ": 0";
    });
    std::ofstream(dir + "/qos.yaml")
        << "DSCP_TO_TC_MAP:\n  M: " << dscp
        << "}\n"
           "TC_TO_QUEUE_MAP:\n  M: {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7}\n"
           "BUFFER_POOL:\n  pool: {size: 1000000, mode: static}\n"
           "BUFFER_PROFILE:\n  p: {pool: pool, static_th: 10000}\n"
           "BUFFER_QUEUE:\n  default|0-7: {profile: p}\n"
           "PORT_QOS_MAP:\n  default: {dscp_to_tc_map: M, tc_to_queue_map: M}\n";
    const uint32_t N = 200;
    const TimePs S = wire_ps(1000, k100G), d = 1 * kPsPerUs;
    std::ofstream(dir + "/s.yaml")
        << "topology: {type: star, hosts: 3, link_rate: 100Gbps, link_delay: 1us}\n"
           "qos_profile: qos.yaml\n"
           "udp_flows:\n"
           "  - {src: 0, dst: 2, rate: 100Gbps, size: 1000, start: 0us, stop: "
        << N * S << "ps}\n"
        << "  - {src: 1, dst: 2, rate: 100Gbps, size: 1000, start: 0us, stop: " << N * S << "ps}\n";
    Scenario s;
    load_scenario(dir + "/s.yaml", s);
    Engine e(s, "");
    e.run();
    // 2N in, all forwarded; N - 11 refused by the queue (egress), the rest sent.
    const AccountingPort t = test::expect_accounting_balanced(e);
    EXPECT_EQ(t.rx, 2 * N);
    EXPECT_EQ(t.forwarded, 2 * N);
    EXPECT_EQ(t.drops[size_t(DropReason::buffer_full)], N - 11);
    EXPECT_EQ(t.egress_drops(), N - 11);
    EXPECT_EQ(t.tx, N + 11);
    EXPECT_EQ(t.queued, 0u);
    const auto &a = e.udp().stats()[0], &b = e.udp().stats()[1];
    EXPECT_EQ(a.sent, N);
    EXPECT_EQ(b.sent, N);
    EXPECT_EQ(b.received, N);
    EXPECT_EQ(a.received, 11u);
    EXPECT_EQ(e.drops()[size_t(DropReason::buffer_full)], N - 11);
    uint64_t total = 0;
    for (auto r : e.drops()) total += r;
    EXPECT_EQ(total, N - 11);
    EXPECT_EQ(b.max_delay, 2 * d + 13 * S);
    EXPECT_EQ(b.min_delay, 2 * d + 3 * S);  // host 1's frames always wait behind host 0's
    // Every host-1 frame from pair 10 on sees the full queue.
    for (const auto &x : e.udp().deliveries())
        if (x.flow == 1 && x.seq >= 10) {
            EXPECT_EQ(x.received - x.sent, 2 * d + 13 * S) << x.seq;
        }
    // The switch's latency histogram (class 0) holds each delivered frame's time in it: from
    // its last bit's arrival (sent + S + d) to its first bit's departure (received - S - d),
    // each on the switch's ns clock; the queue's wait is at most 11 S.
    uint64_t lat_sum = 0, lat_max = 0;
    for (const auto &x : e.udp().deliveries()) {
        const uint64_t ns_in = (x.sent + S + d) / kPsPerNs;
        const uint64_t ns_out = (x.received - S - d) / kPsPerNs;
        lat_sum += ns_out - ns_in;
        lat_max = std::max(lat_max, ns_out - ns_in);
    }
    EXPECT_GE(lat_max, 11 * S / kPsPerNs);  // 901.12 ns on the ns clock: 901 or 902
    EXPECT_LE(lat_max, 11 * S / kPsPerNs + 1);
    const LatencySnapshot lat = e.switch_at(3)->latency();
    EXPECT_EQ(lat.tc[0].count, N + 11);
    EXPECT_EQ(lat.tc[0].sum, lat_sum);
    EXPECT_EQ(lat.tc[0].max, lat_max);
    EXPECT_EQ(e.stats().repolls, 0u);
    std::filesystem::remove_all(dir);
}

// Leaf-spine (hosts 0-3, leaves 4-5, spines 6-7): eight flows from leaf 4's hosts to leaf 5's
// spread over both spines; the link leaf 4 - spine 6 goes down at 50 us and routes converge
// 20 us later. Frames are lost only in that window (on the dead link or in flight on it),
// every loss is counted, and afterwards all traffic takes spine 7.
std::string leaf_spine_scenario(const std::string &extra = "") {
    std::string y =
        "topology: {type: leaf_spine, leaves: 2, spines: 2, hosts_per_leaf: 2,\n"
        "           link_rate: 100Gbps, link_delay: 1us}\n"
        "sample_interval: 5us\n" +
        extra +
        "events:\n  - {at: 50us, link_down: [4, 6], convergence: 20us}\n"
        "udp_flows:\n";
    for (int i = 0; i < 8; i++)
        y += "  - {src: " + std::to_string(i % 2) + ", dst: " + std::to_string(2 + i / 4) +
             ", rate: 5Gbps, size: 1000, start: 0us, stop: 150us, sport: " +
             std::to_string(4000 + 17 * i) + "}\n";
    return y;
}

TEST(SimEngine, LinkDownMovesTrafficAfterConvergence) {
    Scenario s;
    parse_scenario(leaf_spine_scenario(), "ls.yaml", s);
    Engine e(s, "");
    e.run();
    test::expect_accounting_balanced(e);
    const EngineStats &st = e.stats();
    uint64_t sent = 0, recv = 0;
    for (const auto &f : e.udp().stats()) {
        sent += f.sent;
        recv += f.received;
        EXPECT_GT(f.received, 0u);
    }
    EXPECT_GT(st.link_down_drops, 0u) << "no flow hashed onto spine 6";
    EXPECT_EQ(sent - recv, st.link_down_drops + st.lost_in_flight);
    EXPECT_GE(st.first_link_drop, 50 * kPsPerUs);
    EXPECT_LE(st.last_link_drop, 70 * kPsPerUs);
    EXPECT_EQ(st.reroutes, 1u);
    // Every packet generated after convergence arrives: per flow, the last sequence numbers
    // are all delivered (the flows stop at 150 us; 80 us of packets at 5 Gb/s).
    std::vector<uint64_t> late(s.udp.size());
    for (const auto &d : e.udp().deliveries())
        if (d.sent >= 71 * kPsPerUs) late[d.flow]++;
    for (size_t i = 0; i < s.udp.size(); i++) {
        const TimePs period = wire_ps(1000, 5'000'000'000ull);
        const uint64_t expect = (150 * kPsPerUs - 1) / period - (71 * kPsPerUs - 1) / period;
        EXPECT_EQ(late[i], expect) << "flow " << i;
    }
    // The dead link carried frames before it went down; the other uplink carried the rest.
    uint32_t l46 = UINT32_MAX, l47 = UINT32_MAX;
    for (uint32_t i = 0; i < e.topology().link_count(); i++) {
        const TopoLink &tl = e.topology().link(i);
        if (tl.a == 4 && tl.b == 6) l46 = i;
        if (tl.a == 4 && tl.b == 7) l47 = i;
    }
    ASSERT_NE(l46, UINT32_MAX);
    ASSERT_NE(l47, UINT32_MAX);
    EXPECT_GT(e.link(l46).a_to_b.frames_sent(), 0u);
    EXPECT_GT(e.link(l47).a_to_b.frames_sent(), e.link(l46).a_to_b.frames_sent());
    EXPECT_EQ(e.link(l46).a_to_b.frames_dropped_down(), st.link_down_drops);
}

// The same inputs give byte-identical files (summary.json but for wall time and RSS).
TEST(SimEngine, SameRunTwiceGivesIdenticalFiles) {
    std::string dirs[2];
    for (int run = 0; run < 2; run++) {
        dirs[run] = tmpdir("det" + std::to_string(run));
        Scenario s;
        parse_scenario(leaf_spine_scenario("lb: {policy: flowlet, switches: {5: spray}}\n"),
                       "ls.yaml", s);
        Engine e(s, dirs[run]);
        e.run();
        test::expect_accounting_balanced(e);
        e.finish(0.25 * run, 0.5 * run, 1000 * run);
    }
    for (const char *f :
         {"fct.txt", "pfc_events.csv", "queue_depth.csv", "udp_flows.csv", "udp_delays.csv",
          "switch_latency.csv"}) {
        const std::string a = slurp(dirs[0] + "/" + f), b = slurp(dirs[1] + "/" + f);
        EXPECT_EQ(a, b) << f;
        if (std::string(f) == "udp_delays.csv") {
            EXPECT_GT(a.size(), 100u) << f;
        }
    }
    EXPECT_EQ(test::summary_without_machine(dirs[0]), test::summary_without_machine(dirs[1]));
    for (auto &d : dirs) std::filesystem::remove_all(d);
}

// Lossless incast: two line-rate senders of DSCP 26 (NVIDIA profile: TC3, lossless) into one
// port, with the ingress pool shrunk so PFC acts within 50 us. The switch pauses both senders
// (XOFF/XON frames seen on the wires), the hosts honour it, and nothing is dropped.
TEST(SimEngine, LosslessIncastPausesSendersWithoutDrops) {
    const std::string dir = tmpdir("pfc");
    std::string qos = slurp(std::string(ROCESW_SOURCE_ROOT "/config/qos/nvidia-roce.yaml"));
    auto replace = [&](const std::string &a, const std::string &b) {
        const size_t at = qos.find(a);
        ASSERT_NE(at, std::string::npos) << a;
        qos.replace(at, a.size(), b);
    };
    replace("size: 16777216, xoff: 4194304", "size: 1048576, xoff: 262144");
    replace("xoff: 2097152, xon_offset: 65536", "xoff: 131072, xon_offset: 16384");
    std::ofstream(dir + "/qos.yaml") << qos;
    std::ofstream(dir + "/s.yaml")
        << "topology: {type: star, hosts: 3, link_rate: 100Gbps, link_delay: 1us}\n"
           "qos_profile: qos.yaml\n"
           "udp_flows:\n"
           "  - {src: 0, dst: 2, rate: 100Gbps, size: 1000, stop: 200us, dscp: 26}\n"
           "  - {src: 1, dst: 2, rate: 100Gbps, size: 1000, stop: 200us, dscp: 26}\n";
    Scenario s;
    load_scenario(dir + "/s.yaml", s);
    Engine e(s, dir);
    e.run();
    // Every frame forwarded and sent; the switch's PFC frames are the ones seen on the wires.
    const AccountingPort t = test::expect_accounting_balanced(e);
    e.finish(0, 0, 0);
    EXPECT_GT(e.stats().pfc_frames, 0u);
    EXPECT_EQ(t.rx, 2 * 2442u);
    EXPECT_EQ(t.forwarded, 2 * 2442u);
    EXPECT_EQ(t.pfc_frames, e.stats().pfc_frames);
    EXPECT_EQ(t.tx, 2 * 2442u + t.pfc_frames);
    const std::string summary = slurp(dir + "/summary.json");
    EXPECT_NE(summary.find("\"accounting\": {\"switches\": 1, \"balanced\": 1, \"verdict\": "
                           "\"balanced\", \"rx\": 4884, \"forwarded\": 4884,"),
              std::string::npos)
        << summary;
    for (auto r : e.drops()) EXPECT_EQ(r, 0u);
    for (const auto &f : e.udp().stats()) {
        EXPECT_EQ(f.sent, 2442u);  // 200 us / 81.92 ns
        EXPECT_EQ(f.received, f.sent);
    }
    // Every frame crossed the switch in class 3; the summary and switch_latency.csv say so.
    EXPECT_EQ(e.switch_at(3)->latency().tc[3].count, 2 * 2442u);
    EXPECT_NE(summary.find("\"switch_latency\": {\"3\": {\"packets\": 4884, \"p50_ns\": "),
              std::string::npos)
        << summary;
    const std::string lat = slurp(dir + "/switch_latency.csv");
    EXPECT_EQ(lat.rfind("node,tc,packets,p50_ns,p99_ns,p999_ns,max_ns,mean_ns\n3,3,4884,", 0), 0u)
        << lat;
    EXPECT_EQ(std::count(lat.begin(), lat.end(), '\n'), 2) << lat;
    const std::string ev = slurp(dir + "/pfc_events.csv");
    EXPECT_NE(ev.find(",3,0,3,xoff,65535\n"), std::string::npos) << ev.substr(0, 200);
    EXPECT_NE(ev.find(",3,0,3,xon,0\n"), std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST(SimScenario, ErrorsNameFileLineAndField) {
    Scenario s;
    try {
        parse_scenario(
            "topology: {type: star, hosts: 2}\nudp_flows:\n  - {src: 0, dst: 7, "
            "rate: 1Gbps}\n",
            "x.yaml", s);
        FAIL() << "no error";
    } catch (const InputError &e) {
        EXPECT_EQ(std::string(e.what()), "x.yaml:3: udp_flows[0].dst: 7 is not a node (0..2)");
    }
    Scenario s2;
    try {
        parse_scenario("topology: {type: star, link_rate: 100Gbs}\n", "y.yaml", s2);
        FAIL() << "no error";
    } catch (const InputError &e) {
        EXPECT_NE(std::string(e.what()).find("y.yaml:1: topology.link_rate: '100Gbs'"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace rocesw::sim
