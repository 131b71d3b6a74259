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
//   left behind (dequeue marking), hand bursts to PortIo::tx_burst. Frames leave in runs: after
//   a pick, the same queue is served while pick() would choose it again unchanged (strict: until
//   empty; DWRR: while its deficit covers the head frame), with its state in locals and the
//   accounting charged once per run - the same schedule as one pick per frame.
//
// PFC (doc/pfc.md), also in the owner's flush: honoring (received pause deadlines -> paused
//   queues), generation (per lossless PG of each owned port as an ingress port: xoff/xon
//   against its thresholds, PFC frames sent ahead of every queue), the watchdog per lossless
//   queue. Received MAC-control frames are decoded by the receiving worker through
//   receive_mac_control().
//
// Counters: PortQosStats per (port, queue), PgAccounting per (ingress port, PG) and
// PfcPortStats per port in QosShared; on the worker's WorkerCounters: tx_packets/tx_bytes of
// the egress port when the device takes a packet (PFC frames included), drops[reason] for
// every queue drop (queue_full, buffer_full, wred_drop, headroom_exhausted, pfc_watchdog,
// handoff_full) and for discard_all.
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

#include <rte_spinlock.h>

#include "common/counters.h"
#include "common/trace_event.h"  // TraceRing: PFC events for the event trace
#include "egress/egress.h"
#include "pfc/watchdog.h"
#include "port/port_io.h"
#include "qos/plan.h"
#include "qos/rng.h"
#include "qos/scheduler.h"
#include "qos/shaper.h"
#include "qos/stats.h"

