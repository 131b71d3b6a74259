#include "pipeline/dataplane.h"

#include <stdexcept>

#include "pipeline/punt.h"
#include "qos/qos_egress.h"

namespace rocesw {

DataplaneSpec dataplane_spec(const Config &cfg) {
    DataplaneSpec s;
    for (const auto &p : cfg.ports) {
        DataplanePort dp{p.name, p.mac, p.mtu, p.ipv4};
        dp.addrs.insert(dp.addrs.end(), p.ipv6.begin(), p.ipv6.end());
        s.ports.push_back(std::move(dp));
    }
    s.fib = fib_params_for(cfg);
    s.routes = cfg.routes;
    s.neighbours = cfg.neighbours;
    s.multipath_routes = cfg.multipath_routes;
    s.lb = cfg.lb;
    return s;
}

// Load balancing (doc/load-balancing.md): the adaptive policy's view of egress queue depths.
static uint64_t lb_queue_bytes(const void *ctx, uint16_t port, uint8_t tc) {
    const auto *q = static_cast<const TrafficManager *>(ctx);
    if (port >= q->n_ports()) return 0;
    return q->queue(port, q->plan().ports[port].cls.tc_to_queue[tc & 7]).depth_bytes;
}

Dataplane::Dataplane(const DataplaneSpec &spec, const QosPlan *plan, PortIo &io,
                     DataplaneOptions opt) {
    const uint16_t n_workers = opt.workers;
    if (spec.ports.empty() || spec.ports.size() > kMaxPorts)
        throw std::runtime_error(opt.name + ": " + std::to_string(spec.ports.size()) +
                                 " ports (1.." + std::to_string(kMaxPorts) + " supported)");
    if (n_workers == 0) throw std::runtime_error(opt.name + ": no worker");
    if (!plan && !opt.egress)
        throw std::runtime_error(opt.name + ": no QoS plan and no egress factory");

    // Forwarding tables. LB settings go in before the workers size their flowlet tables.
    if (opt.borrowed_fib) {
        fib_ = opt.borrowed_fib;
    } else {
        own_fib_ = std::make_unique<Fib>(opt.name + "_fib", spec.fib, opt.qsbr);
        fib_ = own_fib_.get();
        own_fib_->groups().set_settings(lb_settings_from(spec.lb));
    }
    std::vector<RibPort> rib_ports;
    for (const auto &p : spec.ports) {
        rib_ports.push_back(RibPort{p.name, p.mac, p.addrs});
        PortRuntime rt;
        rt.mac = p.mac;
        rt.mtu = p.mtu;
        rt.parse.max_l3_len = p.mtu;
        rt.addrs = p.addrs;
        ctx_.ports.push_back(rt);
        ctx_.all_addrs.insert(ctx_.all_addrs.end(), p.addrs.begin(), p.addrs.end());
    }
    ctx_.fib = fib_;
    if (own_fib_) {
        rib_ = std::make_unique<Rib>(*own_fib_, rib_ports);
        rib_->set_static(spec.routes, spec.neighbours);
        rib_->set_multipath(spec.multipath_routes);
        refused_ = rib_->sync();
    }

    counters_ = std::make_unique<WorkerCounters[]>(n_workers);
    if (plan) {
        // Port p's queues are owned by worker p % n_workers; other workers hand packets to it.
        tm_ = std::make_unique<TrafficManager>(*plan, n_workers, opt.name + "_qos");
        ctx_.qos = &tm_->plan();
        ctx_.pfc = &tm_->pfc();  // received PFC/PAUSE frames
        if (own_fib_) {
            lb_load_ = LoadSignal{&lb_queue_bytes, tm_.get()};
            own_fib_->groups().set_load_signal(&lb_load_);
        }
        if (opt.pfc_pool) {
            std::vector<std::array<uint8_t, 6>> macs;
            for (const auto &p : spec.ports) macs.push_back(p.mac.b);
            tm_->pfc().set_source(opt.pfc_pool, std::move(macs));
        }
    }

    const uint16_t egress_burst = opt.egress_burst ? opt.egress_burst : opt.burst;
    for (uint16_t w = 0; w < n_workers; w++) {
        PortIo &wio = w < opt.worker_io.size() && opt.worker_io[w] ? *opt.worker_io[w] : io;
        const uint16_t txq = w < opt.tx_queue.size() ? opt.tx_queue[w] : w;
        std::vector<RxAssignment> rx;
        if (w < opt.rx.size()) {
            rx = opt.rx[w];
        } else if (opt.rx.empty()) {
            for (uint16_t p = 0; p < spec.ports.size(); p++) rx.push_back(RxAssignment{p, w});
        }
        Slot s;
        if (opt.egress) {
            s.egress = opt.egress(
                EgressArgs{w, wio, counters_[w], txq, egress_burst, uint16_t(spec.ports.size())});
        } else {
            auto q = std::make_unique<QosEgress>(*tm_, wio, counters_[w], w, txq, egress_burst);
            s.qos = q.get();
            s.egress = std::move(q);
        }
        s.worker = std::make_unique<Worker>(w, ctx_, wio, *s.egress, counters_[w], std::move(rx),
                                            opt.burst);
        workers_.push_back(std::move(s));
    }
}

Dataplane::~Dataplane() {
    // Workers first (each before its egress, which frees what it still holds), then what they
    // read.
    for (auto &s : workers_) {
        s.worker.reset();
        s.egress.reset();
    }
    workers_.clear();
    tm_.reset();
    rib_.reset();
    own_fib_.reset();
}

PfcEngine &Dataplane::pfc() {
    return tm_->pfc();
}
const PfcEngine &Dataplane::pfc() const {
    return tm_->pfc();
}

void Dataplane::set_punt(Punt *punt) {
    ctx_.punt = punt;
    for (auto &p : ctx_.ports) p.parse.accept_lldp = punt != nullptr;
}

void Dataplane::set_trace(uint16_t w, TraceRing *ring) {
    workers_[w].worker->set_trace(ring);
    if (workers_[w].qos) workers_[w].qos->set_trace(ring);
}

}  // namespace rocesw
