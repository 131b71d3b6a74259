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
//   TrafficManager  the switch's traffic manager (an ASIC's MMU): built once (control thread,
//                   after EAL init) from the plan; owns the per-port queues and scheduler
//                   state, the buffer pools and PG accounting, the handoff rings, the counters
//                   and the PFC engine (qos/pfc_engine.h). Readers use it from any thread.
//   QosEgress       one per worker (implements Egress); owns the ports TrafficManager assigns
//                   it: admission and scheduling.
//
// Enqueue (admit), per packet: TC (PacketMeta.tc) -> queue (egress port's TC_TO_QUEUE_MAP);
//   refuse when the queue's slots are full (queue_full); lossless queue: admit unless the pool +
//   headroom is exhausted or the (ingress port, PG) limit is reached (headroom_exhausted) -
//   never WRED, never a threshold; lossy queue: reserved bytes always, beyond them the dynamic
//   threshold alpha x free shared bytes (alpha = 2^dynamic_th) or the static threshold, and the
//   pool (buffer_full); then WRED: Not-ECT (or ECT without ECN) on the drop curve (wred_drop);
//   ECT with ECN marked CE on the marking curve if the queue marks at enqueue. The marker's depth
//   is the queue's bytes plus, with PORT_QOS_MAP ecn_depth queue_and_tx_ring (the switch's
//   default), the wire bytes the port's TX ring model holds at that instant (plan.h EcnDepth).
// Flush, per owned port: drain the handoff ring; retry frames the device refused last time;
//   then while a queue is eligible (non-empty, not paused), the shaper has credit and the TX ring
//   model has room: pick (strict, then DWRR), dequeue, mark CE on the marking curve at the depth
//   left behind (dequeue marking: the queue's bytes behind the packet, plus the TX ring's bytes
//   ahead of it with ecn_depth queue_and_tx_ring), hand bursts to PortIo::tx_burst. Frames leave in
//   runs: after a pick, the same queue is served while pick() would choose it again unchanged
//   (strict: until empty; DWRR: while its deficit covers the head frame), with its state in locals
//   and the accounting charged once per run - the same schedule as one pick per frame.
//
// PFC lives in PfcEngine (qos/pfc_engine.h, doc/pfc.md). The owner's flush calls it per port:
//   honor() gives the queues paused by received PFC/PAUSE (and runs the watchdog, which may
//   flush a stormed queue through PfcQueues), generate() decides xoff/xon per lossless PG on
//   the PG bytes after the flush and sends its frame ahead of every queue through PfcBuffer.
//   The receiving worker hands MAC-control frames to PfcEngine::receive_mac_control().
//
// Counters: PortQosStats per (port, queue) and PgAccounting per (ingress port, PG) in
// TrafficManager, PfcPortStats per port in its PfcEngine; on the worker's WorkerCounters:
// tx_packets/tx_bytes of the egress port when the device takes a packet (PFC frames included),
// drops[reason] for every queue drop (queue_full, buffer_full, wred_drop, headroom_exhausted,
// pfc_watchdog, handoff_full) and for discard_all.
//
// Hot path: no allocation, no locks, no virtual call per packet (PortIo once per burst); all
// state is preallocated per port and written by one thread.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <string>
#include <vector>

#include <rte_spinlock.h>

#include "common/counters.h"
#include "common/trace_event.h"  // TraceRing: PFC events for the event trace
#include "egress/egress.h"
#include "egress/injector.h"
#include "port/port_io.h"
#include "qos/pfc_engine.h"
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

