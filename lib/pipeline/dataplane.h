// The data plane, assembled in one place: the forwarding tables (Fib, Rib), load balancing
// settings and the adaptive policy's load signal, the traffic manager (QoS plan) with its PFC
// engine, one WorkerCounters block per worker, and the workers with their egress stages, over a
// PortIo. roceswd, the pipeline tests, the micro-benchmarks and the simulator's SimSwitch all
// build their switch with it; what they differ in is DataplaneSpec (what is forwarded) and
// DataplaneOptions (how it runs).
//
//   DataplaneSpec (ports, FIB size, routes, LB)  --+
//   QosPlan (optional)                            --+--> Dataplane --> poll(worker, now_ns)
//   PortIo (or one per worker)                    --+
//
// Time is an argument: nothing here reads a clock. Construction and destruction are control
// thread work; poll(w) runs on worker w's thread only. The process around it (EAL, devices,
// lcores, QSBR registration, the control loop) belongs to the caller.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/counters.h"
#include "common/trace_event.h"
#include "config/config.h"
#include "egress/egress.h"
#include "lb/ecmp_group.h"
#include "pipeline/worker.h"
#include "port/port_io.h"
#include "qos/plan.h"
#include "route/fib.h"
#include "route/rib.h"

struct rte_mempool;
struct rte_rcu_qsbr;

namespace rocesw {

class TrafficManager;
class QosEgress;
class PfcEngine;

struct DataplanePort {
    std::string name;
    MacAddr mac;
    uint32_t mtu = 1500;        // L3 MTU, bytes: longer IP packets are dropped at parse
    std::vector<IfAddr> addrs;  // the switch's own IPv4 and IPv6 addresses on this port
};

// What the data plane forwards: its ports, the FIB's size, the configured routes and
// neighbours, load balancing. Routes learned later go through rib().
struct DataplaneSpec {
    std::vector<DataplanePort> ports;  // 1..kMaxPorts
    FibParams fib;                     // sizes, incl. room for learned routes; compact tables
    std::vector<RouteConfig> routes;
    std::vector<NeighbourConfig> neighbours;
    std::vector<MultipathRouteConfig> multipath_routes;
    LbConfig lb;
};

// roceswd's spec: the config's ports, routes, neighbours and LB settings, and a FIB sized by
// fib_params_for (what the config installs plus control_plane.max_learned_routes).
DataplaneSpec dataplane_spec(const Config &cfg);

// What an egress factory gets to build worker `worker`'s egress stage.
struct EgressArgs {
    uint16_t worker;
    PortIo &io;  // the worker's PortIo
    WorkerCounters &counters;
    uint16_t tx_queue;
    uint16_t burst;  // packets per tx_burst
    uint16_t n_ports;
};
using EgressFactory = std::function<std::unique_ptr<Egress>(const EgressArgs &)>;

struct DataplaneOptions {
    // Prefix of the EAL objects (memzones, rings): <name>_fib, <name>_qos. Unique per process.
    std::string name = "rocesw";
    uint16_t workers = 1;
    uint16_t burst = 32;        // worker RX burst, 1..kMaxBurst
    uint16_t egress_burst = 0;  // packets per tx_burst; 0: `burst`
    // QSBR the workers report to (the caller registers them). Null: one thread, and FIB and
    // ECMP group updates skip the grace period.
    rte_rcu_qsbr *qsbr = nullptr;
    // rx[w]: the RX queues worker w polls. Empty: worker w polls queue w of every port.
    std::vector<std::vector<RxAssignment>> rx;
    // tx_queue[w]: worker w's TX queue on every port. Empty: queue w.
    std::vector<uint16_t> tx_queue;
    // worker_io[w]: worker w's PortIo for RX and its egress's TX (the latency-stamping wrapper).
    // Empty: the PortIo given to the constructor, for every worker.
    std::vector<PortIo *> worker_io;
    // Builds each worker's egress. Null: QosEgress over the traffic manager (needs a plan).
    EgressFactory egress;
    // PFC and PAUSE frames the switch sends are allocated here, with the ports' MACs as source.
    // Null: the PFC engine has no source (it generates nothing).
    rte_mempool *pfc_pool = nullptr;
    // Forwarding tables built and filled elsewhere (the micro-benchmarks' shared tables): no
    // Fib or Rib is built, spec.fib, routes, neighbours and lb are unused, the borrowed FIB's LB
    // settings and load signal are left as they are. Must outlive the Dataplane.
    const Fib *borrowed_fib = nullptr;
};

class Dataplane {
  public:
    // `plan` null: no traffic manager (no classification, no PFC; every packet stays in TC 0),
    // and options.egress must be given. EAL must be initialised. Throws std::runtime_error on
    // a set-up failure (EAL objects, ports out of range) or ConfigError.
    Dataplane(const DataplaneSpec &spec, const QosPlan *plan, PortIo &io,
              DataplaneOptions options = {});
    ~Dataplane();
    Dataplane(const Dataplane &) = delete;
    Dataplane &operator=(const Dataplane &) = delete;

