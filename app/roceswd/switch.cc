#include "switch.h"

#include "pipeline/accounting.h"

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <spdlog/spdlog.h>

#include <stdexcept>
#include <thread>

namespace rocesw {

TscClock::TscClock() : to_ns_(rte_get_tsc_hz()), start_(rte_get_tsc_cycles()) {}

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

    if (cfg_.telemetry.latency) {  // doc/observability.md, "Latency"
        latency_ = std::make_unique<LatencyHist[]>(n_workers);
        latency_since_ = std::chrono::steady_clock::now();
    }
    DataplaneOptions o;
    o.name = "rocesw";
    o.workers = n_workers;
    o.burst = uint16_t(cfg_.sw.burst);
    o.qsbr = qsbr_;
    o.pfc_pool = ports_->pool();
    unsigned lcore = rte_get_next_lcore(-1, 1, 0);
    for (uint16_t w = 0; w < n_workers; w++) {
        WorkerSlot s;
        s.lcore = lcore;
        // With latency on, the worker's RX and its egress's TX go through a stamping wrapper.
        if (latency_) s.lat_io = std::make_unique<LatencyPortIo>(*ports_, latency_[w]);
        o.worker_io.push_back(s.lat_io.get());
        o.rx.push_back(ports_->rx_assignment(w));
        if (o.rx.back().empty())
            spdlog::warn("worker {} owns no RX queue (devices have fewer queues than workers)", w);
        o.tx_queue.push_back(ports_->tx_queue_for(w));
        workers_.push_back(std::move(s));
        lcore = rte_get_next_lcore(lcore, 1, 0);
    }
    dp_ = std::make_unique<Dataplane>(dataplane_spec(cfg_), &qos, *ports_, std::move(o));
    fib_ = &dp_->fib();
    rib_ = &dp_->rib();
    qos_ = &dp_->tm();
    counters_ = dp_->counters();
    for (uint16_t w = 0; w < n_workers; w++) {
        workers_[w].worker = &dp_->worker(w);
        workers_[w].egress = &dp_->egress(w);
    }
    if (size_t refused = dp_->refused_routes())
        spdlog::warn("{} routes could not be installed (FIB full)", refused);
    spdlog::info("FIB: {} IPv4 and {} IPv6 routes", rib_->route_count(false),
                 rib_->route_count(true));
    setup_control_plane();  // host interfaces, punt path, netlink (before the workers run)
    for (const auto &w : qos_->plan().warnings) spdlog::warn("{}", w);
    for (const auto &p : ports_->ports()) pfc_modes_.push_back(p.pfc_mode);
    register_commands();
    register_metrics();
    if (trace_)  // PFC frames sent/received and watchdog events go to the worker's ring
        for (uint16_t w = 0; w < workers_.size(); w++) dp_->set_trace(w, &trace_->ring(w));
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
    route_sync_.reset();  // uses the RIB
    hostif_.reset();      // injects into the traffic manager
    dp_.reset();          // workers (egress destructors free what they still hold), QoS, RIB, FIB
    workers_.clear();     // the latency wrappers the workers used
    punt_.reset();
    server_.close();
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
    constexpr uint64_t kHeldSpinNs = 50'000;
    uint32_t empty = 0, sleep_us = 1;