class TrafficManager final : public Injector {
  public:
    // Port p is owned by worker p % n_workers.
    TrafficManager(const QosPlan &plan, uint16_t n_workers, const std::string &name = "qos");
    // owners[p]: the worker that schedules port p (each < n_workers).
    TrafficManager(const QosPlan &plan, uint16_t n_workers, std::vector<uint16_t> owners,
              const std::string &name = "qos");
    ~TrafficManager() override;
    TrafficManager(const TrafficManager &) = delete;
    TrafficManager &operator=(const TrafficManager &) = delete;

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
    // An administratively down link (a pulled cable, rocelab's link events): every frame the
    // port's owner would hand to the device, PFC frames included, is dropped instead and
    // counted (port_stopped); the queues drain into it. Up again: frames leave as before.
    void set_link_down(uint16_t port, bool down);
    bool link_down(uint16_t port) const;
    // The device reports the link lost (a peer gone: a memif peer process, a cable): what the
    // device refuses is dropped, counted as link_down, instead of held, so that frames it can
    // no longer take do not sit in the queues holding lossless PGs in XOFF and pausing the
    // senders' traffic to other ports; what it takes still leaves (a peer back before the
    // control thread, which sets this from the device's link state, sees it). With both set,
    // everything is dropped as port_stopped.
    void set_carrier_down(uint16_t port, bool down);
    bool carrier_down(uint16_t port) const;
    // Lossless packets from (in_port, PG) are refused (headroom_exhausted) while pg_bytes would
    // exceed `bytes`. Default: no limit; TrafficManager's constructor sets static_th + headroom for static PGs.
    void set_pg_limit(uint16_t in_port, uint8_t pg, uint64_t bytes);
    // Restarts the watermarks of `port`'s queues and of its PGs (as an ingress port) from the
    // current depths; each owner applies it at its next flush.
    void clear_watermarks(uint16_t port);

    // --- PFC (doc/pfc.md): the engine, built from this plan. ---
    PfcEngine &pfc() { return pfc_; }
    const PfcEngine &pfc() const { return pfc_; }
    // The engine's snapshot of `port` with the PG buffer fields (bytes, watermark, drops) filled.
    PfcPortView pfc_snapshot(uint16_t port, uint64_t now_ns) const;

