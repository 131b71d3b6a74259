#include "qos/qos_egress.h"

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "pkt/mbuf_meta.h"
#include "qos/ecn.h"

namespace rocesw {

namespace {
// A dequeue run's four-slot step: the slots' mbufs out to o[0..3]; returns their lengths'
// minimum test (bit 31 of len + neg_min, neg_min = -min_frame: set for a frame under it).
template <class Slot>
[[gnu::always_inline]] inline uint32_t take4(const Slot *s, rte_mbuf **o, uint32_t neg_min) {
    o[0] = s[0].m;
    o[1] = s[1].m;
    o[2] = s[2].m;
    o[3] = s[3].m;
    return (s[0].len + neg_min) | (s[1].len + neg_min) | (s[2].len + neg_min) |
           (s[3].len + neg_min);
}


std::vector<uint16_t> modulo_owners(size_t n_ports, uint16_t n_workers) {
    std::vector<uint16_t> o(n_ports);
    for (size_t p = 0; p < n_ports; p++) o[p] = uint16_t(p % std::max<uint16_t>(n_workers, 1));
    return o;
}

// SplitMix64: spreads (seed, worker) into well-separated PCG seeds.
uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

constexpr uint16_t kHandoffBurst = 64;

// The port drop reason a queue drop is charged to.
constexpr DropReason port_reason(QueueDrop d) {
    switch (d) {
        case QueueDrop::queue_full: return DropReason::queue_full;
        case QueueDrop::buffer_full: return DropReason::buffer_full;
        case QueueDrop::wred_drop: return DropReason::wred_drop;
        case QueueDrop::headroom_exhausted: return DropReason::headroom_exhausted;
        case QueueDrop::pfc_watchdog: return DropReason::pfc_watchdog;
        default: return DropReason::port_stopped;
    }
}

// The PacketMeta bytes from in_port to spare (in_port, out_port, tc, spare) as one native word:
// masked with kInPort or kInPortTc, equal words mean equal fields in any host byte order.
uint32_t in_port_tc_word(const PacketMeta *meta) {
    static_assert(offsetof(PacketMeta, out_port) == offsetof(PacketMeta, in_port) + 1 &&
                  offsetof(PacketMeta, tc) == offsetof(PacketMeta, in_port) + 2 &&
                  offsetof(PacketMeta, spare) == offsetof(PacketMeta, in_port) + 3);
    uint32_t w;
    std::memcpy(&w, reinterpret_cast<const uint8_t *>(meta) + offsetof(PacketMeta, in_port), 4);
    return w;
}
constexpr uint32_t kInPort = std::bit_cast<uint32_t>(std::array<uint8_t, 4>{0xFF, 0, 0, 0});
constexpr uint32_t kInPortTc = std::bit_cast<uint32_t>(std::array<uint8_t, 4>{0xFF, 0, 0xFF, 0});

// The packets of tc_of[0..n) (n <= 64) equal to tc, as a mask (bit i: packet i).
uint64_t packets_of_tc(const uint8_t *tc_of, unsigned n, unsigned tc) {
    uint64_t mask = 0;
#if defined(__SSE2__)
    // 16 packets a compare; tc_of holds 0 past n up to the next multiple of 16.
    const __m128i want = _mm_set1_epi8(char(tc));
    for (unsigned i = 0; i < n; i += 16) {
        const __m128i v = _mm_load_si128(reinterpret_cast<const __m128i *>(tc_of + i));
        mask |= uint64_t(uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(v, want)))) << i;
    }
#else
    for (unsigned i = 0; i < n; i++) mask |= uint64_t(tc_of[i] == tc) << i;
#endif
    return n >= 64 ? mask : mask & ((uint64_t(1) << n) - 1);
}

// A slot's ecn_ip (TrafficManager::Slot): the ECN codepoint, bit 2 for IPv4/IPv6 (ECN only
// means something there); from a table by L3Type: two loads and an or, no compare.
constexpr std::array<uint8_t, 256> kIpBit = [] {
    std::array<uint8_t, 256> t{};
    t[size_t(L3Type::ipv4)] = t[size_t(L3Type::ipv6)] = 4;
    return t;
}();
unsigned ecn_ip_of(const PacketMeta *meta) {
    return meta->ecn | unsigned(kIpBit[size_t(meta->l3)]);
}

// A slot's pg_key and ecn_ip as one native word (the two fields are adjacent): a key's word
// (TrafficManager::pg_tag_) or'ed with the packet's ecn_tag() is the pair, stored at once.
constexpr uint32_t slot_tag(uint16_t pg_key, uint16_t ecn_ip) {
    return std::bit_cast<uint32_t>(std::array<uint16_t, 2>{pg_key, ecn_ip});
}
constexpr unsigned kEcnTagShift = slot_tag(0, 1) == 1 ? 0 : 16;
static_assert(slot_tag(0, 1) == 1u << kEcnTagShift);
// ecn_ip_of() in the ecn_ip half of the word: the codepoint shifted, the IP bit from a table.
constexpr std::array<uint32_t, 256> kIpTag = [] {
    std::array<uint32_t, 256> t{};
    for (size_t i = 0; i < 256; i++) t[i] = uint32_t(kIpBit[i]) << kEcnTagShift;
    return t;
}();
uint32_t ecn_tag(const PacketMeta *meta) {
    return (unsigned(meta->ecn) << kEcnTagShift) | kIpTag[size_t(meta->l3)];
}

}  // namespace

// ----------------------------------------------------------------------------- TrafficManager

TrafficManager::TrafficManager(const QosPlan &plan, uint16_t n_workers, const std::string &name)
    : TrafficManager(plan, n_workers, modulo_owners(plan.ports.size(), n_workers), name) {}

TrafficManager::TrafficManager(const QosPlan &plan, uint16_t n_workers,
                               std::vector<uint16_t> owners, const std::string &name)
    : plan_(plan), n_workers_(n_workers), owners_(std::move(owners)), pfc_(plan_) {
    if (n_workers_ == 0 || n_workers_ > kMaxWorkers)
        throw std::invalid_argument("TrafficManager: workers out of range");
    if (owners_.size() != plan_.ports.size() || plan_.ports.size() > kMaxPorts)
        throw std::invalid_argument("TrafficManager: one owner per port required");
    for (auto o : owners_)
        if (o >= n_workers_) throw std::invalid_argument("TrafficManager: owner out of range");
    init(name);
}

void TrafficManager::enable_inject() {
    for (size_t p = 0; p < ports_.size(); p++) {
        if (ports_[p]->handoff) continue;
        std::string rn = name_ + "_h" + std::to_string(p);
        ports_[p]->handoff =
            rte_ring_create(rn.c_str(), plan_.handoff_ring_packets, SOCKET_ID_ANY, RING_F_SC_DEQ);
        if (!ports_[p]->handoff)
            throw std::runtime_error("TrafficManager: cannot create ring " + rn);
        handoffs_ = true;
    }
}

void TrafficManager::init(const std::string &name) {
    name_ = name;
    const size_t n_ports = plan_.ports.size();
    pg_limit_ = std::make_unique<std::array<std::atomic<uint64_t>, PgAccounting::kSize>>();
    for (size_t in = 0; in < kMaxPorts; in++)
        for (size_t tc = 0; tc < kNumTc; tc++) {
            const size_t from = in < n_ports ? in : 0;  // a bogus in_port charges port 0
            pg_key_[in * kNumTc + tc] =
                n_ports ? uint16_t(PgAccounting::key(from, plan_.ports[from].cls.tc_to_pg[tc])) : 0;
            pg_tag_[in * kNumTc + tc] = slot_tag(pg_key_[in * kNumTc + tc], 0);
        }
    for (auto &l : *pg_limit_) l.store(UINT64_MAX, std::memory_order_relaxed);
    for (size_t p = 0; p < n_ports; p++) {
        const PortQosPlan &pp = plan_.ports[p];
        auto port = std::make_unique<Port>();
        // Each queue's slots plus kSlack scratch slots past its end (Port::storage).
        const size_t stride = size_t(plan_.queue_packets) + kSlack;
        port->storage.reset(new Slot[size_t(kNumQueues) * stride]);
        for (unsigned q = 0; q < kNumQueues; q++) {
            Queue &qu = port->q[q];
            const QueuePlan &qp = pp.queues[q];
            qu.slots = &port->storage[size_t(q) * stride];
            qu.mask = plan_.queue_packets - 1;
            qu.plan = &plan_.ports[p].queues[q];
            auto bit = [](bool on, uint32_t b) { return on ? b : 0u; };
            qu.flags = bit(qp.lossless, Queue::kLossless) | bit(qp.dynamic, Queue::kDynamic) |
                       bit(qp.ecn, Queue::kEcn) |
                       bit(qp.ecn && qp.mark_point == MarkPoint::enqueue, Queue::kMarkEnq) |
                       bit(qp.ecn && qp.mark_point == MarkPoint::dequeue, Queue::kMarkDeq) |
                       bit(qp.drop.enabled && !qp.lossless, Queue::kDrop) |
                       bit(qp.ecn && pp.ecn_depth == EcnDepth::queue_and_tx_ring, Queue::kMarkRing);
            qu.reserved = qp.reserved_bytes;
            qu.dynamic_th = qp.dynamic_th;
            qu.static_th = qp.static_th_bytes;
            qu.mark_min = qp.mark.min_bytes;
            qu.drop_min = qp.drop.min_bytes;
            if (qu.flags & Queue::kMarkDeq) qu.deq_mark_min = qu.mark_min;
            if (qu.flags & Queue::kMarkRing) qu.deq_ring = ~uint64_t(0);
            if ((qu.flags & Queue::kMarkEnq) && (qu.flags & Queue::kMarkRing))
                port->mark_enq_ring = true;
            if (qu.flags & Queue::kMarkDeq) port->mark_deq_queues |= uint8_t(1u << q);
        }
        for (unsigned tc = 0; tc < kNumTc; tc++)
            if (port->q[pp.cls.tc_to_queue[tc] & (kNumQueues - 1)].flags & Queue::kLossless)
                port->lossless_tcs = uint8_t(port->lossless_tcs | 1u << tc);
        // Queue::one_pg_mask: all ones for a queue whose TCs have one PG for every ingress port.
        for (unsigned q = 0; q < kNumQueues; q++) port->q[q].one_pg_mask = ~0u;
        for (size_t in = 0; in < kMaxPorts; in++)
            for (unsigned t1 = 0; t1 < kNumTc; t1++)
                for (unsigned t2 = 0; t2 < kNumTc; t2++)
                    if (pp.cls.tc_to_queue[t1] == pp.cls.tc_to_queue[t2] &&
                        pg_key_[in * kNumTc + t1] != pg_key_[in * kNumTc + t2])
                        port->q[pp.cls.tc_to_queue[t1] & (kNumQueues - 1)].one_pg_mask = 0;
        port->sched = DwrrScheduler(pp.queues, plan_.dwrr_quantum_bytes);
        port->shaper = TokenBucket(pp.shaper ? pp.rate_bps : 0, pp.shaper_burst_bytes);
        port->ring = TxRingModel(pp.rate_bps, pp.tx_ring_bytes);
        if (n_workers_ > 1) {
            std::string rn = name + "_h" + std::to_string(p);
            port->handoff = rte_ring_create(rn.c_str(), plan_.handoff_ring_packets, SOCKET_ID_ANY,
                                            RING_F_SC_DEQ);
            if (!port->handoff)
                throw std::runtime_error("TrafficManager: cannot create ring " + rn);
            handoffs_ = true;
        }
        // Lossless packets of a PG with static thresholds are admitted up to its threshold plus
        // its headroom; dynamic ones get their limit from PFC generation.
        for (unsigned g = 0; g < kNumPg; g++) {
            const PgPlan &pg = pp.pgs[g];
            if (pg.priorities && !pg.dynamic)
                (*pg_limit_)[PgAccounting::key(p, g)].store(
                    pg.static_th_bytes + pg.headroom_bytes, std::memory_order_relaxed);
        }
        ports_.push_back(std::move(port));
        stats_.push_back(std::make_unique<PortQosStats>());
    }
    ipool_members_.resize(plan_.ingress_pools.size());
    for (size_t p = 0; p < n_ports; p++)
        for (unsigned g = 0; g < kNumPg; g++) {
            const PgPlan &pg = plan_.ports[p].pgs[g];
            if (pg.priorities && pg.pool >= 0)
                ipool_members_[size_t(pg.pool)].push_back(
                    {uint16_t(PgAccounting::key(p, g)), pg.reserved_bytes});
        }
    // Each owner gets a share of every pool in proportion to the ports it owns, so that no two
    // workers ever write the same accounting (ARCHITECTURE invariant 2).
    for (uint16_t w = 0; w < n_workers_; w++) {
        auto o = std::make_unique<Owner>();
        o->pg = std::make_unique<PgAccounting>();
        o->pools.resize(plan_.pools.size());
        size_t owned = size_t(std::count(owners_.begin(), owners_.end(), w));
        for (size_t i = 0; i < plan_.pools.size(); i++) {
            const PoolPlan &pl = plan_.pools[i];
            uint64_t share = n_ports ? pl.size_bytes * owned / n_ports : 0;
            uint64_t reserved = 0;
            for (size_t p = 0; p < n_ports; p++)
                if (owners_[p] == w)
                    for (auto &qp : plan_.ports[p].queues)
                        if (qp.pool == int(i)) reserved += qp.reserved_bytes;
            o->pools[i].shared = share > reserved ? share - reserved : 0;
            o->pools[i].xoff = n_ports ? pl.xoff_bytes * owned / n_ports : 0;
        }
        owner_state_.push_back(std::move(o));
    }
}

void TrafficManager::update_plain(uint16_t port) {
    using Queue = TrafficManager::Queue;
    Port &ps = *ports_[port];
    ps.pfc_inert = plan_.plain_skip && !pfc_.honors(port);
    uint8_t plain = 0;
    if (ps.pfc_inert && ps.shaper.rate_bps() == 0 && !ps.ring.capped())
        for (unsigned qi = 0; qi < kNumQueues; qi++) {
            const Queue &q = ps.q[qi];
            constexpr uint32_t kChecked = Queue::kLossless | Queue::kDrop | Queue::kMarkEnq |
                                          Queue::kMarkDeq | Queue::kStormDrop;
            if (!(q.flags & kChecked) && !q.pool) plain = uint8_t(plain | 1u << qi);
        }
    ps.ct_plain = plain;
    const PortQos &cls = plan_.ports[port].cls;
    for (unsigned tc = 0; tc < kNumTc; tc++) {
        const unsigned qi = cls.tc_to_queue[tc];
        ps.ct_plain_q[tc] = uint8_t(qi < kNumQueues && (plain >> qi & 1) ? qi : kNumQueues);
    }
    ps.idle_still = false;
}

TrafficManager::~TrafficManager() {
    for (auto &p : ports_) {
        if (!p->handoff) continue;
        void *objs[kHandoffBurst];
        unsigned k;
        while ((k = rte_ring_sc_dequeue_burst(p->handoff, objs, kHandoffBurst, nullptr)) > 0)
            rte_pktmbuf_free_bulk(reinterpret_cast<rte_mbuf **>(objs), k);
        rte_ring_free(p->handoff);
    }
}

unsigned TrafficManager::inject(uint16_t port, rte_mbuf **pkts, unsigned n) {
    if (port >= n_ports() || !ports_[port]->handoff) return 0;
    const unsigned k = rte_ring_mp_enqueue_burst(ports_[port]->handoff,
                                                 reinterpret_cast<void **>(pkts), n, nullptr);
    injected_[port].fetch_add(k, std::memory_order_relaxed);
    return k;
}

