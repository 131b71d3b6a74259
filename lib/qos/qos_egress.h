// QoS egress: 8 queues per port, a shared buffer with dynamic thresholds, WRED/ECN, a strict +
// DWRR scheduler, a line-rate shaper and a cap on the bytes in the device TX ring. It is the
// Egress the worker calls (enqueue per port per burst, flush once per poll).
//
// Ownership (doc/qos.md): every port has one scheduler owner, a worker. Only the owner touches
// the port's queues, so depths, watermarks and the buffer accounting that ECN and PFC act on
// are exact. Packets another worker routes to the port go through the port's multi-producer
// handoff ring (rte_ring, MP enqueue / SC dequeue); the owner drains it at the start of every
// flush, before it schedules.
//
//   QosShared   built once (control thread, after EAL init): the plan, the per-port state,
//               the handoff rings, the counters. Readers use it from any thread.
//   QosEgress   one per worker (implements Egress); owns the ports QosShared assigns it.
//
// Enqueue, per packet: TC (PacketMeta.tc) -> queue (egress port's TC_TO_QUEUE_MAP); refuse when
//   the queue's slots are full (queue_full); lossless queue: admit unless the pool + headroom is
//   exhausted or the (ingress port, PG) limit is reached (headroom_exhausted) - never WRED, never
//   a threshold; lossy queue: reserved bytes always, beyond them the dynamic threshold
//   alpha x free shared bytes (alpha = 2^dynamic_th) or the static threshold, and the pool
//   (buffer_full); then WRED: Not-ECT (or ECT without ECN) on the drop curve (wred_drop); ECT
//   with ECN marked CE on the marking curve if the queue marks at enqueue.
// Flush, per owned port: drain the handoff ring; retry frames the device refused last time;
//   then while a queue is eligible (non-empty, not paused), the shaper has credit and the TX ring
//   model has room: pick (strict, then DWRR), dequeue, mark CE on the marking curve at the depth
//   left behind (dequeue marking), hand bursts to PortIo::tx_burst.
//
// Counters: PortQosStats per (port, queue) and PgAccounting per (ingress port, PG) in
// QosShared; on the worker's WorkerCounters: tx_packets/tx_bytes of the egress port when the
// device takes a packet, drops[tx_full] for every queue drop, drops[reason] for discard_all.
//
// Hot path: no allocation, no locks, no virtual call per packet (PortIo once per burst); all
// state is preallocated per port and written by one thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/counters.h"
#include "egress/egress.h"
#include "pipeline/port_io.h"
#include "qos/plan.h"
#include "qos/rng.h"
#include "qos/scheduler.h"
#include "qos/shaper.h"
#include "qos/stats.h"

struct rte_mbuf;
struct rte_ring;

namespace rocesw {

class QosEgress;

class QosShared {
  public:
    // Port p is owned by worker p % n_workers.
    QosShared(const QosPlan &plan, uint16_t n_workers, const std::string &name = "qos");
    // owners[p]: the worker that schedules port p (each < n_workers).
    QosShared(const QosPlan &plan, uint16_t n_workers, std::vector<uint16_t> owners,
              const std::string &name = "qos");
    ~QosShared();
    QosShared(const QosShared &) = delete;
    QosShared &operator=(const QosShared &) = delete;

    const QosPlan &plan() const { return plan_; }
    uint16_t workers() const { return n_workers_; }
    uint16_t owner(uint16_t port) const { return owners_[port]; }
    uint16_t n_ports() const { return uint16_t(plan_.ports.size()); }

    // --- Readers: any thread. ---
    const PortQosStats &stats(uint16_t port) const { return *stats_[port]; }
    QueueSnapshot queue(uint16_t port, uint8_t q) const {
        return snapshot(stats_[port]->queues[q]);
    }
    // Bytes buffered for (ingress port, PG), summed over the scheduler owners.
    uint64_t pg_bytes(uint16_t in_port, uint8_t pg) const;
    // Sum of the owners' watermarks (exact with one owner; an upper bound with several).
    uint64_t pg_watermark(uint16_t in_port, uint8_t pg) const;
    uint64_t pg_drops(uint16_t in_port, uint8_t pg) const;
    // Bytes used in an egress pool (by plan index), summed over owners.
    uint64_t pool_used(size_t pool) const;

    // --- Control: any thread; the owner applies them at its next flush. ---
    // Queues in `mask` are skipped by the scheduler (PFC honoring drives this).
    void set_paused(uint16_t port, uint8_t mask);
    uint8_t paused(uint16_t port) const;
    // Lossless packets from (in_port, PG) are refused (headroom_exhausted) while pg_bytes would
    // exceed `bytes`. Default: no limit. The PFC issue sets xoff + headroom here.
    void set_pg_limit(uint16_t in_port, uint8_t pg, uint64_t bytes);
    // Restarts the watermarks of `port`'s queues and of its PGs (as an ingress port) from the
    // current depths; each owner applies it at its next flush.
    void clear_watermarks(uint16_t port);

