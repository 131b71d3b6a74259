// The data-plane metric families over a real QosEgress: after traffic in virtual time, a scrape
// says exactly what the counters say (TESTPLAN: observability; issue 7).
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "exposition.h"
#include "qos_fixture.h"
#include "qos/qos_metrics.h"
#include "pipeline/dataplane_metrics.h"

namespace rocesw::test {
namespace {

class PromMetrics : public QosFixture {
  protected:
    void start_with_metrics(const std::string &yaml) {
        start(yaml);
        register_dataplane_metrics(reg, {{"p0", "p1"}, counters.get(), 1});
        register_qos_metrics(reg, {"p0", "p1"}, *shared);
    }
    std::map<std::string, double> scrape() { return parse_exposition(reg.render()); }
    MetricRegistry reg;
};

TEST_F(PromMetrics, ScrapeMatchesQueueAndPortCounters) {
    // Queue 3 marks every ECT packet at enqueue (Kmin 0, Pmax 100 %).
    start_with_metrics(qos_profile(
        "WRED_PROFILE:\n  w: {ecn: ecn_all, green_min_threshold: 0, green_max_threshold: 1, "
        "green_drop_probability: 100, ecn_mark_point: enqueue}\n"
        "QUEUE:\n  default|3: {wred_profile: w}\n"));
    send(udp4_frame(3, 2, 1000), 10);  // DSCP 3 -> queue 3, ECT(0)
    send(udp4_frame(0, 0, 500), 4);    // queue 0, Not-ECT

    auto m = scrape();
    EXPECT_EQ(m.at("rocesw_queue_depth_packets{port=\"p1\",queue=\"3\"}"), 10);
    EXPECT_EQ(m.at("rocesw_queue_depth_bytes{port=\"p1\",queue=\"3\"}"), 10000);
    EXPECT_EQ(m.at("rocesw_queue_enqueued_packets_total{port=\"p1\",queue=\"0\"}"), 4);
    EXPECT_EQ(m.at("rocesw_port_tx_packets_total{port=\"p1\"}"), 0);

    drain();
    m = scrape();
    QueueSnapshot q3 = q(3), q0 = q(0);
    EXPECT_EQ(q3.deq_packets, 10u);
    EXPECT_GT(q3.ecn_marked, 0u);
    EXPECT_EQ(m.at("rocesw_queue_depth_bytes{port=\"p1\",queue=\"3\"}"), 0);
    EXPECT_EQ(m.at("rocesw_queue_watermark_bytes{port=\"p1\",queue=\"3\"}"), q3.watermark_bytes);
    EXPECT_EQ(m.at("rocesw_queue_watermark_bytes{port=\"p1\",queue=\"3\"}"), 10000);
    EXPECT_EQ(m.at("rocesw_queue_dequeued_packets_total{port=\"p1\",queue=\"3\"}"), 10);
    EXPECT_EQ(m.at("rocesw_queue_dequeued_bytes_total{port=\"p1\",queue=\"0\"}"), q0.deq_bytes);
    EXPECT_EQ(m.at("rocesw_queue_ecn_marked_total{port=\"p1\",queue=\"3\"}"), q3.ecn_marked);
    EXPECT_EQ(m.at("rocesw_queue_ecn_marked_total{port=\"p1\",queue=\"0\"}"), 0);
    EXPECT_EQ(m.at("rocesw_port_tx_packets_total{port=\"p1\"}"), 14);
    EXPECT_EQ(m.at("rocesw_port_tx_bytes_total{port=\"p1\"}"), counters->ports[1].tx_bytes.load());
    EXPECT_EQ(m.at("rocesw_pg_bytes{port=\"p0\",pg=\"3\"}"), 0);
    EXPECT_EQ(m.at("rocesw_pg_watermark_bytes{port=\"p0\",pg=\"3\"}"), shared->pg_watermark(0, 3));
}

TEST_F(PromMetrics, QueueDropsAppearByReasonAndInPortDrops) {
    // 64 packet slots per queue: 6 of 70 packets are refused (queue_full).
    start_with_metrics(qos_profile("ROCESW: {queue_packets: 64}\n"));
    send(udp4_frame(5, 0, 300), 70);
    auto m = scrape();
    const QueueSnapshot q5 = q(5);
    EXPECT_EQ(q5.drops[size_t(QueueDrop::queue_full)], 6u);
    EXPECT_EQ(m.at("rocesw_queue_drops_total{port=\"p1\",queue=\"5\",reason=\"queue_full\"}"),
              q5.drops[size_t(QueueDrop::queue_full)]);
    EXPECT_EQ(m.at("rocesw_drops_total{port=\"p1\",reason=\"tx_full\"}"),
              port_drops(1, DropReason::tx_full));
    EXPECT_EQ(m.at("rocesw_queue_drops_total{port=\"p1\",queue=\"5\",reason=\"wred_drop\"}"), 0);
    // Every (port, reason) and (port, queue, reason) is exported, zeros included.
    size_t drops = 0, qdrops = 0;
    for (const auto &[k, v] : m) {
        drops += k.rfind("rocesw_drops_total{", 0) == 0;
        qdrops += k.rfind("rocesw_queue_drops_total{", 0) == 0;
    }
    EXPECT_EQ(drops, 2 * kDropReasonCount);
    EXPECT_EQ(qdrops, 2 * kNumQueues * kQueueDropCount);
    drain();
}

TEST_F(PromMetrics, CutThroughPacketsPerPort) {
    start_with_metrics(qos_profile(""));
    // Queued: an enqueue without final_enqueue() waits for the flush.
    send(udp4_frame(2, 0, 500), 3);
    drain();
    EXPECT_EQ(ports->take_tx(1).size(), 3u);
    // Cut through: the last enqueue for idle p1 before the flush, one queue, within the rate.
    rte_mbuf *pkts[5];
    for (auto &m : pkts) m = packet(udp4_frame(2, 0, 500));
    egress->final_enqueue();
    egress->enqueue(1, pkts, 5, now_ns);
    EXPECT_EQ(ports->take_tx(1).size(), 5u);  // sent at enqueue, before any flush
    drain();
    auto m = scrape();
    EXPECT_EQ(m.at("rocesw_port_cut_through_packets_total{port=\"p1\"}"), 5);
    EXPECT_EQ(m.at("rocesw_port_cut_through_packets_total{port=\"p0\"}"), 0);
    EXPECT_EQ(egress->cut_through_packets(), 5u);
    EXPECT_EQ(shared->stats(1).cut_through_packets.load(), 5u);
    // Also dequeued: 3 through the queue, 5 cut through.
    EXPECT_EQ(m.at("rocesw_queue_dequeued_packets_total{port=\"p1\",queue=\"2\"}"), 8);
}

}  // namespace
}  // namespace rocesw::test
