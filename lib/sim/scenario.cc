// The native YAML scenario: all of rocesim's YAML reading is in this file, on the project's
// reader (config/yaml_doc.h: YamlReader), so a scenario is read by the rules of every other
// config file of ours: decimal integers only, true/false, unknown or repeated fields refused,
// sizes in bytes or with K/M/G. Two kinds of value are the simulator's own: rates and times are
// ns-3's spellings (100Gbps, 1us, 250ps: parse_rate_bps, parse_delay_ps) so a scenario writes
// them as HPCC's files do; a time must carry its unit. Errors: "<file>:<line>: <field>: <why>".
#include "sim/scenario.h"

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <filesystem>

#include "config/yaml_doc.h"
#include "lb/plugin.h"
#include "lb/policy.h"
#include "roce/dcqcn_profile.h"
#include "roce/host_config_yaml.h"
#include "sim/routing.h"
#include "sim/topo_gen.h"

namespace rocesw::sim {

namespace {

// YamlReader plus the simulator's values: rates, times, node ids.
class ScenarioReader : public YamlReader {
  public:
    using YamlReader::YamlReader;

    // `key` of the map `m` (already read into `f`); missing: an error on the map's line.
    const YAML::Node &need(const Fields &f, const YAML::Node &m, const std::string &path,
                           std::string_view key, const std::string &what = "") const {
        if (const YAML::Node *n = f.find(key)) return *n;
        fail(m, at(path, key), what.empty() ? "required field missing" : "missing (" + what + ")");
    }
    uint64_t rate_bps(const YAML::Node &n, const std::string &path) const {
        const std::string s = string(n, path);
        try {
            return parse_rate_bps(s);
        } catch (const std::exception &e) {
            fail(n, path, "'" + s + "' is not a rate (e.g. 100Gbps, 25Gbps): " + e.what());
        }
    }
    TimePs time_ps(const YAML::Node &n, const std::string &path) const {
        const std::string s = string(n, path);
        const char *why = "no unit";  // ns-3 reads a bare number as seconds: refused here
        if (!s.empty() && std::isalpha(static_cast<unsigned char>(s.back()))) {
            try {
                return parse_delay_ps(s);
            } catch (const std::exception &e) {
                fail(n, path, "'" + s + "' is not a time (e.g. 10us, 1ms, 500ns): " + e.what());
            }
        }
        fail(n, path, "'" + s + "' is not a time (e.g. 10us, 1ms, 500ns): " + why);
    }
    uint64_t time_ns(const YAML::Node &n, const std::string &path) const {
        return ns(time_ps(n, path));
    }
    uint32_t node(const YAML::Node &n, const std::string &path, const Topology &t,
                  bool host) const {
        const uint32_t id = uint32_t(integer(n, path, 0, UINT32_MAX));
        if (id >= t.node_count())
            fail(n, path,
                 std::to_string(id) + " is not a node (0.." + std::to_string(t.node_count() - 1) +
                     ")");
        if (host && !t.is_host(id)) fail(n, path, std::to_string(id) + " is not a host");
        return id;
    }
    std::vector<uint32_t> hosts(const YAML::Node &n, const std::string &path,
                                const Topology &t) const {
        if (!n.IsSequence()) fail(n, path, "expected a list of host nodes, got " + describe(n));
        std::vector<uint32_t> v;
        for (size_t i = 0; i < n.size(); i++) v.push_back(node(n[i], at(path, i), t, true));
        return v;
    }
    uint8_t pg(const YAML::Node &n, const std::string &path) const {
        return uint8_t(integer(n, path, 0, 7));
    }
    uint16_t port(const YAML::Node &n, const std::string &path, uint64_t lo) const {
        return uint16_t(integer(n, path, lo, 65535));
    }
    // A file named in the scenario: as given when it exists, else relative to the scenario's
    // directory.
    std::string file(const YAML::Node &n, const std::string &path, const std::string &dir,
                     bool prefer_dir = false) const {
        std::filesystem::path p = string(n, path);
        if (p.is_relative() && !dir.empty() && (prefer_dir || !std::filesystem::exists(p)))
            p = std::filesystem::path(dir) / p;
        return p.string();
    }
};

Topology read_topology(const ScenarioReader &r, const YAML::Node &t, const std::string &dir) {
    const std::string P = "topology";
    const Fields f =
        r.fields(t, P,
                 {"type", "hosts", "leaves", "spines", "hosts_per_leaf", "oversubscription",
                  "uplink_rate", "k", "file", "link_rate", "fabric_rate", "link_delay", "pods",
                  "tors_per_pod", "aggs_per_pod", "hosts_per_tor", "cores_per_agg"});
    enum class Type { star, leaf_spine, fat_tree, three_tier, file };
    const Type type = r.enumeration<Type>(
        r.need(f, t, P, "type", "star, leaf_spine, fat_tree, three_tier or file"), "topology.type",
        {{"star", Type::star},
         {"leaf_spine", Type::leaf_spine},
         {"fat_tree", Type::fat_tree},
         {"three_tier", Type::three_tier},
         {"file", Type::file}});
    auto rate_of = [&](std::string_view k, uint64_t def) {
        const YAML::Node *n = f.find(k);
        return n ? r.rate_bps(*n, at(P, k)) : def;
    };
    const uint64_t rate = rate_of("link_rate", 100'000'000'000ull);
    const YAML::Node *dn = f.find("link_delay");
    const TimePs delay = dn ? r.time_ps(*dn, "topology.link_delay") : 1 * kPsPerUs;
    const uint64_t fabric = rate_of("fabric_rate", rate);
    auto u = [&](std::string_view k, uint64_t def, uint64_t lo, uint64_t hi) {
        const YAML::Node *n = f.find(k);
        return uint32_t(n ? r.integer(*n, at(P, k), lo, hi) : def);
    };
    LeafSpineSpec ls;
    ThreeTierSpec tt;
    FatTreeSpec ft;
    StarSpec st;
    std::string file;
    switch (type) {
        case Type::star:
            st = {u("hosts", 2, 1, 31), rate, delay};
            break;
        case Type::leaf_spine:
            ls.leaves = u("leaves", 2, 1, 4096);
            ls.spines = u("spines", 2, 1, 4096);
            ls.hosts_per_leaf = u("hosts_per_leaf", 2, 1, 4096);
            ls.host_rate_bps = rate;
            ls.delay_ps = delay;
            ls.uplink_rate_bps = rate_of("uplink_rate", ls.uplink_rate_bps);
            if (const YAML::Node *o = f.find("oversubscription")) {
                const std::string s = r.string(*o, "topology.oversubscription");
                const size_t colon = s.find(':');
                if (colon == std::string::npos)
                    r.fail(*o, "topology.oversubscription", "'" + s + "' is not a ratio like 3:1");
                const std::string_view sv = s;
                ls.oversub_num = uint32_t(
                    r.integer(sv.substr(0, colon), "topology.oversubscription", 1, 1'000'000));
                ls.oversub_den = uint32_t(
                    r.integer(sv.substr(colon + 1), "topology.oversubscription", 1, 1'000'000));
            }
            break;
        case Type::fat_tree:
            ft = {u("k", 4, 2, 64), rate, fabric, delay};
            break;
        case Type::three_tier:  // HPCC's fat.txt shape; its defaults (fabric 400 Gb/s)
            tt = {u("pods", tt.pods, 1, 4096),
                  u("tors_per_pod", tt.tors_per_pod, 1, 4096),
                  u("aggs_per_pod", tt.aggs_per_pod, 1, 4096),
                  u("hosts_per_tor", tt.hosts_per_tor, 1, 4096),
                  u("cores_per_agg", tt.cores_per_agg, 1, 4096),
                  rate,
                  f.find("fabric_rate") ? fabric : tt.fabric_rate_bps,
                  delay};
            break;
        case Type::file:
            file =
                r.file(r.need(f, t, P, "file", "an HPCC topology.txt"), "topology.file", dir, true);
            break;
    }
    try {
        switch (type) {
            case Type::star:
                return make_star(st);
            case Type::leaf_spine:
                return make_leaf_spine(ls);
            case Type::fat_tree:
                return make_fat_tree(ft);
            case Type::three_tier:
                return make_three_tier(tt);
            case Type::file:
                return load_topology(file);
        }
    } catch (const InputError &) {
        throw;  // the topology file's own "file:line: field: problem"
    } catch (const std::exception &e) {
        r.fail(t, P, e.what());  // a generator's refusal (shape out of range)
    }
    r.fail(t, P, "unknown type");
}

// A YAML node as JSON text with every scalar a string (the readers take quoted values).
nlohmann::json yaml_json(const YAML::Node &n) {
    if (n.IsMap()) {
        nlohmann::json o = nlohmann::json::object();
        for (const auto &kv : n) o[kv.first.as<std::string>()] = yaml_json(kv.second);
        return o;
    }
    if (n.IsSequence()) {
        nlohmann::json a = nlohmann::json::array();
        for (const auto &x : n) a.push_back(yaml_json(x));
        return a;
    }
    return n.IsScalar() ? nlohmann::json(n.Scalar()) : nlohmann::json(nullptr);
}

void read_hosts(const ScenarioReader &r, const YAML::Node &h, RoceHostSpec &R) {
    const std::string P = "hosts";
    const Fields f = r.fields(h, P,
                              {"dcqcn", "traffic", "mtu", "ack_every", "window", "rto",
                               "byte_samples", "standalone_header", "base_rtt"});
    for (const Field &e : f) {
        const std::string w = at(P, e.key);
        const YAML::Node &v = e.value;
        if (e.key == "mtu") R.mtu = uint32_t(r.integer(v, w, 256, 4096));
        if (e.key == "ack_every") R.ack_every = uint32_t(r.integer(v, w, 0, 1 << 20));
        if (e.key == "window") R.window = uint32_t(r.integer(v, w, 0, 1 << 24));
        if (e.key == "rto") R.rto_ns = r.time_ns(v, w);
        if (e.key == "byte_samples") R.byte_samples_ns = r.time_ns(v, w);
        if (e.key == "base_rtt") R.base_rtt_ns = r.time_ns(v, w);
        if (e.key == "standalone_header")
            R.standalone.header_bytes = uint32_t(r.integer(v, w, 0, 1000));
        // The same fields and rules as rocehost's config (roce/host_config_yaml.h).
        if (e.key == "traffic") {
            R.traffic_text = yaml_json(v).dump();
            roce::read_traffic_section(r, v, w, R.traffic);
        }
        if (e.key == "dcqcn") {
            R.dcqcn_text = yaml_json(v).dump();
            roce::read_dcqcn_section(r, v, w, R.dcqcn, R.dcqcn_enabled, R.dcqcn_profile);
        }
    }
}

void read_lb(const ScenarioReader &r, const YAML::Node &lb, Scenario &s, const std::string &dir) {
    const Fields f =
        r.fields(lb, "lb", {"policy", "seed", "flowlet_gap_us", "switches", "plugins"});
    // Plugins first (lb/plugin.h): their policies are names the fields below may use.
    if (auto *n = f.find("plugins")) {
        const auto l = r.list(*n, "lb.plugins");
        for (size_t i = 0; i < l.size(); i++) {
            const std::string path = at("lb.plugins", i);
            const std::string file = lb_plugin_file(r.string(l[i], path), dir);
            try {
                load_lb_plugin(file);
            } catch (const std::exception &e) {
                r.fail(l[i], path, e.what());
            }
            s.lb_plugins.push_back(std::filesystem::absolute(file).lexically_normal().string());
        }
    }
    auto policy = [&](const YAML::Node &n, const std::string &path) {
        const std::string p = r.string(n, path);
        std::string list;
        for (auto x : lb_policy_names()) {
            if (x == p) return p;
            if (!list.empty()) list += ", ";  // not ("" or ", ") + string: GCC 12's bogus
            list += x;                        // -Wstringop-overflow at the LTO link
        }
        r.fail(n, path, "'" + p + "' is not one of " + list);
    };
    if (auto *n = f.find("policy")) s.lb_policy = policy(*n, "lb.policy");
    if (auto *n = f.find("seed")) s.lb_seed = r.integer(*n, "lb.seed", 0, UINT64_MAX);
    if (auto *n = f.find("flowlet_gap_us"))
        s.flowlet_gap_us = uint32_t(r.duration(*n, "lb.flowlet_gap_us", TimeUnit::us, 1, 1000000));
    if (auto *sw = f.find("switches")) {
        r.entries(*sw, "lb.switches", "switch");  // a map, no switch twice
        for (auto it = sw->begin(); it != sw->end(); ++it) {
            const uint32_t id = uint32_t(r.integer(it->first, "lb.switches", 0, UINT32_MAX));
            const std::string path = at("lb.switches", std::to_string(id));
            if (s.has_topology && (id >= s.topo.node_count() || !s.topo.is_switch(id)))
                r.fail(it->first, path, std::to_string(id) + " is not a switch");
            s.lb_per_switch[id] = policy(it->second, path);
        }
    }
}

void read_udp_flow(const ScenarioReader &r, const YAML::Node &n, const std::string &w, size_t i,
                   Scenario &s) {
    const Fields f = r.fields(
        n, w, {"src", "dst", "rate", "size", "start", "stop", "dscp", "ecn", "sport", "dport"});
    UdpFlowSpec u;
    u.line = uint32_t(n.Mark().line + 1);
    u.src = r.node(r.need(f, n, w, "src"), at(w, "src"), s.topo, true);
    u.dst = r.node(r.need(f, n, w, "dst"), at(w, "dst"), s.topo, true);
    if (u.src == u.dst) r.fail(*f.find("dst"), at(w, "dst"), "same as src");
    u.rate_bps = r.rate_bps(r.need(f, n, w, "rate"), at(w, "rate"));
    u.sport = uint16_t(10000 + i);
    for (const Field &e : f) {
        const std::string p = at(w, e.key);
        const YAML::Node &v = e.value;
        if (e.key == "size") u.frame_bytes = uint32_t(r.size_bytes(v, p, 66, s.mtu + 14));
        if (e.key == "start") u.start = r.time_ps(v, p);
        if (e.key == "stop") u.stop = r.time_ps(v, p);
        if (e.key == "dscp") u.dscp = uint8_t(r.integer(v, p, 0, 63));
        if (e.key == "ecn") u.ecn = r.boolean(v, p);
        if (e.key == "sport") u.sport = r.port(v, p, 1);
        if (e.key == "dport") u.dport = r.port(v, p, 1);
    }
    if (u.stop <= u.start)
        r.fail(f.find("stop") ? *f.find("stop") : n, at(w, "stop"), "must be after start");
    s.udp.push_back(u);
}

void read_roce_flow(const ScenarioReader &r, const YAML::Node &n, const std::string &w,
                    Scenario &s) {
    const Fields f = r.fields(n, w, {"src", "dst", "size", "start", "dport", "pg"});
    FlowRecord fr;
    fr.line = uint32_t(n.Mark().line + 1);
    fr.src = r.node(r.need(f, n, w, "src"), at(w, "src"), s.topo, true);
    fr.dst = r.node(r.need(f, n, w, "dst"), at(w, "dst"), s.topo, true);
    if (fr.src == fr.dst) r.fail(*f.find("dst"), at(w, "dst"), "same as src");
    fr.size_bytes = r.size_bytes(r.need(f, n, w, "size"), at(w, "size"), 1, UINT32_MAX);
    if (auto *v = f.find("start")) fr.start_ns = r.time_ns(*v, at(w, "start"));
    if (auto *v = f.find("dport")) fr.dport = r.port(*v, at(w, "dport"), 0);
    if (auto *v = f.find("pg")) fr.pg = r.pg(*v, at(w, "pg"));
    s.flows.push_back(fr);
}

void read_workload(const ScenarioReader &r, const YAML::Node &x, const std::string &w, size_t i,
                   const std::string &dir, Scenario &s) {
    const Fields all = r.entries(x, w);
    enum class Type { cdf, incast, ring_allreduce, all_to_all };
    const Type type = r.enumeration<Type>(r.need(all, x, w, "type"), at(w, "type"),
                                          {{"cdf", Type::cdf},
                                           {"incast", Type::incast},
                                           {"ring_allreduce", Type::ring_allreduce},
                                           {"all_to_all", Type::all_to_all}});
    const YAML::Node *st = all.find("start");
    const uint64_t start = st ? r.time_ns(*st, at(w, "start")) : 0;
    const Topology &topo = s.topo;
    if (type == Type::cdf) {
        const Fields f = r.fields(
            x, w, {"type", "cdf", "load", "duration", "start", "hosts", "dport", "seed", "pg"});
        PoissonSpec p;
        const YAML::Node &cn = r.need(f, x, w, "cdf", "a flow-size CDF file");
        const std::string cdf = r.file(cn, at(w, "cdf"), dir);
        try {
            p.cdf = SizeCdf::load(cdf);
        } catch (const std::exception &e) {
            r.fail(cn, at(w, "cdf"), e.what());
        }
        const YAML::Node *hn = f.find("hosts");
        p.hosts = hn ? r.hosts(*hn, at(w, "hosts"), topo) : topo.hosts();
        if (p.hosts.size() < 2) r.fail(hn ? *hn : x, at(w, "hosts"), "needs at least 2 hosts");
        if (auto *v = f.find("load")) p.load = r.real(*v, at(w, "load"), 1e-9, 1);
        p.duration_ns = r.time_ns(r.need(f, x, w, "duration"), at(w, "duration"));
        p.start_ns = start;
        p.host_rate_bps = topo.link(topo.ports(p.hosts[0]).at(0).link).rate_bps;
        const YAML::Node *sd = f.find("seed");
        p.seed = sd ? r.integer(*sd, at(w, "seed"), 0, UINT64_MAX) : s.seed + i;
        if (auto *v = f.find("dport")) p.dport = r.port(*v, at(w, "dport"), 0);
        if (auto *v = f.find("pg")) p.pg = r.pg(*v, at(w, "pg"));
        for (const FlowRecord &fr : poisson_cdf_flows(p)) s.flows.push_back(fr);
    } else if (type == Type::incast) {
        const Fields f =
            r.fields(x, w, {"type", "senders", "receiver", "size", "start", "dport", "pg"});
        IncastSpec in;
        const YAML::Node &sn = r.need(f, x, w, "senders");
        in.senders = r.hosts(sn, at(w, "senders"), topo);
        in.receiver = r.node(r.need(f, x, w, "receiver"), at(w, "receiver"), topo, true);
        for (uint32_t h : in.senders)
            if (h == in.receiver) r.fail(sn, at(w, "senders"), "holds the receiver");
        in.size_bytes = r.size_bytes(r.need(f, x, w, "size"), at(w, "size"), 1, UINT32_MAX);
        in.start_ns = start;
        if (auto *v = f.find("dport")) in.dport = r.port(*v, at(w, "dport"), 0);
        if (auto *v = f.find("pg")) in.pg = r.pg(*v, at(w, "pg"));
        for (const FlowRecord &fr : incast_flows(in)) s.flows.push_back(fr);
    } else {
        const Fields f = r.fields(x, w,
                                  {"type", "hosts", "bytes", "iterations", "compute_gap",
                                   "step_gap", "schedule", "start", "dport", "pg"});
        CollectiveWorkload j;
        j.start_ns = start;
        j.spec.kind =
            type == Type::ring_allreduce ? Collective::ring_allreduce : Collective::all_to_all;
        const YAML::Node &hn = r.need(f, x, w, "hosts");
        j.spec.hosts = r.hosts(hn, at(w, "hosts"), topo);
        if (j.spec.hosts.size() < 2) r.fail(hn, at(w, "hosts"), "needs at least 2 hosts");
        j.spec.bytes_per_rank =
            r.size_bytes(r.need(f, x, w, "bytes"), at(w, "bytes"), 1, UINT32_MAX);
        if (auto *v = f.find("iterations"))
            j.spec.iterations = uint32_t(r.integer(*v, at(w, "iterations"), 1, 1000000));
        if (auto *v = f.find("compute_gap"))
            j.spec.compute_gap_ns = r.time_ns(*v, at(w, "compute_gap"));
        if (auto *v = f.find("step_gap")) j.spec.step_gap_ns = r.time_ns(*v, at(w, "step_gap"));
        if (auto *v = f.find("schedule"))
            j.spec.a2a =
                r.enumeration<AllToAllSchedule>(*v, at(w, "schedule"),
                                                {{"simultaneous", AllToAllSchedule::simultaneous},
                                                 {"pairwise", AllToAllSchedule::pairwise}});
        if (auto *v = f.find("dport")) j.spec.dport = r.port(*v, at(w, "dport"), 0);
        if (auto *v = f.find("pg")) j.spec.pg = r.pg(*v, at(w, "pg"));
        s.jobs.push_back(j);
    }
}

void read_event(const ScenarioReader &r, const YAML::Node &e, const std::string &w, Scenario &s) {
    const Fields f = r.fields(e, w,
                              {"at", "link_down", "link_up", "convergence", "pfc_storm",
                               "slow_receiver", "until", "priority", "interval", "xoff"});
    const TimePs at_ps = r.time_ps(r.need(f, e, w, "at"), at(w, "at"));
    const YAML::Node *storm = f.find("pfc_storm"), *slow = f.find("slow_receiver");
    if (storm || slow) {
        if (storm && slow) r.fail(e, w, "one of pfc_storm, slow_receiver per event");
        HostEvent he;
        he.kind = storm ? HostEvent::pfc_storm : HostEvent::slow_receiver;
        const char *k = storm ? "pfc_storm" : "slow_receiver";
        he.node = r.node(storm ? *storm : *slow, at(w, k), s.topo, true);
        he.at = at_ps;
        const YAML::Node &un = r.need(f, e, w, "until");
        he.until = r.time_ps(un, at(w, "until"));
        if (he.until <= he.at) r.fail(un, at(w, "until"), "must be after at");
        if (auto *v = f.find("priority")) he.priority = r.pg(*v, at(w, "priority"));
        if (auto *v = f.find("interval")) {
            he.interval = r.time_ps(*v, at(w, "interval"));
            if (!he.interval) r.fail(*v, at(w, "interval"), "must be > 0");
        }
        if (auto *v = f.find("xoff"))
            he.xoff_bytes = r.size_bytes(*v, at(w, "xoff"), 0, 1ull << 40);
        s.host_events.push_back(he);
        return;
    }
    const YAML::Node *down = f.find("link_down"), *up = f.find("link_up");
    if (!down == !up) r.fail(e, w, "needs exactly one of link_down, link_up");
    const YAML::Node &l = down ? *down : *up;
    const std::string lf = at(w, down ? "link_down" : "link_up");
    LinkEvent le;
    le.at = at_ps;
    le.up = up != nullptr;
    if (l.IsSequence()) {
        if (l.size() != 2) r.fail(l, lf, "expected [node_a, node_b] or a link index");
        const uint32_t a = r.node(l[0], lf, s.topo, false);
        const uint32_t b = r.node(l[1], lf, s.topo, false);
        bool found = false;
        for (uint32_t k = 0; k < s.topo.link_count() && !found; k++) {
            const TopoLink &tl = s.topo.link(k);
            if ((tl.a == a && tl.b == b) || (tl.a == b && tl.b == a)) {
                le.link = k;
                found = true;
            }
        }
        if (!found)
            r.fail(l, lf, "no link between " + std::to_string(a) + " and " + std::to_string(b));
    } else {
        le.link = uint32_t(r.integer(l, lf, 0, s.topo.link_count() - 1));
    }
    if (auto *v = f.find("convergence")) le.convergence = r.time_ps(*v, at(w, "convergence"));
    s.events.push_back(le);
}

void read_scenario(const ScenarioReader &r, const YAML::Node &root, Scenario &s) {
    if (root.IsNull()) return;
    const Fields f = r.fields(
        root, "",
        {"topology", "qos_profile", "mtu", "lb", "sample_interval", "delays", "mbufs", "until",
         "seed", "udp_flows", "events", "fib", "hosts", "roce_flows", "workloads"});
    const std::string dir = std::filesystem::path(r.source()).parent_path().string();
    s.source = r.source();
    if (auto *t = f.find("topology")) {
        if (s.has_topology) r.fail(*t, "topology", "given twice (--topology and the scenario)");
        s.topo = read_topology(r, *t, dir);
        s.has_topology = true;
    }
    if (auto *q = f.find("qos_profile")) {
        const std::string p = r.file(*q, "qos_profile", dir);
        try {
            s.qos = load_qos_file(p);
        } catch (const std::exception &e) {
            r.fail(*q, "qos_profile", e.what());
        }
        s.qos_source = p;
    }
    // The switch MTU first: flow sizes are checked against it.
    if (auto *n = f.find("mtu")) s.mtu = uint32_t(r.integer(*n, "mtu", 576, 9216));
    for (const Field &e : f) {
        const YAML::Node &n = e.value;
        if (e.key == "sample_interval") s.sample_interval = r.time_ps(n, e.key);
        if (e.key == "delays") s.delays = r.boolean(n, e.key);
        if (e.key == "mbufs") s.mbufs = uint32_t(r.integer(n, e.key, 1024, 1u << 26));
        if (e.key == "until") s.until = r.time_ps(n, e.key);
        if (e.key == "fib")
            s.compact_fib = r.enumeration<bool>(n, e.key, {{"compact", true}, {"full", false}});
        if (e.key == "seed") s.seed = r.integer(n, e.key, 0, UINT64_MAX);
        if (e.key == "lb") read_lb(r, n, s, dir);
    }
    for (const char *k : {"udp_flows", "events", "roce_flows", "workloads"})
        if (f.find(k) && !s.has_topology)
            r.fail(*f.find(k), k, "flows and events need a topology (here or --topology)");
    if (auto *n = f.find("udp_flows")) {
        const auto l = r.list(*n, "udp_flows");
        for (size_t i = 0; i < l.size(); i++) read_udp_flow(r, l[i], at("udp_flows", i), i, s);
    }
    if (auto *h = f.find("hosts")) {
        read_hosts(r, *h, s.roce);
        s.roce_hosts = true;
    }
    if (auto *n = f.find("roce_flows")) {
        const auto l = r.list(*n, "roce_flows");
        for (size_t i = 0; i < l.size(); i++) read_roce_flow(r, l[i], at("roce_flows", i), s);
    }
    if (auto *n = f.find("workloads")) {
        const auto l = r.list(*n, "workloads");
        for (size_t i = 0; i < l.size(); i++) read_workload(r, l[i], at("workloads", i), i, dir, s);
    }
    if (auto *n = f.find("events")) {
        const auto l = r.list(*n, "events");
        for (size_t i = 0; i < l.size(); i++) read_event(r, l[i], at("events", i), s);
    }
}

}  // namespace

void parse_scenario(const std::string &yaml, const std::string &source, Scenario &s) {
    try {
        const ScenarioReader r(source);
        read_scenario(r, load_yaml_document(yaml, source), s);
    } catch (const ConfigError &e) {
        throw InputError(e.what());
    }
}

void load_scenario(const std::string &path, Scenario &s) {
    std::string text;
    try {
        text = read_config_file(path);
    } catch (const ConfigError &e) {
        throw InputError(e.what());
    }
    parse_scenario(text, path, s);
}

}  // namespace rocesw::sim
