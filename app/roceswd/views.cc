// The process-level views of the running switch (info, ports with ethdev state, latency) and
// the wiring of every module's commands and families. Read-only: counters are summed over
// workers without locks.
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <mutex>

#include "switch.h"

#include "lb/lb_views.h"
#include "pipeline/pipeline_views.h"
#include "qos/pfc_views.h"
#include "qos/qos_views.h"
#include "route/route_views.h"

namespace rocesw {

using nlohmann::json;

static json addr_list(const std::vector<IfAddr> &v) {
    json a = json::array();
    for (const auto &x : v) a.push_back(x.str());
    return a;
}

// Packets the device counted per RX queue (rte_eth_stats.q_ipackets; the first
// RTE_ETHDEV_QUEUE_STAT_CNTRS queues, zeros where the driver keeps no per-queue counts).
static json rx_queue_packets(const rte_eth_stats &st, uint16_t n_rxq) {
    json q = json::array();
    for (uint16_t i = 0; i < n_rxq && i < RTE_ETHDEV_QUEUE_STAT_CNTRS; i++)
        q.push_back(st.q_ipackets[i]);
    return q;
}

json Switch::view_info() const {
    double up = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    // The switch clock (the workers' `now`, the event trace's time_ns) and CLOCK_MONOTONIC read
    // back to back: another process maps trace times onto its own clock with the pair.
    const uint64_t clock_ns = clock_.now_ns();
    timespec mono{};
    clock_gettime(CLOCK_MONOTONIC, &mono);
    return {{"name", cfg_.sw.name},
            {"version", ROCESW_VERSION},
            {"uptime_s", up},
            {"clock",
             {{"now_ns", clock_ns},
              {"monotonic_ns", uint64_t(mono.tv_sec) * 1'000'000'000ull + uint64_t(mono.tv_nsec)}}},
            {"workers", cfg_.sw.workers},
            {"file_prefix", cfg_.sw.file_prefix},
            {"pid", getpid()},
            {"config", cfg_.source},
            {"idle", cfg_.sw.idle == IdleMode::adaptive ? "adaptive" : "busy"},
            {"control_socket", cfg_.sw.control_socket},
            // The bound metrics port (listen port 0 picks one); null without an endpoint.
            {"prometheus_port", prom_ ? json(prom_->port()) : json(nullptr)},
            {"mbufs", view_mbufs()},
            {"dpdk_heap", view_dpdk_heap()},
            // The event trace: its file (null: none) and whether writing it failed (logged).
            {"trace",
             {{"file", cfg_.telemetry.trace_file.empty() ? json(nullptr)
                                                         : json(cfg_.telemetry.trace_file)},
              {"failed", trace_failed_.load()}}}};
}

// DPDK's malloc heaps (rte_malloc: FIB tables, rings, pools), summed over the sockets. A soak
// compares allocated_bytes before and after: equal when nothing allocated there leaked.
json Switch::view_dpdk_heap() {
    uint64_t alloc = 0, free = 0, count = 0;
    for (unsigned i = 0; i < rte_socket_count(); i++) {
        rte_malloc_socket_stats st{};
        if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) != 0) continue;
        alloc += st.heap_allocsz_bytes;
        free += st.heap_freesz_bytes;
        count += st.alloc_count;
    }
    return {{"allocated_bytes", alloc}, {"free_bytes", free}, {"allocations", count}};
}

// The packet mbuf pool: its size and how many are out of it. Mbufs in the per-lcore caches
// count as available; RX descriptor rings the devices filled count as in use (a constant per
// port). With no traffic and drained queues `in_use` returns to the same value, which the soak
// (tools/soak) checks.
json Switch::view_mbufs() const {
    const rte_mempool *mp = ports_->pool();
    if (!mp) return nullptr;
    return {{"pool", mp->name},
            {"size", mp->size},
            {"in_use", rte_mempool_in_use_count(mp)},
            {"available", rte_mempool_avail_count(mp)}};
}

// "route_learn PREFIX [PORT:VIA ...] ...": learned routes (origin "rocelab") set from the
// control socket, as netlink sync sets them from the kernel; a lab's route changes without a
// routing daemon. All arguments are checked before anything changes.
json Switch::route_learn(const CommandArgs &args) {
    std::vector<std::pair<IpPrefix, LearnedRoute>> set;
    for (const auto &a : args) {
        if (a.find('/') != std::string::npos) {
            auto p = parse_prefix(a);
            if (!p) throw CommandError("route_learn: '" + a + "' is not a prefix");
            set.push_back({*p, LearnedRoute{"rocelab", {}}});
            continue;
        }
        const size_t c = a.find(':');
        if (set.empty() || c == std::string::npos)
            throw CommandError("route_learn: expected PREFIX [PORT:VIA ...] ..., got '" + a + "'");
        const std::string port = a.substr(0, c);
        auto via = parse_ip(a.substr(c + 1));
        size_t i = 0;
        while (i < cfg_.ports.size() && cfg_.ports[i].name != port) i++;
        if (i == cfg_.ports.size() || !via)
            throw CommandError("route_learn: '" + a + "': no port '" + port + "' or bad address");
        set.back().second.paths.push_back(LearnedPath{uint8_t(i), *via, 1});
    }
    size_t changed = 0;
    for (auto &[p, r] : set)
        changed += r.paths.empty() ? rib_->del_learned(p) : rib_->set_learned(p, std::move(r));
    const size_t refused = rib_->sync();
    return {{"routes", set.size()}, {"changed", changed}, {"refused", refused}};
}

// "port_link PORT up|down" (TrafficManager::set_link_down). Moving routes is the routing's
// job: with host interfaces the port's carrier follows (on_link_change), as for a pulled
// cable, so the route sync stops using the port and BIRD's sessions over it go down (`check
// link`); without, routes stay (rocelab's route_learn moves them at the scenario's
// convergence).
json Switch::port_link(const CommandArgs &args) {
    if (args.size() != 2 || (args[1] != "up" && args[1] != "down"))
        throw CommandError("port_link: expected PORT up|down");
    size_t i = 0;
    while (i < cfg_.ports.size() && cfg_.ports[i].name != args[0]) i++;
    if (i == cfg_.ports.size()) throw CommandError("port_link: no port '" + args[0] + "'");
    if (!qos_) throw CommandError("port_link: no traffic manager");
    const bool down = args[1] == "down";
    const bool was = qos_->link_down(uint16_t(i));
    qos_->set_link_down(uint16_t(i), down);
    if (was != down) {
        spdlog::info("port {}: link set {} (port_link)", args[0], args[1]);
        on_link_change(i);
    }
    return {{"port", args[0]}, {"admin_down", down}, {"changed", was != down}};
}

json Switch::view_ports() const {
    json out = json::array();
    const auto &eps = ports_->ports();
    for (size_t i = 0; i < cfg_.ports.size(); i++) {
        const PortConfig &pc = cfg_.ports[i];
        const EthPort &ep = eps[i];
        PortTotals t = sum_port(counters_, workers_.size(), i);
        rte_eth_stats st{};
        rte_eth_stats_get(ep.port_id, &st);
        json xdp = nullptr;  // the XDP program's split of what the interface received
        if (i < xdp_.size() && xdp_[i]) {
            json c = json::object();
            auto v = xdp_[i]->counters();
            for (size_t r = 0; r < v.size(); r++) c[afxdp_reason_names()[r]] = v[r];
            xdp = {{"interface", pc.af_xdp->interface},
                   {"mode", xdp_[i]->mode()},
                   {"attach", xdp_[i]->attach()},
                   {"prog_id", xdp_[i]->prog_id()},
                   {"packets", c}};
        }
        out.push_back({{"index", i},
                       {"name", pc.name},
                       {"device", pc.device},
                       {"driver", ep.driver},
                       {"mac", pc.mac.str()},
                       {"mtu", pc.mtu},
                       {"speed_mbps", pc.speed_mbps},
                       {"link",
                        {{"up", ep.link.link_status == RTE_ETH_LINK_UP},
                         {"admin_down", qos_ && qos_->link_down(uint16_t(i))},
                         {"lost", qos_ && qos_->carrier_down(uint16_t(i))},
                         {"speed_mbps", ep.link.link_speed},
                         {"duplex", ep.link.link_duplex ? "full" : "half"},
                         {"changes", ep.link_changes}}},
                       {"rx_queues", ep.n_rxq},
                       {"rx_queue_packets", rx_queue_packets(st, ep.n_rxq)},
                       {"tx_queues", ep.n_txq},
                       {"ipv4", addr_list(pc.ipv4)},
                       {"ipv6", addr_list(pc.ipv6)},
                       {"rx_packets", t.rx_packets},
                       {"rx_bytes", t.rx_bytes},
                       {"tx_packets", t.tx_packets},
                       {"tx_bytes", t.tx_bytes},
                       {"rx_nombuf", st.rx_nombuf},
                       {"tap_rx_rearms", ep.tap_rx_rearms},
                       {"rx_missed", st.imissed},
                       {"rx_errors", st.ierrors},
                       {"tx_errors", st.oerrors},
                       {"drops", t.drops_total()},
                       {"local_packets", t.local_packets},
                       {"punted", t.punted},
                       {"af_xdp", xdp}});
    }
    return {{"ports", out}};
}

// Latency (doc/observability.md, "Latency"): per traffic class, from the RX burst that
// received a packet to the TX burst that handed it to the device, since start or since the
// last `clear latency`. Percentiles are bucket midpoints (within 1.6 %); max is to bucket
// precision too (the exact all-time maximum is max_all_us).
json Switch::view_latency() const {
    json out = {{"enabled", latency_ != nullptr}, {"classes", json::array()}};
    if (!latency_) return out;
    const double hz = double(rte_get_tsc_hz());
    auto us = [hz](uint64_t ticks) { return std::round(double(ticks) * 1e9 / hz) / 1000.0; };
    const LatencySnapshot now = latency_snapshot(latency_.get(), workers_.size());
    uint64_t total = 0;
    for (unsigned c = 0; c < kLatClasses; c++) {
        const LatencyClassSnapshot d = now.tc[c].since(latency_base_.tc[c]);
        total += d.count;
        out["classes"].push_back({{"tc", c},
                                  {"packets", d.count},
                                  {"p50_us", us(d.quantile(0.5))},
                                  {"p99_us", us(d.quantile(0.99))},
                                  {"p999_us", us(d.quantile(0.999))},
                                  {"max_us", us(d.window_max())},
                                  {"mean_us", d.count ? us(d.sum / d.count) : 0.0},
                                  {"max_all_us", us(now.tc[c].max)}});
    }
    out["packets"] = total;
    out["since_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - latency_since_).count();
    out["tsc_hz"] = uint64_t(hz);
    out["bucket_precision"] = 1.0 / kLatSub;
    return out;
}

// The Switch only wires: each module registers its own commands and families (read-only or
// mutating, views/registry.h); the process adds what is its own (info, ports with ethdev link
// state and device counters, latency, clear, control plane). Mutating commands are allowed on
// the control socket here, by the config where it has a setting (TESTPLAN S1); rte_telemetry
// never gets them.
void Switch::register_commands() {
    ViewRegistry reg{server_, metrics_};
    std::vector<std::string> names;
    for (const auto &p : cfg_.ports) names.push_back(p.name);

    PipelineViewSources pipe{names, counters_, {}, {}, {}, qos_};
    LbViewSources lb;
    lb.groups = &fib_->groups();
    lb.list_groups = [this] { return rib_->groups(); };
    lb.set_policy = [this](const std::string &target, const std::string &policy) {
        return rib_->set_policy(target, policy);
    };
    lb.port_names = names;
    for (auto &w : workers_) {
        pipe.workers.push_back(w.worker);
        pipe.lcores.push_back(w.lcore);
        lb.balancers.push_back(&w.worker->balancer());
        pipe.egress.push_back(w.egress);
    }
    register_pipeline_views(reg, std::move(pipe));
    register_route_views(reg, names, *rib_);
    register_lb_views(reg, std::move(lb));
    register_qos_views(reg, names, *qos_);
    register_pfc_views(reg, {names, pfc_modes_, qos_, [this] { return clock_.now_ns(); }});

    server_.add("info", "switch name, version, uptime, workers",
                [this](auto &) { return view_info(); });
    server_.add("ports", "ports with link state and counters",
                [this](auto &) { return view_ports(); });
    server_.add("latency", "RX->TX latency per traffic class: p50/p99/p99.9/max (telemetry.latency)",
                [this](auto &) { return view_latency(); });
    server_.add("punt", "control-plane policing per punt class, host interface counters",
                [this](auto &) { return view_punt(); });
    server_.add("control", "control plane: routes by source, netlink sync, FIB latency",
                [this](auto &) { return view_control(); });
    server_.mutating("clear",
                     "clear watermarks [PORT...] | latency (needs telemetry.allow_clear: true)",
                     [](const CommandArgs &) -> nlohmann::json {
                         throw CommandError(
                             "clear: what? (allowed: watermarks [PORT...], latency; counters are "
                             "never reset, Prometheus and rocectl watch use their rates)");
                     });
    server_.mutating(
        "route_learn",
        "set learned routes: PREFIX [PORT:VIA ...] ... (several prefixes per call; a prefix "
        "without paths is withdrawn; rocelab moves routes with it)",
        [this](const CommandArgs &args) { return route_learn(args); });
    server_.mutating(
        "port_link",
        "PORT up|down: an administratively down link drops every frame the port would send, "
        "counted as port_stopped (a pulled cable; rocelab's link events)",
        [this](const CommandArgs &args) { return port_link(args); });
    server_.mutating("clear_latency", "restart the latency view's window (telemetry.latency)",
                     [this](const CommandArgs &args) { return clear_latency(args); });

    // Which mutating commands the control socket serves.
    const std::string no_clear = "clear: not allowed by the config (telemetry.allow_clear: false)";
    for (const char *c : {"clear", "clear_watermarks", "clear_latency"})
        server_.allow(c, cfg_.telemetry.allow_clear, no_clear);
    // The others each have their setting (doc/security.md): refused unless the config says so.
    server_.allow("route_learn", cfg_.control_plane.allow_route_learn,
                  "route_learn: not allowed by the config (control_plane.allow_route_learn: "
                  "false)");
    server_.allow("lb_policy", cfg_.lb.allow_policy_change,
                  "lb policy: not allowed by the config (lb.allow_policy_change: false)");
    // Draining the path-change records is the point of recording them.
    server_.allow("lb_events", cfg_.lb.trace_path_changes,
                  "lb events: not allowed by the config (lb.trace_path_changes: false: no path "
                  "changes are recorded)");
    server_.allow("port_link", cfg_.control_plane.allow_port_link,
                  "port_link: not allowed by the config (control_plane.allow_port_link: false)");
}

}  // namespace rocesw
