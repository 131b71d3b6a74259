#include "qos/pfc_engine.h"

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>

namespace rocesw {

PfcEngine::PfcEngine(const QosPlan &plan) : plan_(plan) {
    for (const PortQosPlan &pp : plan_.ports) {
        auto port = std::make_unique<Port>();
        // Priority p (= TC p) pauses queue tc_to_queue[p] when p is lossless here.
        for (unsigned pr = 0; pr < kNumPriorities; pr++)
            if (pp.cls.pfc_enable >> pr & 1)
                port->prio_queue[pr] = uint8_t(1u << pp.cls.tc_to_queue[pr]);
        for (unsigned g = 0; g < kNumPg; g++) {
            if (pp.pgs[g].priorities) port->lossless_pgs = uint8_t(port->lossless_pgs | 1u << g);
            port->pg_key[g] = uint16_t(PgAccounting::key(ports_.size(), g));
            port->dyn_pool[g] = int16_t(pp.pgs[g].dynamic ? pp.pgs[g].pool : -1);
        }
        port->pause_ns = pause_quanta_to_ns(pp.pfc_quanta, pp.rate_bps);
        if (pp.wd.enabled) {
            port->wd_queues = pp.lossless_queues();
            for (auto &w : port->wd) w = PfcWatchdog(pp.wd.detection_ns, pp.wd.restoration_ns);
        }
        ports_.push_back(std::move(port));
        stats_.push_back(std::make_unique<PfcPortStats>());
    }
}

void PfcEngine::set_source(rte_mempool *pool, std::vector<std::array<uint8_t, 6>> macs) {
    pool_ = pool;
    macs_ = std::move(macs);
    macs_.resize(plan_.ports.size());
}

PfcEngine::MacControlResult PfcEngine::receive_mac_control(uint16_t port, const uint8_t *f,
                                                           uint32_t len, uint64_t now_ns,
                                                           TraceRing *trace) {
    PfcPortStats &st = *stats_[port];
    MacControlFrame fr;
    MacControlError e = parse_mac_control(f, len, &fr);
    const PortQosPlan &pp = plan_.ports[port];
    Port &ps = *ports_[port];
    // MAC-control frames of one port normally arrive on one RX queue (they carry no IP, so RSS
    // sends them to queue 0); the lock keeps the clocks and counters exact if they do not.
    rte_spinlock_lock(&ps.rx_lock);
    if (e != MacControlError::none) {
        st.rx_malformed[size_t(e)].inc();
        rte_spinlock_unlock(&ps.rx_lock);
        return MacControlResult::malformed;
    }
    MacControlResult r = MacControlResult::consumed;
    if (!fr.pfc) {
        if (pp.honor_pause) {
            st.rx_global_pause.inc();
            const uint64_t t = pause_quanta_to_ns(fr.quanta[0], pp.rate_bps);
            st.rx_global_clock.set(now_ns, t);
            if (now_ns + t > ps.any_until.load(std::memory_order_relaxed))
                ps.any_until.store(now_ns + t, std::memory_order_release);
        } else {
            st.rx_global_ignored.inc();
            r = MacControlResult::ignored;
        }
    } else {
        const uint8_t lossless = fr.enable & pp.cls.pfc_enable;
        for (unsigned pr = 0; pr < kNumPriorities; pr++) {
            if (!(fr.enable >> pr & 1)) continue;
            if (!(lossless >> pr & 1)) {
                st.rx_ignored[pr].inc();
                continue;
            }
            const uint64_t t = pause_quanta_to_ns(fr.quanta[pr], pp.rate_bps);
            if (t) {
                st.rx_pause[pr].inc();
                st.last_rx_pause_ns[pr].store(now_ns, std::memory_order_relaxed);
            } else {
                st.rx_xon[pr].inc();
            }
            st.rx_clock[pr].set(now_ns, t);
            if (trace)
                trace->push({now_ns, fr.quanta[pr], port, uint16_t(pr),
                             t ? TraceKind::pfc_xoff_received : TraceKind::pfc_xon_received});
            if (now_ns + t > ps.any_until.load(std::memory_order_relaxed))
                ps.any_until.store(now_ns + t, std::memory_order_release);
        }
        if (!lossless && fr.enable) r = MacControlResult::ignored;
    }
    rte_spinlock_unlock(&ps.rx_lock);
    return r;
}

rte_mbuf *PfcEngine::build_frame(uint16_t port) {
    Port &ps = *ports_[port];
    PfcPortStats &st = *stats_[port];
    rte_mbuf *m = pool_ ? rte_pktmbuf_alloc(pool_) : nullptr;
    if (!m) {
        st.tx_failed.inc();
        return nullptr;
    }
    std::array<uint16_t, kNumPriorities> quanta{};
    for (unsigned pr = 0; pr < kNumPriorities; pr++)
        if (ps.pending_xoff >> pr & 1) quanta[pr] = plan_.ports[port].pfc_quanta;
    uint8_t *buf = reinterpret_cast<uint8_t *>(rte_pktmbuf_append(m, kMacControlFrameLen));
    if (!buf) {
        rte_pktmbuf_free(m);
        st.tx_failed.inc();
        return nullptr;
    }
    build_pfc_frame(buf, macs_[port], uint8_t(ps.pending_xoff | ps.pending_xon), quanta);
    return m;
}

void PfcEngine::frame_refused(uint16_t port, rte_mbuf *m) {
    rte_pktmbuf_free(m);
    stats_[port]->tx_failed.inc();
}

void PfcEngine::frame_sent(uint16_t port, uint64_t now_ns, TraceRing *trace) {
    Port &ps = *ports_[port];
    PfcPortStats &st = *stats_[port];
    const uint16_t quanta = plan_.ports[port].pfc_quanta;
    st.tx_frames.inc();
    for (unsigned pr = 0; pr < kNumPriorities; pr++) {
        if (ps.pending_xoff >> pr & 1) {
            st.tx_pause[pr].inc();
            st.tx_clock[pr].set(now_ns, ps.pause_ns);
            if (trace) trace->push({now_ns, quanta, port, uint16_t(pr), TraceKind::pfc_xoff_sent});
        } else if (ps.pending_xon >> pr & 1) {
            st.tx_xon[pr].inc();
            st.tx_clock[pr].set(now_ns, 0);
            if (trace) trace->push({now_ns, 0, port, uint16_t(pr), TraceKind::pfc_xon_sent});
        }
    }
    ps.pending_xoff = ps.pending_xon = 0;
}

PfcPortView PfcEngine::snapshot(uint16_t port, uint64_t now_ns) const {
    const PortQosPlan &pp = plan_.ports[port];
    const PfcPortStats &st = *stats_[port];
    PfcPortView v;
    v.pfc_enable = pp.cls.pfc_enable;
    v.pause_quanta = pp.pfc_quanta;
    v.honor_pause = pp.honor_pause;
    v.rx_global_pause = st.rx_global_pause.load();
    v.rx_global_ignored = st.rx_global_ignored.load();
    for (size_t e = 0; e < kMacControlErrorCount; e++)
        v.rx_malformed[e] = st.rx_malformed[e].load();
    v.tx_failed = st.tx_failed.load();
    v.tx_frames = st.tx_frames.load();
    v.paused_queues = uint8_t(st.paused_queues.load());
    for (unsigned p = 0; p < kNumPriorities; p++) {
        PfcPortView::Priority &o = v.priorities[p];
        o.lossless = pp.cls.pfc_enable >> p & 1;
        o.rx_pause = st.rx_pause[p].load();
        o.rx_xon = st.rx_xon[p].load();
        o.rx_ignored = st.rx_ignored[p].load();
        o.rx_paused_now = st.rx_clock[p].active(now_ns);
        o.rx_pause_ns = st.rx_clock[p].total_ns(now_ns);
        o.tx_pause = st.tx_pause[p].load();
        o.tx_xon = st.tx_xon[p].load();
        o.tx_pausing_now = st.tx_clock[p].active(now_ns);
        o.tx_pause_ns = st.tx_clock[p].total_ns(now_ns);
    }
    for (unsigned g = 0; g < kNumPg; g++) {
        const PgPlan &pg = pp.pgs[g];
        PfcPortView::Pg &o = v.pgs[g];
        o.priorities = pg.priorities;
        o.automatic = pg.automatic;
        o.xoff_threshold_bytes = st.pg_threshold[g].load();
        o.headroom_bytes = pg.headroom_bytes;
        o.headroom_needed_bytes = pg.headroom_needed;
        o.headroom_used_bytes = st.pg_headroom_used[g].load();
        o.headroom_watermark_bytes = st.pg_headroom_watermark[g].load();
        o.xoff = st.pg_xoff[g].load() != 0;
    }
    v.wd = pp.wd;
    const uint8_t lossless_queues = pp.lossless_queues();
    const uint64_t stormed = st.wd_stormed.load();
    for (unsigned q = 0; q < kNumQueues; q++) {
        PfcPortView::WdQueue &o = v.wd_queues[q];
        o.watched = pp.wd.enabled && (lossless_queues >> q & 1);
        o.stormed = (stormed >> q & 1) != 0;
        o.storms = st.wd_storms[q].load();
        o.restores = st.wd_restores[q].load();
    }
    return v;
}

uint64_t PfcEngine::next_event_ns(uint16_t port, uint64_t now_ns, uint8_t backlog) const {
    const Port &ps = *ports_[port];
    const PfcPortStats &st = *stats_[port];
    uint64_t t = UINT64_MAX;
    const auto later = [&](uint64_t x) {
        if (x > now_ns && x < t) t = x;
    };
    if (backlog) {
        if (st.rx_global_clock.active(now_ns)) later(st.rx_global_clock.until());
        for (unsigned pr = 0; pr < kNumPriorities; pr++)
            if ((ps.prio_queue[pr] & backlog) && st.rx_clock[pr].active(now_ns))
                later(st.rx_clock[pr].until());
    }
    // Pending frames (refused by the device) go when the device takes them: its to announce.
    for (unsigned left = ps.xoff; left; left &= left - 1)
        later(ps.last_sent[unsigned(__builtin_ctz(left))] + ps.pause_ns / 2);
    for (unsigned qi = 0; qi < kNumQueues; qi++) {
        if (!(ps.wd_queues >> qi & 1)) continue;
        uint64_t last_rx = 0;
        for (unsigned pr = 0; pr < kNumPriorities; pr++)
            if (ps.prio_queue[pr] == (1u << qi))
                last_rx = std::max(last_rx, st.last_rx_pause_ns[pr].load(std::memory_order_relaxed));
        later(ps.wd[qi].deadline(last_rx));
    }
    return t;
}

}  // namespace rocesw
