// QoS configuration: the shipped profiles load to the documented plans, every rule rejects with
// its exact message (TESTPLAN E5 and the rest of doc/qos.md), and build_qos_plan binds entries
// to ports.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/strings.h"
#include "qos/qos_config.h"
#include "config_message.h"

#ifndef ROCESW_TEST_DATA
#error "ROCESW_TEST_DATA must name the test/data directory"
#endif

namespace rocesw {
namespace {

const std::string kQosDir = std::string(ROCESW_TEST_DATA "/../../config/qos/");

// A complete DSCP map as YAML flow text: DSCP d -> tc(d).
template <typename F>
std::string dscp_map(F tc) {
    return "{" + join_n(64, ", ", [&](int d) {
               return std::to_string(d) + ": " + std::to_string(tc(d));
           }) + "}";
}

std::string identity8() {
    return R"({"0": 0, "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7})";
}

// A small valid profile; tests append or replace pieces.
std::string base(const std::string &wred = "", const std::string &extra = "") {
    return "DSCP_TO_TC_MAP:\n  M: " + dscp_map([](int d) { return d % 8; }) +
           "\nDOT1P_TO_TC_MAP:\n  M: " + identity8() + "\nTC_TO_QUEUE_MAP:\n  M: " + identity8() +
           "\nSCHEDULER:\n  s: {type: DWRR, weight: 10}\n  hi: {type: STRICT}\n"
           "WRED_PROFILE:\n  roce:\n" +
           (wred.empty() ? "    ecn: ecn_all\n    green_min_threshold: 100000\n"
                           "    green_max_threshold: 200000\n    green_drop_probability: 10\n"
                         : wred) +
           "BUFFER_POOL:\n  lossy: {size: 1000000, mode: dynamic}\n"
           "BUFFER_PROFILE:\n  p: {pool: lossy, size: 1000, dynamic_th: 1}\n"
           "PORT_QOS_MAP:\n  default: {dscp_to_tc_map: M, tc_to_queue_map: M, pfc_enable: \"3\"}\n"
           "QUEUE:\n  default|0-2: {scheduler: s}\n  default|3: {scheduler: s, wred_profile: "
           "roce}\n"
           "  default|4-6: {scheduler: s}\n" +
           extra;
}

std::string error_of(const std::string &yaml) {
    try {
        load_qos_string(yaml, "q.yaml");
    } catch (const ConfigError &e) {
        return test::without_line(e, "q.yaml");
    }
    return "(no error)";
}

std::vector<QosPortInfo> two_ports() {
    return {{"p0", 10000}, {"p1", 25000}};
}