    // --- Frames the switch sends itself (host interfaces, doc/control-plane.md). ---
    // Any thread: hands `pkts` (PacketMeta filled, tc set) to `port`'s owner through the
    // port's handoff ring, as another worker would. Returns how many were taken; the caller
    // keeps (and frees or counts) the rest.
    unsigned inject(uint16_t port, rte_mbuf **pkts, unsigned n) override;
    // Frames inject() took for `port` (the "injected" term of doc/accounting.md).
    uint64_t injected(uint16_t port) const { return injected_[port].load(std::memory_order_relaxed); }
    // Packets held for `port`: its queues, the frames the device refused (kept for a retry) and
    // its handoff ring; relaxed reads, any thread.
    uint32_t held(uint16_t port) const;
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
    static_assert(offsetof(Slot, ecn_ip) == offsetof(Slot, pg_key) + 2,
                  "QosEgress::admit_in_sums stores pg_key and ecn_ip as one word");
    static_assert(std::is_trivially_default_constructible_v<Slot>,
                  "Port::storage relies on new Slot[n] leaving the slots untouched");
    struct Pool;
    // Scratch slots past the end of every queue's slots: QosEgress::admit_in_sums writes a
    // burst's slots from the tail on and copies what went past the end to the start.
    static constexpr uint32_t kSlack = 64;
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
            kEcn = 4,         // ECT packets are marked, never WRED-dropped
            kMarkEnq = 8,     // kEcn and marking at enqueue
            kMarkDeq = 16,    // kEcn and marking at dequeue
            kDrop = 32,       // drop curve on (lossy queues only)
            kStormDrop = 64,  // PFC watchdog: stormed with action drop (PfcQueues::storm_drop)
            kMarkRing = 128,  // kEcn and the marker's depth includes the port's TX ring
        };
        uint32_t flags = 0;  // kLossless.. below, kStormDrop
        uint32_t reserved = 0;
        int32_t dynamic_th = 0;
        uint32_t mark_min = 0, drop_min = 0;  // below these no random number is drawn
        // Dequeue marking as take_run tests it: mark_min with kMarkDeq, else UINT64_MAX (no depth
        // reaches it); deq_ring: all ones with kMarkRing (the ring's bytes count), else 0.
        uint64_t deq_mark_min = UINT64_MAX, deq_ring = 0;
        // kOneKey | k when every frame queued has PG key k (admit_in_sums sets it for the frames
        // it adds, of one key (one_pg_mask), to an empty queue or one holding k alone;
        // admit_each clears it), else 0: the dequeue run's copy then tests no frame's key.
        static constexpr uint32_t kOneKey = 1u << 16;
        uint32_t one_key = 0;
        // All ones when the queue's TCs (TC_TO_QUEUE_MAP) have one PG for every ingress port (a
        // burst from one ingress port brings it frames of one PG key), else 0.
        uint32_t one_pg_mask = 0;
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
    static constexpr uint8_t kAdminDown = 1, kCarrierDown = 2;  // Port::down's bits
    struct alignas(kCacheLine) Port {
        std::array<Queue, kNumQueues> q;
        // The queues' slots, each queue's followed by kSlack scratch slots (admit_in_sums),
        // default-initialised (not zeroed): a slot is written before it is
        // read, and pages no packet reached are never touched, so a queue costs memory only for
        // the slots it used (the simulator builds hundreds of switches: 16 ports x 8 queues x
        // 8192 slots would be 16 MB each).
        std::unique_ptr<Slot[]> storage;
        uint8_t nonempty = 0;
        DwrrScheduler sched;
        TokenBucket shaper;
        TxRingModel ring;
        std::array<rte_mbuf *, 256> staged{};  // taken from the queues, refused by the device
        uint16_t staged_head = 0, staged_n = 0;
        uint32_t wm_epoch_seen = 0;
        bool mark_enq_ring = false;  // a queue marks at enqueue with the TX ring in its depth
        uint8_t mark_deq_queues = 0;  // bit q: queue q marks at dequeue (kMarkDeq)
        uint8_t lossless_tcs = 0;    // bit tc: TC_TO_QUEUE_MAP sends TC tc to a lossless queue
        // Precomputed (TrafficManager::update_plain, at QosEgress's construction and when a
        // queue's storm state changes): PFC honors nothing on this port (no PFC priority, no
        // 802.3x PAUSE honored, no watchdog: PfcEngine::honors), so honor() would return 0 and
        // change nothing; and, per queue (bit qi), that admit_cut_through() has nothing to check
        // beyond the burst's class and the port's paused mask: no PFC on the port, no shaper,
        // no TX ring cap, and the queue lossy, without a pool, a drop curve, ECN marking or a
        // storm drop.
        bool pfc_inert = false;
        uint8_t ct_plain = 0;
        // Per TC: its queue (the plan's TC_TO_QUEUE_MAP) when that queue is plain (ct_plain),
        // else kNumQueues (QosEgress::cut_through_plain's one lookup).
        std::array<uint8_t, kNumTc> ct_plain_q = [] {
            std::array<uint8_t, kNumTc> a;
            a.fill(uint8_t(kNumQueues));
            return a;
        }();
        // QosEgress::service_idle left the port still: its shaper full, its ring model empty,
        // PFC quiet (honoring then only rewrites what it wrote), no trace. Until anything else
        // serves, sends on or reconfigures the port (cleared there), the next idle flush
        // changes nothing a reader sees while PFC stays quiet and no watermark clear is asked
        // for, and skips its steps.
        bool idle_still = false;
        rte_ring *handoff = nullptr;
        // A burst sent at enqueue (QosEgress::cut_through) that the next flush still owes its
        // buffer release: ct_bytes of PG key ct_pg_key, the queue's excess ct_excess in ct_pool;
        // ct_sent frames the device took.
        bool ct_pending = false;
        // The last burst that found the port idle went to several queues (QosEgress::enqueue):
        // the next one skips admit_cut_through's scan (a mixed burst leaves it for
        // cut_through_mixed anyway) and goes to cut_through_mixed, which sends a one-queue burst
        // too, or to admit() and cut_through(), with the same result.
        bool ct_mixed = false;
        uint16_t ct_sent = 0;
        uint16_t ct_pg_key = 0;
        uint64_t ct_bytes = 0, ct_excess = 0;  // ct_excess: read only with ct_pool
        Pool *ct_pool = nullptr;
        // A burst of several queues cut through (QosEgress::cut_through_mixed, ct_bytes 0,
        // ct_pool null): its release is the one below (QosEgress::release_mixed_all).
        bool ct_mixed_held = false;
        // The release cut_through_mixed() leaves to the flush: per queue in ct_pool_queues (those
        // with a pool) its bytes and excess; per TC in ct_tcs its bytes, of PgAccounting key
        // ct_keys[tc].
        uint8_t ct_pool_queues = 0, ct_tcs = 0;
        const uint16_t *ct_keys = nullptr;
        std::array<uint64_t, kNumQueues> ct_q_bytes{}, ct_q_excess{};
        std::array<uint64_t, kNumTc> ct_tc_bytes{};
        // The TX ring model's bytes after the cut-through (inflight_bytes(): nothing changes the
        // ring between the send and the flush), the flush's tx_ring_bytes gauge.
        uint64_t ct_ring_bytes = 0;
        alignas(kCacheLine) std::atomic<uint8_t> paused{0};
        std::atomic<uint8_t> down{0};  // kAdminDown | kCarrierDown
        std::atomic<uint32_t> wm_epoch{0};
    };
    struct alignas(kCacheLine) Owner {
        std::vector<Pool> pools;
        std::unique_ptr<PgAccounting> pg;
        uint32_t pg_wm_any_seen = 0;
        std::array<uint32_t, kMaxPorts> pg_wm_seen{};
    };

    void init(const std::string &name);
    // Port::pfc_inert and Port::ct_plain of `port` from its current configuration and state.
    void update_plain(uint16_t port);

    QosPlan plan_;
    uint16_t n_workers_;
    std::vector<uint16_t> owners_;
    std::vector<std::unique_ptr<Port>> ports_;
    bool handoffs_ = false;  // some port has a handoff ring (QosEgress::flush drains them)
    std::vector<std::unique_ptr<PortQosStats>> stats_;
    PfcEngine pfc_;
    // Per ingress pool: the PgAccounting keys of its lossless PGs and their reservations.
    std::vector<std::vector<std::pair<uint16_t, uint32_t>>> ipool_members_;
    std::vector<std::unique_ptr<Owner>> owner_state_;
    std::unique_ptr<std::array<std::atomic<uint64_t>, PgAccounting::kSize>> pg_limit_;
    // PgAccounting key of (ingress port, TC): the ingress port's TC_TO_PRIORITY_GROUP_MAP.
    std::array<uint16_t, kMaxPorts * kNumTc> pg_key_{};
    // The same keys as a Slot's pg_key and ecn_ip in one native word, ecn_ip 0
    // (QosEgress::admit_in_sums ors the packet's ecn_ip in and stores the word).
    std::array<uint32_t, kMaxPorts * kNumTc> pg_tag_{};
    // PG watermark clears: per ingress port, plus one counter every owner checks per flush.
    std::array<std::atomic<uint32_t>, kMaxPorts> pg_wm_epoch_{};
    std::atomic<uint32_t> pg_wm_any_{0};
    std::array<std::atomic<uint64_t>, kMaxPorts> injected_{};
};

