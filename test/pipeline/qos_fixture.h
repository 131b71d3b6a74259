// Shared pieces of the QoS pipeline tests: a profile builder, a frame builder with DSCP/ECN,
// packets made the way the worker makes them (parse, classify), a QosEgress over in-memory
// ports, and a counting sink port for rate measurements over millions of packets.
#pragma once

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <memory>
#include <string>
#include <vector>

#include "common/strings.h"
#include "fixture.h"
#include "frames.h"
#include "pkt/mbuf_meta.h"
#include "pkt/parser.h"
#include "qos/classifier.h"
#include "qos/qos_config.h"
#include "qos/qos_egress.h"
#include "test_ports.h"

namespace rocesw::test {

// DSCP d -> TC d % 8 and identity TC -> queue, so a test picks queue q with DSCP q.
inline std::string qos_maps_yaml() {
    std::string s = "DSCP_TO_TC_MAP:\n  M: {" + join_n(64, ", ", [](int d) {
        return std::to_string(d) + ": " + std::to_string(d % 8);
    });
    s += "}\nDOT1P_TO_TC_MAP:\n  M: {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7}\n";
    s += "TC_TO_QUEUE_MAP:\n  M: {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7}\n";
    return s;
}

// A profile: the maps above plus `tables` (YAML text with SCHEDULER, QUEUE, ...) and a
// PORT_QOS_MAP default entry with `port_fields` added.
inline std::string qos_profile(const std::string &tables, const std::string &port_fields = "") {
    return qos_maps_yaml() + tables +
           "PORT_QOS_MAP:\n  default: {dscp_to_tc_map: M, dot1p_to_tc_map: M, tc_to_queue_map: M" +
           (port_fields.empty() ? "" : ", " + port_fields) + "}\n";
}

// An Ethernet + IPv4 + UDP frame of exactly `frame_len` bytes (>= 42).
inline Bytes udp4_frame(uint8_t dscp, uint8_t ecn, uint32_t frame_len, uint16_t sport = 1000) {
    size_t payload = frame_len - 14 - 20 - 8;
    return cat(eth(kH2, kP1, kEtherTypeIpv4),
               ipv4(v4(10, 0, 1, 2), v4(10, 0, 2, 2), kProtoUdp, udp_payload(sport, 2000, payload),
                    63, uint8_t(dscp << 2 | ecn)));
}

inline Bytes udp6_frame(uint8_t dscp, uint8_t ecn, uint32_t frame_len, int pcp = -1) {
    size_t payload = frame_len - (pcp >= 0 ? 18 : 14) - 40 - 8;
    Bytes b = cat(
        eth(kH2, kP1, kEtherTypeIpv6, pcp),
        ipv6(ip6(0xfd00, 1, 2), ip6(0xfd00, 2, 2), kProtoUdp, udp_payload(1000, 2000, payload)));
    uint8_t tc = uint8_t(dscp << 2 | ecn);
    size_t l3 = pcp >= 0 ? 18 : 14;
    b[l3] = uint8_t(0x60 | tc >> 4);
    b[l3 + 1] = uint8_t((tc & 0x0F) << 4 | (b[l3 + 1] & 0x0F));
    return b;
}

// Counts what the "device" takes and keeps the mbufs for reuse, so rate tests can run millions
// of packets from a small pool without copying frames.
class SinkPorts final : public PortIo {
  public:
    uint16_t rx_burst(uint16_t, uint16_t, rte_mbuf **, uint16_t) override { return 0; }
    uint16_t tx_burst(uint16_t port, uint16_t, rte_mbuf **pkts, uint16_t n) override {
        for (uint16_t i = 0; i < n; i++) {
            packets[port]++;
            bytes[port] += pkts[i]->pkt_len;
            taken.push_back(pkts[i]);
        }
        return n;
    }
    std::array<uint64_t, kMaxPorts> packets{}, bytes{};
    std::vector<rte_mbuf *> taken;
};

// Members are public: helpers outside the test bodies (qos_ecn_test.cc) drive the fixture.
class QosFixture : public ::testing::Test {
  public:
    void SetUp() override {
        ports = std::make_unique<TestPorts>(unique_name("qp"), 2, 32768);
        counters = std::make_unique<WorkerCounters>();
        baseline_mbufs = ports->mbufs_in_use();
    }
    void TearDown() override {
        egress.reset();
        shared.reset();
        for (auto *m : sink.taken) rte_pktmbuf_free(m);
        sink.taken.clear();
        ports->take_tx(0);
        ports->take_tx(1);
        EXPECT_EQ(ports->mbufs_in_use(), baseline_mbufs) << "mbufs leaked";
    }

    // Loads `yaml`, builds the plan for p0/p1 at `speed_mbps`, and a one-worker QosEgress over
    // the test ports (or over the sink when `to_sink`).
    void start(const std::string &yaml, uint64_t speed_mbps = 10000, bool to_sink = false,
               uint16_t burst = 32) {
        std::vector<QosPortInfo> info = {{"p0", speed_mbps}, {"p1", speed_mbps}};
        plan = build_qos_plan(load_qos_string(yaml, "test.yaml"), info);
        shared = std::make_unique<TrafficManager>(plan, 1, unique_name("qs"));
        egress = std::make_unique<QosEgress>(
            *shared, to_sink ? static_cast<PortIo &>(sink) : static_cast<PortIo &>(*ports),
            *counters, 0, 0, burst);
    }

    // A packet as the worker hands it to egress: parsed, classified on `in_port`, routed.
    rte_mbuf *packet(const Bytes &frame, uint16_t in_port = 0, uint16_t out_port = 1) {
        rte_mbuf *m = rte_pktmbuf_alloc(ports->pool());
        EXPECT_NE(m, nullptr);
        std::memcpy(rte_pktmbuf_append(m, uint16_t(frame.size())), frame.data(), frame.size());
        PacketMeta *meta = meta_of(m);
        ParseOptions opt;
        opt.max_l3_len = 9000;
        auto r = parse_frame(frame.data(), uint32_t(frame.size()), opt, meta);
        EXPECT_FALSE(r.has_value()) << "test frame does not parse";
        meta->in_port = uint8_t(in_port);
        meta->out_port = uint8_t(out_port);
        meta->tc = classify_tc(*meta, plan.ports[in_port].cls);
        return m;
    }

    void send(const Bytes &frame, int count = 1, uint16_t out_port = 1, uint16_t in_port = 0) {
        for (int i = 0; i < count; i++) {
            rte_mbuf *m = packet(frame, in_port, out_port);
            egress->enqueue(out_port, &m, 1, now_ns);
        }
    }

    QueueSnapshot q(uint8_t queue, uint16_t port = 1) const { return shared->queue(port, queue); }
    uint64_t port_drops(uint16_t port, DropReason r) const {
        return counters->ports[port].drops[size_t(r)].load();
    }
    // Flushes repeatedly (advancing virtual time by `step_ns`) until nothing is held.
    void drain(uint64_t step_ns = 100'000) {
        for (int i = 0; i < 100000 && egress->backlog(); i++) {
            now_ns += step_ns;
            egress->flush(now_ns);
        }
        ASSERT_EQ(egress->backlog(), 0u);
    }

    std::unique_ptr<TestPorts> ports;
    std::unique_ptr<WorkerCounters> counters;
    SinkPorts sink;
    QosPlan plan;
    std::unique_ptr<TrafficManager> shared;
    std::unique_ptr<QosEgress> egress;
    unsigned baseline_mbufs = 0;
    uint64_t now_ns = 1'000'000;
};

}  // namespace rocesw::test
