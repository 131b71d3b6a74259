#include "qos/qos_metrics.h"

namespace rocesw {

namespace {
const char *queue_label(uint8_t q) {
    static const char *const names[] = {"0", "1", "2", "3", "4", "5", "6", "7"};
    return names[q & 7];
}
}  // namespace

void register_qos_metrics(MetricRegistry &m, const std::vector<std::string> &port_names,
                          const TrafficManager &qos_shared) {
    const size_t n_ports = port_names.size();
    const std::vector<std::string> names = port_names;
    const TrafficManager *qos = &qos_shared;
    auto port_name = [names](size_t i) -> const std::string & { return names[i]; };

    // --- Egress queues (TrafficManager snapshots) ---
    struct QueueField {
        const char *name, *help;
        uint64_t QueueSnapshot::*f;
        bool counter;
    };
    static const QueueField queue_fields[] = {
        {"rocesw_queue_depth_bytes", "Bytes in the egress queue now", &QueueSnapshot::depth_bytes,
         false},
        {"rocesw_queue_depth_packets", "Packets in the egress queue now",
         &QueueSnapshot::depth_packets, false},
        {"rocesw_queue_watermark_bytes", "Largest depth in bytes since start or the last clear",
         &QueueSnapshot::watermark_bytes, false},
        {"rocesw_queue_watermark_packets", "Largest depth in packets since start or the last clear",
         &QueueSnapshot::watermark_packets, false},
        {"rocesw_queue_enqueued_packets_total", "Packets admitted to the queue",
         &QueueSnapshot::enq_packets, true},
        {"rocesw_queue_enqueued_bytes_total", "Bytes admitted to the queue",
         &QueueSnapshot::enq_bytes, true},
        {"rocesw_queue_dequeued_packets_total", "Packets that left the queue for the device",
         &QueueSnapshot::deq_packets, true},
        {"rocesw_queue_dequeued_bytes_total", "Bytes that left the queue for the device",
         &QueueSnapshot::deq_bytes, true},
        {"rocesw_queue_ecn_marked_total", "Packets marked ECN CE by the queue (ECT -> CE)",
         &QueueSnapshot::ecn_marked, true},
    };
    for (const QueueField &qf : queue_fields)
        m.add(qf.name, qf.help, qf.counter ? MetricType::counter : MetricType::gauge,
              [=](MetricSink &s) {
                  for (size_t i = 0; i < n_ports; i++)
                      for (uint8_t q = 0; q < kNumQueues; q++)
                          s.sample({{"port", port_name(i)}, {"queue", queue_label(q)}},
                                   qos->queue(uint16_t(i), q).*qf.f);
              });
    m.counter("rocesw_queue_drops_total",
              "Packets the queue refused, by reason (lib/qos/stats.h); each is also counted in "
              "rocesw_drops_total{reason=\"tx_full\"} of the egress port (or port_stopped)",
              [=](MetricSink &s) {
                  for (size_t i = 0; i < n_ports; i++)
                      for (uint8_t q = 0; q < kNumQueues; q++) {
                          QueueSnapshot snap = qos->queue(uint16_t(i), q);
                          for (size_t d = 0; d < kQueueDropCount; d++)
                              s.sample({{"port", port_name(i)},
                                        {"queue", queue_label(q)},
                                        {"reason", queue_drop_name(QueueDrop(d))}},
                                       snap.drops[d]);
                      }
              });
    m.gauge(
        "rocesw_port_tx_ring_bytes", "Estimated bytes in the device TX ring (TxRingModel)",
        [=](MetricSink &s) {
            for (size_t i = 0; i < n_ports; i++)
                s.sample({{"port", port_name(i)}}, qos->stats(uint16_t(i)).tx_ring_bytes.load());
        });
    m.counter("rocesw_port_cut_through_packets_total",
              "Packets sent at enqueue by cut-through, without waiting in a queue (doc/qos.md); "
              "also counted in rocesw_queue_dequeued_packets_total",
              [=](MetricSink &s) {
                  for (size_t i = 0; i < n_ports; i++)
                      s.sample({{"port", port_name(i)}},
                               qos->stats(uint16_t(i)).cut_through_packets.load());
              });
    m.gauge("rocesw_pool_used_bytes", "Bytes used in an egress buffer pool", [=](MetricSink &s) {
        const auto &pools = qos->plan().pools;
        for (size_t p = 0; p < pools.size(); p++)
            s.sample({{"pool", pools[p].name}}, qos->pool_used(p));
    });

    // --- Priority groups (ingress accounting) ---
    m.gauge("rocesw_pg_bytes", "Bytes buffered for (ingress port, priority group)",
            [=](MetricSink &s) {
                for (size_t i = 0; i < n_ports; i++)
                    for (uint8_t pg = 0; pg < kNumPg; pg++)
                        s.sample({{"port", port_name(i)}, {"pg", queue_label(pg)}},
                                 qos->pg_bytes(uint16_t(i), pg));
            });
    m.gauge("rocesw_pg_watermark_bytes",
            "Largest pg_bytes since start or the last clear (upper bound with several workers)",
            [=](MetricSink &s) {
                for (size_t i = 0; i < n_ports; i++)
                    for (uint8_t pg = 0; pg < kNumPg; pg++)
                        s.sample({{"port", port_name(i)}, {"pg", queue_label(pg)}},
                                 qos->pg_watermark(uint16_t(i), pg));
            });
    m.counter("rocesw_pg_headroom_drops_total",
              "Lossless packets refused because pool and headroom were exhausted or the PG limit "
              "was reached, by ingress port and priority group",
              [=](MetricSink &s) {
                  for (size_t i = 0; i < n_ports; i++)
                      for (uint8_t pg = 0; pg < kNumPg; pg++)
                          s.sample({{"port", port_name(i)}, {"pg", queue_label(pg)}},
                                   qos->pg_drops(uint16_t(i), pg));
              });
}

}  // namespace rocesw