uint32_t TrafficManager::held(uint16_t port) const {
    const PortQosStats &st = *stats_[port];
    uint64_t n = st.staged_packets.load();
    for (const auto &q : st.queues) n += q.depth_packets.load();
    if (const rte_ring *r = ports_[port]->handoff) n += rte_ring_count(r);
    return uint32_t(n);
}

uint64_t TrafficManager::pg_bytes(uint16_t in_port, uint8_t pg) const {
    uint64_t s = 0;
    for (auto &o : owner_state_) s += o->pg->bytes[PgAccounting::key(in_port, pg)].load();
    return s;
}

uint64_t TrafficManager::pg_watermark(uint16_t in_port, uint8_t pg) const {
    uint64_t s = 0;
    for (auto &o : owner_state_) s += o->pg->watermark[PgAccounting::key(in_port, pg)].load();
    return s;
}

uint64_t TrafficManager::pg_drops(uint16_t in_port, uint8_t pg) const {
    uint64_t s = 0;
    for (auto &o : owner_state_) s += o->pg->drops[PgAccounting::key(in_port, pg)].load();
    return s;
}

uint64_t TrafficManager::pool_used(size_t pool) const {
    uint64_t s = 0;
    for (auto &o : owner_state_) s += o->pools[pool].used_gauge.load();
    return s;
}

void TrafficManager::set_paused(uint16_t port, uint8_t mask) {
    ports_[port]->paused.store(mask, std::memory_order_relaxed);
}

uint8_t TrafficManager::paused(uint16_t port) const {
    return ports_[port]->paused.load(std::memory_order_relaxed);
}

void TrafficManager::set_link_down(uint16_t port, bool down) {
    if (down)
        ports_[port]->down.fetch_or(kAdminDown, std::memory_order_relaxed);
    else
        ports_[port]->down.fetch_and(uint8_t(~kAdminDown), std::memory_order_relaxed);
}

bool TrafficManager::link_down(uint16_t port) const {
    return ports_[port]->down.load(std::memory_order_relaxed) & kAdminDown;
}

void TrafficManager::set_carrier_down(uint16_t port, bool down) {
    if (down)
        ports_[port]->down.fetch_or(kCarrierDown, std::memory_order_relaxed);
    else
        ports_[port]->down.fetch_and(uint8_t(~kCarrierDown), std::memory_order_relaxed);
}

bool TrafficManager::carrier_down(uint16_t port) const {
    return ports_[port]->down.load(std::memory_order_relaxed) & kCarrierDown;
}

void TrafficManager::set_pg_limit(uint16_t in_port, uint8_t pg, uint64_t bytes) {
    (*pg_limit_)[PgAccounting::key(in_port, pg)].store(bytes, std::memory_order_relaxed);
}

PfcPortView TrafficManager::pfc_snapshot(uint16_t port, uint64_t now_ns) const {
    PfcPortView v = pfc_.snapshot(port, now_ns);
    for (unsigned g = 0; g < kNumPg; g++) {
        if (!v.pgs[g].priorities) continue;
        v.pgs[g].bytes = pg_bytes(port, uint8_t(g));
        v.pgs[g].watermark_bytes = pg_watermark(port, uint8_t(g));
        v.pgs[g].headroom_drops = pg_drops(port, uint8_t(g));
    }
    return v;
}

void TrafficManager::clear_watermarks(uint16_t port) {
    ports_[port]->wm_epoch.fetch_add(1, std::memory_order_relaxed);
    pg_wm_epoch_[port].fetch_add(1, std::memory_order_relaxed);
    pg_wm_any_.fetch_add(1, std::memory_order_release);
}

// ---------------------------------------------------------------------------------- QosEgress

QosEgress::QosEgress(TrafficManager &shared, PortIo &io, WorkerCounters &counters, uint16_t worker,
                     uint16_t tx_queue, uint16_t burst)
    : tm_(shared),
      io_(io),
      ctr_(counters),
      worker_(worker),
      tx_queue_(tx_queue),
      burst_(std::clamp<uint16_t>(burst, 1, 256)),
      rng_(mix(shared.plan().seed ^ mix(worker)), worker),
      cut_through_(shared.plan().cut_through),
      sum_admission_(shared.plan().sum_admission),
      min_frame_(shared.plan().min_frame_bytes),
      overhead_(shared.plan().wire_overhead_bytes),
      frame_extra_(min_frame_ + overhead_),
      run_tests_once_(shared.plan().run_tests_once),
      burst_summary_(shared.plan().burst_summary),
      mixed_ct_(shared.plan().mixed_cut_through),
      own_(*shared.owner_state_.at(worker)),
      single_owner_(shared.workers() == 1),
      ipool_used_(std::min<size_t>(shared.plan().ingress_pools.size(), 64)) {
    for (uint16_t p = 0; p < shared.n_ports(); p++) {
        if (shared.owner(p) != worker) continue;
        owned_.push_back(p);
        for (auto &q : shared.ports_[p]->q)
            if (q.plan->pool >= 0) q.pool = &own_.pools[size_t(q.plan->pool)];
        shared.update_plain(p);
        if (shared.pfc_.generates(p)) generating_.push_back(p);
        if (p < 32) owned_mask_ |= uint32_t(1) << p;
    }
    summed_ct_ = cut_through_ && burst_summary_;
    ct_max_ = uint16_t(std::min<uint32_t>(burst_, shared.plan().queue_packets));
}

QosEgress::~QosEgress() {
    discard_all(DropReason::port_stopped);
}

void QosEgress::enqueue(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns) {
    const bool final = final_;
    final_ = false;
    enqueue_burst<false>(port, pkts, n, now_ns, BurstSummary{}, final);
}

void QosEgress::enqueue_summed(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns,
                               const BurstSummary &sum) {
    const bool final = final_;
    final_ = false;
    if (burst_summary_)
        enqueue_burst<true>(port, pkts, n, now_ns, sum, final);
    else
        enqueue_burst<false>(port, pkts, n, now_ns, sum, final);
}

// final_enqueue() and enqueue_summed() or enqueue(): final_ is false after it either way.
void QosEgress::enqueue_last(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns,
                             const BurstSummary *sum) {
    final_ = false;
    if (sum && summed_ct_ && sum->tc != BurstSummary::kSeveralTcs &&
        cut_through_plain(port, pkts, n, now_ns, *sum))
        return;
    if (sum && burst_summary_)
        enqueue_burst<true>(port, pkts, n, now_ns, *sum, cut_through_);
    else
        enqueue_burst<false>(port, pkts, n, now_ns, BurstSummary{}, cut_through_);
}

template <bool kSum>
[[gnu::always_inline]] inline void QosEgress::enqueue_burst(uint16_t port, rte_mbuf **pkts,
                                                            uint16_t n, uint64_t now_ns,
                                                            const BurstSummary &sum, bool final) {
    if (port >= tm_.n_ports()) {
        // Not a port of the plan: nothing would ever send it.
        if (port < kMaxPorts) ctr_.ports[port].drops[size_t(DropReason::port_stopped)].add(n);
        rte_pktmbuf_free_bulk(pkts, n);
        return;
    }
    if (tm_.owner(port) == worker_) {
        TrafficManager::Port &ps = *tm_.ports_[port];
        // Cut-through only from an idle port: nothing queued, staged or owed to a flush, and
        // its handoff ring (other workers, host interfaces) empty. The flush then leaves that
        // ring alone (flush()): what another producer puts there meanwhile is admitted at the
        // next flush, as if it had come just after this one's drain.
        const bool idle = final && !ps.nonempty && !ps.staged_n && !ps.ct_pending &&
                          (!ps.handoff || rte_ring_empty(ps.handoff));
        // admit_cut_through() hands a burst to cut_through_mixed() at its first packet of
        // another queue, after a scan that costs a mixed burst (rsw-full's three classes) about
        // 4 instructions a packet; so after a mixed burst (ct_mixed: what the last one was) the
        // next idle one goes to cut_through_mixed() directly, which sends a one-queue burst too.
        // A summary of several TCs (kSeveralTcs) goes with the burst to cut_through_mixed().
        // What either declines is admitted, and cut through by cut_through() when it went to
        // one queue.
        if (idle) {
            const bool several = kSum && sum.tc == BurstSummary::kSeveralTcs;
            if (!ps.ct_mixed) {
                if (several ? admit_cut_through<false>(port, pkts, n, now_ns, sum)
                            : admit_cut_through<kSum>(port, pkts, n, now_ns, sum))
                    return;
            } else if (cut_through_mixed(port, pkts, n, now_ns, several ? &sum : nullptr)) {
                return;
            }
        }
        admit(port, pkts, n, now_ns);
        if (idle) {
            const unsigned ne = ps.nonempty;  // the queues this burst went to
            ps.ct_mixed = (ne & (ne - 1)) != 0;
            if (ne && !ps.ct_mixed) cut_through(port, now_ns);  // else it would return at once
        }
        return;
    }
    rte_ring *r = tm_.ports_[port]->handoff;
    unsigned k = rte_ring_mp_enqueue_burst(r, reinterpret_cast<void **>(pkts), n, nullptr);
    if (k < n) {
        handoff_drops_[port].add(n - k);
        ctr_.ports[port].drops[size_t(DropReason::handoff_full)].add(n - k);
        rte_pktmbuf_free_bulk(pkts + k, n - k);
    }
}

uint64_t QosEgress::pg_total_all(size_t key) const {
    uint64_t s = 0;
    for (auto &o : tm_.owner_state_) s += o->pg->bytes[key].load();
    return s;
}

// What the lossless PGs of ingress pool `pool` hold beyond their reservations. Read once per
// flush: PFC generation changes no PG bytes, so every port's PGs see the same sum.
uint64_t QosEgress::ipool_used_read(size_t pool) {
    uint64_t used = 0;
    for (auto [k, reserved] : tm_.ipool_members_[pool]) {
        uint64_t b = pg_total(k);
        used += b > reserved ? b - reserved : 0;
    }
    if (pool < 64) {
        ipool_used_[pool] = used;
        ipool_valid_ |= uint64_t(1) << pool;
    }
    return used;
}

// ------------------------------------------------------------------------------- admission

// PG bytes are charged in sums per run of packets of one (ingress port, PG) - in practice the
// whole burst. They only grow during admission, so the watermark after the sum is the watermark
// after every packet. Nothing is pending while `bytes` is 0: a run of frames of 0 bytes would
// charge nothing, and the watermark is never below the bytes it would be compared with.
struct QosEgress::PgCharge {
    PgAccounting &pg;
    unsigned key = 0;
    uint64_t bytes = 0;

    // Bytes of `k` admitted in this burst and not yet charged.
    uint64_t pending_for(unsigned k) const { return key == k ? bytes : 0; }
    void add(unsigned k, uint32_t len) {
        if (k != key) {
            commit();
            key = k;
        }
        bytes += len;
    }
    void commit() {
        if (!bytes) return;
        pg.charge(key, bytes);
        bytes = 0;
    }
};

// The verdict on one packet of `len` bytes for queue `q` (QueueDrop::count: admit). `pool`: the
// queue's pool (q.pool, loaded once by the caller); `after`, `excess`, `delta`: the queue's
// bytes, its bytes beyond the reservation, and the growth of the latter if it is admitted;
// `key`: its (ingress port, PG), of which `charge` holds the bytes admitted in this burst but
// not yet charged (read only for a lossless queue with a PG limit); `ect`: an IP packet with ECN
// capability; `cap`: the queue's packet slots; `pg_limit`: TrafficManager's PG limits.
[[gnu::always_inline]] inline QueueDrop QosEgress::admission(
    const TrafficManager::Queue &q, const TrafficManager::Pool *pool, uint32_t len, uint64_t after,
    uint64_t excess, uint64_t delta, unsigned key, const PgCharge &charge, bool ect, uint32_t cap,
    const std::atomic<uint64_t> *pg_limit) {
    using Queue = TrafficManager::Queue;
    if (unlikely(q.flags & Queue::kStormDrop)) return QueueDrop::pfc_watchdog;
    if (unlikely(q.size() >= cap)) return QueueDrop::queue_full;
    if (q.flags & Queue::kLossless) {
        // Lossless: never a threshold, never WRED; PFC (ingress) keeps this bounded.
        if (pool && pool->shared_used + delta > pool->shared + pool->xoff)
            return QueueDrop::headroom_exhausted;
        if (uint64_t lim = pg_limit[key].load(std::memory_order_relaxed);
            lim != UINT64_MAX && pg_total(key) + charge.pending_for(key) + len > lim)
            return QueueDrop::headroom_exhausted;
        return QueueDrop::count;
    }
    if (pool && delta) {
        if (pool->shared_used + delta > pool->shared) return QueueDrop::buffer_full;
        if (q.flags & Queue::kDynamic) {
            // Dynamic threshold (Choudhury-Hahne): the queue's shared use may reach alpha x the
            // shared bytes still free, alpha = 2^dynamic_th.
            uint64_t free = pool->shared - pool->shared_used;
            uint64_t limit = q.dynamic_th >= 0 ? free << q.dynamic_th : free >> -q.dynamic_th;
            if (excess > limit) return QueueDrop::buffer_full;
        } else if (after > q.static_th) {
            return QueueDrop::buffer_full;
        }
    }
    // WRED only for what the thresholds admit (no random number is drawn for a tail drop).
    if ((q.flags & Queue::kDrop) && q.bytes >= q.drop_min && !(ect && (q.flags & Queue::kEcn)) &&
        wred(q.plan->drop, q.bytes))
        return QueueDrop::wred_drop;
    return QueueDrop::count;
}

// Counters of a burst's admissions to queue qi: `packets`, `bytes`, `marked` what the burst
// added. Within admit() a queue only grows, so the new watermarks are the final depths.
[[gnu::always_inline]] inline void QosEgress::admitted_to(uint16_t port, unsigned qi,
                                                          uint32_t packets, uint64_t bytes,
                                                          uint32_t marked) {
    admitted_to(tm_.ports_[port]->q[qi], tm_.stats_[port]->queues[qi], port, qi, packets, bytes,
                marked);
}

// The same with the queue and its counters at hand (the caller's, loaded once per burst: the
// counter stores in between would make the compiler load them again for every queue).
[[gnu::always_inline]] inline void QosEgress::admitted_to(TrafficManager::Queue &q,
                                                          QueueStats &qs, uint16_t port,
                                                          unsigned qi, uint32_t packets,
                                                          uint64_t bytes, uint32_t marked) {
    if (q.bytes > q.wm_bytes) q.wm_bytes = q.bytes;
    if (q.size() > q.wm_packets) q.wm_packets = q.size();
    qs.enq_packets.add(packets);
    qs.enq_bytes.add(bytes);
    if (marked) {
        qs.ecn_marked.add(marked);
        if (trace_) ecn_unsampled_[port][qi] += marked;
    }
    qs.depth_packets.set(q.size());
    qs.depth_bytes.set(q.bytes);
    qs.watermark_bytes.set(q.wm_bytes);
    qs.watermark_packets.set(q.wm_packets);
}

// The end of a burst's admission, once: the queues it grew (`touched`) and the pool gauges.
[[gnu::always_inline]] inline void QosEgress::admitted(uint16_t port, unsigned touched) {
    TrafficManager::Port &ps = *tm_.ports_[port];
    ps.nonempty = uint8_t(ps.nonempty | touched);
    for (auto &pool : own_.pools) pool.used_gauge.set(pool.used);
}

