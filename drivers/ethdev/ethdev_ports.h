// Ports backed by rte_ethdev: any PMD (mlx5, AF_XDP, tap, memif, pcap, ring, null...).
// Creates the mbuf pool (with the PacketMeta private area), configures one RX queue per worker
// where the device allows it and one TX queue per worker (sharing with a lock per burst where it
// does not), sets MTU, MAC and promiscuous mode, starts the ports and follows link state.
#pragma once

#include <rte_ethdev.h>
#include <rte_spinlock.h>

#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "port/port_io.h"

struct rte_mempool;

namespace rocesw {

struct EthPort {
    std::string name;      // config name
    std::string device;    // config device string
    uint16_t port_id = 0;  // DPDK port id
    uint16_t n_rxq = 1, n_txq = 1;
    bool txq_shared = false;  // fewer TX queues than workers: TX takes a lock per burst
    rte_eth_link link{};      // last seen
    uint64_t link_changes = 0;
    std::string driver;
    // How PFC/PAUSE frames reach the switch (doc/pfc.md): "software (flow control off, MAC
    // control forwarded)" when the device took that setting, else why not.
    std::string pfc_mode;
    // net_tap only: times rearm_tap_rx() woke the receive side after an mbuf shortage.
    uint64_t tap_rx_rearms = 0;
    uint64_t rx_nombuf_seen = 0;  // rx_nombuf at the last rearm_tap_rx()
};

class EthdevPorts final : public PortIo {
  public:
    // Throws std::runtime_error naming the port and what failed.
    EthdevPorts(const Config &cfg, uint16_t n_workers);
    ~EthdevPorts() override;

    uint16_t rx_burst(uint16_t port, uint16_t queue, rte_mbuf **pkts, uint16_t n) override;
    uint16_t tx_burst(uint16_t port, uint16_t queue, rte_mbuf **pkts, uint16_t n) override;

    // RX queues worker `w` owns: queue q of every port goes to worker q % n_workers.
    std::vector<RxAssignment> rx_assignment(uint16_t worker) const;
    // The TX queue worker `w` uses on each port.
    uint16_t tx_queue_for(uint16_t worker) const { return worker; }

    // Control thread: refresh link state; returns the indexes of ports whose state changed.
    std::vector<size_t> poll_links();
    // Control thread, periodically: DPDK 22.11's net_tap reads its queue only after a signal
    // the kernel raises when it queues a frame (a real-time signal, tap_trigger_cb). A burst cut
    // short by an mbuf allocation failure marks the signal seen, and once the kernel queue is
    // full no frame is queued, so none comes: the port never receives again. When a net_tap
    // port's rx_nombuf rose since the last call, this raises the PMD's signal once (to this
    // process), which makes the next burst read. Returns the ports re-armed; logs the first
    // time per port.
    size_t rearm_tap_rx();
    const std::vector<EthPort> &ports() const { return ports_; }
    rte_mempool *pool() const { return pool_; }
    void stop();

  private:
    static std::string setup_pfc_mode(uint16_t port_id);
    std::vector<EthPort> ports_;
    std::vector<int> tap_signals_;  // real-time signals with a handler (net_tap's), if any tap
    std::vector<std::unique_ptr<rte_spinlock_t[]>> tx_locks_;
    rte_mempool *pool_ = nullptr;
    uint16_t n_workers_;
    bool stopped_ = false;
};

}  // namespace rocesw
