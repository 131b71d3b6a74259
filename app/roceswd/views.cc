// JSON views of the running switch for rocectl and rte_telemetry. Read-only: counters are
// summed over workers without locks, tables are read through the Rib's own lock.
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <mutex>

#include "switch.h"

namespace rocesw {

using nlohmann::json;

static json addr_list(const std::vector<IfAddr> &v) {
    json a = json::array();
    for (const auto &x : v) a.push_back(x.str());
    return a;
}

json Switch::view_info() const {
    double up = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    return {{"name", cfg_.sw.name},
            {"version", ROCESW_VERSION},
            {"uptime_s", up},
            {"workers", cfg_.sw.workers},
            {"file_prefix", cfg_.sw.file_prefix},
            {"pid", getpid()},
            {"config", cfg_.source},
            {"idle", cfg_.sw.idle == IdleMode::adaptive ? "adaptive" : "busy"}};
}

json Switch::view_ports() const {
    json out = json::array();
    const auto &eps = ports_->ports();
    for (size_t i = 0; i < cfg_.ports.size(); i++) {
        const PortConfig &pc = cfg_.ports[i];
        const EthPort &ep = eps[i];
        PortTotals t = sum_port(counters_.get(), workers_.size(), i);
        rte_eth_stats st{};
        rte_eth_stats_get(ep.port_id, &st);
        json xdp = nullptr;  // the XDP program's split of what the interface received
        if (i < xdp_.size() && xdp_[i]) {
            json c = json::object();
            auto v = xdp_[i]->counters();
            for (size_t r = 0; r < v.size(); r++) c[afxdp_reason_names()[r]] = v[r];
            xdp = {{"interface", pc.af_xdp->interface},
                   {"mode", xdp_[i]->mode()},
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
                         {"speed_mbps", ep.link.link_speed},
                         {"duplex", ep.link.link_duplex ? "full" : "half"},
                         {"changes", ep.link_changes}}},
                       {"rx_queues", ep.n_rxq},
                       {"tx_queues", ep.n_txq},
                       {"ipv4", addr_list(pc.ipv4)},
                       {"ipv6", addr_list(pc.ipv6)},
                       {"rx_packets", t.rx_packets},
                       {"rx_bytes", t.rx_bytes},
                       {"tx_packets", t.tx_packets},
                       {"tx_bytes", t.tx_bytes},
                       {"rx_nombuf", st.rx_nombuf},
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

json Switch::view_routes() const {
    json out = json::array();
    for (const auto &r : rib_->routes()) {
        json nh = {
            {"id", r.nexthop_id},
            {"kind", r.nh.kind == NextHopKind::forward      ? "forward"
                     : r.nh.kind == NextHopKind::local      ? "local"
                     : r.nh.kind == NextHopKind::glean      ? "glean"
                     : r.nh.kind == NextHopKind::unresolved ? "unresolved"
                     : r.nh.kind == NextHopKind::ecmp_group ? "ecmp_group"
                                                            : "drop"},
            {"via", r.via ? json(r.via->str()) : json(nullptr)},
            {"port", r.nh.kind == NextHopKind::ecmp_group ? "group " + std::to_string(r.nh.group)
                                                          : cfg_.ports[r.nh.port].name},
            {"mac", r.nh.kind == NextHopKind::forward ? json(r.nh.dst_mac.str()) : json(nullptr)},
            {"resolved", r.nh.kind == NextHopKind::forward || r.nh.kind == NextHopKind::local ||
                             r.nh.kind == NextHopKind::ecmp_group}};
        out.push_back({{"prefix", r.prefix.str()},
                       {"type", route_source_name(r.source)},
                       {"origin", r.origin.empty() ? json(nullptr) : json(r.origin)},
                       {"installed", r.installed},
                       {"nexthop", nh}});
    }
    json by_source = json::object();
    for (const auto &[src, n] : rib_->route_counts()) by_source[src] = n;
    return {{"routes", out},
            {"counts",
             {{"ipv4", rib_->route_count(false)},
              {"ipv6", rib_->route_count(true)},
              {"by_source", by_source}}}};
}

json Switch::view_neighbours() const {
    json out = json::array();
    for (const auto &n : rib_->neighbours())
        out.push_back({{"ip", n.ip.str()},
                       {"mac", n.mac.str()},
                       {"port", cfg_.ports[n.port].name},
                       {"source", "static"}});
    return {{"neighbours", out}};
}

json Switch::view_drops(bool all) const {
    json out = json::array();
    uint64_t total = 0;
    for (size_t i = 0; i < cfg_.ports.size(); i++) {
        PortTotals t = sum_port(counters_.get(), workers_.size(), i);
        for (size_t r = 0; r < kDropReasonCount; r++) {
            total += t.drops[r];
            if (!all && t.drops[r] == 0) continue;
            out.push_back({{"port", cfg_.ports[i].name},
                           {"reason", drop_reason_name(DropReason(r))},
                           {"description", drop_reason_text(DropReason(r))},
                           {"packets", t.drops[r]}});
        }
    }
    return {{"drops", out}, {"total", total}};
}

json Switch::view_workers() const {
    json out = json::array();
    for (size_t w = 0; w < workers_.size(); w++) {
        json qs = json::array();
        for (const auto &q : workers_[w].worker->rx_queues())
            qs.push_back({{"port", cfg_.ports[q.port].name}, {"queue", q.queue}});
        const WorkerCounters &c = counters_[w];
        out.push_back({{"id", w},
                       {"lcore", workers_[w].lcore},
                       {"queues", qs},
                       {"polls", c.polls.load()},
                       {"busy_polls", c.busy_polls.load()},
                       {"idle_sleeps", c.idle_sleeps.load()}});
    }
    return {{"workers", out}};
}

json Switch::view_queues(const std::vector<std::string> &args) const {
    json out = json::array();
    for (size_t i = 0; i < cfg_.ports.size(); i++) {
        if (!args.empty() && std::find(args.begin(), args.end(), cfg_.ports[i].name) == args.end())
            continue;
        for (uint8_t q = 0; q < 8; q++) {
            QueueSnapshot s = qos_->queue(uint16_t(i), q);
            json drops = json::object();
            for (size_t d = 0; d < kQueueDropCount; d++)
                if (s.drops[d]) drops[std::string(queue_drop_name(QueueDrop(d)))] = s.drops[d];
            out.push_back({{"port", cfg_.ports[i].name},
                           {"queue", q},
                           {"enq_packets", s.enq_packets},
                           {"enq_bytes", s.enq_bytes},
                           {"deq_packets", s.deq_packets},
                           {"deq_bytes", s.deq_bytes},
                           {"depth_packets", s.depth_packets},
                           {"depth_bytes", s.depth_bytes},
                           {"watermark_bytes", s.watermark_bytes},
                           {"ecn_marked", s.ecn_marked},
                           {"drops", s.drops_total()},
                           {"drops_by_reason", drops}});
        }
    }
    if (!args.empty() && out.empty()) throw CommandError("queues: no port named '" + args[0] + "'");
    return {{"queues", out}};
}

json Switch::view_lb(const std::vector<std::string> &args) {
    if (!args.empty() && args[0] == "policy") {
        if (args.size() != 3)
            throw CommandError("lb policy: expected <prefix|group id|all> <policy>");
        std::string err = rib_->set_policy(args[1], args[2]);
        if (!err.empty()) throw CommandError("lb policy: " + err);
        return {{"ok", true}, {"target", args[1]}, {"policy", args[2]}};
    }
    if (!args.empty() && args[0] == "events") {
        size_t max = PathEventRing::kCapacity;
        if (args.size() > 1) {
            char *end = nullptr;
            max = std::strtoul(args[1].c_str(), &end, 10);
            if (args[1].empty() || *end || max == 0)
                throw CommandError("lb events: '" + args[1] + "' is not a positive count");
        }
        // The rings are single-consumer: one reader at a time (socket and telemetry threads).
        static std::mutex mu;
        std::lock_guard lk(mu);
        json out = json::array();
        std::vector<PathEvent> ev;
        for (auto &s : workers_) s.worker->balancer().events().drain(ev, max);
        for (const auto &e : ev)
            out.push_back({{"time_ns", e.time_ns},
                           {"flow_hash", e.flow_hash},
                           {"src", IpAddr{false, e.src_ip4, {}}.str()},
                           {"dst", IpAddr{false, e.dst_ip4, {}}.str()},
                           {"src_port", e.src_port},
                           {"dst_port", e.dst_port},
                           {"group", e.group},
                           {"old_slot", e.old_slot},
                           {"new_slot", e.new_slot}});
        return {{"events", out}};
    }
    if (!args.empty())
        throw CommandError("lb: unknown argument '" + args[0] + "' (policy, events)");
    const LbSettings &st = fib_->groups().settings();
    json groups = json::array();
    for (const auto &g : rib_->groups()) {
        json members = json::array();
        for (const auto &m : g.members) {
            uint64_t pk = 0, by = 0, fl = 0;
            for (const auto &s : workers_) {
                const LbMemberCounters &c = s.worker->balancer().counters().member(g.id, m.slot);
                pk += c.packets.load();
                by += c.bytes.load();
                fl += c.flowlets.load();
            }
            members.push_back({{"slot", m.slot},
                               {"via", m.via.str()},
                               {"port", cfg_.ports[m.port].name},
                               {"weight", m.weight},
                               {"alive", m.alive},
                               {"mac", m.alive ? json(m.mac.str()) : json(nullptr)},
                               {"packets", pk},
                               {"bytes", by},
                               {"flowlets", fl}});
        }
        groups.push_back({{"id", g.id},
                          {"prefix", g.prefix.str()},
                          {"routes", g.routes},
                          {"policy", g.policy},
                          {"policy_set_at_runtime", g.policy_overridden},
                          {"members", members}});
    }
    json policies = json::array();
    for (size_t p = 0; p < lb_policy_count(); p++) {
        uint64_t v[5] = {};
        for (const auto &s : workers_) {
            const LbPolicyCounters &c = s.worker->balancer().counters().policies[p];
            v[0] += c.packets.load();
            v[1] += c.decisions.load();
            v[2] += c.path_changes.load();
            v[3] += c.fallbacks.load();
            v[4] += c.aged.load();
        }
        policies.push_back({{"name", lb_policy_name(uint8_t(p))},
                            {"packets", v[0]},
                            {"decisions", v[1]},
                            {"path_changes", v[2]},
                            {"fallbacks", v[3]},
                            {"aged", v[4]}});
    }
    uint64_t occ = 0, cap = 0, no_member = 0, ev_dropped = 0;
    for (const auto &s : workers_) {
        const auto &c = s.worker->balancer().counters();
        occ += c.flowlet_occupancy.load();
        cap += s.worker->balancer().flowlet_capacity();
        no_member += c.no_member.load();
        ev_dropped += c.events_dropped.load();
    }
    return {{"settings",
             {{"seed", st.seed},
              {"symmetric", st.symmetric},
              {"hash_dest_qp", st.hash_dest_qp},
              {"default_policy", lb_policy_name(st.default_policy)},
              {"flowlet_gap_us", st.flowlet_gap_us},
              {"flowlet_age_us", st.flowlet_age_us},
              {"flowlet_chooser", st.chooser_least_loaded ? "least_loaded" : "random"},
              {"util_horizon_us", st.util_horizon_us},
              {"trace_path_changes", st.trace_path_changes}}},
            {"groups", groups},
            {"policies", policies},
            {"flowlet_table", {{"entries", cap}, {"occupancy", occ}}},
            {"no_member_drops", no_member},
            {"events_dropped", ev_dropped}};
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

void Switch::register_commands() {
    server_.add("latency", "RX->TX latency per traffic class: p50/p99/p99.9/max (telemetry.latency)",
                [this](auto &) { return view_latency(); });
    server_.add("queues", "8 egress queues per port: depth, watermark, ECN marks, drops ([port...])",
                [this](const std::vector<std::string> &args) { return view_queues(args); });
    server_.add("pfc", "PFC per port: pauses received/sent per priority, PG buffers, watchdog ([port...])",
                [this](const std::vector<std::string> &args) { return view_pfc(args); });
    server_.add("ecn", "WRED/ECN per queue: curves, CE marks, WRED drops ([port...])",
                [this](const std::vector<std::string> &args) { return view_ecn(args); });
    server_.add("info", "switch name, version, uptime, workers",
                [this](auto &) { return view_info(); });
    server_.add("ports", "ports with link state and counters",
                [this](auto &) { return view_ports(); });
    server_.add("routes", "IPv4/IPv6 routes and their next hops",
                [this](auto &) { return view_routes(); });
    server_.add("neighbours", "neighbour (ARP/ND) entries",
                [this](auto &) { return view_neighbours(); });
    server_.add(
        "drops", "drop counters by port and reason ('all' includes zeros)",
        [this](const std::vector<std::string> &args) {
            bool all = false;
            for (const auto &a : args) {
                if (a == "all")
                    all = true;
                else
                    throw CommandError("drops: unknown argument '" + a + "' (allowed: all)");
            }
            return view_drops(all);
        });
    server_.add("punt", "control-plane policing per punt class, host interface counters",
                [this](auto &) { return view_punt(); });
    server_.add("control", "control plane: routes by source, netlink sync, FIB latency",
                [this](auto &) { return view_control(); });
    server_.add("workers", "workers, their RX queues and poll counters",
                [this](auto &) { return view_workers(); });
    server_.add("lb",
                "load balancing: ECMP groups, members, policy counters "
                "('policy <prefix|group|all> <name>' switches a policy, 'events [max]')",
                [this](const std::vector<std::string> &args) { return view_lb(args); });
}

}  // namespace rocesw