// Admission of a burst for an owned port at `now_ns`: in sums when that is exact
// (admit_in_sums), else per packet (admit_each).
void QosEgress::admit(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns) {
    if (n && n <= kSumBurst && sum_admission_ && admit_in_sums(port, pkts, n, now_ns)) return;
    admit_each(port, pkts, n, now_ns);
}

// A burst of one ingress port in sums: per TC its bytes in bits 0-39 (at most kSumBurst frames
// below 4 GB) and its packets from bit 40, the TCs present; the same per queue (by_queue()) and
// for the whole burst; each queue's excess after the burst (sums_admissible()).
struct QosEgress::BurstSums {
    static constexpr unsigned kPacketShift = 40;
    static constexpr uint64_t kPacket = uint64_t(1) << kPacketShift;
    static_assert(uint64_t(kSumBurst) * UINT32_MAX < kPacket);
    alignas(16) std::array<uint64_t, kNumTc> tc{};
    std::array<uint64_t, kNumQueues> q{};
    unsigned tcs = 0, queues = 0;
    uint64_t all = 0;
    std::array<uint64_t, kNumQueues> excess;

    uint64_t tc_bytes(unsigned t) const { return tc[t] & (kPacket - 1); }
    uint64_t q_bytes(unsigned qi) const { return q[qi] & (kPacket - 1); }
    uint32_t q_packets(unsigned qi) const { return uint32_t(q[qi] >> kPacketShift); }
    uint64_t bytes() const { return all & (kPacket - 1); }

    // tcs from tc[], then each queue's share (q, queues) and the whole burst's (all).
    [[gnu::always_inline]] void by_queue(const uint8_t *to_queue) {
        // The TCs present: bit tc set when tc[tc] is not 0.
#if defined(__SSE4_1__)
        // Two sums a compare (17 instructions instead of 37).
        const __m128i zero = _mm_setzero_si128();
        const auto zero2 = [this, zero](unsigned t) {
            const __m128i v = _mm_load_si128(reinterpret_cast<const __m128i *>(&tc[t]));
            return unsigned(_mm_movemask_pd(_mm_castsi128_pd(_mm_cmpeq_epi64(v, zero))));
        };
        tcs = ~(zero2(0) | zero2(2) << 2 | zero2(4) << 4 | zero2(6) << 6) & ((1u << kNumTc) - 1);
#else
        tcs = 0;
#pragma GCC unroll 8
        for (unsigned t = 0; t < kNumTc; t++) tcs |= unsigned(tc[t] != 0) << t;
#endif
        by_queue(to_queue, tcs);
    }
    // The same when the TCs present are known (`present`: exactly those with tc[t] not 0), so
    // tc[] is not read back as vectors right after its scalar stores (a load that spans several
    // stores waits for them to reach the cache: no store forwarding).
    [[gnu::always_inline]] void by_queue(const uint8_t *to_queue, unsigned present) {
        tcs = present;
        for (unsigned left = tcs; left; left &= left - 1) {
            const unsigned t = unsigned(__builtin_ctz(left));
            const unsigned qi = to_queue[t];
            queues |= 1u << qi;
            q[qi] += tc[t];
            all += tc[t];
        }
    }
};

// The checks of admission in sums (admit_in_sums, cut_through_mixed): each queue's share of the
// burst once against the admission limits at the state after the whole burst, in one pass that
// charges nothing. Along a burst a queue's bytes and excess and a pool's shared use only grow
// (the shared bytes left only shrink), so a check that passes at the end passed at every
// packet: no packet is refused, no WRED or enqueue-marking depth is reached (the depth before a
// packet is below the queue's final bytes; every packet is taken as ECT there), no PG exceeds its
// limit. The checks are sufficient, not exact: a burst near a limit fails them.
[[gnu::always_inline]] inline bool QosEgress::sums_admissible(TrafficManager::Port &ps,
                                                              const uint16_t *key_of,
                                                              BurstSums &s, uint64_t now_ns) {
    using Queue = TrafficManager::Queue;
    const unsigned lossless_tcs = s.tcs & ps.lossless_tcs;
    // Enqueue marking with ecn_depth queue_and_tx_ring sees the TX ring too (admit_each()).
    uint64_t ring_ahead = 0;
    if (ps.mark_enq_ring) {
        ps.ring.drain(now_ns);
        ring_ahead = ps.ring.inflight_bytes();
    }
    // Lossless packets: their PG's limit, with every byte of the burst of that PG charged.
    const std::atomic<uint64_t> *const pg_limit = tm_.pg_limit_->data();
    for (unsigned left = lossless_tcs; left; left &= left - 1) {
        const unsigned key = key_of[__builtin_ctz(left)];
        const uint64_t lim = pg_limit[key].load(std::memory_order_relaxed);
        if (lim == UINT64_MAX) continue;
        uint64_t pg_burst = 0;
        for (unsigned l2 = s.tcs; l2; l2 &= l2 - 1)
            if (const unsigned tc = unsigned(__builtin_ctz(l2)); key_of[tc] == key)
                pg_burst += s.tc_bytes(tc);
        if (pg_total(key) + pg_burst > lim) return false;
    }
    // Per queue: no storm drop, no WRED draw (a drop curve from its final bytes on), no enqueue
    // marking (a marking depth), and its pool's limits. A pool's use after the burst is at most
    // its use now plus the whole burst's bytes (a queue's growth beyond its reservation is at
    // most its share of the burst): checks that pass with that bound pass with the exact use,
    // so one pass checks every queue and nothing is charged before all pass. (A burst within
    // its bytes of a pool's limit fails.)
    const uint64_t all_bytes = s.bytes();
    for (unsigned left = s.queues; left; left &= left - 1) {
        const unsigned qi = unsigned(__builtin_ctz(left));
        const Queue &q = ps.q[qi];
        const uint64_t after = q.bytes + s.q_bytes(qi);
        if ((q.flags & Queue::kStormDrop) || ((q.flags & Queue::kDrop) && after >= q.drop_min) ||
            ((q.flags & Queue::kMarkEnq) &&
             after + (q.flags & Queue::kMarkRing ? ring_ahead : 0) >= q.mark_min))
            return false;
        s.excess[qi] = after > q.reserved ? after - q.reserved : 0;
        const TrafficManager::Pool *const pool = q.pool;
        if (!pool) continue;
        const uint64_t used = pool->shared_used + all_bytes;  // at least its use after the burst
        if (q.flags & Queue::kLossless) {
            if (used > pool->shared + pool->xoff) return false;
        } else if (s.excess[qi] > q.excess) {  // admission() checks packets that take shared bytes
            if (used > pool->shared) return false;
            if (q.flags & Queue::kDynamic) {
                const uint64_t free = pool->shared - used;
                if (s.excess[qi] > (q.dynamic_th >= 0 ? free << q.dynamic_th
                                                      : free >> -q.dynamic_th))
                    return false;
            } else if (after > q.static_th) {
                return false;
            }
        }
    }
    return true;
}

template <bool kThrough, class PerQueue, class AfterQueue>
[[gnu::always_inline]] inline void QosEgress::commit_sums(uint16_t port, TrafficManager::Port &ps,
                                                          const uint16_t *key_of,
                                                          const BurstSums &s,
                                                          PerQueue &&per_queue,
                                                          AfterQueue &&after_queue) {
    using Queue = TrafficManager::Queue;
    PortQosStats &st = *tm_.stats_[port];
    for (unsigned left = s.queues; left; left &= left - 1) {
        const unsigned qi = unsigned(__builtin_ctz(left));
        Queue &q = ps.q[qi];
        const uint32_t q_n = s.q_packets(qi);
        per_queue(q, qi, q_n);
        q.tail += q_n;
        if constexpr (kThrough) {
            // The queue was empty: its bytes and excess stay 0; the pool holds the burst's.
            if (TrafficManager::Pool *const pool = q.pool) {
                pool->shared_used += s.excess[qi];
                pool->used += s.q_bytes(qi);
            }
            // admitted_to() but the depth gauges (0 before and after: the queue was empty and
            // leaves empty); a watermark gauge is its watermark, stored when that rises (the
            // queue's depth after the burst is the burst's share).
            QueueStats &qs = st.queues[qi];
            if (s.q_bytes(qi) > q.wm_bytes) qs.watermark_bytes.set(q.wm_bytes = s.q_bytes(qi));
            if (q_n > q.wm_packets) qs.watermark_packets.set(q.wm_packets = q_n);
            qs.enq_packets.add(q_n);
            qs.enq_bytes.add(s.q_bytes(qi));
            after_queue(q, qs, qi, q_n);
        } else {
            q.bytes += s.q_bytes(qi);
            if (TrafficManager::Pool *const pool = q.pool) {
                pool->shared_used += s.excess[qi] - q.excess;
                pool->used += s.q_bytes(qi);
            }
            q.excess = s.excess[qi];
            admitted_to(q, st.queues[qi], port, qi, q_n, s.q_bytes(qi), 0);
        }
    }
    PgAccounting &pg = *own_.pg;
    for (unsigned left = s.tcs; left; left &= left - 1) {
        const unsigned tc = unsigned(__builtin_ctz(left));
        const unsigned key = key_of[tc];
        pg.charge(key, s.tc_bytes(tc));
    }
    if constexpr (!kThrough) admitted(port, s.queues);
}

// Admission in sums, for a burst of which admit_each() would refuse, draw for or mark no
// packet - the common case of a mixed burst (rsw-full's three classes) on uncongested queues.
// One pass over the burst reads each packet once, writes its slot at its queue's tail (into
// free slots: every queue has room for the whole burst, checked first) and adds its length to
// its TC's sum; then each queue's share is checked once against admission()'s limits at the
// state after the whole burst (sums_admissible()). Then the tails, queue bytes, pools and PG
// bytes move by the sums - the state, slots and counters admit_each() leaves (commit_sums()).
// Returns false when the burst needs admit_each() (packets from several ingress ports, a queue
// without room for the whole burst, a check that does not pass), having changed nothing but
// free slots (which admit_each() writes again) and the TX ring model's drain to now (which it
// does too).
bool QosEgress::admit_in_sums(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns) {
    using Queue = TrafficManager::Queue;
    using Slot = TrafficManager::Slot;
    TrafficManager::Port &ps = *tm_.ports_[port];
    const uint32_t cap = tm_.plan_.queue_packets, mask = cap - 1;  // every queue's
    // Room for the whole burst in every queue: an empty one (not in nonempty) has cap slots.
    // (At most kSlack packets: a queue's slots from its tail on, in the scratch slots past its
    // end, take all of them.)
    static_assert(kSumBurst <= TrafficManager::kSlack);
    if (n > cap || n > kSumBurst) return false;
    for (unsigned left = ps.nonempty; left; left &= left - 1)
        if (ps.q[__builtin_ctz(left)].size() + n > cap) return false;
    // Where each queue's next slot is written: from its tail on, without the wrap (the scratch
    // slots past the queue's end take what wraps; copied to its start below) - a pointer a
    // packet, not a tail, a mask and a base.
    std::array<Slot *, kNumQueues> dst;
#pragma GCC unroll 8
    for (unsigned qi = 0; qi < kNumQueues; qi++) dst[qi] = ps.q[qi].slots + (ps.q[qi].tail & mask);
    const uint8_t *to_queue = tm_.plan_.ports[port].cls.tc_to_queue.data();
    const PacketMeta *meta0 = meta_of(pkts[0]);
    // One ingress port: a packet's PG key is its TC's in this row.
    const uint16_t *key_of = &tm_.pg_key_[(meta0->in_port & (kMaxPorts - 1)) * kNumTc];
    const uint32_t *tag_of = &tm_.pg_tag_[(meta0->in_port & (kMaxPorts - 1)) * kNumTc];
    // (One register: else GCC keeps the row's offset from tm_ and adds it for every packet.)
    asm("" : "+r"(tag_of));
    // Per TC, its bytes and packets (BurstSums): the TCs present come from the sums, not from
    // one more step per packet.
    constexpr uint64_t kPacket = BurstSums::kPacket;
    BurstSums s;
    // Every packet's ingress port is packet 0's when the or and the and of their words agree
    // there (not a xor with packet 0's word: GCC then peels packet 0 and loads each mbuf
    // pointer twice).
    uint32_t in_or = 0, in_and = ~0u;
    for (rte_mbuf **p = pkts, **const end = pkts + n; p != end; p++) {
        rte_mbuf *m = *p;
        const PacketMeta *meta = meta_of(m);
        const unsigned tc = meta->tc & (kNumTc - 1);
        const uint32_t word = in_port_tc_word(meta);  // masked to the ingress port below
        in_or |= word;
        in_and &= word;
        const uint32_t len = m->pkt_len;
        // The slot admit_each() writes: {m, len, key_of[tc], ecn_ip_of(meta)}, its last two
        // fields as one word.
        const uint32_t tag = tag_of[tc] | ecn_tag(meta);
        Slot *const sl = dst[to_queue[tc]]++;
        sl->m = m;
        sl->len = len;
        // (Kept two plain stores: without the barrier GCC merges them through an SSE register,
        // three more instructions a packet.)
        asm("" ::: "memory");
        std::memcpy(reinterpret_cast<uint8_t *>(sl) + offsetof(Slot, pg_key), &tag, sizeof tag);
        s.tc[tc] += len + kPacket;
    }
    if ((in_or ^ in_and) & kInPort) return false;
    s.by_queue(to_queue);
    if (!sums_admissible(ps, key_of, s, now_ns)) return false;

    // Admitted, every packet: the slots are written; the tails, queues, pools and PG bytes move.
    commit_sums<false>(port, ps, key_of, s, [&](Queue &q, unsigned qi, uint32_t q_n) {
        // Queue::one_key: the burst's frames for the queue have one key when its TCs have one
        // PG (Queue::one_pg_mask; one ingress port), its last frame's (at dst[qi] - 1); the
        // queue keeps one key if it was empty or held only frames of that key.
        const uint32_t burst_key = (Queue::kOneKey | dst[qi][-1].pg_key) & q.one_pg_mask;
        q.one_key = q.head == q.tail || q.one_key == burst_key ? burst_key : 0;
        // The slots written past the queue's end belong at its start.
        if (const uint32_t at = q.tail & mask; at + q_n > cap)
            std::copy(q.slots + cap, q.slots + at + q_n, q.slots);
    }, [](Queue &, QueueStats &, unsigned, uint32_t) {});
    sum_admissions_++;
    return true;
}

