#include "ethdev/ethdev_ports.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <spdlog/spdlog.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "ethdev/eal_args.h"
#include "pkt/mbuf_meta.h"

namespace rocesw {

namespace {

[[noreturn]] void fail(const PortConfig &p, const std::string &what, int rc) {
    throw std::runtime_error("port " + p.name + " (" + p.device + "): " + what + ": " +
                             rte_strerror(rc < 0 ? -rc : rc));
}

}  // namespace

EthdevPorts::EthdevPorts(const Config &cfg, uint16_t n_workers) : n_workers_(n_workers) {
    uint32_t max_mtu = 0;
    for (const auto &p : cfg.ports) max_mtu = std::max(max_mtu, p.mtu);
    // Room for the largest frame (MTU + Ethernet + one VLAN tag + FCS) in one segment.
    uint32_t room =
        std::max<uint32_t>(RTE_MBUF_DEFAULT_BUF_SIZE, max_mtu + 14 + 4 + 4 + RTE_PKTMBUF_HEADROOM);
    const bool packed = mbuf_pool_packs(cfg, rte_eal_has_hugepages() != 0);
    pool_ = create_mbuf_pool("rocesw_" + cfg.sw.name, cfg.sw.mbufs, 256, uint16_t(room),
                             SOCKET_ID_ANY, packed);
    if (!pool_)
        throw std::runtime_error("cannot create mbuf pool of " + std::to_string(cfg.sw.mbufs) +
                                 " mbufs: " + rte_strerror(rte_errno) +
                                 " (lower switch.mbufs or raise switch.memory_mb)");
    spdlog::info("mbuf pool: {} mbufs of {} B data room, {}", cfg.sw.mbufs, room,
                 rte_eal_has_hugepages() ? "on hugepages"
                 : packed ? "packed (every port copies frames)"
                          : "one per page where smaller (a port DMAs into the pool or maps it)");

    // net_tap installs a handler on a free real-time signal when it creates a TAP (at probe,
    // before this); roceswd installs none there. See rearm_tap_rx().
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) {
        struct sigaction sa{};
        if (::sigaction(sig, nullptr, &sa) == 0 && sa.sa_handler != SIG_DFL &&
            sa.sa_handler != SIG_IGN)
            tap_signals_.push_back(sig);
    }

    for (const auto &pc : cfg.ports) {
        EthPort p;
        p.name = pc.name;
        p.device = pc.device;
        std::string dev = ethdev_name(pc.device);
        int rc = rte_eth_dev_get_port_by_name(dev.c_str(), &p.port_id);
        if (rc != 0)
            fail(pc,
                 "no ethdev named '" + dev + "' after probing (driver missing or device not found)",
                 rc);

        rte_eth_dev_info info{};
        if ((rc = rte_eth_dev_info_get(p.port_id, &info)) != 0) fail(pc, "dev_info_get", rc);
        p.driver = info.driver_name ? info.driver_name : "";
        // One RX queue per worker (RSS spreads flows over them), except on AF_XDP ports: there
        // the kernel picks the queue (the NIC's RSS, veth's sender queue) and the XDP program
        // redirects a frame only to the socket of the queue it arrived on, so every one of the
        // port's queue_count queues needs its socket; workers take them round-robin
        // (rx_assignment). Fewer sockets would pass the other queues' frames to the kernel.
        uint16_t want_rxq = pc.af_xdp ? uint16_t(pc.af_xdp->queue_count) : n_workers;
        p.n_rxq =
            uint16_t(std::max<uint16_t>(1, std::min<uint16_t>(want_rxq, info.max_rx_queues)));
        if (pc.af_xdp && p.n_rxq < want_rxq)
            spdlog::warn("port {}: driver {} offers {} RX queues, queue_count is {}", pc.name,
                         p.driver, info.max_rx_queues, want_rxq);
        p.n_txq =
            uint16_t(std::max<uint16_t>(1, std::min<uint16_t>(n_workers, info.max_tx_queues)));
        p.txq_shared = p.n_txq < n_workers;

        rte_eth_conf conf{};
        if (p.n_rxq > 1) {
            conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
            conf.rx_adv_conf.rss_conf.rss_hf =
                info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP);
        }
        if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
            conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
        rc = rte_eth_dev_configure(p.port_id, p.n_rxq, p.n_txq, &conf);
        if (rc != 0 && p.n_rxq > 1) {
            spdlog::warn("port {}: RSS over {} queues refused ({}); using one RX queue", pc.name,
                         p.n_rxq, rte_strerror(-rc));
            p.n_rxq = 1;
            conf.rxmode.mq_mode = RTE_ETH_MQ_RX_NONE;
            conf.rx_adv_conf.rss_conf.rss_hf = 0;
            rc = rte_eth_dev_configure(p.port_id, p.n_rxq, p.n_txq, &conf);
        }
        if (rc != 0) fail(pc, "configure", rc);