class QosEgress final : public Egress {
  public:
    // `worker`: this worker's id (< shared.workers()); `tx_queue`: its TX queue on every port it
    // owns. `burst`: packets per tx_burst, 1..256.
    QosEgress(TrafficManager &shared, PortIo &io, WorkerCounters &counters, uint16_t worker,
              uint16_t tx_queue, uint16_t burst = 32);
    ~QosEgress() override;

    void enqueue(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns) override;
    // The same; a burst that cuts through takes its queue, PG and bytes from `sum` instead of
    // reading every packet (admit_cut_through).
    void enqueue_summed(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns,
                        const BurstSummary &sum) override;
    // Cut-through for the next enqueue, when the plan allows it (QosPlan::cut_through).
    void final_enqueue() override { final_ = cut_through_; }
    void enqueue_last(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns,
                      const BurstSummary *sum) override;
    uint32_t flush(uint64_t now_ns) override;
    // Packets held for the ports this worker owns (queues, device retries, handoff rings).
    uint32_t backlog() const override;
    uint64_t next_event_ns(uint64_t now_ns) const override;
    uint32_t queued(uint16_t port) const override {
        return port < tm_.n_ports() && tm_.owner(port) == worker_ ? tm_.held(port) : 0;
    }
    void discard_all(DropReason reason) override;

