// The PFC engine (doc/pfc.md): everything the switch does at run time about IEEE 802.1Qbb PFC
// and 802.3x PAUSE, for every port, in one place.
//
//   honoring    a received MAC-control frame -> per-priority pause deadlines
//               (receive_mac_control, on the receiving worker) -> the queues the scheduler
//               skips (honor, in the port owner's flush);
//   generation  per lossless PG of a port as an ingress port: xoff/xon against its thresholds,
//               PFC frames built here and sent by the owner ahead of every queue (generate);
//   watchdog    per lossless queue (SONiC pfcwd semantics), driven from honor();
//   counters    PfcPortStats per port; snapshot() is the plain-data read side for views.
//
// Layers: the pure pieces - the frame codec, PauseClock, PfcWatchdog, the headroom
// calculator - live in lib/pfc (no DPDK; rocectl and rocehost share them). This engine combines
// them with the QoS plan (PortQosPlan, PgPlan) and the PG accounting, which are qos types, so it
// sits in lib/qos, in this file of its own: lib/pfc is below qos in lib/meson.build and may not
// include it. Nothing in qos_egress.h leaks in here; the engine reaches the queues and the buffer
// only through the two narrow interfaces below (PfcQueues, PfcBuffer), which the port owner's
// QosEgress implements inline, so the hot path keeps its cost (no virtual call, no lock, no
// allocation but the PFC frame itself).
//
// Threads: receive_mac_control() from any worker (the port's PFC lock keeps its clocks and
// counters exact); honor() and generate() only from the port's scheduler owner; readers (stats,
// snapshot) from any thread, relaxed loads.
//
// Construction: from the QosPlan alone (PfcEngine engine(plan)); set_source() before the
// workers start gives it the mbuf pool and MACs of its frames. TrafficManager owns one built
// from its own plan (TrafficManager::pfc()).
#pragma once

#include <array>
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <rte_spinlock.h>

#include "common/counters.h"
#include "pfc/frame.h"
#include "pfc/pause_clock.h"
#include "pfc/watchdog.h"
#include "qos/plan.h"
#include "qos/stats.h"
#include "common/trace_event.h"  // TraceRing: PFC events for the event trace

struct rte_mbuf;
struct rte_mempool;