// Admission per packet: its queue, the verdict (admission()), then a drop (counted, freed in
// bulk) or a slot; counters once per burst and queue.
void QosEgress::admit_each(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns) {
    using Queue = TrafficManager::Queue;
    TrafficManager::Port &ps = *tm_.ports_[port];
    PortQosStats &st = *tm_.stats_[port];
    const uint8_t *to_queue = tm_.plan_.ports[port].cls.tc_to_queue.data();
    const uint16_t *pg_key = tm_.pg_key_.data();
    const uint32_t cap = tm_.plan_.queue_packets;
    const std::atomic<uint64_t> *const pg_limit = tm_.pg_limit_->data();
    rte_mbuf *dropped[64];
    uint16_t n_dropped = 0;
    // Counters are added once per burst and queue: the per-packet work stays on plain fields.
    std::array<uint32_t, kNumQueues> tail0, t_marked{};
    std::array<uint64_t, kNumQueues> bytes0;
    for (unsigned qi = 0; qi < kNumQueues; qi++) {
        tail0[qi] = ps.q[qi].tail;
        bytes0[qi] = ps.q[qi].bytes;
    }
    PgCharge charge{*own_.pg};

    // TC -> queue of this port, resolved once per burst.
    std::array<Queue *, kNumTc> by_tc;
    for (unsigned tc = 0; tc < kNumTc; tc++) by_tc[tc] = &ps.q[to_queue[tc]];
    // Enqueue marking with ecn_depth queue_and_tx_ring: what the TX ring holds now is ahead of
    // every packet of the burst (nothing leaves for the ring during admission).
    uint64_t ring_ahead = 0;
    if (ps.mark_enq_ring) {
        ps.ring.drain(now_ns);
        ring_ahead = ps.ring.inflight_bytes();
    }

    for (uint16_t i = 0; i < n; i++) {
        rte_mbuf *m = pkts[i];
        PacketMeta *meta = meta_of(m);
        const unsigned tc = meta->tc & (kNumTc - 1);
        Queue &q = *by_tc[tc];
        const uint32_t len = m->pkt_len;
        const unsigned key = pg_key[(meta->in_port & (kMaxPorts - 1)) * kNumTc + tc];
        // The slot's ecn_ip; ECT: an IP packet with a codepoint other than Not-ECT (PacketMeta::ecn
        // is 0..3). (unsigned, not uint16_t: a 16-bit spill reloaded 32 bits wide stalls store
        // forwarding.)
        unsigned ecn_ip = ecn_ip_of(meta);
        const bool ect = ecn_ip > 4;

        // Bytes beyond the queue's reservation come out of the pool's shared part.
        const uint64_t after = q.bytes + len;
        const uint64_t excess = after > q.reserved ? after - q.reserved : 0;
        const uint64_t delta = excess - q.excess;  // >= 0: the queue only grows here
        TrafficManager::Pool *const pool = q.pool;

        const QueueDrop why =
            admission(q, pool, len, after, excess, delta, key, charge, ect, cap, pg_limit);
        if (unlikely(why != QueueDrop::count)) {
            st.queues[to_queue[tc]].drops[size_t(why)].inc();
            if (why == QueueDrop::headroom_exhausted) own_.pg->drops[key].inc();
            ctr_.ports[port].drops[size_t(port_reason(why))].inc();
            dropped[n_dropped++] = m;
            if (n_dropped == 64) {
                rte_pktmbuf_free_bulk(dropped, n_dropped);
                n_dropped = 0;
            }
            continue;
        }
        if ((q.flags & Queue::kMarkEnq) && ect) {
            const uint64_t depth = q.bytes + (q.flags & Queue::kMarkRing ? ring_ahead : 0);
            if (depth >= q.mark_min && wred(q.plan->mark, depth) && ecn_mark(m, meta)) {
                t_marked[to_queue[tc]]++;
                ecn_ip = meta->ecn | 4u;
            }
        }

        q.slots[q.tail++ & q.mask] = {m, len, uint16_t(key), uint16_t(ecn_ip)};
        q.bytes = after;
        q.excess = excess;
        if (pool) {
            pool->shared_used += delta;
            pool->used += len;
        }
        charge.add(key, len);
    }
    charge.commit();
    if (n_dropped) rte_pktmbuf_free_bulk(dropped, n_dropped);
    unsigned touched = 0;
    for (unsigned qi = 0; qi < kNumQueues; qi++) {
        if (ps.q[qi].tail == tail0[qi]) continue;
        touched |= 1u << qi;
        ps.q[qi].one_key = 0;  // not followed per packet here
        admitted_to(port, qi, ps.q[qi].tail - tail0[qi], ps.q[qi].bytes - bytes0[qi], t_marked[qi]);
    }
    admitted(port, touched);
}

void QosEgress::apply_pg_watermark_clears() {
    uint32_t any = tm_.pg_wm_any_.load(std::memory_order_acquire);
    if (any == own_.pg_wm_any_seen) return;
    own_.pg_wm_any_seen = any;
    PgAccounting &pg = *own_.pg;
    for (size_t in = 0; in < kMaxPorts; in++) {
        uint32_t e = tm_.pg_wm_epoch_[in].load(std::memory_order_relaxed);
        if (e == own_.pg_wm_seen[in]) continue;
        own_.pg_wm_seen[in] = e;
        for (size_t g = 0; g < kNumPg; g++) {
            size_t k = PgAccounting::key(in, g);
            pg.watermark[k].set(pg.bytes[k].v);
        }
    }
}

uint32_t QosEgress::flush(uint64_t now_ns) {
    final_ = false;
    // A PG watermark clear asked since the last flush (the call only then).
    if (tm_.pg_wm_any_.load(std::memory_order_acquire) != own_.pg_wm_any_seen)
        apply_pg_watermark_clears();
    // Other workers' packets first, so that they are scheduled in this same flush; then the
    // scheduler; then PFC generation for every owned port, on the PG bytes after this flush's
    // admissions and departures (its frames go out ahead of every queued packet).
    // A port whose burst cut through skips its drain (enqueue()); a port without a handoff
    // ring (one worker, no host interfaces) has nothing to drain.
    if (tm_.handoffs_)
        for (uint16_t p : owned_)
            if (const TrafficManager::Port &ps = *tm_.ports_[p]; ps.handoff && !ps.ct_pending)
                drain_handoff(p, now_ns);
    uint32_t sent = 0;
    // The tables in locals: the gauge stores below may alias them.
    const std::unique_ptr<TrafficManager::Port> *const ports = tm_.ports_.data();
    const std::unique_ptr<PortQosStats> *const stats = tm_.stats_.data();
    for (uint16_t p : owned_) {
        // service(), with its two cheapest cases here: a port whose burst cut through, and an
        // idle one (with PFC honoring unless inert; QosPlan::plain_skip false, for tests:
        // service() itself when not inert). The cut-through finish's steps are
        // finish_cut_through's, on the port and counters at hand.
        // (Port::idle_still: cleared by every step that is not service_idle's.)
        TrafficManager::Port &ps = *ports[p];
        if (ps.ct_pending) {
            ps.idle_still = false;
            TrafficManager::Pool *const pool = ps.ct_pool;
            release_cut_through(ps);
            // Only the burst's pool changed: every other pool's gauge is its use already.
            if (pool) pool->used_gauge.set(pool->used);
            stats[p]->tx_ring_bytes.set(ps.ct_ring_bytes);
            if (trace_) sample_ecn_marks(p, now_ns);
            sent += ps.ct_sent;
        } else if (!(ps.nonempty | ps.staged_n) && ps.pfc_inert) {
            service_idle(p, now_ns, false);
        } else if (!(ps.nonempty | ps.staged_n) && tm_.plan_.plain_skip) {
            service_idle(p, now_ns, true);
        } else {
            ps.idle_still = false;
            sent += service(p, now_ns);
        }
    }
    // The buffer the mixed bursts that cut through held (cut_through_mixed): released here, not
    // in their ports' turns - nothing in between reads it (the other ports' services only take
    // from their queues; the gauges are set again here), PFC generation comes after.
    if (mixed_held_) release_mixed_all();
    // (The ingress pools' use is read again at each flush's generation: ipool_used.)
    if (!generating_.empty()) {
        ipool_valid_ = 0;
        for (uint16_t p : generating_) pfc_generate(p, now_ns);
    }
    return sent;
}

void QosEgress::drain_handoff(uint16_t port, uint64_t now_ns) {
    TrafficManager::Port &ps = *tm_.ports_[port];
    // Bounded by the ring size, so that producers cannot keep the owner here forever.
    rte_mbuf *in[kHandoffBurst];
    for (uint32_t taken = 0; taken < tm_.plan_.handoff_ring_packets;) {
        unsigned k = rte_ring_sc_dequeue_burst(ps.handoff, reinterpret_cast<void **>(in),
                                               kHandoffBurst, nullptr);
        if (!k) break;
        admit(port, in, uint16_t(k), now_ns);
        taken += k;
    }
}

// ------------------------------------------------------------------------ PFC (PfcEngine)

// PfcQueues: the watchdog's view of one owned port's queues.
struct QosEgress::PfcQueuesOf {
    QosEgress &eg;
    uint16_t port;
    TrafficManager::Port &ps;
    uint32_t head(unsigned qi) const { return ps.q[qi].head; }
    uint32_t size(unsigned qi) const { return ps.q[qi].size(); }
    void storm_drop(unsigned qi) {
        ps.q[qi].flags |= TrafficManager::Queue::kStormDrop;
        eg.tm_.update_plain(port);
        eg.flush_queue(port, qi, QueueDrop::pfc_watchdog, DropReason::pfc_watchdog);
    }
    void storm_restore(unsigned qi) {
        ps.q[qi].flags &= ~uint32_t(TrafficManager::Queue::kStormDrop);
        eg.tm_.update_plain(port);
    }
};

// PfcBuffer: PG bytes over every owner, the ingress pools' use (read once per flush), the PG
// admission limits, and the port's TX ahead of every queue.
struct QosEgress::PfcBufferOf {
    QosEgress &eg;
    uint16_t port;
    uint64_t now_ns;
    uint64_t pg_bytes(size_t key) const { return eg.pg_total(key); }
    uint64_t ipool_used(size_t pool) { return eg.ipool_used(pool); }
    void set_pg_limit(size_t key, uint64_t bytes) {
        (*eg.tm_.pg_limit_)[key].store(bytes, std::memory_order_relaxed);
    }
    bool send_control(rte_mbuf *m) {
        const uint32_t len = kMacControlFrameLen;  // m's pkt_len
        if (eg.send(port, &m, 1, len) != 1) return false;
        // Not shaped away and not subject to pause, but it does take wire time.
        TrafficManager::Port &ps = *eg.tm_.ports_[port];
        if (ps.idle_still) {
            // This flush skipped service_idle(): its clocks first, at the flush's now.
            ps.shaper.refill(now_ns);
            ps.ring.drain(now_ns);
            ps.idle_still = false;
        }
        const uint32_t w = eg.tm_.plan_.wire_bytes(len);
        ps.shaper.consume(w);
        ps.ring.add(w);
        return true;
    }
};

// The queues of `port` PFC (or 802.3x PAUSE) keeps from sending now; runs the watchdog.
[[gnu::always_inline]] inline uint8_t QosEgress::pfc_honor(uint16_t port, uint64_t now_ns) {
    PfcQueuesOf queues{*this, port, *tm_.ports_[port]};
    return tm_.pfc_.honor(port, now_ns, queues, trace_);
}

// PFC generation for `port` as an ingress port: each lossless PG against its thresholds.
[[gnu::always_inline]] inline void QosEgress::pfc_generate(uint16_t port, uint64_t now_ns) {
    PfcBufferOf buffer{*this, port, now_ns};
    tm_.pfc_.generate(port, now_ns, buffer, trace_);
}

// Frees every packet of queue `qi` of `port`, counted as `why` on the queue and `reason` on
// the port.
void QosEgress::flush_queue(uint16_t port, unsigned qi, QueueDrop why, DropReason reason) {
    TrafficManager::Port &ps = *tm_.ports_[port];
    TrafficManager::Queue &q = ps.q[qi];
    QueueStats &qs = tm_.stats_[port]->queues[qi];
    const uint32_t n = q.size();
    if (n) {
        qs.drops[size_t(why)].add(n);
        ctr_.ports[port].drops[size_t(reason)].add(n);
    }
    while (q.size()) {
        const TrafficManager::Slot &s = q.slots[q.head++ & q.mask];
        own_.pg->bytes[s.pg_key].sub(s.len);
        if (q.pool) q.pool->used -= s.len;
        rte_pktmbuf_free(s.m);
    }
    if (q.pool) {
        q.pool->shared_used -= q.excess;
        q.pool->used_gauge.set(q.pool->used);
    }
    q.bytes = q.excess = 0;
    qs.depth_packets.set(0);
    qs.depth_bytes.set(0);
    ps.sched.emptied(int(qi));
    ps.nonempty = uint8_t(ps.nonempty & ~(1u << qi));
}

// Hands pkts[0..n) to the device and counts what it took; returns that count. `all_bytes`: the
// sum of their pkt_len, taken before the call (what the device took is no longer ours to read;
// what it refused still is).
uint16_t QosEgress::send(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t all_bytes) {
    const uint8_t down = tm_.ports_[port]->down.load(std::memory_order_relaxed);
    PortCounters &pc = ctr_.ports[port];
    if (down & TrafficManager::kAdminDown) [[unlikely]] {
        // A link set down (set_link_down): the frames are lost on it, counted.
        rte_pktmbuf_free_bulk(pkts, n);
        pc.drops[size_t(DropReason::port_stopped)].add(n);
        return n;
    }
    uint16_t sent = io_.tx_burst(port, tx_queue_, pkts, n);
    uint64_t total = all_bytes;
    for (uint16_t i = sent; i < n; i++) total -= pkts[i]->pkt_len;
    pc.tx_packets.add(sent);
    pc.tx_bytes.add(total);
    if (down && sent < n) [[unlikely]] {
        // A lost link (set_carrier_down): what the device refuses is dropped, counted, not
        // held; what it takes leaves (its peer may be back before the control loop sees it).
        rte_pktmbuf_free_bulk(pkts + sent, uint16_t(n - sent));
        pc.drops[size_t(DropReason::link_down)].add(n - sent);
        return n;
    }
    return sent;
}

// ---------------------------------------------------------------------------------- service

// What the runs of one service() pass may still take, in the terms take_run tests per frame,
// brought up to date by each run instead of asked of the shaper and the ring model again: charged
// with w wire bytes, TokenBucket::ready_below() falls by w (to 0: not ready), TxRingModel::room()
// by w (negative: nothing fits) and inflight_bytes() rises by w, exactly (kCreditPerByte
// divides a charge; TokenBucket.RunChargePredictsEveryFrame). The shaper and the ring model are
// charged once at the end of the pass with what ring_bytes grew by.
struct QosEgress::RunLimits {
    uint64_t ready_below;
    int64_t room;
    uint64_t ring_bytes;  // the ring's bytes ahead of the next frame; 0: the ring is empty
    void charge(uint64_t wire) {
        ready_below = ready_below > wire ? ready_below - wire : 0;
        room -= int64_t(wire);
        ring_bytes += wire;
    }
};

// Restarts the port's queue watermarks from the current depths if clear_watermarks asked.
[[gnu::always_inline]] inline void QosEgress::apply_watermark_clear(uint16_t port) {
    TrafficManager::Port &ps = *tm_.ports_[port];
    if (uint32_t e = ps.wm_epoch.load(std::memory_order_relaxed); e != ps.wm_epoch_seen) {
        ps.wm_epoch_seen = e;
        PortQosStats &st = *tm_.stats_[port];
        for (unsigned qi = 0; qi < kNumQueues; qi++) {
            TrafficManager::Queue &q = ps.q[qi];
            st.queues[qi].watermark_bytes.set(q.wm_bytes = q.bytes);
            st.queues[qi].watermark_packets.set(q.wm_packets = q.size());
        }
    }
}

