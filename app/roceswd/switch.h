// The running switch: EAL, ports, FIB/RIB, workers on their lcores, and the control thread
// (the main lcore) that serves rocectl and telemetry and follows link state.
#pragma once

#include <rte_rcu_qsbr.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include "common/counters.h"
#include "config/config.h"
#include "egress/egress.h"
#include "ethdev/ethdev_ports.h"
#include "pipeline/worker.h"
#include "qos/qos_egress.h"
#include "route/fib.h"
#include "route/rib.h"
#include "telemetry/control_server.h"

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

  private:
    struct WorkerSlot {
        std::unique_ptr<Egress> egress;
        std::unique_ptr<Worker> worker;
        unsigned lcore = 0;
    };
    static int lcore_main(void *arg);
    void worker_loop(uint16_t w);
    void register_commands();

    Config cfg_;
    std::vector<std::string> pfc_modes_;  // per port: how MAC-control frames reach us
    TscClock clock_;
    std::chrono::steady_clock::time_point started_;
    std::unique_ptr<EthdevPorts> ports_;
    rte_rcu_qsbr *qsbr_ = nullptr;
    std::unique_ptr<Fib> fib_;
    std::unique_ptr<Rib> rib_;
    std::unique_ptr<QosShared> qos_;  // outlives every worker's QosEgress
    DataplaneContext ctx_;
    std::unique_ptr<WorkerCounters[]> counters_;  // one block per worker
    std::vector<WorkerSlot> workers_;
    std::atomic<bool> workers_stop_{false};
    ControlServer server_;
};

}  // namespace rocesw