        uint16_t nb_rxd = uint16_t(pc.rx_desc), nb_txd = uint16_t(pc.tx_desc);
        if ((rc = rte_eth_dev_adjust_nb_rx_tx_desc(p.port_id, &nb_rxd, &nb_txd)) != 0)
            fail(pc, "adjust descriptors", rc);
        for (uint16_t q = 0; q < p.n_rxq; q++)
            if ((rc = rte_eth_rx_queue_setup(p.port_id, q, nb_rxd, rte_eth_dev_socket_id(p.port_id),
                                             nullptr, pool_)) != 0) {
                // Most PMDs fill an RX ring with mbufs at setup: a pool too small for the
                // rings fails here, with an errno that does not say which memory.
                if (rc == -ENOMEM)
                    fail(pc,
                         "rx queue " + std::to_string(q) + " setup (" + std::to_string(nb_rxd) +
                             " descriptors; " + std::to_string(rte_mempool_avail_count(pool_)) +
                             " of switch.mbufs " + std::to_string(cfg.sw.mbufs) +
                             " left: the RX rings set up so far hold theirs; raise switch.mbufs "
                             "or lower ports[].rx_desc)",
                         rc);
                fail(pc, "rx queue " + std::to_string(q) + " setup", rc);
            }
        for (uint16_t q = 0; q < p.n_txq; q++)
            if ((rc = rte_eth_tx_queue_setup(p.port_id, q, nb_txd, rte_eth_dev_socket_id(p.port_id),
                                             nullptr)) != 0)
                fail(pc, "tx queue " + std::to_string(q) + " setup", rc);

        // Virtual PMDs often cannot set MTU or MAC; the pipeline enforces the configured MTU
        // and writes the configured MAC itself, so these are warnings, not failures.
        if ((rc = rte_eth_dev_set_mtu(p.port_id, uint16_t(pc.mtu))) != 0)
            spdlog::warn("port {}: device MTU {} not set ({}); MTU enforced in software", pc.name,
                         pc.mtu, rte_strerror(-rc));
        rte_ether_addr mac;
        std::copy(pc.mac.b.begin(), pc.mac.b.end(), mac.addr_bytes);
        if ((rc = rte_eth_dev_default_mac_addr_set(p.port_id, &mac)) != 0)
            spdlog::info("port {}: device MAC not set ({}); running promiscuous", pc.name,
                         rte_strerror(-rc));
        if ((rc = rte_eth_dev_start(p.port_id)) != 0) fail(pc, "start", rc);
        if ((rc = rte_eth_promiscuous_enable(p.port_id)) != 0 && rc != -ENOTSUP)
            spdlog::warn("port {}: promiscuous mode: {}", pc.name, rte_strerror(-rc));
        p.pfc_mode = setup_pfc_mode(p.port_id);
        spdlog::info("port {}: PFC mode: {}", pc.name, p.pfc_mode);
        rte_eth_link_get_nowait(p.port_id, &p.link);
        spdlog::info("port {}: {} (port id {}, driver {}), {} rx / {} tx queues{}, link {} {} Mb/s",
                     pc.name, pc.device, p.port_id, p.driver, p.n_rxq, p.n_txq,
                     p.txq_shared ? " (shared by workers)" : "", p.link.link_status ? "up" : "down",
                     p.link.link_speed);

        auto locks = std::make_unique<rte_spinlock_t[]>(p.n_txq);
        for (uint16_t q = 0; q < p.n_txq; q++) rte_spinlock_init(&locks[q]);
        tx_locks_.push_back(std::move(locks));
        ports_.push_back(std::move(p));
    }
}