namespace rocesw {

// PFC counters and state of one port. Received-side fields are written by the worker that
// receives the port's MAC-control frames (under the port's PFC lock); sent-side, PG and watchdog
// fields by the port's scheduler owner. Readers load them relaxed.
struct alignas(kCacheLine) PfcPortStats {
    // Per priority, received.
    std::array<Counter, kNumPriorities> rx_pause;     // PFC frames with a time > 0 for it
    std::array<Counter, kNumPriorities> rx_xon;       // PFC frames with time 0 for it
    std::array<Counter, kNumPriorities> rx_ignored;   // frames naming it while it is lossy
    std::array<PauseClock, kNumPriorities> rx_clock;  // pause deadlines and duration
    std::array<std::atomic<uint64_t>, kNumPriorities> last_rx_pause_ns{};
    Counter rx_global_pause, rx_global_ignored;  // 802.3x PAUSE honored / ignored
    PauseClock rx_global_clock;
    std::array<Counter, kMacControlErrorCount> rx_malformed;
    // Per priority, sent.
    std::array<Counter, kNumPriorities> tx_pause;  // PFC frames with a time > 0 for it
    std::array<Counter, kNumPriorities> tx_xon;
    std::array<PauseClock, kNumPriorities> tx_clock;  // pause the switch causes
    Counter tx_failed;                                // no mbuf / device refused (retried)
    Counter tx_frames;  // PFC frames the device took (one may carry several priorities)
    // Per PG of this port as an ingress port.
    std::array<Gauge, kNumPg> pg_threshold;  // current xoff threshold, bytes
    std::array<Gauge, kNumPg> pg_headroom_used, pg_headroom_watermark;
    std::array<Gauge, kNumPg> pg_xoff;  // 1 while the PG holds its peer paused
    // Per queue, watchdog.
    std::array<Counter, kNumQueues> wd_storms, wd_restores;
    Gauge wd_stormed;     // bit q: queue q is stormed now
    Gauge paused_queues;  // bit q: skipped for PFC/PAUSE at the last flush
};

// A plain copy of one port's PFC state, for views (rocectl show pfc). The PG buffer fields
// (bytes, watermark_bytes, headroom_drops) are the buffer's: TrafficManager::pfc_snapshot()
// fills them; PfcEngine::snapshot() leaves them 0.
struct PfcPortView {
    struct Priority {
        bool lossless = false;
        uint64_t rx_pause = 0, rx_xon = 0, rx_ignored = 0;
        bool rx_paused_now = false;
        uint64_t rx_pause_ns = 0;
        uint64_t tx_pause = 0, tx_xon = 0;
        bool tx_pausing_now = false;
        uint64_t tx_pause_ns = 0;
    };
    struct Pg {
        uint8_t priorities = 0;  // 0: not a lossless PG (no PFC)
        bool automatic = false;  // threshold and headroom from the calculator
        uint64_t bytes = 0, watermark_bytes = 0, headroom_drops = 0;  // the buffer's
        uint64_t xoff_threshold_bytes = 0, headroom_bytes = 0, headroom_needed_bytes = 0;
        uint64_t headroom_used_bytes = 0, headroom_watermark_bytes = 0;
        bool xoff = false;
    };
    struct WdQueue {
        bool watched = false;  // a lossless queue with the watchdog on
        bool stormed = false;
        uint64_t storms = 0, restores = 0;
    };
    uint8_t pfc_enable = 0;
    uint16_t pause_quanta = 0;
    bool honor_pause = false;
    uint64_t rx_global_pause = 0, rx_global_ignored = 0;
    std::array<uint64_t, kMacControlErrorCount> rx_malformed{};
    uint64_t tx_failed = 0, tx_frames = 0;
    uint8_t paused_queues = 0;
    std::array<Priority, kNumPriorities> priorities{};
    std::array<Pg, kNumPg> pgs{};
    PfcWdPlan wd;
    std::array<WdQueue, kNumQueues> wd_queues{};
};

// The port owner's queues of one port, as the watchdog sees them (QosEgress implements it).
template <class T>
concept PfcQueues = requires(T &q, unsigned qi) {
    { q.head(qi) } -> std::convertible_to<uint32_t>;  // packets dequeued so far (free-running)
    { q.size(qi) } -> std::convertible_to<uint32_t>;  // packets held
    q.storm_drop(qi);     // stormed with action drop: flush the queue, refuse what comes
    q.storm_restore(qi);  // the storm is over: admit again
};

// The buffer as PFC generation sees it from the port owner (QosEgress implements it).
template <class T>
concept PfcBuffer = requires(T &b, size_t key, size_t pool, uint64_t bytes, rte_mbuf *m) {
    // Bytes of PgAccounting key `key` (ingress port, PG), summed over the scheduler owners.
    { b.pg_bytes(key) } -> std::convertible_to<uint64_t>;
    // What the lossless PGs of ingress pool `pool` hold beyond their reservations.
    { b.ipool_used(pool) } -> std::convertible_to<uint64_t>;
    // Admission limit of lossless packets of `key` (threshold + headroom).
    b.set_pg_limit(key, bytes);
    // Sends a PFC frame ahead of every queue (unshaped, never paused, charged its wire time).
    // False: the device refused it; the caller keeps the mbuf.
    { b.send_control(m) } -> std::same_as<bool>;
};

class PfcEngine {
  public:
    explicit PfcEngine(const QosPlan &plan);
    PfcEngine(const PfcEngine &) = delete;
    PfcEngine &operator=(const PfcEngine &) = delete;

