#include "sim/lab.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "sim/engine.h"
#include "sim/fct.h"
#include "sim/routing.h"

namespace rocesw::sim {

using nlohmann::json;

static std::string dotted(uint32_t a) {
    char b[16];
    std::snprintf(b, sizeof b, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
    return b;
}
std::string lab_host_ip(uint32_t host) {
    return dotted(host_address(host));
}
std::string lab_host_gateway(uint32_t host) {
    return dotted((host_address(host) & ~0xFFu) | 254);
}
std::string lab_host_subnet(uint32_t host) {
    return dotted(host_address(host) & ~0xFFu) + "/24";
}
std::string lab_link_ip(uint32_t link, bool b_side) {
    return dotted(lab_link_addr(link, b_side));
}

// The address of `node`'s end of its port `p` (its link's /31, or the host subnet's).
static std::string port_ip(const Topology &t, uint32_t node, uint16_t p, uint32_t *len) {
    const PortRef &r = t.ports(node)[p];
    if (t.is_host(node)) {
        *len = 24;
        return lab_host_ip(node);
    }
    if (t.is_host(r.peer)) {
        *len = 24;
        return lab_host_gateway(r.peer);
    }
    *len = 31;
    return lab_link_ip(r.link, node > r.peer);
}

// A switch's routes: per destination host subnet the ECMP next hops, hosts cabled to it left
// out (connected). `withdrawn`: also the unreachable destinations, with no next hops.
static json switch_routes(const Topology &t, const EcmpRouting &routing, uint32_t n,
                          bool withdrawn) {
    json routes = json::array();
    for (uint32_t dst : t.hosts()) {
        auto hops = routing.next_hops(n, dst);
        if (hops.size() == 1 && hops[0].neighbour == dst) continue;
        if (hops.empty() && (!withdrawn || routing.distance(n, dst) == 0)) continue;
        if (hops.empty()) {
            // Cabled here but the link is down: no route either way (connected handles it).
            bool cabled = false;
            for (const PortRef &r : t.ports(n)) cabled |= r.peer == dst;
            if (cabled) continue;
        }
        json nh = json::array();
        for (const NextHop &h : hops) {
            uint32_t len = 0;
            const PortRef &r = t.ports(n)[h.port];
            nh.push_back({{"port", h.port},
                          {"neighbour", h.neighbour},
                          {"via", port_ip(t, h.neighbour, r.peer_port, &len)}});
        }
        routes.push_back({{"dst", dst}, {"prefix", lab_host_subnet(dst)}, {"next_hops", nh}});
    }
    return routes;
}

static json mac_json(const MacAddr &m) {
    return m.str();
}

static json priorities(uint8_t mask) {
    json l = json::array();
    for (unsigned p = 0; p < 8; p++)
        if (mask >> p & 1) l.push_back(p);
    return l;
}

// A flow's own class (null: hosts.traffic's), as rocesim's hosts resolve its pg.
// The class of host `src`'s flows with priority group `pg` as rocesim's hosts resolve it
// (null: hosts.traffic's).
static json class_json(const Scenario &s, const std::vector<PortQos> &access, uint32_t src,
                       const std::optional<uint8_t> &pg) {
    if (!pg) return nullptr;
    const auto c =
        resolve_flow_class(access.at(src), s.roce.traffic, *pg, flow_class_where(s, src));
    if (!c) return nullptr;
    return {{"data_dscp", c->data_dscp},
            {"data_priority", c->data_priority},
            {"ack_dscp", c->ack_dscp},
            {"ack_priority", c->ack_priority}};
}

json lab_description(const Scenario &s) {
    const Topology &t = s.topo;
    EcmpRouting routing(t);
    json lab;
    lab["format"] = kLabFormat;
    lab["source"] =
        s.source.empty()
            ? ""
            : std::filesystem::weakly_canonical(std::filesystem::absolute(s.source)).string();
    lab["seed"] = s.seed;
    lab["until_ns"] = s.until / kPsPerNs;
    lab["sample_interval_ns"] = s.sample_interval / kPsPerNs;  // 0: no queue samples
    lab["qos_profile"] =
        s.qos_source == "built-in SONiC default"
            ? json(nullptr)
            : json(std::filesystem::weakly_canonical(std::filesystem::absolute(s.qos_source))
                       .string());
    lab["mtu"] = s.mtu;
    json lb = {{"policy", s.lb_policy},
               {"seed", s.lb_seed},
               {"flowlet_gap_us", s.flowlet_gap_us},
               {"switches", json::object()},
               {"plugins", s.lb_plugins}};
    for (const auto &[n, pol] : s.lb_per_switch) lb["switches"][std::to_string(n)] = pol;
    lab["lb"] = lb;

    json nodes = json::array();
    for (uint32_t n = 0; n < t.node_count(); n++) {
        json nd;
        nd["id"] = n;
        const bool host = t.is_host(n);
        nd["kind"] = host ? "host" : "switch";
        std::string name = t.name(n);
        if (name.empty()) {  // appended, not ("h" or "s") + to_string: GCC 12's bogus -Wrestrict
            name = host ? "h" : "s";
            name += std::to_string(n);
        }
        nd["name"] = name;
        json ports = json::array();
        for (uint16_t p = 0; p < t.ports(n).size(); p++) {
            const PortRef &r = t.ports(n)[p];
            const TopoLink &l = t.link(r.link);
            uint32_t len = 0;
            const std::string ip = port_ip(t, n, p, &len);
            ports.push_back({{"port", p},
                             {"link", r.link},
                             {"peer", r.peer},
                             {"peer_port", r.peer_port},
                             {"mac", mac_json(Engine::port_mac(n, p))},
                             {"ipv4", ip + "/" + std::to_string(len)},
                             {"rate_bps", l.rate_bps},
                             {"delay_ps", l.delay_ps}});
        }
        nd["ports"] = ports;
        if (host) {
            nd["ip"] = lab_host_ip(n) + "/24";
            nd["address_hex"] = [&] {
                char b[9];
                std::snprintf(b, sizeof b, "%08x", host_address(n));
                return std::string(b);
            }();
            if (!t.ports(n).empty()) {
                const PortRef &r = t.ports(n)[0];
                nd["gateway"] = lab_host_gateway(n);
                nd["gateway_mac"] = mac_json(Engine::port_mac(r.peer, r.peer_port));
                nd["switch"] = r.peer;
                nd["switch_port"] = r.peer_port;
            }
        } else {
            nd["lb_policy"] = s.lb_policy;
            if (auto it = s.lb_per_switch.find(n); it != s.lb_per_switch.end())
                nd["lb_policy"] = it->second;
            nd["lb_seed"] = s.lb_seed ^ (uint64_t(n) * 0x9E3779B97F4A7C15ull);
            nd["routes"] = switch_routes(t, routing, n, false);
        }
        nodes.push_back(nd);
    }
    lab["nodes"] = nodes;

    json links = json::array();
    for (uint32_t i = 0; i < t.link_count(); i++) {
        const TopoLink &l = t.link(i);
        links.push_back({{"index", i},
                         {"a", l.a},
                         {"port_a", l.port_a},
                         {"b", l.b},
                         {"port_b", l.port_b},
                         {"rate_bps", l.rate_bps},
                         {"delay_ps", l.delay_ps},
                         {"error_rate", l.error_rate}});
    }
    lab["links"] = links;

    const RoceHostSpec &R = s.roce;
    // Flows' classes and the priorities the hosts honour PFC for, resolved as rocesim's hosts
    // do (roce_hosts.h: resolve_flow_class, hosts_pfc_mask) at each sender's switch port.
    const std::vector<PortQos> access = host_access_classes(s);
    lab["roce"] = uses_roce(s);
    lab["hosts_profile"] = {
        {"mtu", R.mtu},
        {"ack_every", R.ack_every},
        {"window", R.window},
        {"rto_ns", R.rto_ns},
        {"dcqcn", R.dcqcn_text.empty() ? json(nullptr) : json::parse(R.dcqcn_text)},
        {"traffic", R.traffic_text.empty() ? json(nullptr) : json::parse(R.traffic_text)},
        {"dcqcn_enabled", R.dcqcn_enabled},
        {"dcqcn_profile", R.dcqcn_profile},
        {"standalone_payload", R.standalone.payload_bytes},
        {"standalone_header", R.standalone.header_bytes},
        {"pfc_priorities", priorities(hosts_pfc_mask(s, R.traffic, access))}};

    // Flows in start order (ties: file order), numbered and given source ports as RoceHosts
    // does, so fct.txt lines match rocesim's.
    std::vector<uint32_t> order(s.flows.size());
    for (uint32_t i = 0; i < order.size(); i++) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return s.flows[a].start_ns < s.flows[b].start_ns;
    });
    SourcePorts sports(t.node_count());
    json flows = json::array();
    for (uint32_t i : order) {
        const FlowRecord &f = s.flows[i];
        const PathInfo p = routing.path(f.src, f.dst, R.standalone.payload_bytes);
        flows.push_back({{"id", flows.size()},
                         {"src", f.src},
                         {"dst", f.dst},
                         {"size", f.size_bytes},
                         {"start_ns", f.start_ns},
                         {"sport", sports.next(f.src)},
                         {"dport", f.dport},
                         {"pg", f.pg ? json(*f.pg) : json(nullptr)},
                         {"class", class_json(s, access, f.src, f.pg)},
                         {"hops", p.hops},
                         {"standalone_fct_ns",
                          p.reachable ? standalone_fct_ns(f.size_bytes, p, R.standalone) : 0}});
    }
    lab["flows"] = flows;
    // Collective jobs as their specs (rocehost expands and drives them with the same code,
    // roce/collective.h) and, per job flow, its standalone FCT (fct.txt's last column).
    json jobs = json::array();
    for (const CollectiveWorkload &j : s.jobs) {
        json classes = json::array();  // each rank's flows' class, as a flow's `class`
        for (uint32_t h : j.spec.hosts) classes.push_back(class_json(s, access, h, j.spec.pg));
        json standalone = json::array();
        for (const roce::CollectiveFlow &f : roce::make_collective(j.spec).flows) {
            const PathInfo p = routing.path(f.src, f.dst, R.standalone.payload_bytes);
            standalone.push_back(p.reachable ? standalone_fct_ns(f.size_bytes, p, R.standalone)
                                             : 0);
        }
        jobs.push_back(
            {{"kind", roce::collective_name(j.spec.kind)},
             {"hosts", j.spec.hosts},
             {"bytes", j.spec.bytes_per_rank},
             {"iterations", j.spec.iterations},
             {"compute_gap_ns", j.spec.compute_gap_ns},
             {"step_gap_ns", j.spec.step_gap_ns},
             {"schedule", j.spec.a2a == AllToAllSchedule::pairwise ? "pairwise" : "simultaneous"},
             {"dport", j.spec.dport},
             {"pg", j.spec.pg ? json(*j.spec.pg) : json(nullptr)},
             {"classes", classes},
             {"start_ns", j.start_ns},
             {"standalone_fct_ns", standalone}});
    }
    lab["jobs"] = jobs;
    json udp = json::array();
    for (const UdpFlowSpec &u : s.udp)
        udp.push_back({{"src", u.src},
                       {"dst", u.dst},
                       {"rate_bps", u.rate_bps},
                       {"frame_bytes", u.frame_bytes},
                       {"start_ns", u.start / kPsPerNs},
                       {"stop_ns", u.stop == kNever ? json(nullptr) : json(u.stop / kPsPerNs)},
                       {"dscp", u.dscp},
                       {"ecn", u.ecn},
                       {"priority", udp_flow_priority(access.at(u.src), u.dscp)},
                       {"sport", u.sport},
                       {"dport", u.dport}});
    lab["udp_flows"] = udp;

