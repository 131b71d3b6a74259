#include "test_ports.h"

#include <cstring>
#include <stdexcept>

#include "pkt/mbuf_meta.h"

namespace rocesw::test {

TestPorts::TestPorts(const std::string &name, uint16_t n_ports, uint32_t n_mbufs)
    : tx_budget_(n_ports, UINT32_MAX) {
    // Packed as roceswd packs it for copying ports without hugepages (lib/pkt/mbuf_meta.h).
    pool_ = create_mbuf_pool(name + "_pool", n_mbufs, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY,
                             true);
    if (!pool_) throw std::runtime_error("test pool");
    for (uint16_t p = 0; p < n_ports; p++) {
        std::string r = name + "_rx" + std::to_string(p), t = name + "_tx" + std::to_string(p);
        rx_.push_back(
            rte_ring_create(r.c_str(), 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ));
        tx_.push_back(
            rte_ring_create(t.c_str(), 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ));
    }
}

TestPorts::~TestPorts() {
    for (auto *r : rx_) {
        rte_mbuf *m;
        while (rte_ring_dequeue(r, reinterpret_cast<void **>(&m)) == 0) rte_pktmbuf_free(m);
        rte_ring_free(r);
    }
    for (auto *r : tx_) {
        rte_mbuf *m;
        while (rte_ring_dequeue(r, reinterpret_cast<void **>(&m)) == 0) rte_pktmbuf_free(m);
        rte_ring_free(r);
    }
    rte_mempool_free(pool_);
}

uint16_t TestPorts::rx_burst(uint16_t port, uint16_t, rte_mbuf **pkts, uint16_t n) {
    return uint16_t(rte_ring_dequeue_burst(rx_[port], reinterpret_cast<void **>(pkts), n, nullptr));
}

uint16_t TestPorts::tx_burst(uint16_t port, uint16_t, rte_mbuf **pkts, uint16_t n) {
    uint32_t allowed = std::min<uint32_t>(n, tx_budget_[port]);
    uint16_t sent = uint16_t(
        rte_ring_enqueue_burst(tx_[port], reinterpret_cast<void **>(pkts), allowed, nullptr));
    if (tx_budget_[port] != UINT32_MAX) tx_budget_[port] -= sent;
    return sent;
}

void TestPorts::inject(uint16_t port, const Frame &f) {
    rte_mbuf *m = rte_pktmbuf_alloc(pool_);
    if (!m) throw std::runtime_error("test pool empty");
    char *d = rte_pktmbuf_append(m, uint16_t(f.size()));
    std::memcpy(d, f.data(), f.size());
    if (rte_ring_enqueue(rx_[port], m) != 0) {
        rte_pktmbuf_free(m);
        throw std::runtime_error("rx ring full");
    }
}

void TestPorts::inject_two_segments(uint16_t port, const Frame &f, size_t first) {
    if (first == 0 || first >= f.size()) throw std::runtime_error("not two segments");
    rte_mbuf *m = rte_pktmbuf_alloc(pool_);
    rte_mbuf *t = m ? rte_pktmbuf_alloc(pool_) : nullptr;
    if (!t) {
        rte_pktmbuf_free(m);
        throw std::runtime_error("test pool empty");
    }
    std::memcpy(rte_pktmbuf_append(m, uint16_t(first)), f.data(), first);
    std::memcpy(rte_pktmbuf_append(t, uint16_t(f.size() - first)), f.data() + first,
                f.size() - first);
    if (rte_pktmbuf_chain(m, t) != 0 || rte_ring_enqueue(rx_[port], m) != 0) {
        rte_pktmbuf_free(m);
        throw std::runtime_error("rx ring full");
    }
}

std::vector<Frame> TestPorts::take_tx(uint16_t port) {
    std::vector<Frame> out;
    rte_mbuf *m;
    while (rte_ring_dequeue(tx_[port], reinterpret_cast<void **>(&m)) == 0) {
        const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
        out.emplace_back(d, d + rte_pktmbuf_data_len(m));
        rte_pktmbuf_free(m);
    }
    return out;
}

unsigned TestPorts::mbufs_in_use() const {
    return rte_mempool_in_use_count(pool_);
}

}  // namespace rocesw::test
