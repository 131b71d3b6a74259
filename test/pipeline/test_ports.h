// In-memory ports for pipeline tests: each port is an RX ring the test fills and a TX ring the
// test drains; a TX ring can be made "full" to exercise back-pressure. Frames go in and come
// out as byte vectors so that tests compare exact bytes.
#pragma once

#include <rte_mbuf.h>
#include <rte_ring.h>

#include <cstdint>
#include <string>
#include <vector>

#include "port/port_io.h"

namespace rocesw::test {

using Frame = std::vector<uint8_t>;

class TestPorts final : public PortIo {
  public:
    TestPorts(const std::string &name, uint16_t n_ports, uint32_t n_mbufs = 4096);
    ~TestPorts() override;

    uint16_t rx_burst(uint16_t port, uint16_t queue, rte_mbuf **pkts, uint16_t n) override;
    uint16_t tx_burst(uint16_t port, uint16_t queue, rte_mbuf **pkts, uint16_t n) override;

    void inject(uint16_t port, const Frame &f);
    // `f` as two chained segments, its first `first` bytes and the rest (a NIC's scattered RX).
    void inject_two_segments(uint16_t port, const Frame &f, size_t first);
    std::vector<Frame> take_tx(uint16_t port);
    // Limits how many packets port `port` accepts in total from now on (UINT32_MAX: no limit).
    void set_tx_budget(uint16_t port, uint32_t budget) { tx_budget_[port] = budget; }
    rte_mempool *pool() const { return pool_; }
    unsigned mbufs_in_use() const;

  private:
    rte_mempool *pool_;
    std::vector<rte_ring *> rx_, tx_;
    std::vector<uint32_t> tx_budget_;
};

}  // namespace rocesw::test
