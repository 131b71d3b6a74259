#include "lb/lb_views.h"

#include <cstdlib>
#include <memory>
#include <mutex>

namespace rocesw {

using nlohmann::json;

namespace {

json lb_view(const LbViewSources &src) {
    const LbSettings &st = src.groups->settings();
    json groups = json::array();
    for (const auto &g : src.list_groups()) {
        json members = json::array();
        for (const auto &m : g.members) {
            uint64_t pk = 0, by = 0, fl = 0;
            for (const LoadBalancer *b : src.balancers) {
                const LbMemberCounters &c = b->counters().member(g.id, m.slot);
                pk += c.packets.load();
                by += c.bytes.load();
                fl += c.flowlets.load();
            }
            members.push_back({{"slot", m.slot},
                               {"via", m.via.str()},
                               {"port", src.port_names[m.port]},
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
        for (const LoadBalancer *b : src.balancers) {
            const LbPolicyCounters &c = b->counters().policies[p];
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
    uint64_t occ = 0, cap = 0, no_member = 0, ev_dropped = 0, carried = 0;
    for (const LoadBalancer *b : src.balancers) {
        const auto &c = b->counters();
        occ += c.flowlet_occupancy.load();
        carried += c.flowlets_carried.load();
        cap += b->flowlet_capacity();
        no_member += c.no_member.load();
        ev_dropped += c.events_dropped.load();
    }
    return {{"settings",
             {{"hash_function", flow_hash_fn_name(st.hash_function)},
              {"seed", st.seed},
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
            {"flowlet_table", {{"entries", cap}, {"occupancy", occ}, {"carried", carried}}},
            {"no_member_drops", no_member},
            {"events_dropped", ev_dropped}};
}

// Drains up to `max` path-change records from every worker's ring (single consumer: the
// control thread, one call at a time under the server's handler lock).
json lb_events(const LbViewSources &src, size_t max) {
    json out = json::array();
    std::vector<PathEvent> ev;
    for (LoadBalancer *b : src.balancers) b->events().drain(ev, max);
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

}  // namespace

void register_lb_views(ViewRegistry &r, LbViewSources src_in) {
    auto src = std::make_shared<const LbViewSources>(std::move(src_in));
    r.commands.read_only(
        "lb",
        "load balancing: ECMP groups, members, policy counters "
        "('policy <prefix|group|all> <name>' switches a policy, 'events [max]')",
        [src](const CommandArgs &args) {
            if (!args.empty())
                throw CommandError("lb: unknown argument '" + args[0] + "' (policy, events)");
            return lb_view(*src);
        });
    r.commands.mutating(
        "lb_policy", "switch a load-balancing policy at runtime: <prefix|group id|all> <policy>",
        [src](const CommandArgs &args) -> json {
            if (args.size() != 2)
                throw CommandError("lb policy: expected <prefix|group id|all> <policy>");
            std::string err = src->set_policy(args[0], args[1]);
            if (!err.empty()) throw CommandError("lb policy: " + err);
            return {{"ok", true}, {"target", args[0]}, {"policy", args[1]}};
        });
    r.commands.mutating(
        "lb_events", "drain the path-change records of lb.trace_path_changes ([max])",
        [src](const CommandArgs &args) {
            size_t max = PathEventRing::kCapacity;
            if (!args.empty()) {
                char *end = nullptr;
                max = std::strtoul(args[0].c_str(), &end, 10);
                if (args[0].empty() || *end || max == 0)
                    throw CommandError("lb events: '" + args[0] + "' is not a positive count");
            }
            return lb_events(*src, max);
        });

    r.metrics.counter("rocesw_lb_member_packets_total", "Packets sent over each ECMP group member",
                      [src](MetricSink &s) {
                          for (const auto &g : src->list_groups())
                              for (const auto &mb : g.members) {
                                  uint64_t pk = 0;
                                  for (const LoadBalancer *b : src->balancers)
                                      pk += b->counters().member(g.id, mb.slot).packets.load();
                                  // A link-local gateway with its link (fe80::1%p1): the same
                                  // address on two ports is two members, two series.
                                  std::string member = mb.via.str();
                                  if (lb_gateway_link_local(mb.via))
                                      member += "%" + src->port_names[mb.port];
                                  s.sample({{"group", g.prefix.str()}, {"member", member}}, pk);
                              }
                      });
    r.metrics.counter("rocesw_lb_path_changes_total",
                      "Flows whose new flowlet took another member, by policy",
                      [src](MetricSink &s) {
                          for (size_t p = 0; p < lb_policy_count(); p++) {
                              uint64_t v = 0;
                              for (const LoadBalancer *b : src->balancers)
                                  v += b->counters().policies[p].path_changes.load();
                              s.sample({{"policy", lb_policy_name(uint8_t(p))}}, v);
                          }
                      });
    r.metrics.counter("rocesw_lb_flowlets_carried_total",
                      "Flowlets that went on on their next hop when their route moved to another "
                      "ECMP group (a learned route's paths changed)",
                      [src](MetricSink &s) {
                          uint64_t v = 0;
                          for (const LoadBalancer *b : src->balancers)
                              v += b->counters().flowlets_carried.load();
                          s.sample({}, v);
                      });
}

}  // namespace rocesw