// Frames the device refused last time go first: they already left their queue. Returns how
// many it took now; what it still refuses stays staged.
uint32_t QosEgress::retry_staged(uint16_t port) {
    TrafficManager::Port &ps = *tm_.ports_[port];
    uint32_t len[256];
    uint64_t all = 0;
    for (uint16_t i = 0; i < ps.staged_n; i++)
        all += len[i] = ps.staged[ps.staged_head + i]->pkt_len;
    uint16_t sent = send(port, &ps.staged[ps.staged_head], ps.staged_n, all);
    for (uint16_t i = 0; i < sent; i++) ps.ring.add(tm_.plan_.wire_bytes(len[i]));
    ps.staged_head = uint16_t(ps.staged_head + sent);
    ps.staged_n = uint16_t(ps.staged_n - sent);
    if (!ps.staged_n) ps.staged_head = 0;
    if (sent) tm_.stats_[port]->staged_packets.set(ps.staged_n);
    return sent;
}

// One run from queue qi (see the file comment): frames for as long as pick() would choose qi
// again without changing its state - a strict queue until it empties (the eligible set only
// shrinks here), a DWRR queue while its deficit covers its head frame - and the shaper, the ring
// model and `room` (what the burst has left) allow. The same frames, in the same order, with the
// same accounting as one pick per frame. Appends them to out at `k` (advanced; the burst ends at
// `burst`), charges the queue, its pool, the PG bytes and the deficit once, and adds the run to
// `t`. Returns the run's frames and bytes; sets *ring_full when the ring model stopped it. (out
// is the caller's burst array indexed by k, not out + k, and no array of lengths is kept beside
// it - the rare refused frames have their pkt_len: every value live in the per-frame loop
// costs.)
//
// The per-frame tests (deficit, ring room, shaper credit, dequeue marking depth) are skipped for
// the whole run when bounds taken at its start show that none can stop or mark a frame before the
// run's limit (run_needs_tests); QosPlan::run_tests_once false keeps them (tests compare both).
// The per-frame state of a run, for take_run's two per-frame paths out of line (the tested
// loop, a flagged stretch): in take_run's registers otherwise.
struct QosEgress::RunState {
    uint32_t head;
    unsigned kk;       // out[] index of the next frame
    uint64_t bytes;    // the queue's bytes behind the next frame
    uint64_t wire_run; // wire bytes taken
    unsigned pg_key;   // the key of the PG stretch being taken
    uint64_t pg_from;  // the queue's bytes where that stretch began
    uint32_t marked;
};

// What every frame of a run does as it leaves (w: its wire bytes): its PG stretch, its bytes
// off the queue's, out[].
[[gnu::always_inline]] inline void QosEgress::leave(RunState &r, const TrafficManager::Slot &s,
                                                    uint32_t w, rte_mbuf **out) {
    if (s.pg_key != r.pg_key) {
        own_.pg->bytes[r.pg_key].sub(r.pg_from - r.bytes);
        r.pg_key = s.pg_key;
        r.pg_from = r.bytes;
    }
    r.bytes -= s.len;
    r.wire_run += w;
    out[r.kk++] = s.m;
}

// A stretch of slots taken frame by frame (a frame under the minimum or another PG in it).
[[gnu::noinline]] void QosEgress::leave_each(RunState &r, const TrafficManager::Slot *from,
                                             const TrafficManager::Slot *end, rte_mbuf **out) {
    for (const TrafficManager::Slot *s = from; s != end; s++)
        leave(r, *s, tm_.plan_.wire_bytes(s->len), out);
    r.head += uint32_t(end - from);
}

// take_run's per-frame loop with the tests (deficit, ring room, shaper credit, dequeue marking)
// for frames up to `lim`; returns whether the ring model stopped it.
[[gnu::noinline]] bool QosEgress::take_tested(const TrafficManager::Queue &q, RunState &r,
                                              uint32_t lim, int64_t dbase,
                                              const RunLimits limits, rte_mbuf **out) {
    // Dequeue marking: a queue that does not mark has a marking depth no queue reaches.
    const uint64_t mark_min = q.deq_mark_min;
    // ecn_depth queue_and_tx_ring: the ring's bytes ahead of the frame being taken (it only
    // grows during a service pass: drain() ran at its start); ring_w_mask 0 keeps it at 0.
    const uint32_t ring_w_mask = uint32_t(q.deq_ring);
    const TrafficManager::Slot *const slots = q.slots;
    const uint32_t mask = q.mask;
    const int64_t room = limits.room;
    const bool ring_empty = limits.ring_bytes == 0;
    const uint64_t ready_below = limits.ready_below;
    uint64_t ring_ahead = ring_w_mask ? limits.ring_bytes : 0;
    for (;;) {
        const TrafficManager::Slot s = slots[r.head & mask];
        // pick() would move on from a DWRR queue whose deficit no longer covers its head
        // frame (and change its state), so the run ends (never at the first frame: pick()
        // chose qi because its deficit covers it).
        if (dbase + int64_t(r.bytes) < int64_t(s.len)) return false;
        const uint32_t w = tm_.plan_.wire_bytes(s.len);
        if (int64_t(r.wire_run + w) > room && !(r.wire_run == 0 && ring_empty)) return true;
        r.head++;
        leave(r, s, w, out);
        // Dequeue marking: the depth this packet leaves behind is the congestion it reports.
        if (r.bytes + ring_ahead >= mark_min) {
            const unsigned ecn = s.ecn_ip & 3;
            if ((s.ecn_ip & 4) && (ecn == kEcnEct0 || ecn == kEcnEct1) &&
                wred(q.plan->mark, r.bytes + ring_ahead) && ecn_mark(s.m, meta_of(s.m)))
                r.marked++;
        }
        ring_ahead += w & ring_w_mask;
        if (r.head == lim || r.wire_run >= ready_below) return false;
    }
}

[[gnu::always_inline]] inline QosEgress::Run QosEgress::take_run(
    uint16_t port, TrafficManager::Port &ps, PortQosStats &st, int qi, unsigned burst,
    RunLimits &limits, rte_mbuf **out, unsigned &k, bool *ring_full, unsigned &nonempty,
    unsigned &untested, unsigned &whole) {
    TrafficManager::Queue &q = ps.q[size_t(qi)];
    const TrafficManager::Slot *const slots = q.slots;
    const uint32_t head0 = q.head;
    const uint64_t bytes0 = q.bytes;
    // The run ends at the queue's tail or the burst's end, whichever comes first.
    const uint32_t n = std::min<uint32_t>(q.tail - head0, burst - k);
    const bool dwrr = ps.sched.dwrr_mask() >> qi & 1;
    // The queue's deficit is dbase + bytes as frames leave; a strict queue's is never short.
    const int64_t dbase = dwrr ? ps.sched.deficit(qi) - int64_t(bytes0) : INT64_MAX / 2;
    // The shaper and the ring model are charged with the run's wire bytes `wire_run` (limits);
    // per frame their tests in those terms (exactly fits() and ready(), TokenBucket::ready_below
    // and TxRingModel::room): the ring takes a frame of w bytes while wire_run + w <= room (or
    // while it is empty), the shaper stays ready while wire_run < ready_below.
    // Whether a per-frame test could stop or mark a frame before the run's end. Bounds, with
    // `extra` the most a frame's wire bytes exceed its length (min_frame + overhead) for each
    // frame: the run's wire bytes are at most the queue's bytes plus extra; the marking depth
    // behind a frame (the queue's bytes behind it, the ring's ahead of it when the queue's
    // marking counts the ring: the ring's bytes now plus the run's frames before it) at most
    // the queue's bytes plus the ring's bytes plus extra (Queue::deq_mark_min: UINT64_MAX
    // without dequeue marking); a deficit that covers the queue's bytes covers every frame in
    // it.
    const uint64_t extra = uint64_t(n) * frame_extra_;
    const uint64_t wire_bound = bytes0 + extra;
    const bool run_needs_tests =
        !run_tests_once_ || dbase < 0 || int64_t(wire_bound) > limits.room ||
        wire_bound >= limits.ready_below ||
        bytes0 + ((limits.ring_bytes + extra) & q.deq_ring) >= q.deq_mark_min;
    // PG bytes leave in sums per stretch of one key (in practice the whole run): pg_from is the
    // queue's bytes where the stretch of pg_key began. (Locals, not a RunState: one whose
    // address the out-of-line paths take would be kept in memory.)
    const uint32_t mask = q.mask, at = head0 & mask;
    uint32_t head = head0 + n;
    uint64_t bytes, wire_run;
    unsigned pg_key = slots[at].pg_key;
    uint64_t pg_from = bytes0;
    uint32_t marked = 0;
    if (run_needs_tests) [[unlikely]] {
        dequeue_runs_[true]++;
        RunState r{head0, k, bytes0, 0, pg_key, pg_from, 0};
        *ring_full = take_tested(q, r, head0 + n, dbase, limits, out);
        head = r.head, k = r.kk, bytes = r.bytes, wire_run = r.wire_run, pg_key = r.pg_key,
        pg_from = r.pg_from, marked = r.marked;
        if (head == head0) return {0, 0};
    } else {
        // Every frame of the run leaves: its slots in at most two contiguous stretches (the
        // queue's ring of slots wraps at most once). Per frame only what leave() needs in the
        // common case - the mbuf out, the length off the queue's bytes - and two flags: a frame
        // shorter than min_frame (bit 31 of `under`: lengths are below 2 GB) and a PG key other
        // than the first frame's (`keys`). Without either, leave() would have charged no PG
        // stretch and wire bytes of exactly the lengths plus the overhead per frame; with
        // one, the run is taken again through leave() (out[] rewritten, leave_each).
        const uint32_t neg_min = 0u - min_frame_;  // len + neg_min: len - min_frame
        const uint32_t n1 = std::min(n, mask + 1 - at);
        if (q.one_key && n == q.tail - head0) [[likely]] {
            // The whole queue, every frame of one key (Queue::one_key): the run's bytes are
            // the queue's (Queue::bytes is the sum of its frames' lengths), so per frame only
            // the mbuf out and the minimum test; the queue ends empty. (A frame under the
            // minimum: taken again below, as any run.)
            const auto copy_all = [neg_min](const TrafficManager::Slot *s, uint32_t m,
                                            rte_mbuf **o) __attribute__((always_inline)) {
                uint32_t under = 0;
                for (const TrafficManager::Slot *const end4 = s + (m & ~3u); s != end4;
                     s += 4, o += 4) {
                    under |= take4(s, o, neg_min);
                }
                // The last 0-3 slots straight, as the four-slot step.
                switch (m & 3u) {
                    case 3:
                        o[2] = s[2].m;
                        under |= s[2].len + neg_min;
                        [[fallthrough]];
                    case 2:
                        o[1] = s[1].m;
                        under |= s[1].len + neg_min;
                        [[fallthrough]];
                    case 1:
                        o[0] = s[0].m;
                        under |= s[0].len + neg_min;
                        break;
                    default:
                        break;
                }
                return under;
            };
            uint32_t under = copy_all(slots + at, n1, out + k);
            if (n1 != n) [[unlikely]]
                under |= copy_all(slots, n - n1, out + k + n1);
            if (likely(!(under >> 31))) {
                // take_run's end below with bytes 0: no excess, the PG stretch's bytes and
                // the run's are bytes0, the queue emptied.
                whole++;  // dequeue_runs_[false] and whole_runs_, added once per service()
                k += n;
                // charge() without its floor: the run's wire bytes are at most wire_bound,
                // below ready_below (run_needs_tests).
                const uint64_t wire = bytes0 + uint64_t(n) * overhead_;
                limits.ready_below -= wire;
                limits.room -= int64_t(wire);
                limits.ring_bytes += wire;
                q.head = head;
                q.bytes = 0;
                if (TrafficManager::Pool *pool = q.pool) {
                    pool->shared_used -= q.excess;
                    pool->used -= bytes0;
                }
                q.excess = 0;
                own_.pg->bytes[pg_key].sub(bytes0);
                nonempty &= ~(1u << qi);
                ps.sched.emptied(qi);
                // commit_dequeued() of an emptied queue, nothing marked.
                QueueStats &qs = st.queues[size_t(qi)];
                qs.deq_packets.add(n);
                qs.deq_bytes.add(bytes0);
                qs.depth_packets.set(0);
                qs.depth_bytes.set(0);
                return {n, bytes0};
            }
        }
        untested++;  // dequeue_runs_[false], added once per service()
        uint64_t sum = 0;
        uint32_t under = 0, keys = 0;
        // check_keys false: every frame queued has the run's first key (Queue::one_key).
        const auto copy = [&sum, &under, &keys, neg_min, key = pg_key](
                              const TrafficManager::Slot *s, uint32_t m, rte_mbuf **o,
                              bool check_keys) __attribute__((always_inline)) {
            // Four slots a step, then the rest one by one.
            for (const TrafficManager::Slot *const end4 = s + (m & ~3u); s != end4;
                 s += 4, o += 4) {
                under |= take4(s, o, neg_min);
                sum += uint64_t(s[0].len) + uint64_t(s[1].len) + uint64_t(s[2].len) +
                       uint64_t(s[3].len);
                if (check_keys)
                    keys |= (unsigned(s[0].pg_key) ^ key) | (unsigned(s[1].pg_key) ^ key) |
                            (unsigned(s[2].pg_key) ^ key) | (unsigned(s[3].pg_key) ^ key);
            }
            for (const TrafficManager::Slot *const end = s + (m & 3u); s != end; s++) {
                *o++ = s->m;
                sum += s->len;
                under |= s->len + neg_min;
                if (check_keys) keys |= unsigned(s->pg_key) ^ key;
            }
        };
        if (q.one_key) {
            copy(slots + at, n1, out + k, false);
            if (n1 != n) [[unlikely]]
                copy(slots, n - n1, out + k + n1, false);
        } else {
            copy(slots + at, n1, out + k, true);
            if (n1 != n) [[unlikely]]
                copy(slots, n - n1, out + k + n1, true);
        }
        if (likely(!(under >> 31) && !keys)) {
            k += n;
            bytes = bytes0 - sum;
            wire_run = sum + uint64_t(n) * overhead_;
        } else {
            RunState r{head0, k, bytes0, 0, pg_key, pg_from, 0};
            leave_each(r, slots + at, slots + at + n1, out);
            if (n1 != n) leave_each(r, slots, slots + (n - n1), out);
            k = r.kk, bytes = r.bytes, wire_run = r.wire_run, pg_key = r.pg_key,
            pg_from = r.pg_from;
        }
    }
    const uint32_t run = head - head0;
    limits.charge(wire_run);
    const uint64_t run_bytes = bytes0 - bytes;
    q.head = head;
    q.bytes = bytes;
    const uint64_t excess = bytes > q.reserved ? bytes - q.reserved : 0;
    if (TrafficManager::Pool *pool = q.pool) {
        pool->shared_used -= q.excess - excess;
        pool->used -= run_bytes;
    }
    q.excess = excess;
    own_.pg->bytes[pg_key].sub(pg_from - bytes);
    if (head == q.tail) {
        // Emptied: the deficit is forfeited (what set_deficit would have stored is dropped).
        nonempty &= ~(1u << qi);
        ps.sched.emptied(qi);
    } else if (dwrr) {
        ps.sched.set_deficit(qi, dbase + int64_t(bytes));
    }
    commit_dequeued(q, st.queues[size_t(qi)], port, qi, run, run_bytes, marked);
    return {run, run_bytes};
}