    // One pass of worker `w` (its RX queues, the pipeline, an egress flush) at `now_ns`.
    uint32_t poll(uint16_t w, uint64_t now_ns) { return workers_[w].worker->poll_once(now_ns); }

    uint16_t workers() const { return uint16_t(workers_.size()); }
    Worker &worker(uint16_t w) { return *workers_[w].worker; }
    Egress &egress(uint16_t w) { return *workers_[w].egress; }
    const Egress &egress(uint16_t w) const { return *workers_[w].egress; }
    // Worker w's egress as the QosEgress it is; null when options.egress built another kind.
    QosEgress *qos_egress(uint16_t w) { return workers_[w].qos; }
    WorkerCounters &counters(uint16_t w) { return counters_[w]; }
    const WorkerCounters &counters(uint16_t w) const { return counters_[w]; }
    // Every worker's block, workers() of them (sum_port and the metrics read them all).
    WorkerCounters *counters() { return counters_.get(); }
    const WorkerCounters *counters() const { return counters_.get(); }

    // The forwarding tables. fib() is the borrowed one with options.borrowed_fib; rib() must
    // not be called then.
    const Fib &fib() const { return *fib_; }
    Fib &fib() { return *own_fib_; }
    Rib &rib() { return *rib_; }
    const Rib &rib() const { return *rib_; }
    // Routes the FIB refused when the configured ones were installed (it is full).
    size_t refused_routes() const { return refused_; }

    // The traffic manager and its PFC engine; only with a plan (has_tm()).
    bool has_tm() const { return bool(tm_); }
    TrafficManager &tm() { return *tm_; }
    const TrafficManager &tm() const { return *tm_; }
    PfcEngine &pfc();
    const PfcEngine &pfc() const;

    // What every worker reads. Mutable for tests that change a port's MTU or parse options
    // between polls; nothing may change it while workers run.
    DataplaneContext &ctx() { return ctx_; }
    const DataplaneContext &ctx() const { return ctx_; }

    // Hooks the punt path up (or off, with null): the workers hand control-plane packets to it,
    // and the parser accepts LLDP, which only the host interfaces consume. Not while workers run.
    void set_punt(Punt *punt);
    // Worker w's event ring (PFC frames received and sent, watchdog, LB path changes); null: none.
    void set_trace(uint16_t w, TraceRing *ring);

  private:
    struct Slot {
        std::unique_ptr<Egress> egress;
        QosEgress *qos = nullptr;  // egress, when it is a QosEgress
        std::unique_ptr<Worker> worker;
    };
    std::unique_ptr<Fib> own_fib_;
    const Fib *fib_ = nullptr;
    std::unique_ptr<Rib> rib_;
    size_t refused_ = 0;
    std::unique_ptr<TrafficManager> tm_;  // outlives every worker's QosEgress
    LoadSignal lb_load_;                  // egress queue depths for adaptive load balancing
    DataplaneContext ctx_;
    std::unique_ptr<WorkerCounters[]> counters_;
    std::vector<Slot> workers_;
};

}  // namespace rocesw
