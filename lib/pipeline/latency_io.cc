#include "pipeline/latency_io.h"

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "pkt/mbuf_meta.h"

namespace rocesw {

namespace {
constexpr uint64_t kNoStamp = ~0ull;
}

LatencyPortIo::LatencyPortIo(PortIo &inner, LatencyHist &hist, Clock clock, void *clock_ctx)
    : inner_(inner), hist_(hist), clock_(clock), clock_ctx_(clock_ctx) {
    static const rte_mbuf_dynfield field = {"rocesw_dynfield_rx_tsc", sizeof(uint64_t),
                                            alignof(uint64_t), 0};
    static const rte_mbuf_dynflag flag = {"rocesw_dynflag_rx_tsc", 0};
    offset_ = rte_mbuf_dynfield_register(&field);
    if (offset_ < 0)
        throw std::runtime_error("latency: cannot register the mbuf dynfield (" +
                                 std::string(rte_strerror(rte_errno)) + ")");
    int bit = rte_mbuf_dynflag_register(&flag);
    if (bit < 0)
        throw std::runtime_error("latency: cannot register the mbuf dynflag (" +
                                 std::string(rte_strerror(rte_errno)) + ")");
    flag_ = 1ull << bit;
}

inline uint64_t LatencyPortIo::now() const {
    return clock_ ? clock_(clock_ctx_) : rte_rdtsc();
}

uint16_t LatencyPortIo::rx_burst(uint16_t port, uint16_t queue, rte_mbuf **pkts, uint16_t n) {
    const uint16_t got = inner_.rx_burst(port, queue, pkts, n);
    if (!got) return 0;
    const uint64_t t = now();
    for (uint16_t i = 0; i < got; i++) {
        *RTE_MBUF_DYNFIELD(pkts[i], offset_, uint64_t *) = t;
        pkts[i]->ol_flags |= flag_;
    }
    return got;
}

uint16_t LatencyPortIo::tx_burst(uint16_t port, uint16_t queue, rte_mbuf **pkts, uint16_t n) {
    // Read what we need before the device owns the mbufs; clear the flag so that nothing
    // counts twice (re-armed below for what the device leaves us).
    uint64_t delta[kMaxTxBurst];
    uint8_t cls[kMaxTxBurst];
    uint16_t done = 0, total = 0;
    while (done < n) {
        const uint16_t k = uint16_t(std::min<unsigned>(n - done, kMaxTxBurst));
        rte_mbuf **p = pkts + done;
        const uint64_t t = now();
        for (uint16_t i = 0; i < k; i++) {
            rte_mbuf *m = p[i];
            if (m->ol_flags & flag_) {
                const uint64_t rx = *RTE_MBUF_DYNFIELD(m, offset_, uint64_t *);
                delta[i] = t >= rx ? t - rx : 0;
                cls[i] = meta_of(m)->tc;
                m->ol_flags &= ~flag_;
            } else {
                delta[i] = kNoStamp;
            }
        }
        const uint16_t sent = inner_.tx_burst(port, queue, p, k);
        for (uint16_t i = 0; i < sent; i++)
            if (delta[i] != kNoStamp) hist_.record(cls[i], delta[i]);
        for (uint16_t i = sent; i < k; i++)
            if (delta[i] != kNoStamp) p[i]->ol_flags |= flag_;
        total = uint16_t(total + sent);
        done = uint16_t(done + k);
        if (sent < k) break;
    }
    return total;
}

uint64_t LatencyPortIo::stamp_of(const rte_mbuf *m) const {
    if (!(m->ol_flags & flag_)) return kNoStamp;
    return *RTE_MBUF_DYNFIELD(m, offset_, const uint64_t *);
}

}  // namespace rocesw