    uint16_t n_ports() const { return uint16_t(plan_.ports.size()); }

    // Where PFC frames come from: their mbuf pool and each port's source MAC. Before workers
    // start; without it no PFC frame is sent (counted tx_failed).
    void set_source(rte_mempool *pool, std::vector<std::array<uint8_t, 6>> macs);

    // --- Honoring, receive side: any worker. ---
    enum class MacControlResult : uint8_t {
        consumed,   // valid and acted on (or a valid XON): count as local
        ignored,    // valid but not honored here (PAUSE with pause: ignore, lossy-only PFC)
        malformed,  // refused (PfcPortStats::rx_malformed by reason)
    };
    // A MAC-control frame received on `port` (takes the port's PFC lock). `f` is the frame from
    // its Ethernet header, `len` without FCS. Never forwards anything. `trace`: the receiving
    // worker's event ring (pfc_xoff/xon_received), or null.
    MacControlResult receive_mac_control(uint16_t port, const uint8_t *f, uint32_t len,
                                         uint64_t now_ns, TraceRing *trace = nullptr);

    // --- The port's scheduler owner, once per flush. ---
    // Honoring + watchdog: the queues of `port` PFC (or 802.3x PAUSE) keeps from sending now.
    template <PfcQueues Q>
    uint8_t honor(uint16_t port, uint64_t now_ns, Q &queues, TraceRing *trace);
    // Whether honor(port, now_ns) would pause nothing and run no watchdog action: no received
    // pause is active and no queue is stormed (owner side).
    bool quiet(uint16_t port, uint64_t now_ns) const {
        const Port &ps = *ports_[port];
        return now_ns >= ps.any_until.load(std::memory_order_acquire) && !ps.stormed;
    }
    // Whether honor(port, ...) can ever pause a queue or run a watchdog: the port has a PFC
    // priority, honors 802.3x PAUSE or watches a queue. Without, honor() returns 0 and changes
    // nothing (received frames are ignored: any_until stays 0) and quiet() holds.
    bool honors(uint16_t port) const {
        const Port &ps = *ports_[port];
        return plan_.ports[port].cls.pfc_enable || plan_.ports[port].honor_pause || ps.wd_queues;
    }
    // Whether `port`, as an ingress port, has lossless PGs (generate() has work).
    bool generates(uint16_t port) const { return ports_[port]->lossless_pgs != 0; }
    // Generation for `port` as an ingress port: each lossless PG against its thresholds, on the
    // PG bytes after the flush's admissions and departures; sends (or retries) one PFC frame.
    // Inline: the common case, every PG's inputs those of its last XOFF-off evaluation and no
    // frame pending (unchanged()), returns here; the rest is generate_pgs().
    template <PfcBuffer B>
    [[gnu::always_inline]] inline void generate(uint16_t port, uint64_t now_ns, B &buffer,
                                                TraceRing *trace) {
        if (plan_.pfc_skip && unchanged(port, buffer)) return;
        generate_pgs(port, now_ns, buffer, trace);
    }

    // --- Readers: any thread. ---
    const PfcPortStats &stats(uint16_t port) const { return *stats_[port]; }
    // The port's next PFC deadline after `now_ns` (QosEgress::next_event_ns): the received
    // pauses of the queues in `backlog` ending, an XOFF refresh due, a watchdog deadline;
    // UINT64_MAX: none.
    uint64_t next_event_ns(uint16_t port, uint64_t now_ns, uint8_t backlog) const;
    PfcPortView snapshot(uint16_t port, uint64_t now_ns) const;