// PFC is generated and honored in software: the device must not act on PAUSE/PFC frames itself
// and must hand them to us. Where the device has a flow-control API: link flow control off and
// MAC-control frame forwarding on. Returns what the port runs with.
std::string EthdevPorts::setup_pfc_mode(uint16_t port_id) {
    rte_eth_fc_conf fc{};
    int rc = rte_eth_dev_flow_ctrl_get(port_id, &fc);
    if (rc == -ENOTSUP)
        return "software (device has no flow-control API; MAC-control frames arrive as the "
               "device delivers them)";
    if (rc != 0) return std::string("software (flow-control query failed: ") + rte_strerror(-rc) + ")";
    fc.mode = RTE_ETH_FC_NONE;
    fc.mac_ctrl_frame_fwd = 1;
    rc = rte_eth_dev_flow_ctrl_set(port_id, &fc);
    if (rc == 0) return "software (device flow control off, MAC-control frames forwarded)";
    // Some devices refuse forwarding but accept flow control off: try that alone.
    fc.mac_ctrl_frame_fwd = 0;
    if (rte_eth_dev_flow_ctrl_set(port_id, &fc) == 0)
        return "software, degraded (device flow control off, but it does not forward MAC-control "
               "frames: received PFC is not seen)";
    return std::string("software, degraded (cannot turn device flow control off: ") +
           rte_strerror(-rc) + ")";
}

EthdevPorts::~EthdevPorts() {
    stop();
    for (auto &p : ports_) rte_eth_dev_close(p.port_id);
    if (pool_) rte_mempool_free(pool_);
}

void EthdevPorts::stop() {
    if (stopped_) return;
    stopped_ = true;
    for (auto &p : ports_) rte_eth_dev_stop(p.port_id);
}

uint16_t EthdevPorts::rx_burst(uint16_t port, uint16_t queue, rte_mbuf **pkts, uint16_t n) {
    return rte_eth_rx_burst(ports_[port].port_id, queue, pkts, n);
}

uint16_t EthdevPorts::tx_burst(uint16_t port, uint16_t queue, rte_mbuf **pkts, uint16_t n) {
    EthPort &p = ports_[port];
    if (!p.txq_shared) return rte_eth_tx_burst(p.port_id, queue, pkts, n);
    uint16_t q = queue % p.n_txq;
    rte_spinlock_lock(&tx_locks_[port][q]);
    uint16_t sent = rte_eth_tx_burst(p.port_id, q, pkts, n);
    rte_spinlock_unlock(&tx_locks_[port][q]);
    return sent;
}

std::vector<RxAssignment> EthdevPorts::rx_assignment(uint16_t worker) const {
    std::vector<RxAssignment> out;
    for (uint16_t i = 0; i < ports_.size(); i++)
        for (uint16_t q = 0; q < ports_[i].n_rxq; q++)
            if (q % n_workers_ == worker) out.push_back(RxAssignment{i, q});
    return out;
}

size_t EthdevPorts::rearm_tap_rx() {
    size_t n = 0;
    for (auto &p : ports_) {
        if (p.driver != "net_tap") continue;
        rte_eth_stats st{};
        if (rte_eth_stats_get(p.port_id, &st) != 0 || st.rx_nombuf <= p.rx_nombuf_seen) continue;
        p.rx_nombuf_seen = st.rx_nombuf;
        if (tap_signals_.empty()) continue;
        if (p.tap_rx_rearms++ == 0)
            spdlog::warn("port {}: rx_nombuf {}: re-arming net_tap's receive side (it stops "
                         "reading after an mbuf allocation failure until the kernel signals a "
                         "new frame, which a full kernel queue never does)",
                         p.name, st.rx_nombuf);
        n++;
    }
    // The handler (one per signal, all net_tap's) only advances the PMD's trigger counter.
    if (n)
        for (int sig : tap_signals_) ::kill(::getpid(), sig);
    return n;
}

std::vector<size_t> EthdevPorts::poll_links() {
    std::vector<size_t> changed;
    for (size_t i = 0; i < ports_.size(); i++) {
        rte_eth_link l{};
        if (rte_eth_link_get_nowait(ports_[i].port_id, &l) != 0) continue;
        if (l.link_status != ports_[i].link.link_status ||
            l.link_speed != ports_[i].link.link_speed) {
            ports_[i].link = l;
            ports_[i].link_changes++;
            changed.push_back(i);
        }
    }
    return changed;
}

}  // namespace rocesw