    // Packets this worker could not hand to another owner's full handoff ring (also counted as
    // handoff_full on the egress port in this worker's counters).
    uint64_t handoff_drops(uint16_t port) const { return handoff_drops_[port].load(); }
    const std::vector<uint16_t> &owned_ports() const { return owned_; }
    // Packets that left the ports this worker owns by cut-through (sent at enqueue), for tests
    // and benchmarks; per port: TrafficManager::stats(port).cut_through_packets.
    uint64_t cut_through_packets() const {
        uint64_t n = 0;
        for (uint16_t p : owned_) n += tm_.stats(p).cut_through_packets.load();
        return n;
    }
    // This worker's event ring: PFC frames sent and watchdog events go there (null: none).
    void set_trace(TraceRing *ring) {
        trace_ = ring;
        for (uint16_t p : owned_) tm_.ports_[p]->idle_still = false;  // the trace's samples
    }
    // Dequeue runs taken with per-frame tests (`tested`) or without (QosPlan::run_tests_once),
    // for tests and benchmarks.
    uint64_t dequeue_runs(bool tested) const { return dequeue_runs_[tested]; }
    // Of the runs without per-frame tests, those that took a whole queue of one PG key
    // (take_run's copy without the length sum), for tests.
    uint64_t whole_runs() const { return whole_runs_; }
    // Idle flushes of a port whose steps were skipped (TrafficManager::Port::idle_still), for
    // tests.
    uint64_t idle_skips() const { return idle_skips_; }
    // Bursts admitted in sums (admit_in_sums), for tests and benchmarks.
    uint64_t sum_admissions() const { return sum_admissions_; }
    // Bursts that cut through on their BurstSummary (enqueue_summed; cut_through_mixed's with a
    // summary of several TCs too), for tests and benchmarks.
    uint64_t summed_cut_throughs() const { return summed_cut_throughs_; }
    // Bursts that cut through by cut_through_mixed (several queues or after a mixed burst), for
    // tests and benchmarks.
    uint64_t mixed_cut_throughs() const { return mixed_cut_throughs_; }