  private:
    friend class QosEgress;
    struct Slot {
        rte_mbuf *m;
        uint32_t len;     // frame bytes
        uint16_t pg_key;  // PgAccounting::key(in_port, pg)
        // Bit 0-1: ECN codepoint at admission (after enqueue marking); bit 2: IPv4/IPv6. Not
        // two uint8_t fields: a char-typed store may alias anything and would make the compiler
        // reload every hoisted value in the admission loop.
        uint16_t ecn_ip;
    };
    struct Pool;
    // One queue: its state, plus a copy of the QueuePlan fields admission and dequeue read for
    // every packet, so that both touch one structure.
    struct Queue {
        Slot *slots = nullptr;
        uint32_t mask = 0;
        uint32_t head = 0, tail = 0;  // free-running
        uint64_t bytes = 0;
        uint64_t excess = 0;  // bytes beyond `reserved`, charged to the pool
        uint64_t wm_bytes = 0, wm_packets = 0;
        uint32_t size() const { return tail - head; }

        enum : uint32_t {
            kLossless = 1,
            kDynamic = 2,
            kEcn = 4,       // ECT packets are marked, never WRED-dropped
            kMarkEnq = 8,   // kEcn and marking at enqueue
            kMarkDeq = 16,  // kEcn and marking at dequeue
            kDrop = 32,     // drop curve on (lossy queues only)
        };
        uint32_t flags = 0;
        uint32_t reserved = 0;
        int32_t dynamic_th = 0;
        uint32_t mark_min = 0, drop_min = 0;  // below these no random number is drawn
        uint64_t static_th = 0;
        Pool *pool = nullptr;  // the owner's share of the queue's pool
        const QueuePlan *plan = nullptr;
    };
    struct Pool {
        uint64_t shared = 0;  // this owner's share of size - reserved
        uint64_t xoff = 0;    // this owner's share of the headroom
        uint64_t shared_used = 0;
        uint64_t used = 0;
        Gauge used_gauge;
    };
    struct alignas(kCacheLine) Port {
        std::array<Queue, kNumQueues> q;
        std::vector<Slot> storage;
        uint8_t nonempty = 0;
        DwrrScheduler sched;
        TokenBucket shaper;
        TxRingModel ring;
        std::array<rte_mbuf *, 256> staged{};  // taken from the queues, refused by the device
        uint16_t staged_head = 0, staged_n = 0;
        uint32_t wm_epoch_seen = 0;
        rte_ring *handoff = nullptr;
        alignas(kCacheLine) std::atomic<uint8_t> paused{0};
        std::atomic<uint32_t> wm_epoch{0};
    };
    struct alignas(kCacheLine) Owner {
        std::vector<Pool> pools;
        std::unique_ptr<PgAccounting> pg;
        uint32_t pg_wm_any_seen = 0;
        std::array<uint32_t, kMaxPorts> pg_wm_seen{};
    };

    void init(const std::string &name);

    QosPlan plan_;
    uint16_t n_workers_;
    std::vector<uint16_t> owners_;
    std::vector<std::unique_ptr<Port>> ports_;
    std::vector<std::unique_ptr<PortQosStats>> stats_;
    std::vector<std::unique_ptr<Owner>> owner_state_;
    std::unique_ptr<std::array<std::atomic<uint64_t>, PgAccounting::kSize>> pg_limit_;
    // PgAccounting key of (ingress port, TC): the ingress port's TC_TO_PRIORITY_GROUP_MAP.
    std::array<uint16_t, kMaxPorts * kNumTc> pg_key_{};
    // PG watermark clears: per ingress port, plus one counter every owner checks per flush.
    std::array<std::atomic<uint32_t>, kMaxPorts> pg_wm_epoch_{};
    std::atomic<uint32_t> pg_wm_any_{0};
};

class QosEgress final : public Egress {
  public:
    // `worker`: this worker's id (< shared.workers()); `tx_queue`: its TX queue on every port it
    // owns. `burst`: packets per tx_burst, 1..256.
    QosEgress(QosShared &shared, PortIo &io, WorkerCounters &counters, uint16_t worker,
              uint16_t tx_queue, uint16_t burst = 32);
    ~QosEgress() override;

    void enqueue(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns) override;
    uint32_t flush(uint64_t now_ns) override;
    // Packets held for the ports this worker owns (queues, device retries, handoff rings).
    uint32_t backlog() const override;
    void discard_all(DropReason reason) override;

    // Packets this worker could not hand to another owner's full handoff ring (also counted as
    // tx_full on the egress port in this worker's counters).
    uint64_t handoff_drops(uint16_t port) const { return handoff_drops_[port].load(); }
    const std::vector<uint16_t> &owned_ports() const { return owned_; }

  private:
    void admit(uint16_t port, rte_mbuf **pkts, uint16_t n);
    uint32_t service(uint16_t port, uint64_t now_ns);
    void apply_pg_watermark_clears();
    uint16_t send(uint16_t port, rte_mbuf **pkts, const uint32_t *bytes, uint16_t n);
    bool wred(const WredCurve &c, uint64_t depth) {
        uint64_t t = c.threshold32(depth);
        return t != 0 && (t >> 32 || rng_.next() < t);
    }
    uint64_t pg_total(size_t key) const;

    QosShared &sh_;
    PortIo &io_;
    WorkerCounters &ctr_;
    uint16_t worker_;
    uint16_t tx_queue_;
    uint16_t burst_;
    Pcg32 rng_;
    QosShared::Owner &own_;
    std::vector<uint16_t> owned_;
    std::array<Counter, kMaxPorts> handoff_drops_{};
};

}  // namespace rocesw