struct rte_mbuf;
struct rte_ring;
struct rte_mempool;

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
    // exceed `bytes`. Default: no limit; QosShared's constructor sets static_th + headroom for static PGs.
    void set_pg_limit(uint16_t in_port, uint8_t pg, uint64_t bytes);
    // Restarts the watermarks of `port`'s queues and of its PGs (as an ingress port) from the
    // current depths; each owner applies it at its next flush.
    void clear_watermarks(uint16_t port);

    // --- PFC (doc/pfc.md). ---
    // Where PFC frames come from: their mbuf pool and each port's source MAC. Before workers
    // start; without it no PFC frame is sent (counted tx_failed).
    void set_pfc_source(rte_mempool *pool, std::vector<std::array<uint8_t, 6>> macs);
    enum class MacControlResult : uint8_t {
        consumed,   // valid and acted on (or a valid XON): count as local
        ignored,    // valid but not honored here (PAUSE with pause: ignore, lossy-only PFC)
        malformed,  // refused (PfcPortStats::rx_malformed by reason)
    };
    // A MAC-control frame received on `port` (any worker; takes the port's PFC lock). `f` is
    // the frame from its Ethernet header, `len` without FCS. Never forwards anything.
    // `trace`: the receiving worker's event ring (pfc_xoff/xon_received), or null.
    MacControlResult receive_mac_control(uint16_t port, const uint8_t *f, uint32_t len,
                                         uint64_t now_ns, TraceRing *trace = nullptr);
    const PfcPortStats &pfc(uint16_t port) const { return *pfc_[port]; }

    // --- Frames the switch sends itself (host interfaces, doc/control-plane.md). ---
    // Any thread: hands `pkts` (PacketMeta filled, tc set) to `port`'s owner through the
    // port's handoff ring, as another worker would. Returns how many were taken; the caller
    // keeps (and frees or counts) the rest.
    unsigned inject(uint16_t port, rte_mbuf **pkts, unsigned n);
    // Creates the handoff rings a single worker does not need, so inject() has a way in.
    // Control thread, before the workers start. Throws when a ring cannot be created.
    void enable_inject();

  private:
    std::string name_;  // prefix of the rings
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
            kStormDrop = 64,  // PFC watchdog: stormed with action drop (owner sets it)
        };
        uint32_t flags = 0;  // kLossless.. below, kStormDrop
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
        // PFC, owner side.
        std::array<uint8_t, kNumPriorities> prio_queue{};  // priority -> queue bit (lossless)
        uint8_t lossless_pgs = 0;                           // PGs that generate PFC
        uint8_t xoff = 0;                                   // PGs holding the peer paused
        uint8_t pending_xoff = 0, pending_xon = 0;          // priorities to send (retry)
        std::array<uint64_t, kNumPg> last_sent{};
        std::array<uint64_t, kNumPg> pg_limit_set{};
        uint64_t pause_ns = 0;  // pfc_quanta at the port's rate
        std::array<PfcWatchdog, kNumQueues> wd;
        std::array<uint32_t, kNumQueues> wd_head{};
        uint8_t wd_queues = 0;     // lossless queues the watchdog watches
        uint8_t stormed = 0;       // queues ignoring PFC (stormed)
        uint8_t storm_prios = 0;   // priorities of queues stormed with action drop
        // PFC, receive side: the latest pause deadline of any priority (fast path).
        alignas(kCacheLine) std::atomic<uint64_t> any_until{0};
        rte_spinlock_t rx_lock = RTE_SPINLOCK_INITIALIZER;
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
    std::vector<std::unique_ptr<PfcPortStats>> pfc_;
    rte_mempool *pfc_pool_ = nullptr;
    std::vector<std::array<uint8_t, 6>> pfc_macs_;
    // Per ingress pool: the PgAccounting keys of its lossless PGs and their reservations.
    std::vector<std::vector<std::pair<uint16_t, uint32_t>>> ipool_members_;
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
    // handoff_full on the egress port in this worker's counters).
    uint64_t handoff_drops(uint16_t port) const { return handoff_drops_[port].load(); }
    const std::vector<uint16_t> &owned_ports() const { return owned_; }
    // This worker's event ring: PFC frames sent and watchdog events go there (null: none).
    void set_trace(TraceRing *ring) { trace_ = ring; }

  private:
    void admit(uint16_t port, rte_mbuf **pkts, uint16_t n);
    void drain_handoff(uint16_t port);
    void pfc_generate(uint16_t port, uint64_t now_ns);
    uint8_t pfc_paused_queues(uint16_t port, uint64_t now_ns);
    void flush_queue(uint16_t port, unsigned qi, QueueDrop why, DropReason reason);
    // One trace event per priority in `prios` (value: the queue).
    void trace_priorities(uint8_t prios, uint64_t now_ns, uint16_t port, TraceKind k,
                          unsigned queue) {
        if (!trace_) return;
        for (unsigned pr = 0; pr < kNumPriorities; pr++)
            if (prios >> pr & 1) trace_->push({now_ns, queue, port, uint16_t(pr), k});
    }
    uint32_t service(uint16_t port, uint64_t now_ns);
    void sample_ecn_marks(uint16_t port, uint64_t now_ns);
    void apply_pg_watermark_clears();
    // `all_bytes`: the sum of bytes[0..n) when the caller has it (else UINT64_MAX).
    uint16_t send(uint16_t port, rte_mbuf **pkts, const uint32_t *bytes, uint16_t n,
                  uint64_t all_bytes = UINT64_MAX);
    bool wred(const WredCurve &c, uint64_t depth) {
        uint64_t t = c.threshold32(depth);
        return t != 0 && (t >> 32 || rng_.next() < t);
    }
    // Bytes of PgAccounting key `key` summed over the scheduler owners.
    uint64_t pg_total(size_t key) const {
        return single_owner_ ? own_.pg->bytes[key].load() : pg_total_all(key);
    }
    uint64_t pg_total_all(size_t key) const;
    uint64_t ipool_used(size_t pool) {
        return pool < 64 && (ipool_valid_ >> pool & 1) ? ipool_used_[pool] : ipool_used_read(pool);
    }
    uint64_t ipool_used_read(size_t pool);

    QosShared &sh_;
    PortIo &io_;
    WorkerCounters &ctr_;
    uint16_t worker_;
    uint16_t tx_queue_;
    uint16_t burst_;
    Pcg32 rng_;
    QosShared::Owner &own_;
    bool single_owner_;  // one worker: pg_total() is this owner's bytes
    std::vector<uint16_t> owned_;
    // Per flush: the ingress pools' use beyond reservations (ipool_used), bit i: pool i read.
    std::vector<uint64_t> ipool_used_;
    uint64_t ipool_valid_ = 0;
    std::array<Counter, kMaxPorts> handoff_drops_{};
    TraceRing *trace_ = nullptr;
    // ECN marks not yet sampled into the trace, per (port, queue): one ecn_mark_sample event per
    // kEcnSampleEvery marks (value: the marks it stands for).
    static constexpr uint32_t kEcnSampleEvery = 16;
    std::array<std::array<uint32_t, kNumQueues>, kMaxPorts> ecn_unsampled_{};
};

}  // namespace rocesw