  private:
    // Admission (enqueue, handoff drain): in sums when no packet can be refused, drawn for or
    // marked (admit_in_sums), else per packet admission() (admit_each); counters per burst.
    void admit(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns);
    // enqueue() and enqueue_summed() (kSum: `sum` describes the burst; else it is unused).
    // `final`: final_enqueue() came before it (final_ cleared by the caller).
    template <bool kSum>
    [[gnu::always_inline]] inline void enqueue_burst(uint16_t port, rte_mbuf **pkts, uint16_t n,
                                                     uint64_t now_ns, const BurstSummary &sum,
                                                     bool final);
    static constexpr uint16_t kSumBurst = 64;  // larger bursts: admit_each
    bool admit_in_sums(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns);
    // A burst of one ingress port in sums, by TC and by queue (admit_in_sums, cut_through_mixed).
    struct BurstSums;
    // admit_in_sums's checks on the sums: whether admit_each() would admit every packet without
    // a random draw or a mark; fills s.excess. Changes nothing (but the TX ring model's drain).
    [[gnu::always_inline]] inline bool sums_admissible(TrafficManager::Port &ps,
                                                       const uint16_t *key_of, BurstSums &s,
                                                       uint64_t now_ns);
    // The admission of a burst whose sums passed: tails, bytes, excess, pools, counters, PG bytes;
    // per_queue(q, qi, packets) first for each queue (admit_in_sums: its slots). kThrough: the
    // queues were empty and leave again (cut_through_mixed, an idle port): their bytes and
    // excess stay 0 (the pools are charged the burst's), their depth gauges and the pool gauges
    // are not set (they end where they are), nonempty is not; after_queue(q, counters, qi,
    // packets) last for each queue.
    template <bool kThrough, class PerQueue, class AfterQueue>
    [[gnu::always_inline]] inline void commit_sums(uint16_t port, TrafficManager::Port &ps,
                                                   const uint16_t *key_of, const BurstSums &s,
                                                   PerQueue &&per_queue, AfterQueue &&after_queue);
    // Cut-through for a final burst to an idle port whose packets go to several queues
    // (admit_cut_through hands it over) or that comes after such a burst: admitted in sums without slots and sent in the order service() would
    // take them (strict queues, then DWRR from its turn), with service()'s state and counters,
    // when service() would send the whole burst in one pass (doc/qos.md, "Cut-through"). Returns
    // false, having changed nothing, otherwise. `sum`: the worker's summary (kSeveralTcs), whose
    // bytes, bound and ingress port are then not read from the packets.
    bool cut_through_mixed(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns,
                           const BurstSummary *sum = nullptr);
    // Frames out[sent, n) the device refused after a cut-through charged the TX ring model for
    // them: uncharged and staged for the next flush (service() sends staged frames first).
    [[gnu::noinline]] void stage_refused(TrafficManager::Port &ps, PortQosStats &st,
                                         rte_mbuf **out, uint32_t sent, uint32_t n);
    // One run of cut_through_mixed's order: the n frames of queue q's share whose bits are set
    // in mask (bit i: the burst's packet i), in the burst's order.
    struct MixedRun {
        uint64_t mask;
        uint8_t q, n;
    };
    // Whether service() would draw for or mark a frame of out[0..n) at dequeue (cut_through_mixed's
    // exact check when its bound does not rule it out).
    [[gnu::noinline]] bool mixed_would_mark(const TrafficManager::Port &ps, const MixedRun *runs,
                                            unsigned n_runs, const BurstSums &s,
                                            rte_mbuf *const *out, uint64_t ring0) const;
    // The flush's release of the mixed cut-throughs (Port::ct_mixed_held), after its services.
    [[gnu::noinline]] void release_mixed_all();
    // The release cut_through_mixed() leaves to the flush (Port::ct_pool_queues, ct_tcs).
    void release_mixed(TrafficManager::Port &ps);
    void admit_each(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns);
    struct PgCharge;  // a burst's PG bytes, charged per run of one (ingress port, PG)
    QueueDrop admission(const TrafficManager::Queue &q, const TrafficManager::Pool *pool,
                        uint32_t len, uint64_t after, uint64_t excess, uint64_t delta,
                        unsigned key, const PgCharge &charge, bool ect, uint32_t cap,
                        const std::atomic<uint64_t> *pg_limit);
    // Counters once per burst: per queue it grew (admitted_to), then once (admitted).
    void admitted_to(uint16_t port, unsigned qi, uint32_t packets, uint64_t bytes,
                     uint32_t marked);
    void admitted_to(TrafficManager::Queue &q, QueueStats &qs, uint16_t port, unsigned qi,
                     uint32_t packets, uint64_t bytes, uint32_t marked);
    void admitted(uint16_t port, unsigned touched);
    // The port's handoff ring into admission; the caller checks that the port has one.
    void drain_handoff(uint16_t port, uint64_t now_ns);
    // Cut-through: after admit() of the final burst for an idle port, sends it now when that is
    // exactly what the flush would do (doc/qos.md, "Cut-through"); else leaves it queued.
    void cut_through(uint16_t port, uint64_t now_ns);
    // The same for a burst whose admission can refuse, draw or mark nothing (one queue, within
    // its reservation, below every curve): admitted in sums, without slots, and sent. A burst
    // of several queues goes to cut_through_mixed(), whose result it returns. Returns false,
    // having changed nothing, when the burst needs the per-packet admission. kSum: `sum`
    // gives every packet's class and the burst's bytes (no pass over the packets for them);
    // else a summary of several TCs (kSeveralTcs) goes on to cut_through_mixed().
    template <bool kSum>
    bool admit_cut_through(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns,
                           const BurstSummary &sum);
    // enqueue_last()'s path for a summarised final burst to an idle port whose queue for the
    // summary's TC is plain (Port::ct_plain_q): what enqueue_burst<true>, admit_cut_through<true>
    // and send_cut_through() do for it, with the state in locals and each field stored once.
    // Returns false, having changed nothing, whenever any other path could apply (not owned, not
    // idle, after a mixed burst, a short frame, a burst too long, paused, link down, a
    // watermark clear to apply): the caller then takes the general path.
    [[gnu::always_inline]] inline bool cut_through_plain(uint16_t port, rte_mbuf **pkts,
                                                         uint16_t n, uint64_t now_ns,
                                                         const BurstSummary &sum);
    // The device took `sent` < n of a cut-through burst: the counters, the ring model and the
    // staged frames as send() and send_cut_through() leave them.
    [[gnu::noinline]] void cut_through_refused(uint16_t port, rte_mbuf **out, uint16_t n,
                                               uint16_t sent, uint64_t bytes);
    // Their common end: service()'s steps for `n` frames (`bytes`, `wire` wire bytes, PG key
    // `key`) of queue qi, sent from out[]; `ring`: the ring model with them added.
    [[gnu::always_inline]] inline void send_cut_through(uint16_t port, int qi, rte_mbuf **out,
                                                        uint32_t n, uint64_t bytes, uint64_t wire,
                                                        unsigned key, const TxRingModel &ring,
                                                        uint64_t now_ns);
    // The flush's share of a cut-through burst: the buffer release it deferred, the gauges.
    [[gnu::always_inline]] inline uint32_t finish_cut_through(uint16_t port, uint64_t now_ns);
    // service() for a port with nothing queued or staged: the clocks, the watermark clear, PFC
    // honoring (`honor`: false only when Port::pfc_inert) and the gauges, as service() would.
    [[gnu::always_inline]] inline void service_idle(uint16_t port, uint64_t now_ns, bool honor);
    [[gnu::always_inline]] inline void release_cut_through(TrafficManager::Port &ps);
    // The PFC engine's two calls per owned port and flush, through the narrow interfaces it
    // asks for (qos/pfc_engine.h): honoring in (the paused queues), generation out.
    struct PfcQueuesOf;  // PfcQueues over one owned port's queues
    struct PfcBufferOf;  // PfcBuffer over this owner's PG accounting and one port's TX
    // Inline (qos_egress.cc): the engine's own calls are the only calls per port and flush.
    [[gnu::always_inline]] inline uint8_t pfc_honor(uint16_t port, uint64_t now_ns);
    [[gnu::always_inline]] inline void pfc_generate(uint16_t port, uint64_t now_ns);
    void flush_queue(uint16_t port, unsigned qi, QueueDrop why, DropReason reason);
    // Scheduling (flush): service() per owned port, in these steps.
    uint32_t service(uint16_t port, uint64_t now_ns);
    struct RunLimits;  // what a service() pass's runs may still take
    struct Run {
        uint32_t frames;
        uint64_t bytes;
    };
    void apply_watermark_clear(uint16_t port);
    uint32_t retry_staged(uint16_t port);
    struct RunState;  // a run's per-frame state (take_run)
    void leave(RunState &r, const TrafficManager::Slot &s, uint32_t w, rte_mbuf **out);
    void leave_each(RunState &r, const TrafficManager::Slot *from, const TrafficManager::Slot *end,
                    rte_mbuf **out);
    bool take_tested(const TrafficManager::Queue &q, RunState &r, uint32_t lim, int64_t dbase,
                     RunLimits limits, rte_mbuf **out);
    Run take_run(uint16_t port, TrafficManager::Port &ps, PortQosStats &st, int qi,
                 unsigned burst, RunLimits &limits, rte_mbuf **out, unsigned &k, bool *ring_full,
                 unsigned &nonempty, unsigned &untested, unsigned &whole);
    void commit_dequeued(const TrafficManager::Queue &q, QueueStats &qs, uint16_t port, int qi,
                         uint32_t run, uint64_t bytes, uint32_t marked);
    void sample_ecn_marks(uint16_t port, uint64_t now_ns);
    void apply_pg_watermark_clears();
    // `all_bytes`: the sum of the pkt_len of pkts[0..n).
    uint16_t send(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t all_bytes);
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