    json events = json::array();
    // Link events in time order, each with every switch's routes once it has converged
    // (`routes_after`: the simulator's recomputation, withdrawn destinations with no hops).
    std::vector<size_t> order_ev(s.events.size());
    for (size_t i = 0; i < order_ev.size(); i++) order_ev[i] = i;
    std::stable_sort(order_ev.begin(), order_ev.end(),
                     [&](size_t a, size_t b) { return s.events[a].at < s.events[b].at; });
    EcmpRouting after(t);
    for (size_t i : order_ev) {
        const LinkEvent &e = s.events[i];
        const TopoLink &l = t.link(e.link);
        after.set_link_up(e.link, e.up);
        after.recompute();
        json ra = json::object();
        for (uint32_t n : t.switches()) ra[std::to_string(n)] = switch_routes(t, after, n, true);
        events.push_back({{"at_ns", e.at / kPsPerNs},
                          {"kind", e.up ? "link_up" : "link_down"},
                          {"link", e.link},
                          {"a", l.a},
                          {"b", l.b},
                          {"convergence_ns", e.convergence / kPsPerNs},
                          {"routes_after", ra}});
    }
    for (const HostEvent &e : s.host_events)
        events.push_back({{"at_ns", e.at / kPsPerNs},
                          {"kind", e.kind == HostEvent::pfc_storm ? "pfc_storm" : "slow_receiver"},
                          {"host", e.node},
                          {"until_ns", e.until / kPsPerNs},
                          {"priority", e.priority},
                          {"interval_ns", e.interval / kPsPerNs},
                          {"xoff_bytes", e.xoff_bytes}});
    std::stable_sort(events.begin(), events.end(),
                     [](const json &a, const json &b) { return a["at_ns"] < b["at_ns"]; });
    lab["events"] = events;
    return lab;
}

}  // namespace rocesw::sim