// The counters and gauges of a run of `run` frames, `bytes` bytes, `marked` marked, from queue qi.
// `q`, `qs`: the queue and its counters, at hand (the stores before would make the compiler load
// them again through tm_).
[[gnu::always_inline]] inline void QosEgress::commit_dequeued(const TrafficManager::Queue &q,
                                                              QueueStats &qs, uint16_t port,
                                                              int qi, uint32_t run, uint64_t bytes,
                                                              uint32_t marked) {
    qs.deq_packets.add(run);
    qs.deq_bytes.add(bytes);
    if (marked) {
        qs.ecn_marked.add(marked);
        if (trace_) ecn_unsampled_[port][size_t(qi)] += marked;
    }
    qs.depth_packets.set(q.size());
    qs.depth_bytes.set(q.bytes);
}

// service()'s steps for an idle port (nothing queued, nothing staged): nothing to send, the
// clocks brought to now, PFC honoring (which pauses nothing that could send; `honor` false when
// it would return 0 and change nothing, Port::pfc_inert), the gauges.
[[gnu::always_inline]] inline void QosEgress::service_idle(uint16_t port, uint64_t now_ns,
                                                           bool honor) {
    TrafficManager::Port &ps = *tm_.ports_[port];
    // Quiet: honoring pauses nothing and runs no watchdog; it rewrites the watchdog's marks,
    // which are the same while no frame left the port.
    const bool quiet = !honor || tm_.pfc_.quiet(port, now_ns);
    if (ps.idle_still && quiet &&
        ps.wm_epoch.load(std::memory_order_relaxed) == ps.wm_epoch_seen) {
        idle_skips_++;
        return;  // what follows would change nothing a reader sees (Port::idle_still)
    }
    apply_watermark_clear(port);
    ps.shaper.refill(now_ns);
    ps.ring.drain(now_ns);
    if (honor) pfc_honor(port, now_ns);
    tm_.stats_[port]->tx_ring_bytes.set(ps.ring.inflight_bytes());
    if (trace_) sample_ecn_marks(port, now_ns);
    ps.idle_still = quiet && !trace_ && ps.shaper.full() && ps.ring.empty();
}

// One owned port's share of a flush: watermark clears, shaper and ring model brought to now,
// staged frames retried, the paused queues (PfcEngine::honor and set_paused), then bursts of
// runs (take_run) handed to the device until no queue is eligible, the shaper or the ring model
// has no room, or the device refuses (the rest is staged). Returns the frames the device took.
uint32_t QosEgress::service(uint16_t port, uint64_t now_ns) {
    TrafficManager::Port &ps = *tm_.ports_[port];
    PortQosStats &st = *tm_.stats_[port];
    if (ps.ct_pending) return finish_cut_through(port, now_ns);

    apply_watermark_clear(port);
    ps.shaper.refill(now_ns);
    ps.ring.drain(now_ns);
    uint32_t total = 0;
    if (ps.staged_n) {
        total += retry_staged(port);
        if (ps.staged_n) {
            st.tx_ring_bytes.set(ps.ring.inflight_bytes());
            return total;
        }
    }

    const uint8_t paused =
        uint8_t(ps.paused.load(std::memory_order_relaxed) | pfc_honor(port, now_ns));
    if (!(ps.nonempty & ~unsigned(paused))) {
        // Nothing to send: no queue, pool or counter changes (the pool gauges are current).
        st.tx_ring_bytes.set(ps.ring.inflight_bytes());
        if (trace_) sample_ecn_marks(port, now_ns);
        return total;
    }
    rte_mbuf *out[256];
    unsigned nonempty = ps.nonempty;  // a local: see Slot::ecn_ip on char-typed stores
    // The limits live in a local while packets are taken, and so does the state of the queue
    // being served (take_run): the stores to the PG gauges and to the packets (ECN) could
    // otherwise alias them, and every packet would reload them.
    const uint64_t ring0 = ps.ring.inflight_bytes();
    RunLimits lim{ps.shaper.ready_below(), ps.ring.room(), ring0};
    const unsigned burst = burst_;
    unsigned refused = 0, untested = 0, whole = 0;
    for (;;) {
        unsigned k = 0;
        uint64_t k_bytes = 0;  // sum of out[0..k)'s pkt_len
        bool ring_full = false;
        while (k < burst && !ring_full) {
            const uint8_t eligible = uint8_t(nonempty & ~unsigned(paused));
            if (!eligible || !lim.ready_below) break;  // ready_below 0: the shaper is not ready
            const int qi = ps.sched.pick(eligible, [&](int i) {
                const TrafficManager::Queue &q = ps.q[size_t(i)];
                return q.slots[q.head & q.mask].len;
            });
            const Run r =
                take_run(port, ps, st, qi, burst, lim, out, k, &ring_full, nonempty, untested,
                         whole);
            if (!r.frames) break;
            k_bytes += r.bytes;
        }
        if (!k) break;
        uint16_t sent = send(port, out, uint16_t(k), k_bytes);
        total += sent;
        if (sent < k) {
            // The device ring is full after all: keep the rest for the next flush.
            std::copy(out + sent, out + k, ps.staged.begin());
            ps.staged_head = 0;
            ps.staged_n = uint16_t(k - sent);
            st.staged_packets.set(ps.staged_n);
            refused = k - sent;
            break;
        }
    }
    dequeue_runs_[false] += untested + whole;
    whole_runs_ += whole;
    const uint64_t charged = lim.ring_bytes - ring0;  // the runs' wire bytes
    ps.shaper.consume(charged);
    ps.ring.add(charged);
    for (unsigned i = 0; i < refused; i++)  // taken back: they are not in the device's ring
        ps.ring.remove(tm_.plan_.wire_bytes(ps.staged[i]->pkt_len));  // = its slot's len
    ps.nonempty = uint8_t(nonempty);
    for (auto &pool : own_.pools) pool.used_gauge.set(pool.used);
    // The ring's bytes, rounded up, rose by exactly what it was charged (whole bytes): without
    // a refusal they are lim.ring_bytes (inflight_bytes() divides).
    st.tx_ring_bytes.set(refused ? ps.ring.inflight_bytes() : lim.ring_bytes);
    if (trace_) sample_ecn_marks(port, now_ns);
    return total;
}

// ------------------------------------------------------------------------------ cut-through

// The final burst for `port` was just admitted to an idle port (enqueue). What the flush would
// do with it is decided now when the burst sits in one queue (no other queue for the scheduler
// to order it against), fits one TX burst, and neither PFC (quiet, nothing paused), the shaper,
// the TX ring model nor dequeue marking (no random draw) can hold or change a frame: service()
// would take it in one run and hand it to tx_burst in one call. Then it goes now, with
// take_run's and commit_dequeued's accounting, the scheduler state the run leaves, and PFC
// honoring on the same queue state; the buffer it held (PG bytes, pool) is released in the
// port's turn of the flush (finish_cut_through), so that other ports' admissions, watermark
// clears and PFC generation see what they would see. Otherwise nothing changes: the burst stays
// queued for the flush.
void QosEgress::cut_through(uint16_t port, uint64_t now_ns) {
    using Queue = TrafficManager::Queue;
    TrafficManager::Port &ps = *tm_.ports_[port];
    const unsigned ne = ps.nonempty;
    if (!ne || (ne & (ne - 1))) return;  // all dropped, or several queues: the scheduler's order
    const int qi = __builtin_ctz(ne);
    Queue &q = ps.q[size_t(qi)];
    const uint32_t n = q.size();
    if (n > burst_ || ps.paused.load(std::memory_order_relaxed) || !tm_.pfc_.quiet(port, now_ns))
        return;
    ps.shaper.refill(now_ns);  // what service() does first (the same now: done once)
    ps.ring.drain(now_ns);
    rte_mbuf *out[256];
    TxRingModel ring = ps.ring;
    uint64_t wire_all = 0;
    uint32_t w_last = 0;
    const unsigned key = q.slots[q.head & q.mask].pg_key;
    // Dequeue marking as take_run sees it: the queue's bytes behind each frame plus, when the
    // ring counts, the ring's bytes ahead of it. An ECT frame at or above mark_min could draw
    // (or be marked): the flush decides those.
    const bool mark = q.flags & Queue::kMarkDeq;
    const uint64_t ring_w_mask = q.flags & Queue::kMarkRing ? ~uint64_t(0) : 0;
    uint64_t behind = q.bytes, ahead = ring_w_mask ? ps.ring.inflight_bytes() : 0;
    for (uint32_t i = 0; i < n; i++) {
        const TrafficManager::Slot &s = q.slots[(q.head + i) & q.mask];
        const uint32_t w = tm_.plan_.wire_bytes(s.len);
        if (s.pg_key != key || !ring.fits(w)) return;
        behind -= s.len;
        if (mark && behind + ahead >= q.mark_min && (s.ecn_ip & 4) &&
            ((s.ecn_ip & 3) == kEcnEct0 || (s.ecn_ip & 3) == kEcnEct1))
            return;
        ring.add(w);
        ahead += w & ring_w_mask;
        wire_all += w;
        w_last = w;
        out[i] = s.m;
    }
    // The shaper stays ready up to the last frame.
    if (!ps.shaper.ready_after(wire_all - w_last)) return;

    send_cut_through(port, qi, out, n, q.bytes, wire_all, key, ring, now_ns);
}

// The fast form of admit() + cut_through() for an idle port: checks, on the burst as it comes,
// that admission would admit every packet to one queue without a threshold, a random draw or a
// mark (the queue is empty: its depth before packet i is the bytes of packets 0..i-1), and that
// cut_through() would then send them all; then books what admit() would (counters, watermarks,
// pool and PG charges) in sums and sends. One pass reads each packet's class and length; the
// per-packet limits (WRED, marking, the TX ring model) are then checked on the burst's sums,
// which bound every packet's (the depths only grow along the burst), and per packet only when
// such a bound is reached.
template <bool kSum>
bool QosEgress::admit_cut_through(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns,
                                  const BurstSummary &sum) {
    using Queue = TrafficManager::Queue;
    if (!n || n > burst_ || n > tm_.plan_.queue_packets) return false;
    const uint8_t *to_queue = tm_.plan_.ports[port].cls.tc_to_queue.data();
    const uint32_t min_frame = tm_.plan_.min_frame_bytes;
    unsigned qi, key;
    uint64_t bytes;
    uint32_t under;  // bit 31: a frame may be shorter than min_frame (frames are below 2 GB)
    if constexpr (kSum) {
        // Every packet has the summary's class: one queue and one PG key.
        const unsigned tc = sum.tc & (kNumTc - 1);
        qi = to_queue[tc];
        key = tm_.pg_key_[(sum.in_port & (kMaxPorts - 1)) * kNumTc + tc];
        bytes = sum.bytes;
        under = sum.min_len - min_frame;
    } else {
        const PacketMeta *meta0 = meta_of(pkts[0]);
        const unsigned tc0 = meta0->tc & (kNumTc - 1);
        qi = to_queue[tc0];
        key = tm_.pg_key_[(meta0->in_port & (kMaxPorts - 1)) * kNumTc + tc0];
        // One queue and one PG key for the whole burst (a burst of mixed classes, rsw-full's,
        // leaves here at its first packet of another class, before any other check, for
        // cut_through_mixed(), which takes any burst to an idle port or declines having changed
        // nothing): packets of the first one's TC and ingress port have them; others are looked
        // up. And the burst's bytes and wire bytes.
        const uint32_t class0 = in_port_tc_word(meta0) & kInPortTc;
        // Packet 0 has them by definition.
        bytes = pkts[0]->pkt_len;
        under = pkts[0]->pkt_len - min_frame;
        for (rte_mbuf **p = pkts + 1, **const end = pkts + n; p != end; p++) {
            rte_mbuf *m = *p;
            const PacketMeta *meta = meta_of(m);
            const uint32_t len = m->pkt_len, cls = in_port_tc_word(meta);
            bytes += len;
            under |= len - min_frame;
            if ((cls & kInPortTc) != class0) [[unlikely]] {
                const unsigned tc = meta->tc & (kNumTc - 1);
                if (to_queue[tc] != qi ||
                    tm_.pg_key_[(meta->in_port & (kMaxPorts - 1)) * kNumTc + tc] != key)
                    return cut_through_mixed(
                        port, pkts, n, now_ns,
                        sum.tc == BurstSummary::kSeveralTcs ? &sum : nullptr);
            }
        }
    }
    TrafficManager::Port &ps = *tm_.ports_[port];
    Queue &q = ps.q[qi];
    // A plain queue (Port::ct_plain) is never stormed and its port's PFC is always quiet.
    const bool plain = ps.ct_plain >> qi & 1;
    if (ps.paused.load(std::memory_order_relaxed) ||
        (!plain && ((q.flags & Queue::kStormDrop) || !tm_.pfc_.quiet(port, now_ns))))
        return false;
    // The wire bytes of all: each frame padded to min_frame_bytes (wire_bytes()), plus overhead.
    uint64_t wire_all = bytes + uint64_t(n) * tm_.plan_.wire_overhead_bytes;
    if (unlikely(under >> 31))
        for (uint16_t i = 0; i < n; i++)
            wire_all += pkts[i]->pkt_len < min_frame ? min_frame - pkts[i]->pkt_len : 0;
    const uint64_t excess = bytes > q.reserved ? bytes - q.reserved : 0;
    TrafficManager::Pool *const pool = q.pool;
    if (plain) {
        // Everything below passes for a plain queue: the ring model has no cap (room() is
        // unlimited), no curve, marking, pool or PG limit applies, and an unlimited shaper is
        // always ready (its refill changes nothing a reader sees).
        ps.ring.drain(now_ns);
    } else {
        const uint32_t len_last = pkts[n - 1]->pkt_len;
        const uint32_t w_last = tm_.plan_.wire_bytes(len_last);
        ps.shaper.refill(now_ns);  // what admit() (ring) and service() do first, once per now
        ps.ring.drain(now_ns);
        const uint64_t ring_in = ps.ring.inflight_bytes();
        // Enqueue marking sees the ring's bytes too (admit()'s ring_ahead); dequeue marking the
        // ring's bytes ahead of each frame when the ring counts (take_run).
        const uint64_t enq_ring = q.flags & Queue::kMarkRing ? ring_in : 0;
        const uint64_t ring_w_mask = q.flags & Queue::kMarkRing ? ~uint64_t(0) : 0;
        const bool drop_curve = q.flags & Queue::kDrop, ecn_q = q.flags & Queue::kEcn;
        const bool mark_enq = q.flags & Queue::kMarkEnq, mark_deq = q.flags & Queue::kMarkDeq;
        // Bounds from the sums: the depth at the last packet's admission is the deepest any packet
        // sees; the ring takes every frame when it has room for all; a frame's dequeue-marking
        // depth (bytes behind it, ring bytes ahead of it) is below the burst's bytes plus the
        // ring's and the burst's wire bytes.
        const uint64_t before_last = bytes - len_last;
        if (int64_t(wire_all) > ps.ring.room() || (drop_curve && before_last >= q.drop_min) ||
            (mark_enq && before_last + enq_ring >= q.mark_min) ||
            (mark_deq && bytes + ((ring_in + wire_all) & ring_w_mask) >= q.mark_min)) {
            // Per packet, as admission() and cut_through() see each.
            TxRingModel ring = ps.ring;
            uint64_t depth = 0, ahead = ring_in & ring_w_mask;
            for (uint16_t i = 0; i < n; i++) {
                rte_mbuf *m = pkts[i];
                const PacketMeta *meta = meta_of(m);
                const unsigned ecn_ip = ecn_ip_of(meta);
                const bool ect = ecn_ip > 4;
                // admission(): a WRED draw for a lossy queue at or above drop_min (not for ECT in
                // an ECN queue); enqueue marking for ECT at or above mark_min.
                if (drop_curve && depth >= q.drop_min && !(ect && ecn_q)) return false;
                if (mark_enq && ect && depth + enq_ring >= q.mark_min) return false;
                const uint32_t len = m->pkt_len;
                const uint32_t w = tm_.plan_.wire_bytes(len);
                if (!ring.fits(w)) return false;
                ring.add(w);
                depth += len;
                // cut_through(): no ECT frame at a dequeue-marking depth (the flush decides those).
                if (mark_deq && (ecn_ip == (4 | kEcnEct0) || ecn_ip == (4 | kEcnEct1)) &&
                    bytes - depth + ahead >= q.mark_min)
                    return false;
                ahead += w & ring_w_mask;
            }
        }
        // The pool: a packet that takes shared bytes (delta > 0) is checked against the thresholds.
        // Along the burst the queue's excess only grows and the pool's free bytes only shrink, so
        // every such check passes when the last packet's does (and none runs when it takes none).
        if (pool && (q.flags & Queue::kLossless) && pool->shared_used > pool->shared + pool->xoff)
            return false;  // checked for every lossless packet, delta 0 or not
        if (pool && excess) {
            const uint64_t before = before_last;
            const uint64_t used_before =
                pool->shared_used + (before > q.reserved ? before - q.reserved : 0);
            const uint64_t delta = excess - (before > q.reserved ? before - q.reserved : 0);
            if (q.flags & Queue::kLossless) {
                if (used_before + delta > pool->shared + pool->xoff) return false;
            } else if (delta) {
                if (used_before + delta > pool->shared) return false;
                if (q.flags & Queue::kDynamic) {
                    const uint64_t free = pool->shared - used_before;
                    const uint64_t limit =
                        q.dynamic_th >= 0 ? free << q.dynamic_th : free >> -q.dynamic_th;
                    if (excess > limit) return false;
                } else if (bytes > q.static_th) {
                    return false;
                }
            }
        }
        if (q.flags & Queue::kLossless) {
            const uint64_t lim = (*tm_.pg_limit_)[key].load(std::memory_order_relaxed);
            if (lim != UINT64_MAX && pg_total(key) + bytes > lim) return false;
        }
        if (!ps.shaper.ready_after(wire_all - w_last)) return false;
    }

    // Admitted: admitted_to(), admitted() and the PG charge, in sums (the queue grew from empty).
    PortQosStats &st = *tm_.stats_[port];
    QueueStats &qs = st.queues[qi];
    q.tail += n;
    q.bytes = bytes;
    q.excess = excess;
    if (bytes > q.wm_bytes) q.wm_bytes = bytes;
    if (n > q.wm_packets) q.wm_packets = n;
    qs.enq_packets.add(n);
    qs.enq_bytes.add(bytes);
    qs.watermark_bytes.set(q.wm_bytes);
    qs.watermark_packets.set(q.wm_packets);
    if (pool) {
        pool->shared_used += excess;
        pool->used += bytes;
    }
    for (auto &p : own_.pools) p.used_gauge.set(p.used);
    PgAccounting &pg = *own_.pg;
    pg.charge(key, bytes);
    ps.ring.add(wire_all);  // as one add per frame
    if constexpr (kSum) summed_cut_throughs_++;
    send_cut_through(port, int(qi), pkts, n, bytes, wire_all, key, ps.ring, now_ns);
    return true;
}