  private:
    // Per-port state. Owner side: written by the scheduler owner only. Receive side: any_until
    // under rx_lock.
    struct alignas(kCacheLine) Port {
        std::array<uint8_t, kNumPriorities> prio_queue{};  // priority -> queue bit (lossless)
        uint8_t lossless_pgs = 0;                          // PGs that generate PFC
        uint8_t xoff = 0;                                  // PGs holding the peer paused
        uint8_t pending_xoff = 0, pending_xon = 0;         // priorities to send (retry)
        std::array<uint64_t, kNumPg> last_sent{};
        std::array<uint64_t, kNumPg> pg_limit_set{};
        uint64_t pause_ns = 0;  // pfc_quanta at the port's rate
        std::array<PfcWatchdog, kNumQueues> wd;
        std::array<uint32_t, kNumQueues> wd_head{};
        uint8_t wd_queues = 0;    // lossless queues the watchdog watches
        uint8_t stormed = 0;      // queues ignoring PFC (stormed)
        uint8_t storm_prios = 0;  // priorities of queues stormed with action drop
        // generate(): per PG, the inputs of its last evaluation that found and left XOFF off
        // (bit g of same_valid: recorded).
        uint8_t same_valid = 0;
        std::array<uint8_t, kNumPg> same_storm{};
        std::array<uint64_t, kNumPg> same_bytes{}, same_used{};
        // Per PG, for unchanged(): its PgAccounting key, its ingress pool when its threshold is
        // dynamic (else -1: generate_pgs() reads no pool use for it).
        std::array<uint16_t, kNumPg> pg_key{};
        std::array<int16_t, kNumPg> dyn_pool{};
        // Receive side: the latest pause deadline of any priority (fast path).
        alignas(kCacheLine) std::atomic<uint64_t> any_until{0};
        rte_spinlock_t rx_lock = RTE_SPINLOCK_INITIALIZER;
    };

    template <PfcQueues Q>
    void watchdog(uint16_t port, uint64_t now_ns, uint8_t paused, Q &queues, TraceRing *trace);
    // Whether generate_pgs() would skip every lossless PG of `port` (none in XOFF, each with the
    // PG bytes, pool use and stormed priorities of its last evaluation) and send nothing (no
    // frame pending): then it would change nothing.
    template <PfcBuffer B>
    [[gnu::always_inline]] inline bool unchanged(uint16_t port, B &buffer) const {
        const Port &ps = *ports_[port];
        if (ps.same_valid != ps.lossless_pgs || (ps.xoff | ps.pending_xoff | ps.pending_xon))
            return false;
        for (unsigned left = ps.lossless_pgs; left; left &= left - 1) {
            const unsigned g = unsigned(__builtin_ctz(left));
            if (buffer.pg_bytes(ps.pg_key[g]) != ps.same_bytes[g] ||
                ps.storm_prios != ps.same_storm[g])
                return false;
            const int pool = ps.dyn_pool[g];
            if ((pool >= 0 ? buffer.ipool_used(size_t(pool)) : 0) != ps.same_used[g]) return false;
        }
        return true;
    }
    template <PfcBuffer B>
    void generate_pgs(uint16_t port, uint64_t now_ns, B &buffer, TraceRing *trace);
    // The frame for the pending priorities, or null (counted tx_failed).
    rte_mbuf *build_frame(uint16_t port);
    // The device refused the frame: freed, counted; the pending priorities go at the next flush.
    void frame_refused(uint16_t port, rte_mbuf *m);
    // The device took it: counters, pause clocks, trace; nothing pending.
    void frame_sent(uint16_t port, uint64_t now_ns, TraceRing *trace);
    // One trace event per priority in `prios` (value: the queue).
    static void trace_priorities(TraceRing *trace, uint8_t prios, uint64_t now_ns, uint16_t port,
                                 TraceKind k, unsigned queue) {
        if (!trace) return;
        for (unsigned pr = 0; pr < kNumPriorities; pr++)
            if (prios >> pr & 1) trace->push({now_ns, queue, port, uint16_t(pr), k});
    }

