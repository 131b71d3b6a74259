#include "switch.h"

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <spdlog/spdlog.h>

#include <stdexcept>
#include <thread>

namespace rocesw {

TscClock::TscClock() : hz_(rte_get_tsc_hz()), start_(rte_get_tsc_cycles()) {}

uint64_t TscClock::now_ns() const {
    uint64_t c = rte_get_tsc_cycles() - start_;
    return c / hz_ * 1'000'000'000ull + (c % hz_) * 1'000'000'000ull / hz_;
}

// Load balancing (doc/load-balancing.md): the adaptive policy's view of egress queue depths.
static uint64_t lb_queue_bytes(const void *ctx, uint16_t port, uint8_t tc) {
    const auto *q = static_cast<const TrafficManager *>(ctx);
    if (port >= q->n_ports()) return 0;
    return q->queue(port, q->plan().ports[port].cls.tc_to_queue[tc & 7]).depth_bytes;
}

namespace {
struct LaunchArg {
    Switch *sw;
    uint16_t worker;
};
std::vector<LaunchArg> g_launch;
}  // namespace

Switch::Switch(const Config &cfg, const QosPlan &qos)
    : cfg_(cfg), started_(std::chrono::steady_clock::now()) {
    const uint16_t n_workers = uint16_t(cfg_.sw.workers);
    if (rte_lcore_count() < n_workers + 1u)
        throw std::runtime_error("EAL has " + std::to_string(rte_lcore_count()) +
                                 " lcores; need 1 control + " + std::to_string(n_workers) +
                                 " workers");
    ports_ = std::make_unique<EthdevPorts>(cfg_, n_workers);
    for (const auto &p : cfg_.ports)
        xdp_.push_back(p.af_xdp
                           ? std::make_unique<AfXdpProgram>(p, cfg_.control_plane.host_interfaces)
                           : nullptr);

    size_t qsz = rte_rcu_qsbr_get_memsize(n_workers);
    qsbr_ = static_cast<rte_rcu_qsbr *>(rte_zmalloc("rocesw_qsbr", qsz, RTE_CACHE_LINE_SIZE));
    if (!qsbr_ || rte_rcu_qsbr_init(qsbr_, n_workers) != 0)
        throw std::runtime_error("cannot set up RCU (QSBR) state");

    fib_ = std::make_unique<Fib>("rocesw_fib", fib_params_for(cfg_), qsbr_);  // as main sized EAL
    fib_->groups().set_settings(lb_settings_from(cfg_.lb));  // before workers size flowlet tables
    std::vector<RibPort> rib_ports;
    for (const auto &p : cfg_.ports) {
        RibPort rp{p.name, p.mac, p.ipv4};
        rp.addrs.insert(rp.addrs.end(), p.ipv6.begin(), p.ipv6.end());
        rib_ports.push_back(rp);
        PortRuntime rt;
        rt.mac = p.mac;
        rt.mtu = p.mtu;
        rt.parse.max_l3_len = p.mtu;
        rt.addrs = rp.addrs;
        ctx_.ports.push_back(rt);
        ctx_.all_addrs.insert(ctx_.all_addrs.end(), rp.addrs.begin(), rp.addrs.end());
    }
    ctx_.fib = fib_.get();
    rib_ = std::make_unique<Rib>(*fib_, rib_ports);
    rib_->set_static(cfg_.routes, cfg_.neighbours);
    rib_->set_multipath(cfg_.multipath_routes);
    if (size_t refused = rib_->sync())
        spdlog::warn("{} routes could not be installed (FIB full)", refused);
    spdlog::info("FIB: {} IPv4 and {} IPv6 routes", rib_->route_count(false),
                 rib_->route_count(true));

    counters_ = std::make_unique<WorkerCounters[]>(n_workers);
    // Port p's queues are owned by worker p % n_workers; other workers hand packets to it.
    qos_ = std::make_unique<TrafficManager>(qos, n_workers, "rocesw_qos");
    ctx_.qos = &qos_->plan();
    lb_load_ = LoadSignal{&lb_queue_bytes, qos_.get()};  // adaptive load balancing
    fib_->groups().set_load_signal(&lb_load_);
    ctx_.pfc = &qos_->pfc();  // received PFC/PAUSE frames
    setup_control_plane();  // host interfaces, punt path, netlink (before the workers)
    {
        std::vector<std::array<uint8_t, 6>> macs;
        for (const auto &p : cfg_.ports) macs.push_back(p.mac.b);
        qos_->pfc().set_source(ports_->pool(), std::move(macs));
    }
    for (const auto &w : qos_->plan().warnings) spdlog::warn("{}", w);
    for (const auto &p : ports_->ports()) pfc_modes_.push_back(p.pfc_mode);
    if (cfg_.telemetry.latency) {  // doc/observability.md, "Latency"
        latency_ = std::make_unique<LatencyHist[]>(n_workers);
        latency_since_ = std::chrono::steady_clock::now();
    }
    unsigned lcore = rte_get_next_lcore(-1, 1, 0);
    for (uint16_t w = 0; w < n_workers; w++) {
        WorkerSlot s;
        s.lcore = lcore;
        // With latency on, the worker's RX and its egress's TX go through a stamping wrapper.
        if (latency_) s.lat_io = std::make_unique<LatencyPortIo>(*ports_, latency_[w]);
        PortIo &io = s.lat_io ? static_cast<PortIo &>(*s.lat_io) : *ports_;
        s.egress = std::make_unique<QosEgress>(*qos_, io, counters_[w], w,
                                               ports_->tx_queue_for(w), uint16_t(cfg_.sw.burst));
        auto rx = ports_->rx_assignment(w);
        if (rx.empty())
            spdlog::warn("worker {} owns no RX queue (devices have fewer queues than workers)", w);
        s.worker = std::make_unique<Worker>(w, ctx_, io, *s.egress, counters_[w], rx,
                                            uint16_t(cfg_.sw.burst));
        workers_.push_back(std::move(s));
        lcore = rte_get_next_lcore(lcore, 1, 0);
    }
    register_commands();
    register_metrics();
    if (trace_)  // PFC frames sent/received and watchdog events go to the worker's ring
        for (size_t w = 0; w < workers_.size(); w++) {
            workers_[w].worker->set_trace(&trace_->ring(w));
            static_cast<QosEgress *>(workers_[w].egress.get())->set_trace(&trace_->ring(w));
        }
}

// Logs PFC watchdog storms and restorations seen since the last call (control thread; the
// owners only count them).
void Switch::log_pfc_watchdog() {
    const size_t n = cfg_.ports.size();
    if (wd_seen_.size() != n) wd_seen_.assign(n, {});
    for (size_t p = 0; p < n; p++) {
        const PfcPortStats &st = qos_->pfc().stats(uint16_t(p));
        const PfcWdPlan &wd = qos_->plan().ports[p].wd;
        for (unsigned q = 0; q < kNumQueues; q++) {
            const uint64_t storms = st.wd_storms[q].load(), restores = st.wd_restores[q].load();
            if (storms != wd_seen_[p][q].first)
                spdlog::warn("port {} queue {}: PFC storm detected ({} in all), action {}",
                             cfg_.ports[p].name, q, storms, wd.drop ? "drop" : "forward");
            if (restores != wd_seen_[p][q].second)
                spdlog::info("port {} queue {}: PFC storm over, queue restored ({} in all)",
                             cfg_.ports[p].name, q, restores);
            wd_seen_[p][q] = {storms, restores};
        }
    }
}

Switch::~Switch() {
    stop_observability();  // the exporter's thread reads what follows
    stop_control_plane();
    workers_.clear();  // egress destructors free what they still hold
    route_sync_.reset();
    hostif_.reset();
    punt_.reset();
    qos_.reset();
    server_.close();
    rib_.reset();
    fib_.reset();
    ports_.reset();  // closing a net_af_xdp port detaches its program
    xdp_.clear();    // ...and this detaches any the PMD left
    rte_free(qsbr_);
}

int Switch::lcore_main(void *arg) {
    auto *a = static_cast<LaunchArg *>(arg);
    a->sw->worker_loop(a->worker);
    return 0;
}

void Switch::worker_loop(uint16_t w) {
    Worker &worker = *workers_[w].worker;
    WorkerCounters &ctr = counters_[w];
    const bool adaptive = cfg_.sw.idle == IdleMode::adaptive;
    const uint32_t max_sleep_us = cfg_.sw.idle_sleep_max_us;
    // Adaptive idle: after kSpinPolls empty polls, sleep 1, 2, 4 ... up to max_sleep_us.
    constexpr uint32_t kSpinPolls = 256;
    uint32_t empty = 0, sleep_us = 1;

    rte_rcu_qsbr_thread_register(qsbr_, w);
    rte_rcu_qsbr_thread_online(qsbr_, w);
    spdlog::info("worker {} on lcore {}: {} RX queue(s), idle {}", w, rte_lcore_id(),
                 worker.rx_queues().size(), adaptive ? "adaptive" : "busy");
    while (!workers_stop_.load(std::memory_order_relaxed)) {
        uint32_t n = worker.poll_once(clock_.now_ns());
        rte_rcu_qsbr_quiescent(qsbr_, w);
        if (n || worker.egress().backlog() || !adaptive) {
            empty = 0;
            sleep_us = 1;
            continue;
        }
        if (++empty < kSpinPolls) {
            rte_pause();
            continue;
        }
        // Offline while asleep, so a FIB commit never waits for a sleeping worker.
        rte_rcu_qsbr_thread_offline(qsbr_, w);
        std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
        ctr.idle_sleeps.inc();
        rte_rcu_qsbr_thread_online(qsbr_, w);
        sleep_us = std::min(sleep_us * 2, max_sleep_us);
    }
    // Drain: give queued packets up to 100 ms to leave, then count the rest as dropped.
    uint64_t deadline = clock_.now_ns() + 100'000'000ull;
    while (worker.egress().backlog() && clock_.now_ns() < deadline)
        worker.egress().flush(clock_.now_ns());
    worker.egress().discard_all(DropReason::port_stopped);
    rte_rcu_qsbr_thread_offline(qsbr_, w);
    rte_rcu_qsbr_thread_unregister(qsbr_, w);
}

void Switch::run(const std::atomic<bool> &stop) {
    std::string err;
    if (!server_.listen(cfg_.sw.control_socket, &err))
        throw std::runtime_error("control socket: " + err);
    if (cfg_.sw.telemetry) {
        int n = register_telemetry_commands(server_);
        spdlog::info("telemetry: {} /rocesw/* commands registered", n);
    }
    spdlog::info("control socket {}", cfg_.sw.control_socket);
    start_observability();
    start_control_plane();

    g_launch.clear();
    for (uint16_t w = 0; w < workers_.size(); w++) g_launch.push_back(LaunchArg{this, w});
    for (uint16_t w = 0; w < workers_.size(); w++) {
        int rc = rte_eal_remote_launch(lcore_main, &g_launch[w], workers_[w].lcore);
        if (rc != 0) {
            workers_stop_ = true;
            rte_eal_mp_wait_lcore();
            throw std::runtime_error("cannot launch worker " + std::to_string(w));
        }
    }
    spdlog::info("{} running: {} port(s), {} worker(s)", cfg_.sw.name, cfg_.ports.size(),
                 workers_.size());

    auto next_link = std::chrono::steady_clock::now();
    int wait_ms = 50;
    while (!stop.load()) {
        server_.poll_once(wait_ms);
        wait_ms = observe();
        auto now = std::chrono::steady_clock::now();
        if (now >= next_link) {
            next_link = now + std::chrono::milliseconds(500);
            // Views read link state from the telemetry thread too: update it under their lock.
            std::lock_guard lk(server_.handler_mutex());
            for (size_t i : ports_->poll_links()) {
                const auto &p = ports_->ports()[i];
                spdlog::info("port {}: link {} {} Mb/s", p.name, p.link.link_status ? "up" : "down",
                             p.link.link_speed);
                on_link_change(i, p.link.link_status);
            }
            log_pfc_watchdog();
        }
    }
    stop_control_plane();  // nothing more is punted to or injected from the kernel
    spdlog::info("stopping: workers drain their queues");
    workers_stop_ = true;
    rte_eal_mp_wait_lcore();
    // A worker still running could hand packets to an owner that had already drained: count
    // those now that none runs.
    for (auto &w : workers_) w.egress->discard_all(DropReason::port_stopped);
    ports_->stop();
    stop_observability();
    server_.close();
}

}  // namespace rocesw
