// Ownership with several workers (doc/qos.md): a port's queues belong to one scheduler owner;
// other workers hand their packets over through the port's multi-producer ring. Tested with the
// three workers interleaved on one thread (deterministic) and with two producer threads and an
// owner thread running at once: every packet is delivered exactly once, each producer's
// packets stay in order within a queue, and the counters, PG bytes and mbufs balance.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "qos_fixture.h"

namespace rocesw::test {
namespace {

using QosMultiWorker = QosFixture;

// Producer id in the UDP destination port, sequence number in the source port.
Bytes tagged_packet(uint8_t dscp, uint16_t producer, uint16_t seq) {
    return cat(eth(kH2, kP1, kEtherTypeIpv4),
               ipv4(v4(10, 0, 1, 2), v4(10, 0, 2, 2), kProtoUdp,
                    udp_payload(seq, uint16_t(7000 + producer), 150), 63, uint8_t(dscp << 2)));
}

struct Delivery {
    uint8_t dscp;
    uint16_t producer, seq;
};

Delivery decode(const Frame &f) {
    return {uint8_t(f[15] >> 2), uint16_t(rd16(&f[36]) - 7000), rd16(&f[34])};
}

// Checks exactly-once and per-(producer, queue) order.
void check_deliveries(const std::vector<Delivery> &out, int producers, int per_producer) {
    ASSERT_EQ(out.size(), size_t(producers * per_producer));
    std::map<std::pair<uint16_t, uint8_t>, int> last;  // (producer, dscp) -> last seq
    std::vector<std::vector<bool>> seen(size_t(producers),
                                        std::vector<bool>(size_t(per_producer), false));
    for (auto &d : out) {
        ASSERT_LT(d.producer, producers);
        ASSERT_LT(d.seq, per_producer);
        ASSERT_FALSE(seen[d.producer][d.seq]) << "duplicate";
        seen[d.producer][d.seq] = true;
        auto key = std::make_pair(d.producer, d.dscp);
        auto it = last.find(key);
        if (it != last.end()) {
            ASSERT_GT(int(d.seq), it->second) << "reordered within a queue";
        }
        last[key] = d.seq;
    }
}

class ThreeWorkers : public QosMultiWorker {
  public:
    // Workers 0 and 1 produce; worker 2 owns both ports.
    void start3(const std::string &extra = "") {
        std::vector<QosPortInfo> info = {{"p0", 100000}, {"p1", 100000}};
        plan = build_qos_plan(
            load_qos_string(qos_profile("ROCESW: {queue_packets: 32768, handoff_ring_packets: "
                                        "32768}\n" +
                                        extra),
                            "test.yaml"),
            info);
        shared =
            std::make_unique<TrafficManager>(plan, 3, std::vector<uint16_t>{2, 2}, unique_name("mw"));
        for (uint16_t w = 0; w < 3; w++) {
            wc[w] = std::make_unique<WorkerCounters>();
            eg[w] = std::make_unique<QosEgress>(*shared, *ports, *wc[w], w, w);
        }
    }
    void TearDown() override {
        for (auto &e : eg) e.reset();
        QosMultiWorker::TearDown();
    }
    std::array<std::unique_ptr<WorkerCounters>, 3> wc;
    std::array<std::unique_ptr<QosEgress>, 3> eg;
};

TEST_F(ThreeWorkers, InterleavedOnOneThreadEveryPacketOnceInOrder) {
    start3();
    EXPECT_TRUE(eg[0]->owned_ports().empty());
    EXPECT_EQ(eg[2]->owned_ports(), (std::vector<uint16_t>{0, 1}));
    const int n = 3000;
    std::vector<Delivery> out;
    for (int i = 0; i < n; i++) {
        for (uint16_t p = 0; p < 3; p++) {  // worker 2 also produces: it admits directly
            rte_mbuf *m = packet(tagged_packet(uint8_t(i % 8), p, uint16_t(i)));
            eg[p]->enqueue(1, &m, 1, now_ns);
        }
        if (i % 7 == 0) {
            EXPECT_EQ(eg[0]->flush(now_ns), 0u);  // a non-owner has nothing to send
            eg[2]->flush(now_ns += 2000);
            for (auto &f : ports->take_tx(1)) out.push_back(decode(f));
        }
    }
    EXPECT_EQ(eg[0]->backlog(), 0u);
    while (eg[2]->backlog()) {
        eg[2]->flush(now_ns += 2000);
        for (auto &f : ports->take_tx(1)) out.push_back(decode(f));
    }
    check_deliveries(out, 3, n);
    uint64_t enq = 0, deq = 0;
    for (uint8_t i = 0; i < 8; i++) {
        enq += q(i).enq_packets;
        deq += q(i).deq_packets;
        EXPECT_EQ(q(i).depth_bytes, 0u);
    }
    EXPECT_EQ(enq, 3u * n);
    EXPECT_EQ(deq, 3u * n);
    EXPECT_EQ(wc[2]->ports[1].tx_packets.load(), 3u * n);  // the owner transmits everything
    EXPECT_EQ(wc[0]->ports[1].tx_packets.load(), 0u);
    EXPECT_EQ(eg[0]->handoff_drops(1) + eg[1]->handoff_drops(1), 0u);
    EXPECT_EQ(shared->pg_bytes(0, 0), 0u);
}

TEST_F(ThreeWorkers, TwoProducerThreadsAndAnOwnerThread) {
    start3();
    const int n = 12000;
    std::atomic<int> done{0};
    auto produce = [&](uint16_t w) {
        std::vector<rte_mbuf *> burst;
        for (int i = 0; i < n; i++) {
            rte_mbuf *m = packet(tagged_packet(uint8_t((i / 5) % 8), w, uint16_t(i)));
            burst.push_back(m);
            if (burst.size() == 32 || i == n - 1) {
                eg[w]->enqueue(1, burst.data(), uint16_t(burst.size()), 0);
                burst.clear();
            }
        }
        done.fetch_add(1);
    };
    std::vector<Delivery> out;
    std::thread owner([&] {
        uint64_t t = now_ns;
        // Virtual time, but the owner runs concurrently with the producers.
        while (done.load() < 2 || eg[2]->backlog()) {
            eg[2]->flush(t += 1000);
            for (auto &f : ports->take_tx(1)) out.push_back(decode(f));
        }
    });
    std::thread p0(produce, 0), p1(produce, 1);
    p0.join();
    p1.join();
    owner.join();
    check_deliveries(out, 2, n);
    EXPECT_EQ(eg[0]->handoff_drops(1) + eg[1]->handoff_drops(1), 0u);
    uint64_t enq = 0;
    for (uint8_t i = 0; i < 8; i++) {
        enq += q(i).enq_packets;
        EXPECT_EQ(q(i).depth_packets, 0u);
        EXPECT_EQ(q(i).drops_total(), 0u);
    }
    EXPECT_EQ(enq, 2u * n);
    EXPECT_EQ(wc[2]->ports[1].tx_packets.load(), 2u * n);
    EXPECT_EQ(shared->pg_bytes(0, 0), 0u);
}

TEST_F(ThreeWorkers, FullHandoffRingDropsAreCountedOnTheProducer) {
    start3("");
    // Rebuild with a small ring: 64 packets.
    for (auto &e : eg) e.reset();
    shared.reset();
    plan.handoff_ring_packets = 64;
    shared = std::make_unique<TrafficManager>(plan, 3, std::vector<uint16_t>{2, 2}, unique_name("mw"));
    for (uint16_t w = 0; w < 3; w++)
        eg[w] = std::make_unique<QosEgress>(*shared, *ports, *wc[w], w, w);
    std::vector<rte_mbuf *> pkts;
    for (int i = 0; i < 100; i++) pkts.push_back(packet(tagged_packet(0, 0, uint16_t(i))));
    eg[0]->enqueue(1, pkts.data(), 100, now_ns);
    // An rte_ring of count 64 holds 63.
    EXPECT_EQ(eg[0]->handoff_drops(1), 37u);
    EXPECT_EQ(wc[0]->ports[1].drops[size_t(DropReason::handoff_full)].load(), 37u);
    EXPECT_EQ(eg[2]->backlog(), 63u);
    // Shutting the owner down counts what is still in its ring.
    eg[2]->discard_all(DropReason::port_stopped);
    EXPECT_EQ(wc[2]->ports[1].drops[size_t(DropReason::port_stopped)].load(), 63u);
    EXPECT_EQ(eg[2]->backlog(), 0u);
}

TEST_F(ThreeWorkers, PoolsAreSharedOutByOwnedPorts) {
    // Two owners, one port each: each owner gets half the pool (and so half the hog limit).
    std::vector<QosPortInfo> info = {{"p0", 10000}, {"p1", 10000}};
    plan = build_qos_plan(
        load_qos_string(qos_profile("BUFFER_POOL:\n  pool: {size: 200000}\n"
                                    "BUFFER_PROFILE:\n  p: {pool: pool, dynamic_th: 0}\n"
                                    "BUFFER_QUEUE:\n  default|0-7: {profile: p}\n"),
                        "test.yaml"),
        info);
    shared = std::make_unique<TrafficManager>(plan, 2, unique_name("mw"));
    for (uint16_t w = 0; w < 2; w++) {
        wc[w] = std::make_unique<WorkerCounters>();
        eg[w] = std::make_unique<QosEgress>(*shared, *ports, *wc[w], w, w);
    }
    shared->set_paused(1, 0xFF);
    for (int i = 0; i < 200; i++) {
        rte_mbuf *m = packet(udp4_frame(1, 0, 1000));
        eg[0]->enqueue(1, &m, 1, now_ns);  // worker 0 hands port 1's packets to worker 1
    }
    eg[1]->flush(now_ns);
    EXPECT_EQ(q(1).depth_bytes, 50000u);  // q + 1000 <= 100000 - q
    EXPECT_EQ(shared->pool_used(0), 50000u);
    shared->set_paused(1, 0);
    while (eg[1]->backlog()) eg[1]->flush(now_ns += 100'000);
    EXPECT_EQ(ports->take_tx(1).size(), 50u);
}

TEST_F(ThreeWorkers, PgBytesAndWatermarksSumOverOwnersAndClearEverywhere) {
    std::vector<QosPortInfo> info = {{"p0", 10000}, {"p1", 10000}};
    plan = build_qos_plan(load_qos_string(qos_profile(""), "test.yaml"), info);
    shared = std::make_unique<TrafficManager>(plan, 2, unique_name("mw"));
    for (uint16_t w = 0; w < 2; w++) {
        wc[w] = std::make_unique<WorkerCounters>();
        eg[w] = std::make_unique<QosEgress>(*shared, *ports, *wc[w], w, w);
    }
    shared->set_paused(0, 0xFF);
    shared->set_paused(1, 0xFF);
    // From ingress port 0, PG 0 (TC 0): 3000 bytes to p0 (owner 0), 2000 to p1 (owner 1).
    for (uint16_t out : {0, 0, 0, 1, 1}) {
        rte_mbuf *m = packet(udp4_frame(0, 0, 1000), 0, out);
        eg[0]->enqueue(out, &m, 1, now_ns);
    }
    eg[1]->flush(now_ns);  // owner 1 takes its packets from the handoff ring
    EXPECT_EQ(shared->pg_bytes(0, 0), 5000u);
    EXPECT_EQ(shared->pg_watermark(0, 0), 5000u);
    shared->set_paused(0, 0);
    shared->set_paused(1, 0);
    for (int i = 0; i < 10; i++) {
        eg[0]->flush(now_ns += 100'000);
        eg[1]->flush(now_ns);
    }
    EXPECT_EQ(shared->pg_bytes(0, 0), 0u);
    EXPECT_EQ(shared->pg_watermark(0, 0), 5000u);
    shared->clear_watermarks(0);
    eg[0]->flush(now_ns);
    EXPECT_EQ(shared->pg_watermark(0, 0), 2000u);  // owner 1 has not flushed yet
    eg[1]->flush(now_ns);
    EXPECT_EQ(shared->pg_watermark(0, 0), 0u);
    EXPECT_EQ(ports->take_tx(0).size() + ports->take_tx(1).size(), 5u);
}

}  // namespace
}  // namespace rocesw::test
