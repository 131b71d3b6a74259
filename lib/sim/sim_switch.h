// One simulated switch: the real pipeline (the Dataplane assembly: Fib, Rib, TrafficManager +
// QosEgress, Worker, the load balancer) over a PortIo the engine provides, with one worker and
// time passed in by the caller. Nothing else in lib/sim builds pipeline objects.
//
// Differences from roceswd, all deliberate and all in SimSwitchSpec and the options SimSwitch
// gives the Dataplane:
//  - a compact FIB (fib_params_for_sim): rte_fib DIR-24-8 is the only IPv4 type lib/route
//    offers today, so the 2 x 64 MiB tbl24 stays in *virtual* EAL memory, but rule, tbl8 and
//    next-hop counts are sized to the fabric, so only a few pages are ever touched;
//  - no RCU (one thread: the Fib and the ECMP groups skip the grace period, qsbr = null);
//  - routes are "learned" routes (Rib::set_learned), so destinations with the same next-hop
//    set share one ECMP group (kMaxEcmpGroups is 512 per switch);
//  - the QoS plan's port rate is the link's exact rate, and the TX ring model is capped at a
//    few frames (see doc/rocesim.md, "How the link rate reaches the egress");
//  - the egress hands the device one frame at a time (egress burst 1);
//  - the worker's PortIo is always the latency-stamping wrapper (pipeline/latency_io.h) with
//    the virtual clock in ns: each class's time in the switch, from the poll that received a
//    frame (its last bit's arrival) to the one that handed it to the wire (doc/rocesim.md,
//    "Switch latency per class"). roceswd inserts it only with telemetry.latency.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/counters.h"
#include "common/latency_hist.h"
#include "config/config.h"
#include "pipeline/accounting.h"
#include "pipeline/dataplane.h"
#include "pipeline/latency_io.h"
#include "port/port_io.h"
#include "qos/qos_config.h"
#include "qos/qos_egress.h"
#include "route/fib.h"
#include "route/rib.h"

struct rte_mempool;

namespace rocesw::sim {

struct SimSwitchPort {
    std::string name;  // "p0", "p1", ...
    MacAddr mac;
    uint64_t rate_bps = 0;  // the link's rate: the egress drains at exactly this
    uint32_t mtu = 9000;    // L3 MTU
};

struct SimSwitchSpec {
    std::string name;  // unique among the engine's switches (EAL object names derive from it)
    std::vector<SimSwitchPort> ports;
    LbConfig lb;                 // policy, seed, flowlet settings
    uint32_t max_routes = 1024;  // IPv4 routes the FIB must hold (hosts + neighbours + slack)
    uint16_t burst = 32;         // worker RX burst (the egress hands the device 1 at a time)
    bool compact_fib = true;     // RIB-only FIB tables (FibParams::compact)
};

// The FIB sizing for a simulated switch with room for `routes` IPv4 routes.
FibParams fib_params_for_sim(uint32_t routes, bool compact = true);

// The QoS plan of a simulated switch: `qos` bound to the ports, then each port's rate set to
// its link's exact rate and its TX ring model capped at three maximum-size frames.
QosPlan sim_qos_plan(const QosConfig &qos, const std::vector<SimSwitchPort> &ports);

class SimSwitch {
  public:
    // EAL must be initialised; `pool` feeds PFC frames the switch sends. Throws
    // std::runtime_error or ConfigError.
    SimSwitch(const SimSwitchSpec &spec, const QosPlan &plan, PortIo &io, rte_mempool *pool);
    ~SimSwitch();
    SimSwitch(const SimSwitch &) = delete;
    SimSwitch &operator=(const SimSwitch &) = delete;

    // One worker pass (RX of every port, pipeline, egress flush) at `now_ns`.
    uint32_t poll(uint64_t now_ns) {
        now_ns_ = now_ns;  // the latency wrapper's clock
        return dp_->poll(0, now_ns);
    }
    uint32_t backlog() const { return dp_->egress(0).backlog(); }
    // When the egress next wants to run (Egress::next_event_ns).
    uint64_t next_event_ns(uint64_t now_ns) const { return dp_->egress(0).next_event_ns(now_ns); }

    // Routing: replaces the routes (one per destination prefix) and the neighbours; only what
    // changed reaches the Fib. `paths` empty: withdraw.
    struct RouteSet {
        IpPrefix prefix;
        std::vector<LearnedPath> paths;  // port + via (a neighbour's address)
    };
    void add_neighbour(uint8_t port, const IpAddr &ip, const MacAddr &mac) {
        dp_->rib().add_neighbour(port, ip, mac);
    }
    // Returns the number of routes the Fib refused.
    size_t set_routes(const std::vector<RouteSet> &routes);

    const TrafficManager &qos() const { return dp_->tm(); }
    // Frames that left by egress cut-through (doc/qos.md, "Cut-through").
    uint64_t cut_through_packets() const { return dp_->qos_egress(0)->cut_through_packets(); }
    const WorkerCounters &counters() const { return dp_->counters(0); }
    // Per class, the ns each forwarded frame spent in this switch (received to sent).
    LatencySnapshot latency() const { return latency_snapshot(latency_.get(), 1); }
    // The accounting identity over this switch's counters (doc/accounting.md): between polls,
    // as the engine always reads it, exact.
    AccountingReport accounting() const;
    const SimSwitchSpec &spec() const { return spec_; }
    size_t route_count() const { return dp_->rib().route_count(false); }

  private:
    static uint64_t clock_ns(void *self) { return static_cast<SimSwitch *>(self)->now_ns_; }
    SimSwitchSpec spec_;
    uint64_t now_ns_ = 0;
    std::unique_ptr<LatencyHist> latency_;
    std::unique_ptr<LatencyPortIo> latency_io_;  // before dp_, which transmits through it
    std::unique_ptr<Dataplane> dp_;
    std::vector<IpPrefix> installed_;  // prefixes with a learned route
};

}  // namespace rocesw::sim
