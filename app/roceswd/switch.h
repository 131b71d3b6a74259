// The running switch: EAL, ports, FIB/RIB, workers on their lcores, and the control thread
// (the main lcore) that serves rocectl and telemetry and follows link state.
#pragma once

#include <rte_rcu_qsbr.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/counters.h"
#include "afxdp/af_xdp.h"
#include "config/config.h"
#include "egress/egress.h"
#include "ctrl/netlink_socket.h"
#include "ctrl/route_sync.h"
#include "ethdev/ethdev_ports.h"
#include "hostif/host_if.h"
#include "common/latency_hist.h"
#include "pipeline/latency_io.h"
#include "pipeline/punt.h"
#include "pipeline/worker.h"
#include "qos/qos_egress.h"
#include "route/fib.h"
#include "route/rib.h"
#include "telemetry/control_server.h"
#include "metrics/metrics.h"
#include "telemetry/prom_exporter.h"
#include "telemetry/trace.h"

namespace rocesw {

// TSC-derived nanoseconds: the production clock the workers pass down as "now".
class TscClock {
  public:
    TscClock();
    uint64_t now_ns() const;

  private:
    uint64_t hz_;
    uint64_t start_;
};

class Switch {
  public:
    // EAL must be initialised. Throws std::runtime_error on any set-up failure.
    // `qos`: the validated QoS plan for these ports (build_qos_plan).
    Switch(const Config &cfg, const QosPlan &qos);
    ~Switch();

    // Launches workers, runs the control loop until `stop` is set, then stops and drains.
    void run(const std::atomic<bool> &stop);

    // Views (JSON) served by the control socket and telemetry.
    nlohmann::json view_info() const;
    nlohmann::json view_ports() const;
    nlohmann::json view_routes() const;
    nlohmann::json view_neighbours() const;
    nlohmann::json view_drops(bool all) const;
    nlohmann::json view_workers() const;
    nlohmann::json view_queues(const std::vector<std::string> &args) const;
    nlohmann::json view_pfc(const std::vector<std::string> &args) const;  // pfc_view.cc
    nlohmann::json view_ecn(const std::vector<std::string> &args) const;  // pfc_view.cc
    // Load balancing: groups, members, policy counters; `lb policy <prefix|group|all> <name>`
    // switches a policy at runtime; `lb events [max]` drains the path-change records.
    nlohmann::json view_lb(const std::vector<std::string> &args);
    // Control plane (control_plane.cc): punt classes and host interfaces; netlink sync.
    nlohmann::json view_punt() const;
    nlohmann::json view_control() const;
    // RX->TX latency per traffic class since start or `clear latency` (telemetry.latency).
    nlohmann::json view_latency() const;

    // Prometheus families (app/roceswd/metrics.cc); add yours in register_metrics().
    MetricRegistry &metrics() { return metrics_; }
    // Where worker `worker` records trace events: valid from construction while the config names
    // a trace file, nullptr otherwise; see telemetry/trace.h.
    TraceRing *trace_ring(uint16_t worker) { return trace_ ? &trace_->ring(worker) : nullptr; }

  private:
    struct WorkerSlot {
        std::unique_ptr<LatencyPortIo> lat_io;  // telemetry.latency: RX/TX through it; else null
        std::unique_ptr<Egress> egress;
        std::unique_ptr<Worker> worker;
        unsigned lcore = 0;
    };
    static int lcore_main(void *arg);
    void worker_loop(uint16_t w);
    void register_commands();
    // Observability (metrics.cc): families, exporter + trace start/stop, the control loop's
    // trace sampling (returns ms until it is next due, at most 50), "clear".
    void register_metrics();
    void register_pfc_metrics();  // pfc_view.cc
    void register_lb_metrics();   // pfc_view.cc
    void start_observability();
    int observe();
    void stop_observability();
    nlohmann::json clear(const std::vector<std::string> &args);

    Config cfg_;
    std::vector<std::string> pfc_modes_;  // per port: how MAC-control frames reach us
    // PFC watchdog storms/restores already logged, per port and queue.
    std::vector<std::array<std::pair<uint64_t, uint64_t>, kNumQueues>> wd_seen_;
    void log_pfc_watchdog();
    TscClock clock_;
    std::chrono::steady_clock::time_point started_;
    std::unique_ptr<EthdevPorts> ports_;
    // Per port: rocesw's XDP program on an af_xdp port, else null (doc/ports.md).
    std::vector<std::unique_ptr<AfXdpProgram>> xdp_;
    rte_rcu_qsbr *qsbr_ = nullptr;
    std::unique_ptr<Fib> fib_;
    std::unique_ptr<Rib> rib_;
    std::unique_ptr<TrafficManager> qos_;  // outlives every worker's QosEgress
    LoadSignal lb_load_;              // queue depths for adaptive load balancing
    DataplaneContext ctx_;
    std::unique_ptr<WorkerCounters[]> counters_;  // one block per worker
    std::unique_ptr<LatencyHist[]> latency_;       // one block per worker; null: latency off
    LatencySnapshot latency_base_;                 // `clear latency` baseline (handler lock)
    std::chrono::steady_clock::time_point latency_since_;
    void register_latency_metrics();               // metrics.cc
    std::vector<WorkerSlot> workers_;
    std::atomic<bool> workers_stop_{false};
    ControlServer server_;
    MetricRegistry metrics_;
    std::unique_ptr<TraceWriter> trace_;
    std::atomic<uint64_t> trace_events_{0};
    uint64_t next_trace_ns_ = 0;
    // Control plane (control_plane.cc, doc/control-plane.md).
    void setup_control_plane();
    void start_control_plane();
    void stop_control_plane();
    bool netlink_dump(bool resync, std::string *err);
    bool open_subscription(std::string *err);
    void netlink_loop();
    void record_sync_latency(std::chrono::steady_clock::duration d);
    void on_link_change(size_t port, bool up);
    void register_control_metrics();
    std::unique_ptr<Punt> punt_;
    std::unique_ptr<HostInterfaces> hostif_;
    std::vector<bool> track_link_;  // per port: link state mirrored on its host interface
    std::unique_ptr<RouteSync> route_sync_;
    std::unique_ptr<nl::NetlinkSocket> nl_sub_;
    std::thread netlink_thread_;
    std::atomic<bool> netlink_stop_{false};
    mutable std::mutex sync_mu_;  // route_sync_, sync_lat_, sync_errors_
    struct {
        uint64_t last_ns = 0, max_ns = 0, sum_ns = 0, batches = 0;
    } sync_lat_;
    uint64_t sync_errors_ = 0;
    std::unique_ptr<PromExporter> prom_;  // last: stopped first, its thread reads the above
};

}  // namespace rocesw
