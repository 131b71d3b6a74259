#include "pipeline/punt.h"

#include <rte_mbuf.h>

#include "pkt/meta.h"

namespace rocesw {

Punt::Punt(const ControlPlaneConfig &cfg, uint16_t n_workers) : queue_cap_(cfg.punt_queue) {
    for (size_t c = 0; c < kPuntClassCount; c++) {
        pps_[c] = cfg.punt_pps[c];
        // Depth: punt_burst_ms of the rate, at least one packet.
        uint64_t b = uint64_t(pps_[c]) * cfg.punt_burst_ms / 1000;
        burst_[c] = uint32_t(b < 1 ? 1 : b);
        policers_[c].configure(pps_[c], burst_[c]);
    }
    for (uint16_t w = 0; w < n_workers; w++) queues_.push_back(std::make_unique<Queue>(queue_cap_));
}

Punt::~Punt() {
    rte_mbuf *m;
    for (auto &q : queues_)
        while (q->pop(m)) rte_pktmbuf_free(m);
}

bool Punt::offer(uint16_t worker, PuntClass c, rte_mbuf *m, uint64_t now_ns, DropReason *why) {
    PuntClassStats &st = stats_[size_t(c)];
    if (!policers_[size_t(c)].admit(now_ns)) {
        st.policed.fetch_add(1, std::memory_order_relaxed);
        *why = DropReason::punt_policed;
        return false;
    }
    if (!queues_[worker]->push(m)) {
        st.queue_full.fetch_add(1, std::memory_order_relaxed);
        *why = DropReason::punt_queue_full;
        return false;
    }
    st.punted.fetch_add(1, std::memory_order_relaxed);
    return true;
}

size_t Punt::take(uint16_t worker, rte_mbuf **out, size_t max) {
    return queues_[worker]->pop(out, max);
}

static constexpr uint8_t kIcmp = 1, kIcmp6 = 58, kTcp = 6, kUdp = 17;

bool is_neighbour_discovery(const uint8_t *f, uint32_t len, const PacketMeta &m) {
    if (m.l3 != L3Type::ipv6 || m.ip_proto != kIcmp6 || m.ttl != 255) return false;
    const uint32_t off = m.l3_offset + 40u;
    if (off >= len) return false;
    return f[off] >= 133 && f[off] <= 137;
}

PuntClass punt_class_local(const uint8_t *f, uint32_t len, const PacketMeta &m) {
    if (m.ip_proto == kIcmp && m.l3 == L3Type::ipv4) return PuntClass::icmp;
    if (m.ip_proto == kIcmp6 && m.l3 == L3Type::ipv6)
        return is_neighbour_discovery(f, len, m) ? PuntClass::nd : PuntClass::icmp;
    if (m.ip_proto == kTcp && (m.flags & kFlagL4) && (m.dst_port == 179 || m.src_port == 179))
        return PuntClass::bgp;
    if ((m.ip_proto == kTcp || m.ip_proto == kUdp) && (m.flags & kFlagL4)) return PuntClass::l4;
    return PuntClass::other;
}

}  // namespace rocesw