TEST(QosConfig, ShippedSonicDefaultLoadsToTheDocumentedPlan) {
    QosConfig c = load_qos_file(kQosDir + "sonic-default.yaml");
    QosPlan plan = build_qos_plan(c, two_ports());
    ASSERT_EQ(plan.ports.size(), 2u);
    const PortQosPlan &p = plan.ports[1];
    for (int d = 0; d < 64; d++) {
        uint8_t want = d == 3 ? 3 : d == 4 ? 4 : d == 46 ? 5 : d == 48 ? 6 : d == 8 ? 0 : 1;
        EXPECT_EQ(p.cls.dscp_to_tc[size_t(d)], want) << "DSCP " << d;
    }
    EXPECT_EQ(p.cls.trust, Trust::dscp);
    EXPECT_EQ(p.cls.pfc_enable, (1u << 3) | (1u << 4));
    for (unsigned q = 0; q < 8; q++) EXPECT_EQ(p.queues[q].lossless, q == 3 || q == 4) << q;
    EXPECT_TRUE(p.queues[3].ecn);
    EXPECT_EQ(p.queues[3].mark.min_bytes, 250000u);
    EXPECT_EQ(p.queues[3].mark.max_bytes, 2097152u);
    EXPECT_EQ(p.queues[3].mark.max_probability_pct, 5u);
    EXPECT_EQ(p.queues[3].mark_point, MarkPoint::dequeue);
    EXPECT_EQ(p.queues[7].sched, SchedType::strict);
    EXPECT_EQ(p.queues[0].sched, SchedType::dwrr);
    EXPECT_EQ(p.queues[0].weight, 14u);
    EXPECT_EQ(p.queues[3].weight, 15u);
    EXPECT_EQ(p.rate_bps, 25'000'000'000ull);
    EXPECT_EQ(plan.switch_tc, 7u);
    ASSERT_EQ(plan.pools.size(), 2u);
    EXPECT_EQ(p.queues[0].pool, 1);
    EXPECT_EQ(p.queues[0].reserved_bytes, 1518u);
    EXPECT_EQ(p.queues[0].dynamic_th, 3);
    EXPECT_EQ(p.queues[3].pool, 0);
    EXPECT_FALSE(p.queues[3].dynamic);
}

TEST(QosConfig, ShippedNvidiaRoceLoadsToTheDocumentedPlan) {
    QosPlan plan = build_qos_plan(load_qos_file(kQosDir + "nvidia-roce.yaml"), two_ports());
    const PortQosPlan &p = plan.ports[0];
    for (int d = 0; d < 64; d++) {
        uint8_t want = d == 26 ? 3 : d == 48 ? 6 : d == 56 ? 7 : 0;
        EXPECT_EQ(p.cls.dscp_to_tc[size_t(d)], want) << "DSCP " << d;
    }
    EXPECT_EQ(p.cls.pfc_enable, 1u << 3);
    EXPECT_TRUE(p.queues[3].lossless);
    EXPECT_TRUE(p.queues[3].ecn);
    EXPECT_FALSE(p.queues[3].drop.enabled);
    EXPECT_EQ(p.queues[3].mark.min_bytes, 153600u);
    EXPECT_EQ(p.queues[3].mark.max_bytes, 1536000u);
    EXPECT_EQ(p.queues[6].sched, SchedType::strict);
    EXPECT_EQ(p.queues[7].sched, SchedType::strict);
    EXPECT_EQ(p.queues[0].weight, 50u);
    EXPECT_EQ(p.queues[3].weight, 50u);
    EXPECT_EQ(plan.switch_tc, 7u);
}

// A lossless queue whose ECN band starts at or above its PG's XOFF point is a warning (one per
// port); the shipped profiles and the lab profile with ECN below XOFF give none.
TEST(QosConfig, EcnAtOrAboveXoffIsWarned) {
    const std::string scen = kQosDir + "../scenarios/qos/";
    for (const char *ok : {"nvidia-roce.yaml", "sonic-default.yaml"})
        EXPECT_TRUE(build_qos_plan(load_qos_file(kQosDir + ok), two_ports()).warnings.empty())
            << ok;
    EXPECT_TRUE(
        build_qos_plan(load_qos_file(scen + "lab-lossless.yaml"), two_ports()).warnings.empty());
    QosPlan plan = build_qos_plan(load_qos_file(scen + "lab-ecn-above-xoff.yaml"), two_ports());
    ASSERT_EQ(plan.warnings.size(), 2u);
    EXPECT_EQ(plan.warnings[0],
              "QUEUE: port p0 queue 3: ECN marking starts at 409600 bytes (WRED "
              "green_min_threshold), at or above the PFC XOFF point of PG 3 (102400 bytes): PFC "
              "pauses before ECN marks (doc/pfc.md)");
}

TEST(QosConfig, BuiltInDefaultEqualsTheShippedFile) {
    QosConfig file = load_qos_file(kQosDir + "sonic-default.yaml");
    QosConfig builtin = default_qos_config();
    builtin.source = file.source;
    EXPECT_EQ(file, builtin);
}

TEST(QosConfig, BaseProfileIsValid) {
    QosPlan plan = build_qos_plan(load_qos_string(base(), "q.yaml"), two_ports());
    EXPECT_TRUE(plan.ports[0].queues[3].lossless);
    EXPECT_EQ(plan.ports[0].queues[7].sched, SchedType::dwrr);  // no QUEUE row: DWRR weight 1
    EXPECT_EQ(plan.ports[0].queues[7].weight, 1u);
    EXPECT_EQ(plan.ports[0].queues[7].pool, -1);  // no BUFFER_QUEUE row: no pool
}

TEST(QosConfig, E5RejectsKminAboveKmax) {
    EXPECT_EQ(error_of(base("    ecn: ecn_all\n    green_min_threshold: 300000\n"
                            "    green_max_threshold: 200000\n    green_drop_probability: 10\n")),
              "q.yaml: WRED_PROFILE.roce.green_min_threshold: 300000 is above "
              "green_max_threshold 200000");
}

TEST(QosConfig, E5RejectsPmaxOutside0To100) {
    EXPECT_EQ(error_of(base("    ecn: ecn_all\n    green_min_threshold: 1\n"
                            "    green_max_threshold: 2\n    green_drop_probability: 101\n")),
              "q.yaml: WRED_PROFILE.roce.green_drop_probability: 101 is out of range 0..100");
    EXPECT_EQ(error_of(base("    ecn: ecn_all\n    green_min_threshold: 1\n"
                            "    green_max_threshold: 2\n    green_drop_probability: -1\n")),
              "q.yaml: WRED_PROFILE.roce.green_drop_probability: -1 is out of range 0..100");
}

TEST(QosConfig, E5RejectsIncompleteAndInconsistentWredProfiles) {
    EXPECT_EQ(error_of(base("    ecn: ecn_all\n    green_min_threshold: 1\n"
                            "    green_drop_probability: 5\n")),
              "q.yaml: WRED_PROFILE.roce.green_max_threshold: required field missing");
    EXPECT_EQ(error_of(base("    ecn: ecn_some\n")),
              "q.yaml: WRED_PROFILE.roce.ecn: 'ecn_some' is not one of ecn_none, ecn_green, "
              "ecn_yellow, ecn_red, ecn_green_yellow, ecn_green_red, ecn_yellow_red, ecn_all");
    EXPECT_EQ(error_of(base("    ecn: ecn_all\n    green_min_threshold: 1\n"
                            "    green_max_threshold: 2\n    green_drop_probability: 5\n"
                            "    drop_min_threshold: 5\n")),
              "q.yaml: WRED_PROFILE.roce.drop_min_threshold: a Not-ECT drop curve needs "
              "wred_green_enable: true");
    EXPECT_EQ(error_of(base("    wred_green_enable: true\n    ecn: ecn_all\n"
                            "    green_min_threshold: 1\n    green_max_threshold: 2\n"
                            "    green_drop_probability: 5\n    drop_min_threshold: 500\n"
                            "    drop_max_threshold: 400\n    drop_probability: 5\n")),
              "q.yaml: WRED_PROFILE.roce.drop_min_threshold: 500 is above drop_max_threshold 400");
    EXPECT_EQ(error_of(base("    ecn: ecn_all\n    green_min_threshold: 1\n"
                            "    green_max_threshold: 2\n    green_drop_probability: 5\n"
                            "    yellow_min_threshold: 9\n    yellow_max_threshold: 8\n")),
              "q.yaml: WRED_PROFILE.roce.yellow_min_threshold: 9 is above yellow_max_threshold 8");
    EXPECT_EQ(
        error_of(base("    ecn: ecn_all\n    green_min_threshold: 1\n"
                      "    green_max_threshold: 2\n    green_drop_probability: 5\n"
                      "    ecn_mark_point: sometimes\n")),
        "q.yaml: WRED_PROFILE.roce.ecn_mark_point: 'sometimes' is not one of dequeue, enqueue");
    EXPECT_EQ(error_of(base("    ecn: ecn_all\n    green_minimum: 1\n")),
              "q.yaml: WRED_PROFILE.roce: unknown field 'green_minimum'");
}

TEST(QosConfig, WredProfileCurves) {
    QosConfig c = load_qos_string(
        base("    wred_green_enable: true\n    ecn: ecn_all\n    green_min_threshold: 1000\n"
             "    green_max_threshold: 2000\n    green_drop_probability: 7\n"
             "    drop_min_threshold: 3000\n    drop_max_threshold: 4000\n"
             "    drop_probability: 9\n    ecn_mark_point: enqueue\n"),
        "q.yaml");
    const QosWredProfile &w = c.wred[0];
    EXPECT_TRUE(w.ecn);
    EXPECT_EQ(w.mark, (WredCurve{true, 1000, 2000, 7}));
    EXPECT_EQ(w.drop, (WredCurve{true, 3000, 4000, 9}));
    EXPECT_EQ(w.mark_point, MarkPoint::enqueue);
    // Without drop_*: Not-ECT packets drop on the green curve (SONiC's meaning).
    QosConfig c2 = load_qos_string(
        base("    wred_green_enable: \"true\"\n    ecn: ecn_none\n    green_min_threshold: \"10\"\n"
             "    green_max_threshold: \"20\"\n    green_drop_probability: \"30\"\n"),
        "q.yaml");
    EXPECT_FALSE(c2.wred[0].ecn);
    EXPECT_FALSE(c2.wred[0].mark.enabled);
    EXPECT_EQ(c2.wred[0].drop, (WredCurve{true, 10, 20, 30}));
}

TEST(QosConfig, MapsMustBeCompleteAndInRange) {
    std::string partial = base();
    partial.replace(partial.find("\"7\": 7}"), 7, "\"6\": 6}");
    EXPECT_EQ(error_of(partial), "q.yaml: DOT1P_TO_TC_MAP.M: duplicate field '6'");
    std::string twice = base();
    twice.replace(twice.find("\"7\": 7}"), 7, "\"06\": 6}");
    EXPECT_EQ(error_of(twice), "q.yaml: DOT1P_TO_TC_MAP.M.06: priority 6 is mapped twice");
    std::string missing = base();
    missing.replace(missing.find(", 63: 7}"), 8, "}");
    EXPECT_EQ(error_of(missing),
              "q.yaml: DSCP_TO_TC_MAP.M: DSCP 63 is not mapped (all 64 values are required)");
    std::string key_range = base();
    key_range.replace(key_range.find(", 63: 7}"), 8, ", 64: 7}");
    EXPECT_EQ(error_of(key_range), "q.yaml: DSCP_TO_TC_MAP.M.64: 64 is out of range 0..63");
    std::string value_range = base();
    value_range.replace(value_range.find(", 63: 7}"), 8, ", 63: 8}");
    EXPECT_EQ(error_of(value_range), "q.yaml: DSCP_TO_TC_MAP.M.63: 8 is out of range 0..7");
    std::string tcq = base();
    tcq.replace(tcq.find("\"0\": 0", tcq.find("TC_TO_QUEUE_MAP")), 6, "\"0\": 9");
    EXPECT_EQ(error_of(tcq), "q.yaml: TC_TO_QUEUE_MAP.M.0: 9 is out of range 0..7");
}

TEST(QosConfig, SchedulerRules) {
    EXPECT_EQ(error_of(base("", "").replace(base().find("weight: 10"), 10, "weight: 0")),
              "q.yaml: SCHEDULER.s.weight: 0 is out of range 1..255");
    EXPECT_EQ(error_of(base().replace(base().find("weight: 10"), 10, "weight: 256")),
              "q.yaml: SCHEDULER.s.weight: 256 is out of range 1..255");
    EXPECT_EQ(error_of(base().replace(base().find("{type: DWRR, weight: 10}"), 24, "{type: DWRR}")),
              "q.yaml: SCHEDULER.s.weight: required field missing");
    EXPECT_EQ(error_of(base().replace(base().find("{type: STRICT}"), 14, "{type: FAIR}")),
              "q.yaml: SCHEDULER.hi.type: 'FAIR' is not one of STRICT, DWRR, WRR");
}

TEST(QosConfig, BufferRules) {
    auto with_buffer = [](const std::string &pools, const std::string &profiles) {
        std::string s = base();
        size_t a = s.find("BUFFER_POOL:");
        size_t b = s.find("PORT_QOS_MAP:");
        return s.replace(a, b - a, "BUFFER_POOL:\n" + pools + "BUFFER_PROFILE:\n" + profiles);
    };
    EXPECT_EQ(error_of(with_buffer("  a: {size: 1000, mode: dynamic}\n",
                                   "  p: {pool: a, dynamic_th: 9}\n")),
              "q.yaml: BUFFER_PROFILE.p.dynamic_th: 9 is out of range -8..8");
    EXPECT_EQ(error_of(with_buffer("  a: {size: 1000, mode: static}\n",
                                   "  p: {pool: a, dynamic_th: 1}\n")),
              "q.yaml: BUFFER_PROFILE.p.dynamic_th: pool 'a' is static (mode: static), use "
              "static_th");
    EXPECT_EQ(error_of(with_buffer("  a: {size: 1000}\n", "  p: {pool: a, static_th: 1}\n")),
              "q.yaml: BUFFER_PROFILE.p.static_th: pool 'a' is dynamic (mode: dynamic), use "
              "dynamic_th");
    EXPECT_EQ(error_of(with_buffer("  a: {size: 1000}\n", "  p: {pool: a}\n")),
              "q.yaml: BUFFER_PROFILE.p: one of dynamic_th, static_th is required");
    EXPECT_EQ(error_of(with_buffer("  a: {size: 1000}\n", "  p: {pool: b, dynamic_th: 0}\n")),
              "q.yaml: BUFFER_PROFILE.p.pool: no BUFFER_POOL named 'b'");
    EXPECT_EQ(error_of(with_buffer("  a: {size: 1000}\n",
                                   "  p: {pool: \"[BUFFER_PROFILE|a]\", dynamic_th: 0}\n")),
              "q.yaml: BUFFER_PROFILE.p.pool: '[BUFFER_PROFILE|a]' refers to table "
              "BUFFER_PROFILE, expected BUFFER_POOL");
    EXPECT_EQ(
        error_of(with_buffer("  a: {size: 1000}\n", "  p: {pool: a, size: 1001, dynamic_th: 0}\n")),
        "q.yaml: BUFFER_PROFILE.p.size: 1001 is above the size 1000 of pool 'a'");
    EXPECT_EQ(error_of(with_buffer("  a: {size: 1000, type: ingress}\n",
                                   "  p: {pool: \"[BUFFER_POOL|a]\", dynamic_th: -8}\n") +
                       "BUFFER_QUEUE:\n  default|0: {profile: p}\n"),
              "q.yaml: BUFFER_QUEUE.default|0.profile: profile 'p' uses ingress pool 'a'; "
              "BUFFER_QUEUE needs an egress pool");
    // Reservations beyond the pool are found once the ports are known.
    QosConfig c = load_qos_string(
        with_buffer("  a: {size: 10000}\n", "  p: {pool: a, size: 3000, dynamic_th: 0}\n") +
            "BUFFER_QUEUE:\n  default|0-1: {profile: p}\n",
        "q.yaml");
    EXPECT_NO_THROW(build_qos_plan(c, std::vector<QosPortInfo>{{"p0", 1000}}));
    try {
        build_qos_plan(c, two_ports());
        ADD_FAILURE() << "no error";
    } catch (const ConfigError &e) {
        EXPECT_STREQ(e.what(),
                     "q.yaml: BUFFER_POOL.a: queues reserve 12000 bytes in total "
                     "(BUFFER_PROFILE size of every queue using it), above its size "
                     "10000");
    }
}

TEST(QosConfig, PortAndQueueRules) {
    std::string s = base();
    EXPECT_EQ(error_of(s.replace(s.find("pfc_enable: \"3\""), 15, "pfc_enable: \"3,9\"")),
              "q.yaml: PORT_QOS_MAP.default.pfc_enable: 9 is out of range 0..7");
    s = base();
    EXPECT_EQ(error_of(s.replace(s.find("pfc_enable: \"3\""), 15, "pfc_enable: \"3,3\"")),
              "q.yaml: PORT_QOS_MAP.default.pfc_enable: TC 3 is listed twice");
    s = base();
    EXPECT_EQ(error_of(s.replace(s.find("tc_to_queue_map: M, "), 20, "trust: dot1p, ")),
              "q.yaml: PORT_QOS_MAP.default: trust dot1p needs dot1p_to_tc_map");
    s = base();
    EXPECT_EQ(error_of(s.replace(s.find("tc_to_queue_map: M, "), 20, "trust: cos, ")),
              "q.yaml: PORT_QOS_MAP.default.trust: 'cos' is not one of dscp, dot1p");
    // A queue shared by a lossless and a lossy TC.
    s = base();
    s.replace(s.find("\"2\": 2", s.find("TC_TO_QUEUE_MAP")), 6, "\"2\": 3");
    EXPECT_EQ(error_of(s),
              "q.yaml: PORT_QOS_MAP.default.pfc_enable: queue 3 holds lossless TC 3 and lossy "
              "TC 2");
    s = base("", "  default|2-4: {scheduler: hi}\n");
    EXPECT_EQ(error_of(s),
              "q.yaml: QUEUE.default|2-4: queue 2 of default is also set by "
              "QUEUE.default|0-2");
    EXPECT_EQ(error_of(base("", "  p0|8: {scheduler: hi}\n")),
              "q.yaml: QUEUE.p0|8: 8 is out of range 0..7");
    EXPECT_EQ(error_of(base("", "  p0|5-4: {scheduler: hi}\n")),
              "q.yaml: QUEUE.p0|5-4: queue range 5-4 is empty");
    EXPECT_EQ(error_of(base("", "  p0: {scheduler: hi}\n")),
              "q.yaml: QUEUE.p0: 'p0' is not <port>|<queue> or <port>|<first>-<last>");
    EXPECT_EQ(error_of(base("", "  p0|7: {scheduler: nope}\n")),
              "q.yaml: QUEUE.p0|7.scheduler: no SCHEDULER named 'nope'");
    EXPECT_EQ(error_of(base() + "FOO_MAP: {}\n"),
              "q.yaml: unknown table 'FOO_MAP' (known: DSCP_TO_TC_MAP, DOT1P_TO_TC_MAP, "
              "TC_TO_QUEUE_MAP, TC_TO_PRIORITY_GROUP_MAP, SCHEDULER, WRED_PROFILE, BUFFER_POOL, "
              "BUFFER_PROFILE, PORT_QOS_MAP, QUEUE, BUFFER_QUEUE, BUFFER_PG, PFC_WD, ROCESW)");
    EXPECT_EQ(error_of(base() + "ROCESW: {queue_packets: 1000}\n"),
              "q.yaml: ROCESW.queue_packets: 1000 is not a power of two");
    EXPECT_EQ(error_of(base() + "ROCESW: {switch_tc: 8}\n"),
              "q.yaml: ROCESW.switch_tc: 8 is out of range 0..7");
    EXPECT_EQ(error_of(base() + "ROCESW: {cut_through: maybe}\n"),
              "q.yaml: ROCESW.cut_through: expected true or false, got 'maybe'");
}

// ROCESW.cut_through (doc/qos.md "Cut-through"): on unless the profile turns it off.
TEST(QosConfig, CutThroughDefaultsOnAndCanBeTurnedOff) {
    EXPECT_TRUE(build_qos_plan(load_qos_string(base(), "q.yaml"), two_ports()).cut_through);
    EXPECT_FALSE(build_qos_plan(load_qos_string(base() + "ROCESW: {cut_through: false}\n", "q.yaml"),
                                two_ports())
                     .cut_through);
}

// PORT_QOS_MAP ecn_depth (plan.h EcnDepth): the switch's ports count the TX ring by default,
// the simulator's (QosPortInfo::ecn_depth queue) do not; an explicit value beats both; an
// explicit `queue` on a port with a TX ring is warned about (the marks move up by the ring).
TEST(QosConfig, EcnDepthDefaultsPerEngineAndIsValidated) {
    QosPlan plan = build_qos_plan(load_qos_string(base(), "q.yaml"), two_ports());
    EXPECT_EQ(plan.ports[0].ecn_depth, EcnDepth::queue_and_tx_ring);
    EXPECT_TRUE(plan.warnings.empty());
    std::vector<QosPortInfo> sim = two_ports();
    for (auto &p : sim) p.ecn_depth = EcnDepth::queue;
    EXPECT_EQ(build_qos_plan(load_qos_string(base(), "q.yaml"), sim).ports[1].ecn_depth,
              EcnDepth::queue);

    std::string s = base();
    s.replace(s.find("pfc_enable: \"3\""), 15, "pfc_enable: \"3\", ecn_depth: queue");
    plan = build_qos_plan(load_qos_string(s, "q.yaml"), two_ports());
    EXPECT_EQ(plan.ports[1].ecn_depth, EcnDepth::queue);
    ASSERT_EQ(plan.warnings.size(), 2u);
    EXPECT_EQ(plan.warnings[0],
              "PORT_QOS_MAP.default.ecn_depth: queue: port p0's TX ring (up to 25000 bytes) is "
              "backlog the ECN marker does not see: marks start at a port backlog of up to "
              "Kmin + 25000 bytes");
    EXPECT_TRUE(build_qos_plan(load_qos_string(s, "q.yaml"), sim).warnings.empty());

    s = base();
    s.replace(s.find("pfc_enable: \"3\""), 15, "pfc_enable: \"3\", ecn_depth: queue_and_tx_ring");
    EXPECT_EQ(build_qos_plan(load_qos_string(s, "q.yaml"), sim).ports[0].ecn_depth,
              EcnDepth::queue_and_tx_ring);
    s = base();
    EXPECT_EQ(
        error_of(s.replace(s.find("pfc_enable: \"3\""), 15, "pfc_enable: \"3\", ecn_depth: ring")),
        "q.yaml: PORT_QOS_MAP.default.ecn_depth: 'ring' is not one of queue_and_tx_ring, "
        "queue");
}

TEST(QosConfig, NamedEntriesBeatDefaultAndUnknownPortsAreErrors) {
    std::string s = base("", "  p1|3: {scheduler: hi}\n");
    s.replace(s.find("QUEUE:\n"), 0,
              "  p1: {trust: dot1p, dot1p_to_tc_map: \"[DOT1P_TO_TC_MAP|M]\", default_tc: 2, "
              "shaper: false, tx_ring_bytes: 0, shaper_burst_bytes: 5000}\n");
    QosPlan plan = build_qos_plan(load_qos_string(s, "q.yaml"), two_ports());
    EXPECT_EQ(plan.ports[0].cls.trust, Trust::dscp);
    EXPECT_EQ(plan.ports[1].cls.trust, Trust::dot1p);
    EXPECT_EQ(plan.ports[1].cls.default_tc, 2u);
    EXPECT_EQ(plan.ports[1].cls.pfc_enable, 0u);  // the named entry replaces default entirely
    EXPECT_FALSE(plan.ports[1].shaper);
    EXPECT_EQ(plan.ports[1].tx_ring_bytes, 0u);
    EXPECT_EQ(plan.ports[1].shaper_burst_bytes, 5000u);
    EXPECT_EQ(plan.ports[0].tx_ring_bytes, 25000u);  // auto: 20 us at 10G = 25 KB
    EXPECT_EQ(plan.ports[0].queues[3].sched, SchedType::dwrr);
    EXPECT_EQ(plan.ports[1].queues[3].sched, SchedType::strict);
    EXPECT_FALSE(plan.ports[1].queues[3].ecn);  // the named row has no wred_profile

    QosConfig bad = load_qos_string(base("", "  p9,p0|7: {scheduler: hi}\n"), "q.yaml");
    try {
        build_qos_plan(bad, two_ports());
        ADD_FAILURE() << "no error";
    } catch (const ConfigError &e) {
        EXPECT_STREQ(e.what(), "q.yaml: QUEUE.p9,p0|7: no port named 'p9' (ports: p0, p1)");
    }
    std::string nodefault = base();
    nodefault.replace(nodefault.find("default: {dscp"), 7, "p0");
    try {
        build_qos_plan(load_qos_string(nodefault, "q.yaml"), two_ports());
        ADD_FAILURE() << "no error";
    } catch (const ConfigError &e) {
        EXPECT_STREQ(e.what(),
                     "q.yaml: PORT_QOS_MAP: no entry for port 'p1' and no 'default' entry");
    }
}

TEST(QosConfig, SonicStyleQuotedValuesAndReferencesAreAccepted) {
    std::string s = base();
    s.replace(s.find("{scheduler: s, wred_profile: roce}"), 34,
              "{\"scheduler\": \"[SCHEDULER|s]\", \"wred_profile\": \"[WRED_PROFILE|roce]\"}");
    s.replace(s.find("{type: DWRR, weight: 10}"), 24, "{\"type\": \"DWRR\", \"weight\": \"10\"}");
    QosPlan plan = build_qos_plan(load_qos_string(s, "q.yaml"), two_ports());
    EXPECT_EQ(plan.ports[0].queues[3].weight, 10u);
    EXPECT_TRUE(plan.ports[0].queues[3].ecn);
}

TEST(QosConfig, YamlSyntaxErrorsNameTheLineAndOneDocumentOnly) {
    EXPECT_EQ(error_of("QUEUE:\n  a: [\n"),
              "q.yaml: line 3, column 1: end of sequence flow not found");
    EXPECT_EQ(error_of("ROCESW: {seed: 1}\n---\nROCESW: {seed: 2}\n"),
              "q.yaml: expected one YAML document, found 2 or more");
    // yaml-cpp 0.7 never gets past a lone ',' (issue 1040): reported, not looped on.
    EXPECT_EQ(error_of(","), "q.yaml: expected one YAML document, found 2 or more");
    try {
        load_qos_file(kQosDir);
        ADD_FAILURE() << "no error";
    } catch (const ConfigError &e) {
        EXPECT_EQ(std::string(e.what()), kQosDir + ": is a directory");
    }
}

}  // namespace
}  // namespace rocesw