// service()'s steps for a cut-through burst, in its order, on the port's state the flush would
// see: watermark clear, PFC honoring (quiet: pauses nothing, keeps the watchdog's marks
// current), the run (take_run, commit_dequeued), the send; the buffer release waits for the
// flush (finish_cut_through).
[[gnu::always_inline]] inline void QosEgress::send_cut_through(
    uint16_t port, int qi, rte_mbuf **out, uint32_t n, uint64_t bytes, uint64_t wire_all,
    unsigned key, const TxRingModel &ring, uint64_t now_ns) {
    TrafficManager::Port &ps = *tm_.ports_[port];
    TrafficManager::Queue &q = ps.q[size_t(qi)];
    apply_watermark_clear(port);
    if (!ps.pfc_inert) pfc_honor(port, now_ns);  // inert: pauses nothing, changes nothing
    PortQosStats &st = *tm_.stats_[port];
    st.cut_through_packets.add(n);
    ps.ct_pending = true;
    ps.ct_pg_key = uint16_t(key);
    ps.ct_bytes = bytes;
    ps.ct_excess = q.excess;
    ps.ct_pool = q.pool;
    q.head = q.tail;
    q.bytes = q.excess = 0;
    ps.sched.served_alone(qi);
    ps.nonempty = 0;
    ps.shaper.consume(uint32_t(wire_all));
    if (&ring != &ps.ring) ps.ring = ring;
    QueueStats &qs = st.queues[size_t(qi)];
    qs.deq_packets.add(n);
    qs.deq_bytes.add(bytes);
    qs.depth_packets.set(0);
    qs.depth_bytes.set(0);
    const uint16_t sent = send(port, out, uint16_t(n), bytes);
    ps.ct_sent = sent;
    if (sent < n) stage_refused(ps, st, out, sent, n);
    ps.ct_ring_bytes = ps.ring.inflight_bytes();
}

void QosEgress::stage_refused(TrafficManager::Port &ps, PortQosStats &st, rte_mbuf **out,
                              uint32_t sent, uint32_t n) {
    for (uint32_t i = sent; i < n; i++) ps.ring.remove(tm_.plan_.wire_bytes(out[i]->pkt_len));
    std::copy(out + sent, out + n, ps.staged.begin());
    ps.staged_head = 0;
    ps.staged_n = uint16_t(n - sent);
    st.staged_packets.set(ps.staged_n);
}

// admit_cut_through<true>'s plain case and send_cut_through(), for a queue that is plain: PFC
// inert (honoring skipped), no shaper (consume() does nothing), no ring cap, no pool, curve,
// marking or storm drop. The queue is empty (the port idle): its bytes and excess are 0 before
// and after, nonempty stays 0; it takes n frames and sends them (head = tail).
[[gnu::always_inline]] inline bool QosEgress::cut_through_plain(uint16_t port, rte_mbuf **pkts,
                                                                uint16_t n, uint64_t now_ns,
                                                                const BurstSummary &sum) {
    using Queue = TrafficManager::Queue;
    // enqueue_burst's checks: an owned port (every owned port is a port of the plan), idle,
    // not after a mixed burst; then admit_cut_through's.
    if (port >= 32 || !(owned_mask_ >> port & 1)) return false;
    TrafficManager::Port &ps = *tm_.ports_[port];
    const unsigned tc = sum.tc & (kNumTc - 1);
    const unsigned qi = ps.ct_plain_q[tc];
    if (qi >= kNumQueues || (ps.nonempty | ps.staged_n | ps.ct_pending | ps.ct_mixed) ||
        unsigned(n) - 1 >= ct_max_ || sum.min_len < min_frame_ ||
        ps.paused.load(std::memory_order_relaxed) || ps.down.load(std::memory_order_relaxed) ||
        ps.wm_epoch.load(std::memory_order_relaxed) != ps.wm_epoch_seen)
        return false;
    if (ps.handoff && !rte_ring_empty(ps.handoff)) return false;

    const uint64_t bytes = sum.bytes;
    // Every frame at least min_frame bytes: the wire bytes are the bytes plus the overheads.
    const uint64_t wire_all = bytes + uint64_t(n) * overhead_;
    ps.ring.drain(now_ns);
    // The ring's bytes after the add (its inflight_bytes(): ceil((I + w K) / K) = ceil(I / K) + w).
    const uint64_t ring_bytes = ps.ring.inflight_bytes() + wire_all;
    ps.ring.add(wire_all);
    // Every pointer and field before the first counter store (a relaxed atomic store: the
    // compiler would load them again after it).
    Queue &q = ps.q[qi];
    const unsigned key = tm_.pg_key_[(sum.in_port & (kMaxPorts - 1)) * kNumTc + tc];
    PortQosStats &st = *tm_.stats_[port];
    QueueStats &qs = st.queues[qi];
    PgAccounting &pg = *own_.pg;
    const uint32_t tail = q.tail + n;
    const uint64_t wm_bytes = q.wm_bytes, wm_packets = q.wm_packets;
    q.tail = tail;
    q.head = tail;
    ps.sched.served_alone(int(qi));
    ps.ct_pending = true;
    ps.ct_pg_key = uint16_t(key);
    ps.ct_bytes = bytes;
    ps.ct_pool = nullptr;
    ps.ct_ring_bytes = ring_bytes;
    summed_cut_throughs_++;
    // The watermark gauges are the queue's watermarks, its depth gauges its depth (0 when
    // idle, as after the run): set only what changes.
    if (bytes > wm_bytes) {
        q.wm_bytes = bytes;
        qs.watermark_bytes.set(bytes);
    }
    if (n > wm_packets) {
        q.wm_packets = n;
        qs.watermark_packets.set(n);
    }
    pg.charge(key, bytes);
    qs.enq_packets.add(n);
    qs.enq_bytes.add(bytes);
    qs.deq_packets.add(n);
    qs.deq_bytes.add(bytes);
    st.cut_through_packets.add(n);
    const uint16_t sent = io_.tx_burst(port, tx_queue_, pkts, n);
    ps.ct_sent = sent;
    if (sent == n) [[likely]] {
        PortCounters &pc = ctr_.ports[port];
        pc.tx_packets.add(n);
        pc.tx_bytes.add(bytes);
    } else {
        cut_through_refused(port, pkts, n, sent, bytes);
    }
    return true;
}

void QosEgress::cut_through_refused(uint16_t port, rte_mbuf **out, uint16_t n, uint16_t sent,
                                    uint64_t bytes) {
    TrafficManager::Port &ps = *tm_.ports_[port];
    uint64_t total = bytes;
    for (uint16_t i = sent; i < n; i++) total -= out[i]->pkt_len;
    PortCounters &pc = ctr_.ports[port];
    pc.tx_packets.add(sent);
    pc.tx_bytes.add(total);
    stage_refused(ps, *tm_.stats_[port], out, sent, n);
    ps.ct_ring_bytes = ps.ring.inflight_bytes();
}