    QosPlan plan_;
    std::vector<std::unique_ptr<Port>> ports_;
    std::vector<std::unique_ptr<PfcPortStats>> stats_;
    rte_mempool *pool_ = nullptr;
    std::vector<std::array<uint8_t, 6>> macs_;
};

// ----------------------------------------------------------------------- owner side (inline)

template <PfcQueues Q>
uint8_t PfcEngine::honor(uint16_t port, uint64_t now_ns, Q &queues, TraceRing *trace) {
    Port &ps = *ports_[port];
    PfcPortStats &st = *stats_[port];
    uint8_t mask = 0;
    if (now_ns < ps.any_until.load(std::memory_order_acquire)) {
        if (st.rx_global_clock.active(now_ns)) mask = 0xFF;
        for (unsigned pr = 0; pr < kNumPriorities; pr++)
            if (ps.prio_queue[pr] && st.rx_clock[pr].active(now_ns)) mask |= ps.prio_queue[pr];
    }
    if (ps.wd_queues && (mask || ps.stormed)) {
        watchdog(port, now_ns, mask, queues, trace);
    } else if (ps.wd_queues) {
        // Nothing paused and no storm: keep the progress marks current for the next pause.
        for (unsigned qi = 0; qi < kNumQueues; qi++)
            if (ps.wd_queues >> qi & 1) {
                ps.wd_head[qi] = queues.head(qi);
                ps.wd[qi].update(now_ns, false, queues.size(qi) > 0, true, 0);
            }
    }
    mask = uint8_t(mask & ~ps.stormed);
    st.paused_queues.set(mask);
    return mask;
}

// The watchdog of every watched queue of `port`; `paused`: the queues the received deadlines
// pause (before the watchdog's own override).
template <PfcQueues Q>
void PfcEngine::watchdog(uint16_t port, uint64_t now_ns, uint8_t paused, Q &queues,
                         TraceRing *trace) {
    Port &ps = *ports_[port];
    PfcPortStats &st = *stats_[port];
    const bool drop = plan_.ports[port].wd.drop;
    for (unsigned qi = 0; qi < kNumQueues; qi++) {
        if (!(ps.wd_queues >> qi & 1)) continue;
        uint64_t last_rx = 0;
        uint8_t qprios = 0;
        for (unsigned pr = 0; pr < kNumPriorities; pr++)
            if (ps.prio_queue[pr] == (1u << qi)) {
                qprios = uint8_t(qprios | 1u << pr);
                const uint64_t t = st.last_rx_pause_ns[pr].load(std::memory_order_relaxed);
                if (t > last_rx) last_rx = t;
            }
        const uint32_t head = queues.head(qi);
        const bool progressed = head != ps.wd_head[qi];
        ps.wd_head[qi] = head;
        switch (
            ps.wd[qi].update(now_ns, paused >> qi & 1, queues.size(qi) > 0, progressed, last_rx)) {
            case PfcWatchdog::Event::storm:
                st.wd_storms[qi].inc();
                trace_priorities(trace, qprios, now_ns, port, TraceKind::watchdog_storm, qi);
                ps.stormed = uint8_t(ps.stormed | 1u << qi);
                if (drop) {
                    ps.storm_prios |= qprios;
                    queues.storm_drop(qi);
                    ps.wd_head[qi] = queues.head(qi);
                }
                break;
            case PfcWatchdog::Event::restore:
                st.wd_restores[qi].inc();
                trace_priorities(trace, qprios, now_ns, port, TraceKind::watchdog_restore, qi);
                ps.stormed = uint8_t(ps.stormed & ~(1u << qi));
                ps.storm_prios &= uint8_t(~qprios);
                queues.storm_restore(qi);
                break;
            case PfcWatchdog::Event::none:
                break;
        }
    }
    st.wd_stormed.set(ps.stormed);
}

template <PfcBuffer B>
void PfcEngine::generate_pgs(uint16_t port, uint64_t now_ns, B &buffer, TraceRing *trace) {
    Port &ps = *ports_[port];
    const PortQosPlan &pp = plan_.ports[port];
    PfcPortStats &st = *stats_[port];
    for (unsigned left = ps.lossless_pgs; left; left &= left - 1) {
        const unsigned g = unsigned(__builtin_ctz(left));
        const PgPlan &pg = pp.pgs[g];
        const size_t key = PgAccounting::key(port, g);
        const uint64_t bytes = buffer.pg_bytes(key);
        const uint64_t used = pg.dynamic ? buffer.ipool_used(size_t(pg.pool)) : 0;
        // Not in XOFF, and the last evaluation, from XOFF off to XOFF off, saw the same PG
        // bytes, pool use and stormed priorities: this one would set the same gauges and
        // change nothing else (the threshold and the limit are the same, no XOFF is due).
        const bool quiet = !(ps.xoff >> g & 1);
        if (quiet && plan_.pfc_skip && (ps.same_valid >> g & 1) && bytes == ps.same_bytes[g] &&
            used == ps.same_used[g] && ps.storm_prios == ps.same_storm[g])
            continue;
        uint64_t threshold = pg.static_th_bytes;
        if (pg.dynamic) {
            // Free shared bytes of the ingress pool: its size less its headroom pool, less
            // what its lossless PGs hold beyond their reservations.
            const PoolPlan &ip = plan_.ingress_pools[size_t(pg.pool)];
            uint64_t shared = ip.size_bytes > ip.xoff_bytes ? ip.size_bytes - ip.xoff_bytes : 0;
            threshold = pg.threshold(shared > used ? shared - used : 0);
            // While the peer is paused, the headroom sits on the threshold at which the pause
            // was sent (it does not shrink as the pool fills).
            const uint64_t limit = threshold + pg.headroom_bytes;
            if (!(ps.xoff >> g & 1) && limit != ps.pg_limit_set[g]) {
                ps.pg_limit_set[g] = limit;
                buffer.set_pg_limit(key, limit);
            }
        }
        st.pg_threshold[g].set(threshold);
        const uint64_t used_hr = bytes > threshold ? bytes - threshold : 0;
        st.pg_headroom_used[g].set(used_hr);
        st.pg_headroom_watermark[g].max(used_hr);
        // Priorities whose queue on this port is stormed (action drop) send no PFC.
        const uint8_t prios = uint8_t(pg.priorities & ~ps.storm_prios);
        if (!(ps.xoff >> g & 1)) {
            if (bytes >= threshold && prios) {
                ps.xoff = uint8_t(ps.xoff | 1u << g);
                ps.last_sent[g] = now_ns;
                ps.pending_xoff |= prios;
                ps.pending_xon &= uint8_t(~prios);
            }
        } else if (bytes <= pg.xon_threshold(threshold) || !prios) {
            ps.xoff = uint8_t(ps.xoff & ~(1u << g));
            ps.pending_xon |= pg.priorities;
            ps.pending_xoff &= uint8_t(~pg.priorities);
        } else if (now_ns - ps.last_sent[g] >= ps.pause_ns / 2) {
            // Refresh before the advertised time runs out.
            ps.last_sent[g] = now_ns;
            ps.pending_xoff |= prios;
        }
        st.pg_xoff[g].set(ps.xoff >> g & 1);
        if (quiet && !(ps.xoff >> g & 1)) {
            ps.same_valid = uint8_t(ps.same_valid | 1u << g);
            ps.same_bytes[g] = bytes;
            ps.same_used[g] = used;
            ps.same_storm[g] = ps.storm_prios;
        } else {
            ps.same_valid = uint8_t(ps.same_valid & ~(1u << g));
        }
    }
    if (!(ps.pending_xoff | ps.pending_xon)) return;
    rte_mbuf *m = build_frame(port);
    if (!m) return;
    if (!buffer.send_control(m)) return frame_refused(port, m);
    frame_sent(port, now_ns, trace);
}

}  // namespace rocesw
