#include "sim/sim_switch.h"

#include <algorithm>
#include <stdexcept>

namespace rocesw::sim {

FibParams fib_params_for_sim(uint32_t routes, bool compact) {
    FibParams p;
    p.compact = compact;
    p.single_copy = true;  // one thread reads and commits: no second copy, half the memzones
    // Every /32 host route of 11.0.x.1 sits in its own /24, so it needs one tbl8 group; the
    // neighbour /32s (10.n.n.p) likewise. rte_fib rounds tbl8 groups up to 64.
    p.ipv4_max_routes = routes + 64;
    p.ipv4_tbl8s = routes + 64;
    p.max_nexthops = routes + 64;
    p.ipv6_max_routes = 64;
    p.ipv6_tbl8s = 64;
    return p;
}

QosPlan sim_qos_plan(const QosConfig &qos, const std::vector<SimSwitchPort> &ports) {
    std::vector<QosPortInfo> info;
    for (const auto &p : ports) {
        QosPortInfo i;
        i.name = p.name;
        // Mb/s for the headroom calculator; the exact rate is set below.
        i.speed_mbps = std::max<uint64_t>(1, (p.rate_bps + 999'999) / 1'000'000);
        i.mtu = p.mtu;
        // No device ring: the wire takes a frame only when idle, so the ring model holds the
        // frame being serialised, which an ASIC's queue depth (HPCC's too) does not count.
        i.ecn_depth = EcnDepth::queue;
        info.push_back(i);
    }
    QosPlan plan = build_qos_plan(qos, info);
    for (size_t i = 0; i < ports.size(); i++) {
        PortQosPlan &pp = plan.ports[i];
        pp.rate_bps = ports[i].rate_bps;
        // The wire is the device: the simulated port accepts a frame only while its wire is
        // idle, so the ring model needs only to let the next frame through (one on the wire,
        // one handed over, and slack for the ns rounding of the model's clock).
        const uint32_t max_frame = plan.wire_bytes(ports[i].mtu + 14 + 4);
        pp.tx_ring_bytes = 3 * max_frame;
        if (pp.shaper_burst_bytes < 2 * max_frame) pp.shaper_burst_bytes = 2 * max_frame;
    }
    return plan;
}

SimSwitch::SimSwitch(const SimSwitchSpec &spec, const QosPlan &plan, PortIo &io, rte_mempool *pool)
    : spec_(spec) {
    if (spec_.ports.empty() || spec_.ports.size() > kMaxPorts)
        throw std::runtime_error("switch " + spec_.name + ": " +
                                 std::to_string(spec_.ports.size()) + " ports (1.." +
                                 std::to_string(kMaxPorts) + " supported)");
    DataplaneSpec ds;
    for (const auto &p : spec_.ports) ds.ports.push_back(DataplanePort{p.name, p.mac, p.mtu, {}});
    ds.fib = fib_params_for_sim(spec_.max_routes, spec_.compact_fib);
    ds.lb = spec_.lb;
    DataplaneOptions o;
    o.name = spec_.name;
    o.burst = spec_.burst;
    // Egress burst 1: the simulated device takes a frame only while its wire is idle, so a
    // larger burst would leave the refused rest of it dequeued but unsent (staged), outside
    // the queues where ECN and PFC see them. With 1, at most one frame waits in "the device".
    o.egress_burst = 1;
    o.pfc_pool = pool;
    latency_ = std::make_unique<LatencyHist>();
    latency_io_ = std::make_unique<LatencyPortIo>(io, *latency_, &SimSwitch::clock_ns, this);
    o.worker_io = {latency_io_.get()};
    dp_ = std::make_unique<Dataplane>(ds, &plan, io, std::move(o));
}

SimSwitch::~SimSwitch() = default;

AccountingReport SimSwitch::accounting() const {
    std::vector<std::string> names;
    for (const auto &p : spec_.ports) names.push_back(p.name);
    return check_accounting(take_accounting(accounting_sources(*dp_, std::move(names))));
}

size_t SimSwitch::set_routes(const std::vector<RouteSet> &routes) {
    std::vector<IpPrefix> now;
    for (const auto &r : routes) {
        if (r.paths.empty()) continue;
        dp_->rib().set_learned(r.prefix, LearnedRoute{"sim", r.paths});
        now.push_back(r.prefix);
    }
    // Withdraw what is no longer announced.
    for (const auto &p : installed_)
        if (std::find(now.begin(), now.end(), p) == now.end()) dp_->rib().del_learned(p);
    installed_ = std::move(now);
    return dp_->rib().sync();
}

}  // namespace rocesw::sim