// A final burst to an idle port that goes to several queues (or follows such a burst: a
// one-queue burst takes this path too). service() would take it in runs - the strict queues
// from the highest, then the DWRR queues from the scheduler's turn - and hand them to tx_burst
// in one call when the burst fits one TX burst, PFC is quiet (nothing paused: pick() sees every
// queue), the shaper stays ready up to its last frame and the TX ring model has room for all of
// it, and no frame reaches a dequeue marking depth (no random draw: the draws would come before
// those of later admissions). Then this
// admits the burst in sums (admit_in_sums's checks, no slots: each queue's packets are kept in
// order in a local array) and sends it in that order, with admission's and service()'s state and
// counters: the picks are the scheduler's own (pick(), emptied(); a DWRR queue whose deficit
// does not cover its share is taken in several runs, as take_run would), the watermark clear
// and PFC honoring run on the queues holding the burst, the runs' counters per queue, the
// shaper and ring charges, refusals staged. The buffer the burst held (PG bytes, pools) is
// released in the port's turn of the flush (release_mixed), as for a one-queue burst.
bool QosEgress::cut_through_mixed(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns,
                                  const BurstSummary *sum) {
    using Queue = TrafficManager::Queue;
    TrafficManager::Port &ps = *tm_.ports_[port];
    // One TX burst (n <= burst_), room in every (empty) queue (n <= queue_packets), in sums.
    if (!mixed_ct_ || unsigned(n) - 1 >= ct_max_ || n > kSumBurst) return false;
    if (ps.paused.load(std::memory_order_relaxed) ||
        (!ps.pfc_inert && !tm_.pfc_.quiet(port, now_ns)))
        return false;
    const uint8_t *to_queue = tm_.plan_.ports[port].cls.tc_to_queue.data();
    // Each packet's TC in an array, then each TC's packets as a mask and its sum, and each
    // queue's packets as a mask (in arrival order: the mask's bits from the lowest). No
    // per-queue pointer or per-TC sum is updated in memory packet after packet: a packet of the
    // class of the one before it would wait for that store to be forwarded (a chain of loads
    // and stores through one address, several cycles a packet). With the worker's summary
    // (kSeveralTcs: one ingress port, the burst's bytes, a bound below every length) only each
    // packet's TC is read here; else also its ingress port and length.
    constexpr uint64_t kPacket = BurstSums::kPacket;
    BurstSums s;
    alignas(16) std::array<uint8_t, kSumBurst> tc_of{};
    uint32_t shortest;
    unsigned tcs = 0, in_port;
    uint64_t all_bytes;
    if (sum) {
        for (unsigned i = 0; i < n; i++) {
            const unsigned tc = meta_of(pkts[i])->tc & (kNumTc - 1);
            tc_of[i] = uint8_t(tc);
            tcs |= 1u << tc;
        }
        shortest = sum->min_len;
        all_bytes = sum->bytes;
        in_port = sum->in_port;
    } else {
        uint32_t in_or = 0, in_and = ~0u;
        shortest = UINT32_MAX;
        all_bytes = 0;
        for (unsigned i = 0; i < n; i++) {
            rte_mbuf *m = pkts[i];
            const PacketMeta *meta = meta_of(m);
            const unsigned tc = meta->tc & (kNumTc - 1);
            const uint32_t word = in_port_tc_word(meta);
            in_or |= word;
            in_and &= word;
            const uint32_t len = m->pkt_len;
            shortest = std::min(shortest, len);
            tc_of[i] = uint8_t(tc);
            all_bytes += len;
            tcs |= 1u << tc;
        }
        if ((in_or ^ in_and) & kInPort) return false;
        in_port = meta_of(pkts[0])->in_port;
    }
    // The TC with the most packets gets the burst's bytes less the others' (no pass over its
    // packets).
    std::array<uint64_t, kNumQueues> q_mask{};
    std::array<uint64_t, kNumTc> tc_mask;
    unsigned major = 0, major_n = 0;
    for (unsigned left = tcs; left; left &= left - 1) {
        const unsigned tc = unsigned(__builtin_ctz(left));
        const uint64_t mask = packets_of_tc(tc_of.data(), n, tc);
        tc_mask[tc] = mask;
        q_mask[to_queue[tc]] |= mask;
        if (const unsigned tc_n = unsigned(__builtin_popcountll(mask)); tc_n > major_n) {
            major = tc;
            major_n = tc_n;
        }
    }
    uint64_t major_bytes = all_bytes;
    for (unsigned left = tcs & ~(1u << major); left; left &= left - 1) {
        const unsigned tc = unsigned(__builtin_ctz(left));
        const uint64_t mask = tc_mask[tc];
        uint64_t bytes = 0;
        for (uint64_t k = mask; k; k &= k - 1) bytes += pkts[__builtin_ctzll(k)]->pkt_len;
        s.tc[tc] = bytes + uint64_t(__builtin_popcountll(mask)) * kPacket;
        major_bytes -= bytes;
    }
    s.tc[major] = major_bytes + uint64_t(major_n) * kPacket;
    s.by_queue(to_queue, tcs);
    const uint16_t *key_of = &tm_.pg_key_[(in_port & (kMaxPorts - 1)) * kNumTc];
    if (!sums_admissible(ps, key_of, s, now_ns)) return false;

    // service()'s first steps (the same now: done once), then what its pass would take.
    ps.shaper.refill(now_ns);
    ps.ring.drain(now_ns);
    const uint64_t bytes = s.bytes();
    uint64_t wire = bytes + uint64_t(n) * overhead_;  // every frame's wire_bytes()
    if (shortest < min_frame_) [[unlikely]]
        for (uint16_t i = 0; i < n; i++)
            if (const uint32_t len = pkts[i]->pkt_len; len < min_frame_) wire += min_frame_ - len;
    // The ring model takes frame after frame while the bytes so far plus the frame's fit its
    // room (RunLimits): all of them when all fit.
    if (int64_t(wire) > ps.ring.room()) return false;
    // The order: pick() as service() calls it, then each queue's run as take_run takes it - the
    // whole queue, which then forfeits its deficit (emptied()), or for a DWRR queue whose deficit
    // does not cover its bytes the frames it covers, charged, after which pick() moves the turn
    // on (a queue's share of a large-frame burst can span several DWRR quanta: 4 KB frames). An
    // idle port's queues owe nothing (an empty queue's deficit is 0), so when every DWRR queue's
    // quantum covers its share the order follows from the masks and the turn, one whole-queue
    // run each (DwrrScheduler::order_of, applied at the commit by served_in_order); else the
    // picks themselves, with the turn and the deficits restored if the burst is declined.
    std::array<uint8_t, kNumQueues> order;
    unsigned n_queues =
        shortest ? ps.sched.order_of(uint8_t(s.queues),
                                     [&s](unsigned qi) { return s.q_bytes(qi); }, order.data())
                 : 0;
    const bool picked = n_queues == 0;
    const unsigned dwrr = picked ? s.queues & ps.sched.dwrr_mask() : 0;
    const unsigned turn0 = ps.sched.turn();
    std::array<int64_t, kNumQueues> deficit0;
    for (unsigned left = dwrr; left; left &= left - 1)
        deficit0[__builtin_ctz(left)] = ps.sched.deficit(int(__builtin_ctz(left)));
    const auto restore = [&] {
        if (!picked) return;
        ps.sched.set_turn(turn0);
        for (unsigned left = dwrr; left; left &= left - 1)
            ps.sched.set_deficit(int(__builtin_ctz(left)), deficit0[__builtin_ctz(left)]);
    };
    MixedRun runs[kSumBurst];  // every run takes at least one frame
    unsigned n_runs = 0;
    for (unsigned i = 0; i < n_queues; i++)
        runs[n_runs++] = {q_mask[order[i]], order[i], uint8_t(s.q_packets(order[i]))};
    // Each queue's frames not in a run yet: the lowest bit is its head frame.
    std::array<uint64_t, kNumQueues> rest = q_mask;
    for (unsigned eligible = picked ? s.queues : 0; eligible;) {
        const int qi = ps.sched.pick(uint8_t(eligible), [&](int i) {
            return pkts[__builtin_ctzll(rest[size_t(i)])]->pkt_len;
        });
        const uint64_t left = rest[size_t(qi)];
        uint64_t run = left;
        if (dwrr >> qi & 1) {
            int64_t d = ps.sched.deficit(qi);
            if (d < int64_t(s.q_bytes(unsigned(qi)))) [[unlikely]] {
                // take_run's test per frame (its deficit covers the head frame: pick()).
                run = 0;
                for (uint64_t k = left; k; k &= k - 1) {
                    const uint32_t len = pkts[__builtin_ctzll(k)]->pkt_len;
                    if (d < int64_t(len)) break;
                    d -= len;
                    run |= k & -k;
                }
                ps.sched.set_deficit(qi, d);
            }
        }
        runs[n_runs++] = {run, uint8_t(qi), uint8_t(__builtin_popcountll(run))};
        rest[size_t(qi)] = left & ~run;
        if (run == left) {
            ps.sched.emptied(qi);
            eligible &= ~(1u << qi);
        }
    }
    // The burst in that order: each run's packets from its mask.
    rte_mbuf *out[kSumBurst];
    {
        rte_mbuf **o = out;
        for (unsigned i = 0; i < n_runs; i++)
            for (uint64_t k = runs[i].mask; k; k &= k - 1) *o++ = pkts[__builtin_ctzll(k)];
    }
    // The shaper stays ready up to the last frame; no frame at a dequeue marking depth (bound
    // first). A frame's depth is its queue's bytes behind it plus, with the ring (deq_ring), the
    // ring's bytes and the burst's wire bytes ahead of it: every other frame of the burst is
    // either ahead of it (its wire bytes) or behind it (its bytes, if of its queue), never both,
    // so the depth is below ring0 + wire with the ring, and below the queue's share without it.
    const uint64_t ring0 = ps.ring.inflight_bytes();
    bool marks = false;
    for (unsigned left = s.queues & ps.mark_deq_queues; left; left &= left - 1) {
        const Queue &q = ps.q[__builtin_ctz(left)];
        const uint64_t share = s.q_bytes(unsigned(__builtin_ctz(left)));
        const uint64_t bound = ((ring0 + wire) & q.deq_ring) | (share & ~q.deq_ring);
        marks |= bound >= q.deq_mark_min;
    }
    if (!ps.shaper.ready_after(wire - tm_.plan_.wire_bytes(out[n - 1]->pkt_len)) ||
        (marks && mixed_would_mark(ps, runs, n_runs, s, out, ring0))) {
        restore();
        return false;
    }

    // Admitted (admit_in_sums's commit, the slots aside), with each queue's run counted and the
    // release its pool will owe (at the flush); then service()'s steps on the queues holding the
    // burst (the watermark clear, PFC honoring), and the queues emptied. The watermark clear
    // comes first: on the idle port's queues it leaves every watermark 0, and the commit then
    // raises those of the burst's queues to their shares - the watermarks and gauges a clear
    // after the commit leaves (each queue's depth then).
    apply_watermark_clear(port);
    unsigned pool_queues = 0;
    commit_sums<true>(
        port, ps, key_of, s, [](Queue &, unsigned, uint32_t) {},
        [&](Queue &q, QueueStats &qs, unsigned qi, uint32_t q_n) {
            qs.deq_packets.add(q_n);
            qs.deq_bytes.add(s.q_bytes(qi));
            if (q.pool) {
                pool_queues |= 1u << qi;
                ps.ct_q_bytes[qi] = s.q_bytes(qi);
                ps.ct_q_excess[qi] = s.excess[qi];
            }
        });
    if (!ps.pfc_inert) pfc_honor(port, now_ns);  // inert: pauses nothing, changes nothing
    PortQosStats &st = *tm_.stats_[port];
    for (unsigned left = s.queues; left; left &= left - 1) {
        Queue &q = ps.q[__builtin_ctz(left)];
        q.head = q.tail;
    }
    for (unsigned left = s.tcs; left; left &= left - 1)
        ps.ct_tc_bytes[__builtin_ctz(left)] = s.tc_bytes(unsigned(__builtin_ctz(left)));
    ps.ct_pool_queues = uint8_t(pool_queues);
    ps.ct_tcs = uint8_t(s.tcs);
    ps.ct_keys = key_of;
    if (!picked) ps.sched.served_in_order(uint8_t(s.queues), order.data(), n_queues);
    ps.ct_mixed_held = true;
    mixed_held_ = true;
    ps.ct_pending = true;  // release_cut_through() releases nothing of it
    ps.ct_pool = nullptr;
    ps.ct_bytes = 0;
    ps.ct_pg_key = 0;
    ps.ct_mixed = (s.queues & (s.queues - 1)) != 0;
    st.cut_through_packets.add(n);
    mixed_cut_throughs_++;
    if (sum) summed_cut_throughs_++;
    ps.shaper.consume(wire);
    ps.ring.add(wire);
    const uint16_t sent = send(port, out, n, bytes);
    ps.ct_sent = sent;
    if (sent < n) [[unlikely]] {
        // The device ring is full after all: the rest waits for the next flush (service()).
        stage_refused(ps, st, out, sent, n);
        ps.ct_ring_bytes = ps.ring.inflight_bytes();
    } else {
        // The ring's bytes after the add (inflight_bytes(): ceil((I + w K) / K) = ceil(I / K) + w).
        ps.ct_ring_bytes = ring0 + wire;
    }
    return true;
}

// take_tested's dequeue marking test for every frame of out[0..n) as service() would take them
// (the runs in order): an ECT frame of a queue that marks at dequeue, at or above its marking
// depth - the queue's bytes behind it, plus with the ring the ring's bytes ahead of it (ring0,
// then every frame before it).
bool QosEgress::mixed_would_mark(const TrafficManager::Port &ps, const MixedRun *runs,
                                 unsigned n_runs, const BurstSums &s, rte_mbuf *const *out,
                                 uint64_t ring0) const {
    uint64_t ahead = ring0;
    std::array<uint64_t, kNumQueues> behind;  // each queue's bytes: it was empty
    for (unsigned left = s.queues; left; left &= left - 1)
        behind[size_t(__builtin_ctz(left))] = s.q_bytes(unsigned(__builtin_ctz(left)));
    for (unsigned i = 0; i < n_runs; i++) {
        const TrafficManager::Queue &q = ps.q[runs[i].q];
        uint64_t &b = behind[runs[i].q];
        for (uint32_t j = 0; j < runs[i].n; j++) {
            rte_mbuf *const m = *out++;
            b -= m->pkt_len;
            const unsigned ecn_ip = ecn_ip_of(meta_of(m));
            if (b + (ahead & q.deq_ring) >= q.deq_mark_min &&
                (ecn_ip == (4 | kEcnEct0) || ecn_ip == (4 | kEcnEct1)))
                return true;
            ahead += tm_.plan_.wire_bytes(m->pkt_len);
        }
    }
    return false;
}

void QosEgress::release_mixed(TrafficManager::Port &ps) {
    ps.ct_mixed_held = false;
    for (unsigned left = ps.ct_pool_queues; left; left &= left - 1) {
        const unsigned qi = unsigned(__builtin_ctz(left));
        TrafficManager::Pool *pool = ps.q[qi].pool;
        pool->shared_used -= ps.ct_q_excess[qi];
        pool->used -= ps.ct_q_bytes[qi];
    }
    PgAccounting &pg = *own_.pg;
    for (unsigned left = ps.ct_tcs; left; left &= left - 1) {
        const unsigned tc = unsigned(__builtin_ctz(left));
        pg.bytes[ps.ct_keys[tc]].sub(ps.ct_tc_bytes[tc]);
    }
    if (ps.ct_pool_queues)
        for (auto &pool : own_.pools) pool.used_gauge.set(pool.used);
}

void QosEgress::release_mixed_all() {
    mixed_held_ = false;
    for (uint16_t p : owned_)
        if (TrafficManager::Port &ps = *tm_.ports_[p]; ps.ct_mixed_held) release_mixed(ps);
}

[[gnu::always_inline]] inline void QosEgress::release_cut_through(TrafficManager::Port &ps) {
    ps.ct_pending = false;
    if (TrafficManager::Pool *pool = ps.ct_pool) {
        pool->shared_used -= ps.ct_excess;
        pool->used -= ps.ct_bytes;
    }
    own_.pg->bytes[ps.ct_pg_key].sub(ps.ct_bytes);
}

// The rest of service() for a port whose burst left at enqueue: the release take_run would
// have made, the gauges commit_dequeued and service() set. Returns the frames the device took.
[[gnu::always_inline]] inline uint32_t QosEgress::finish_cut_through(uint16_t port,
                                                                     uint64_t now_ns) {
    TrafficManager::Port &ps = *tm_.ports_[port];
    TrafficManager::Pool *const pool = ps.ct_pool;
    release_cut_through(ps);
    // Only the burst's pool changed: every other pool's gauge is its use already.
    if (pool) pool->used_gauge.set(pool->used);
    tm_.stats_[port]->tx_ring_bytes.set(ps.ct_ring_bytes);
    if (ps.ct_mixed_held) release_mixed(ps);
    if (trace_) sample_ecn_marks(port, now_ns);
    return ps.ct_sent;
}

// Marks made at enqueue (admit) or dequeue, sampled with this flush's time.
void QosEgress::sample_ecn_marks(uint16_t port, uint64_t now_ns) {
    for (unsigned qi = 0; qi < kNumQueues; qi++)
        if (uint32_t &u = ecn_unsampled_[port][qi]; u >= kEcnSampleEvery) {
            trace_->push({now_ns, u, port, uint16_t(qi), TraceKind::ecn_mark_sample});
            u = 0;
        }
}

uint64_t QosEgress::next_event_ns(uint64_t now_ns) const {
    uint64_t t = kNoEventNs;
    const uint32_t min_frame = tm_.plan_.min_frame_bytes, overhead = tm_.plan_.wire_overhead_bytes;
    for (uint16_t p : owned_) {
        const TrafficManager::Port &ps = *tm_.ports_[p];
        t = std::min(t, tm_.pfc_.next_event_ns(p, now_ns, ps.nonempty));
        // The shaper and the ring model, when they hold back a queue not paused from outside
        // (a PFC-paused one is covered above: at worst one poll finds nothing to do). Staged
        // frames wait for the device.
        const unsigned open = ps.nonempty & ~unsigned(ps.paused.load(std::memory_order_relaxed));
        if (!open || ps.staged_n) continue;
        uint64_t at = ps.shaper.ready() ? 0 : ps.shaper.ready_at_ns();
        uint32_t smallest = UINT32_MAX;
        for (unsigned qi = 0; qi < kNumQueues; qi++)
            if (open >> qi & 1) {
                const TrafficManager::Queue &q = ps.q[qi];
                const uint32_t l = q.slots[q.head & q.mask].len;
                smallest = std::min(smallest, (l < min_frame ? min_frame : l) + overhead);
            }
        if (!ps.ring.fits(smallest)) at = std::max(at, ps.ring.fits_at_ns(smallest));
        if (at > now_ns) t = std::min(t, at);
    }
    return t;
}

uint32_t QosEgress::backlog() const {
    uint32_t n = 0;
    for (uint16_t p : owned_) {
        const TrafficManager::Port &ps = *tm_.ports_[p];
        for (auto &q : ps.q) n += q.size();
        n += ps.staged_n;
        if (ps.handoff) n += rte_ring_count(ps.handoff);
    }
    return n;
}

void QosEgress::discard_all(DropReason reason) {
    for (uint16_t port : owned_) {
        TrafficManager::Port &ps = *tm_.ports_[port];
        ps.idle_still = false;
        if (ps.ct_pending) {
            release_cut_through(ps);
            if (ps.ct_mixed_held) release_mixed(ps);
        }
        uint64_t dropped = 0;
        if (ps.handoff) {
            rte_mbuf *in[kHandoffBurst];
            unsigned k;
            while ((k = rte_ring_sc_dequeue_burst(ps.handoff, reinterpret_cast<void **>(in),
                                                  kHandoffBurst, nullptr)) > 0) {
                rte_pktmbuf_free_bulk(in, k);
                dropped += k;
            }
        }
        if (ps.staged_n) {
            rte_pktmbuf_free_bulk(&ps.staged[ps.staged_head], ps.staged_n);
            dropped += ps.staged_n;
            ps.staged_n = ps.staged_head = 0;
            tm_.stats_[port]->staged_packets.set(0);
        }
        if (dropped) ctr_.ports[port].drops[size_t(reason)].add(dropped);
        for (unsigned qi = 0; qi < kNumQueues; qi++)
            flush_queue(port, qi, QueueDrop::discarded, reason);
    }
}

}  // namespace rocesw
