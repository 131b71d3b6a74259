// JSON views of the running switch for rocectl and rte_telemetry. Read-only: counters are
// summed over workers without locks, tables are read through the Rib's own lock.
#include <rte_ethdev.h>
#include <unistd.h>

#include <algorithm>

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
                       {"local_packets", t.local_packets}});
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
                                                            : "drop"},
            {"via", r.via ? json(r.via->str()) : json(nullptr)},
            {"port", cfg_.ports[r.nh.port].name},
            {"mac", r.nh.kind == NextHopKind::forward ? json(r.nh.dst_mac.str()) : json(nullptr)},
            {"resolved", r.nh.kind == NextHopKind::forward || r.nh.kind == NextHopKind::local}};
        out.push_back({{"prefix", r.prefix.str()},
                       {"type", route_source_name(r.source)},
                       {"installed", r.installed},
                       {"nexthop", nh}});
    }
    return {{"routes", out},
            {"counts", {{"ipv4", rib_->route_count(false)}, {"ipv6", rib_->route_count(true)}}}};
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

void Switch::register_commands() {
    server_.add("queues", "8 egress queues per port: depth, watermark, ECN marks, drops ([port...])",
                [this](const std::vector<std::string> &args) { return view_queues(args); });
    server_.add("pfc", "PFC per port: pauses received/sent per priority, PG buffers, watchdog ([port...])",
                [this](const std::vector<std::string> &args) { return view_pfc(args); });
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
    server_.add("workers", "workers, their RX queues and poll counters",
                [this](auto &) { return view_workers(); });
}

}  // namespace rocesw
