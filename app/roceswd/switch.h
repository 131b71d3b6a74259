// The running switch: the process around the data plane. EAL ports, the QSBR state, the
// Dataplane assembly (lib/pipeline/dataplane.h: FIB/RIB, QoS/PFC, LB, workers) run on lcores,
// and the control thread (the main lcore) that serves rocectl and telemetry, runs the control
// plane and follows link state.
#pragma once

#include <rte_cycles.h>
#include <rte_rcu_qsbr.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/counters.h"
#include "common/tsc_ns.h"
#include "afxdp/af_xdp.h"
#include "config/config.h"
#include "egress/egress.h"
#include "ctrl/netlink_socket.h"
#include "ctrl/route_sync.h"
#include "ethdev/ethdev_ports.h"
#include "hostif/host_if.h"
#include "common/latency_hist.h"
#include "pipeline/dataplane.h"
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
// Read once per worker poll: no division (common/tsc_ns.h), inline.
class TscClock {
  public:
    TscClock();
    uint64_t now_ns() const { return to_ns_(rte_get_tsc_cycles() - start_); }

  private:
    TscToNs to_ns_;
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

    // Process-level views (JSON) served by the control socket and telemetry; the modules'
    // (routes, lb, queues, pfc, ...) are registered by their modules in register_commands().
    nlohmann::json view_info() const;
    nlohmann::json view_mbufs() const;
    static nlohmann::json view_dpdk_heap();
    nlohmann::json view_ports() const;  // with ethdev link state and device counters
    // Control plane (control_plane.cc): punt classes and host interfaces; netlink sync.
    nlohmann::json view_punt() const;
    nlohmann::json view_control() const;
    // RX->TX latency per traffic class since start or `clear latency` (telemetry.latency).
    nlohmann::json view_latency() const;

    // Prometheus families: the modules' (register_commands) and the process's (metrics.cc).
    MetricRegistry &metrics() { return metrics_; }
    // Where worker `worker` records trace events: valid from construction while the config names
    // a trace file, nullptr otherwise; see telemetry/trace.h.
    TraceRing *trace_ring(uint16_t worker) { return trace_ ? &trace_->ring(worker) : nullptr; }

  private:
    // A worker of dp_ and where it runs.
    struct WorkerSlot {
        std::unique_ptr<LatencyPortIo> lat_io;  // telemetry.latency: RX/TX through it; else null
        Egress *egress = nullptr;  // dp_'s
        Worker *worker = nullptr;  // dp_'s
        unsigned lcore = 0;
    };
    static int lcore_main(void *arg);
    void worker_loop(uint16_t w);
    // Wires every module's commands and families to server_ and metrics_ (views.cc).
    void register_commands();
    void log_exit_accounting();
    // Observability (metrics.cc): process-level families, exporter + trace start/stop, the
    // control loop's trace sampling (returns ms until it is next due, at most 50).
    void register_metrics();
    nlohmann::json route_learn(const CommandArgs &args);
    nlohmann::json port_link(const CommandArgs &args);
    void start_observability();
    int observe();
    void stop_observability();
    nlohmann::json clear_latency(const std::vector<std::string> &args);

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
    std::unique_ptr<Dataplane> dp_;
    // dp_'s parts, as the views and metrics read them.
    Fib *fib_ = nullptr;
    Rib *rib_ = nullptr;
    TrafficManager *qos_ = nullptr;
    WorkerCounters *counters_ = nullptr;  // one block per worker
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
    bool trace_failure_logged_ = false;
    std::atomic<bool> trace_failed_{false};  // views and metrics read it from other threads
    // Control plane (control_plane.cc, doc/control-plane.md).
    void setup_control_plane();
    void start_control_plane();
    void stop_control_plane();
    bool netlink_dump(bool resync, std::string *err);
    void request_resolves();
    bool open_subscription(std::string *err);
    void netlink_loop();
    void record_sync_latency(std::chrono::steady_clock::duration d);
    void on_link_change(size_t port);
    void follow_carrier(size_t port);
    void register_control_metrics();
    std::unique_ptr<Punt> punt_;
    std::unique_ptr<HostInterfaces> hostif_;
    std::vector<bool> track_link_;  // per port: link state mirrored on its host interface
    struct Carrier {
        bool tracked = false;  // the device's link state is the peer's (not net_tap)
        bool seen_up = false;  // the link has been up since the start
    };
    std::vector<Carrier> carrier_;  // per port; the control loop's
    std::unique_ptr<RouteSync> route_sync_;
    std::unique_ptr<nl::NetlinkSocket> nl_sub_;
    std::thread netlink_thread_;
    std::atomic<bool> netlink_stop_{false};
    bool nexthop_dump_warned_ = false;  // under sync_mu_
    mutable std::mutex sync_mu_;  // route_sync_, sync_lat_, sync_errors_
    struct {
        uint64_t last_ns = 0, max_ns = 0, sum_ns = 0, batches = 0;
    } sync_lat_;
    uint64_t sync_errors_ = 0;
    std::unique_ptr<PromExporter> prom_;  // last: stopped first, its thread reads the above
};

}  // namespace rocesw
