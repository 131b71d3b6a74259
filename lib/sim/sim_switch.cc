#include "sim/sim_switch.h"

#include <algorithm>
#include <stdexcept>

namespace rocesw::sim {

FibParams fib_params_for_sim(uint32_t routes, bool compact) {
    FibParams p;
    p.compact = compact;
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

// Adaptive load balancing reads egress queue depths (as app/roceswd/switch.cc does).
static uint64_t lb_queue_bytes(const void *ctx, uint16_t port, uint8_t tc) {
    const auto *q = static_cast<const TrafficManager *>(ctx);
    if (port >= q->n_ports()) return 0;
    return q->queue(port, q->plan().ports[port].cls.tc_to_queue[tc & 7]).depth_bytes;
}

// ---- The assembly: to be replaced by the Dataplane assembly (see the header). ----
SimSwitch::SimSwitch(const SimSwitchSpec &spec, const QosPlan &plan, PortIo &io, rte_mempool *pool)
    : spec_(spec) {
    if (spec_.ports.empty() || spec_.ports.size() > kMaxPorts)
        throw std::runtime_error("switch " + spec_.name + ": " +
                                 std::to_string(spec_.ports.size()) + " ports (1.." +
                                 std::to_string(kMaxPorts) + " supported)");
    fib_ =
        std::make_unique<Fib>(spec_.name + "_fib", fib_params_for_sim(spec_.max_routes, spec_.compact_fib), nullptr);
    LbSettings lbs = lb_settings_from(spec_.lb);
    fib_->groups().set_settings(lbs);  // before the worker sizes its flowlet table
    std::vector<RibPort> rib_ports;
    for (const auto &p : spec_.ports) {
        rib_ports.push_back(RibPort{p.name, p.mac, {}});
        PortRuntime rt;
        rt.mac = p.mac;
        rt.mtu = p.mtu;
        rt.parse.max_l3_len = p.mtu;
        ctx_.ports.push_back(rt);
    }
    ctx_.fib = fib_.get();
    rib_ = std::make_unique<Rib>(*fib_, rib_ports);

    counters_ = std::make_unique<WorkerCounters>();
    qos_ = std::make_unique<TrafficManager>(plan, 1, spec_.name + "_qos");
    ctx_.qos = &qos_->plan();
    lb_load_ = LoadSignal{&lb_queue_bytes, qos_.get()};
    fib_->groups().set_load_signal(&lb_load_);
    ctx_.pfc = &qos_->pfc();
    std::vector<std::array<uint8_t, 6>> macs;
    for (const auto &p : spec_.ports) macs.push_back(p.mac.b);
    qos_->pfc().set_source(pool, std::move(macs));
    // Egress burst 1: the simulated device takes a frame only while its wire is idle, so a
    // larger burst would leave the refused rest of it dequeued but unsent (staged), outside
    // the queues where ECN and PFC see them. With 1, at most one frame waits in "the device".
    egress_ = std::make_unique<QosEgress>(*qos_, io, *counters_, 0, 0, 1);
    std::vector<RxAssignment> rx;
    for (uint16_t p = 0; p < spec_.ports.size(); p++) rx.push_back(RxAssignment{p, 0});
    worker_ = std::make_unique<Worker>(0, ctx_, io, *egress_, *counters_, rx, spec_.burst);
}

SimSwitch::~SimSwitch() {
    if (egress_) egress_->discard_all(DropReason::port_stopped);
    worker_.reset();
    egress_.reset();
    qos_.reset();
    rib_.reset();
    fib_.reset();
}

size_t SimSwitch::set_routes(const std::vector<RouteSet> &routes) {
    std::vector<IpPrefix> now;
    for (const auto &r : routes) {
        if (r.paths.empty()) continue;
        rib_->set_learned(r.prefix, LearnedRoute{"sim", r.paths});
        now.push_back(r.prefix);
    }
    // Withdraw what is no longer announced.
    for (const auto &p : installed_)
        if (std::find(now.begin(), now.end(), p) == now.end()) rib_->del_learned(p);
    installed_ = std::move(now);
    return rib_->sync();
}

}  // namespace rocesw::sim
