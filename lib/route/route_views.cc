#include "route/route_views.h"

namespace rocesw {

using nlohmann::json;

namespace {

json routes_view(const std::vector<std::string> &names, const Rib &rib) {
    json out = json::array();
    for (const auto &r : rib.routes()) {
        json nh = {
            {"id", r.nexthop_id},
            {"kind", r.nh.kind == NextHopKind::forward      ? "forward"
                     : r.nh.kind == NextHopKind::local      ? "local"
                     : r.nh.kind == NextHopKind::glean      ? "glean"
                     : r.nh.kind == NextHopKind::unresolved ? "unresolved"
                     : r.nh.kind == NextHopKind::ecmp_group ? "ecmp_group"
                     : r.nh.kind == NextHopKind::discard    ? "discard"
                     : r.nh.kind == NextHopKind::reject     ? "reject"
                                                            : "drop"},
            {"via", r.via ? json(r.via->str()) : json(nullptr)},
            {"port", r.nh.kind == NextHopKind::ecmp_group ? json("group " + std::to_string(r.nh.group))
                     : r.nh.kind == NextHopKind::discard ||
                             r.nh.kind == NextHopKind::reject
                         ? json(nullptr)
                                                          : json(names[r.nh.port])},
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
    for (const auto &[src, n] : rib.route_counts()) by_source[src] = n;
    return {{"routes", out},
            {"counts",
             {{"ipv4", rib.route_count(false)},
              {"ipv6", rib.route_count(true)},
              {"by_source", by_source}}}};
}

json neighbours_view(const std::vector<std::string> &names, const Rib &rib) {
    json out = json::array();
    for (const auto &n : rib.neighbours()) {
        json e = {{"ip", n.ip.str()},
                  {"mac", n.mac.str()},
                  {"port", names[n.port]},
                  {"source", n.learned ? "learned" : "static"}};
        if (n.kernel_mac) e["kernel_mac"] = n.kernel_mac->str();  // the config's MAC is used
        out.push_back(std::move(e));
    }
    return {{"neighbours", out}};
}

}  // namespace

void register_route_views(ViewRegistry &r, const std::vector<std::string> &port_names,
                          const Rib &rib_ref) {
    const Rib *rib = &rib_ref;
    const std::vector<std::string> names = port_names;
    r.commands.read_only("routes", "IPv4/IPv6 routes and their next hops",
                         [rib, names](const CommandArgs &) { return routes_view(names, *rib); });
    r.commands.read_only("neighbours", "neighbour (ARP/ND) entries",
                         [rib, names](const CommandArgs &) { return neighbours_view(names, *rib); });
    r.metrics.gauge("rocesw_routes", "Routes in the RIB, by address family", [rib](MetricSink &s) {
        s.sample({{"family", "ipv4"}}, rib->route_count(false));
        s.sample({{"family", "ipv6"}}, rib->route_count(true));
    });
    r.metrics.gauge("rocesw_neighbours", "Neighbour (ARP/ND) entries",
                    [rib](MetricSink &s) { s.sample({}, rib->neighbours().size()); });
}

}  // namespace rocesw
