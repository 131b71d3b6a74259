// QoS counters. Each (port, queue) block has exactly one writer, the port's scheduler owner
// (doc/qos.md, "Ownership"); each PG block one writer per owner. Readers on any thread load
// them relaxed, like lib/common/counters.h.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "common/counters.h"
#include "qos/plan.h"

namespace rocesw {

// A value that goes up and down (a depth), or a maximum; one writer.
struct Gauge {
    uint64_t v = 0;
    void set(uint64_t x) { __atomic_store_n(&v, x, __ATOMIC_RELAXED); }
    void add(uint64_t n) { set(v + n); }
    void sub(uint64_t n) { set(v - n); }
    void max(uint64_t x) {
        if (x > v) set(x);
    }
    uint64_t load() const { return __atomic_load_n(&v, __ATOMIC_RELAXED); }
};

// Why a queue refused a packet. Every one of these is also charged to the egress port's
// DropReason of the same name (or the discard_all reason), so port totals stay complete.
#define ROCESW_QUEUE_DROPS(X)                                                               \
    X(queue_full, "the queue's packet slots (ROCESW.queue_packets) are all used")           \
    X(buffer_full, "lossy tail drop: dynamic/static threshold or shared pool exhausted")    \
    X(wred_drop, "WRED dropped a Not-ECT packet (or an ECT one in a queue without ECN)")    \
    X(headroom_exhausted, "lossless: pool and headroom exhausted, or the PG limit reached") \
    X(discarded, "flushed by discard_all (port stopped, shutdown)")                        \
    X(pfc_watchdog, "the queue is stormed by PFC and the watchdog's action is drop")

enum class QueueDrop : uint8_t {
#define X(name, text) name,
    ROCESW_QUEUE_DROPS(X)
#undef X
        count
};
inline constexpr size_t kQueueDropCount = size_t(QueueDrop::count);

constexpr std::string_view queue_drop_name(QueueDrop d) {
    constexpr std::array<std::string_view, kQueueDropCount> names = {
#define X(name, text) #name,
        ROCESW_QUEUE_DROPS(X)
#undef X
    };
    return size_t(d) < kQueueDropCount ? names[size_t(d)] : "?";
}

struct alignas(kCacheLine) QueueStats {
    Counter enq_packets, enq_bytes;  // admitted
    Counter deq_packets, deq_bytes;  // left the queue for the device
    Counter ecn_marked;              // ECT -> CE by this queue
    Gauge depth_packets, depth_bytes;
    Gauge watermark_packets, watermark_bytes;  // since start or the last clear_watermarks
    std::array<Counter, kQueueDropCount> drops;
};

struct PortQosStats {
    std::array<QueueStats, kNumQueues> queues;
    Gauge tx_ring_bytes;   // TxRingModel estimate after the last flush
    Gauge staged_packets;  // taken from the queues, refused by the device, kept for a retry
    Counter cut_through_packets;  // sent at enqueue (QosEgress cut-through), also in deq_packets
};

// Per (ingress port, PG), as charged by one scheduler owner: rises when a packet from that
// ingress port and PG is admitted to any egress queue, falls when it leaves the queue.
struct alignas(kCacheLine) PgAccounting {
    static constexpr size_t kSize = kMaxPorts * kNumPg;
    static constexpr size_t key(size_t in_port, size_t pg) { return in_port * kNumPg + pg; }
    std::array<Gauge, kSize> bytes;
    std::array<Gauge, kSize> watermark;
    std::array<Counter, kSize> drops;  // lossless packets refused (headroom_exhausted)

    // key's bytes up by n, and its watermark raised to them: the sum from a register, not read
    // back from the store just made.
    void charge(size_t key, uint64_t n) {
        const uint64_t b = bytes[key].v + n;
        bytes[key].set(b);
        watermark[key].max(b);
    }
};

// A plain copy of one queue's counters, for readers.
struct QueueSnapshot {
    uint64_t enq_packets = 0, enq_bytes = 0, deq_packets = 0, deq_bytes = 0, ecn_marked = 0;
    uint64_t depth_packets = 0, depth_bytes = 0, watermark_packets = 0, watermark_bytes = 0;
    std::array<uint64_t, kQueueDropCount> drops{};
    uint64_t drops_total() const {
        uint64_t s = 0;
        for (auto d : drops) s += d;
        return s;
    }
};

inline QueueSnapshot snapshot(const QueueStats &q) {
    QueueSnapshot s;
    s.enq_packets = q.enq_packets.load();
    s.enq_bytes = q.enq_bytes.load();
    s.deq_packets = q.deq_packets.load();
    s.deq_bytes = q.deq_bytes.load();
    s.ecn_marked = q.ecn_marked.load();
    s.depth_packets = q.depth_packets.load();
    s.depth_bytes = q.depth_bytes.load();
    s.watermark_packets = q.watermark_packets.load();
    s.watermark_bytes = q.watermark_bytes.load();
    for (size_t i = 0; i < kQueueDropCount; i++) s.drops[i] = q.drops[i].load();
    return s;
}

}  // namespace rocesw
