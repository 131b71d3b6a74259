#include "qos/classifier.h"

#include "pkt/mbuf_meta.h"

namespace rocesw {

void classify_burst(PacketMeta *const *metas, uint16_t n, const PortQos &q) {
    for (uint16_t i = 0; i < n; i++) metas[i]->tc = classify_tc(*metas[i], q);
}

void classify_mbufs(rte_mbuf *const *pkts, uint16_t n, const PortQos &q) {
    for (uint16_t i = 0; i < n; i++) {
        PacketMeta *m = meta_of(pkts[i]);
        m->tc = classify_tc(*m, q);
    }
}

}  // namespace rocesw