    TrafficManager &tm_;
    PortIo &io_;
    WorkerCounters &ctr_;
    uint16_t worker_;
    uint16_t tx_queue_;
    uint16_t burst_;
    Pcg32 rng_;
    bool cut_through_;    // the plan allows cut-through
    bool summed_ct_;      // cut_through_ and burst_summary_: enqueue_last tries cut_through_plain
    uint16_t ct_max_;     // the longest burst admit_cut_through takes: min(burst_, queue_packets)
    uint32_t owned_mask_ = 0;  // bit p: this worker owns port p
    bool final_ = false;  // final_enqueue() before this enqueue
    bool sum_admission_;  // QosPlan::sum_admission
    // The plan's dequeue constants (take_run): min_frame_bytes, wire_overhead_bytes, their sum,
    // run_tests_once.
    uint32_t min_frame_, overhead_, frame_extra_;
    bool run_tests_once_;
    uint64_t sum_admissions_ = 0;
    bool burst_summary_;  // QosPlan::burst_summary
    uint64_t summed_cut_throughs_ = 0;
    bool mixed_ct_;  // QosPlan::mixed_cut_through
    uint64_t mixed_cut_throughs_ = 0;
    TrafficManager::Owner &own_;
    bool single_owner_;  // one worker: pg_total() is this owner's bytes
    std::vector<uint16_t> owned_;
    std::vector<uint16_t> generating_;  // the owned ports PFC generates for (PfcEngine::generates)
    // Per flush: the ingress pools' use beyond reservations (ipool_used), bit i: pool i read.
    std::vector<uint64_t> ipool_used_;
    uint64_t ipool_valid_ = 0;
    std::array<Counter, kMaxPorts> handoff_drops_{};
    TraceRing *trace_ = nullptr;
    // Some owned port's mixed cut-through awaits its release (Port::ct_mixed_held).
    bool mixed_held_ = false;
    // ECN marks not yet sampled into the trace, per (port, queue): one ecn_mark_sample event per
    // kEcnSampleEvery marks (value: the marks it stands for).
    static constexpr uint32_t kEcnSampleEvery = 16;
    std::array<std::array<uint32_t, kNumQueues>, kMaxPorts> ecn_unsampled_{};
    std::array<uint64_t, 2> dequeue_runs_{};  // [tested]: take_run's runs
    uint64_t whole_runs_ = 0;
    uint64_t idle_skips_ = 0;
};

}  // namespace rocesw