    rte_rcu_qsbr_thread_register(qsbr_, w);
    rte_rcu_qsbr_thread_online(qsbr_, w);
    spdlog::info("worker {} on lcore {}: {} RX queue(s), idle {}", w, rte_lcore_id(),
                 worker.rx_queues().size(), adaptive ? "adaptive" : "busy");
    uint64_t busy_since = 0;  // start of the last poll that left work (0: none)
    while (!workers_stop_.load(std::memory_order_relaxed)) {
        const uint64_t t = clock_.now_ns();
        if (busy_since) ctr.on_poll_gap(t - busy_since);
        uint32_t n = worker.poll_once(t);
        rte_rcu_qsbr_quiescent(qsbr_, w);
        // Adaptive: a backlog the egress holds back until a later event (a received PFC pause,
        // the shaper's next credit) more than kHeldSpinNs away is no work to spin for: the
        // worker naps as when idle, never past that event (a deadlocked or paused switch
        // does not take a shared core; RX, e.g. an XON, is read at the next wake). A backlog
        // with no such event (the device refused frames) keeps the worker polling.
        uint64_t held_until = 0;
        if (!n && adaptive && worker.egress().backlog()) {
            const uint64_t next = worker.egress().next_event_ns(t);
            if (next != Egress::kNoEventNs && next > t + kHeldSpinNs) held_until = next;
        }
        if (!held_until && (n || worker.egress().backlog() || !adaptive)) {
            empty = 0;
            sleep_us = 1;
            busy_since = (n || worker.egress().backlog()) ? t : 0;  // gap includes the poll
            continue;
        }
        busy_since = 0;
        if (++empty < kSpinPolls) {
            rte_pause();
            continue;
        }
        // Offline while asleep, so a FIB commit never waits for a sleeping worker.
        rte_rcu_qsbr_thread_offline(qsbr_, w);
        uint32_t nap_us = sleep_us;
        if (held_until) nap_us = uint32_t(std::min<uint64_t>(nap_us, (held_until - t) / 1000 + 1));
        std::this_thread::sleep_for(std::chrono::microseconds(nap_us));
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

// The accounting identity once no worker runs and every queue is empty (doc/accounting.md): what
// was still queued at SIGTERM and did not leave within the drain is counted as port_stopped
// drops, so the last word on every frame is in the log. One line, the total's terms as JSON.
void Switch::log_exit_accounting() {
    AccountingSources src;
    for (const auto &p : cfg_.ports) src.port_names.push_back(p.name);
    src.counters = counters_;
    for (auto &w : workers_) src.egress.push_back(w.egress);
    src.tm = qos_;
    const nlohmann::json a = accounting_json(check_accounting(take_accounting(src)));
    const std::string verdict = a.at("verdict").get<std::string>();
    if (a.at("balanced").get<bool>())
        spdlog::info("exit accounting: {}; total {}", verdict, a.at("total").dump());
    else
        spdlog::warn("exit accounting: {}; total {}", verdict, a.at("total").dump());
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

    // Link state every 50 ms (the loop's longest wait): a lost link's frames are dropped as
    // link_down from then on (follow_carrier), so this bounds how long a dead peer's queue can
    // hold its ingress PGs in XOFF. The rest of the housekeeping every 500 ms.
    constexpr auto kLinkPoll = std::chrono::milliseconds(50);
    constexpr auto kHousekeeping = std::chrono::milliseconds(500);
    auto next_link = std::chrono::steady_clock::now();
    auto next_housekeeping = next_link;
    int wait_ms = 50;
    carrier_.assign(ports_->ports().size(), {});
    for (size_t i = 0; i < carrier_.size(); i++)
        carrier_[i].tracked = ports_->ports()[i].driver != "net_tap";
    while (!stop.load()) {
        server_.poll_once(wait_ms, clock_.now_ns() / 1'000'000ull);
        wait_ms = observe();
        auto now = std::chrono::steady_clock::now();
        if (now >= next_link) {
            next_link = now + kLinkPoll;
            // Views read link state from the telemetry thread too: update it under their lock.
            std::lock_guard lk(server_.handler_mutex());
            for (size_t i : ports_->poll_links()) {
                const auto &p = ports_->ports()[i];
                spdlog::info("port {}: link {} {} Mb/s", p.name, p.link.link_status ? "up" : "down",
                             p.link.link_speed);
                follow_carrier(i);
                on_link_change(i);
            }
            if (now >= next_housekeeping) {
                next_housekeeping = now + kHousekeeping;
                log_pfc_watchdog();
                ports_->rearm_tap_rx();
            }
        }
    }
    stop_control_plane();  // nothing more is punted to or injected from the kernel
    spdlog::info("stopping: workers drain their queues");
    workers_stop_ = true;
    rte_eal_mp_wait_lcore();
    // A worker still running could hand packets to an owner that had already drained: count
    // those now that none runs.
    for (auto &w : workers_) w.egress->discard_all(DropReason::port_stopped);
    log_exit_accounting();
    ports_->stop();
    stop_observability();
    server_.close();
}

}  // namespace rocesw
