// The native YAML scenario: all of rocesim's YAML reading is in this file (yaml-cpp), so the
// unified YAML reader can take it over in one place. Errors: "<file>:<line>: <field>: <why>".
#include "sim/scenario.h"

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "lb/policy.h"
#include "config/yaml_doc.h"
#include "roce/dcqcn_profile.h"
#include "roce/host_config_yaml.h"
#include "sim/routing.h"
#include "sim/topo_gen.h"

namespace rocesw::sim {

namespace {

class Reader {
  public:
    explicit Reader(std::string source) : src_(std::move(source)) {}

    [[noreturn]] void fail(const YAML::Node &n, const std::string &field,
                           const std::string &why) const {
        const int line = n.Mark().line >= 0 ? n.Mark().line + 1 : 0;
        throw InputError(src_ + ":" + std::to_string(line) + ": " + field + ": " + why);
    }
    void check_keys(const YAML::Node &m, const std::string &where,
                    std::initializer_list<const char *> allowed) const {
        if (!m.IsMap()) fail(m, where, "expected a mapping");
        for (const auto &kv : m) {
            const std::string k = kv.first.as<std::string>();
            bool ok = false;
            for (const char *a : allowed) ok |= k == a;
            if (!ok) {
                std::string list;
                for (const char *a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
                fail(kv.first, where.empty() ? k : where + "." + k,
                     "unknown key (allowed: " + list + ")");
            }
        }
    }
    std::string str(const YAML::Node &n, const std::string &f) const {
        if (!n.IsScalar()) fail(n, f, "expected a scalar");
        return n.as<std::string>();
    }
    uint64_t uint(const YAML::Node &n, const std::string &f, uint64_t lo, uint64_t hi) const {
        const std::string s = str(n, f);
        size_t pos = 0;
        uint64_t v = 0;
        try {
            v = std::stoull(s, &pos, 0);
        } catch (...) {
            pos = 0;
        }
        if (pos == 0 || pos != s.size() || s[0] == '-')
            fail(n, f, "'" + s + "' is not a whole number");
        if (v < lo || v > hi)
            fail(n, f,
                 std::to_string(v) + " is out of range " + std::to_string(lo) + ".." +
                     std::to_string(hi));
        return v;
    }
    bool boolean(const YAML::Node &n, const std::string &f) const {
        const std::string s = str(n, f);
        if (s == "true" || s == "yes" || s == "on") return true;
        if (s == "false" || s == "no" || s == "off") return false;
        fail(n, f, "'" + s + "' is not true or false");
    }
    uint64_t rate(const YAML::Node &n, const std::string &f) const {
        const std::string s = str(n, f);
        try {
            return parse_rate_bps(s);
        } catch (const std::exception &e) {
            fail(n, f, "'" + s + "' is not a rate (e.g. 100Gbps, 25Gbps): " + e.what());
        }
    }
    TimePs time(const YAML::Node &n, const std::string &f) const {
        const std::string s = str(n, f);
        try {
            return parse_delay_ps(s);
        } catch (const std::exception &e) {
            fail(n, f, "'" + s + "' is not a time (e.g. 10us, 1ms, 500ns): " + e.what());
        }
    }
    double real(const YAML::Node &n, const std::string &f, double lo, double hi) const {
        const std::string s = str(n, f);
        size_t pos = 0;
        double v = 0;
        try {
            v = std::stod(s, &pos);
        } catch (...) {
            pos = 0;
        }
        if (pos == 0 || pos != s.size()) fail(n, f, "'" + s + "' is not a number");
        if (!(v >= lo && v <= hi))
            fail(n, f, s + " is out of range " + std::to_string(lo) + ".." + std::to_string(hi));
        return v;
    }
    const std::string &source() const { return src_; }

  private:
    std::string src_;
};

Topology read_topology(const Reader &r, const YAML::Node &t, const std::string &dir) {
    r.check_keys(t, "topology",
                 {"type", "hosts", "leaves", "spines", "hosts_per_leaf", "oversubscription",
                  "uplink_rate", "k", "file", "link_rate", "fabric_rate", "link_delay", "pods",
                  "tors_per_pod", "aggs_per_pod", "hosts_per_tor", "cores_per_agg"});
    if (!t["type"])
        r.fail(t, "topology.type", "missing (star, leaf_spine, fat_tree, three_tier or file)");
    const std::string type = r.str(t["type"], "topology.type");
    const uint64_t rate =
        t["link_rate"] ? r.rate(t["link_rate"], "topology.link_rate") : 100'000'000'000ull;
    const TimePs delay =
        t["link_delay"] ? r.time(t["link_delay"], "topology.link_delay") : 1 * kPsPerUs;
    const uint64_t fabric =
        t["fabric_rate"] ? r.rate(t["fabric_rate"], "topology.fabric_rate") : rate;
    auto u = [&](const char *k, uint64_t def, uint64_t lo, uint64_t hi) {
        return t[k] ? uint32_t(r.uint(t[k], std::string("topology.") + k, lo, hi)) : uint32_t(def);
    };
    try {
        if (type == "star") return make_star({u("hosts", 2, 1, 31), rate, delay});
        if (type == "leaf_spine") {
            LeafSpineSpec s;
            s.leaves = u("leaves", 2, 1, 4096);
            s.spines = u("spines", 2, 1, 4096);
            s.hosts_per_leaf = u("hosts_per_leaf", 2, 1, 4096);
            s.host_rate_bps = rate;
            s.delay_ps = delay;
            if (t["uplink_rate"])
                s.uplink_rate_bps = r.rate(t["uplink_rate"], "topology.uplink_rate");
            if (t["oversubscription"]) {
                const std::string o = r.str(t["oversubscription"], "topology.oversubscription");
                unsigned a = 0, b = 0;
                char c = 0;
                std::istringstream is(o);
                if (!(is >> a >> c >> b) || c != ':' || !a || !b)
                    r.fail(t["oversubscription"], "topology.oversubscription",
                           "'" + o + "' is not a ratio like 3:1");
                s.oversub_num = a;
                s.oversub_den = b;
            }
            return make_leaf_spine(s);
        }
        if (type == "fat_tree") return make_fat_tree({u("k", 4, 2, 64), rate, fabric, delay});
        if (type == "three_tier") {  // HPCC's fat.txt shape; its defaults (fabric 400 Gb/s)
            const ThreeTierSpec d;
            return make_three_tier(
                {u("pods", d.pods, 1, 4096), u("tors_per_pod", d.tors_per_pod, 1, 4096),
                 u("aggs_per_pod", d.aggs_per_pod, 1, 4096),
                 u("hosts_per_tor", d.hosts_per_tor, 1, 4096),
                 u("cores_per_agg", d.cores_per_agg, 1, 4096), rate,
                 t["fabric_rate"] ? fabric : d.fabric_rate_bps, delay});
        }
        if (type == "file") {
            if (!t["file"]) r.fail(t, "topology.file", "missing (an HPCC topology.txt)");
            std::filesystem::path p = r.str(t["file"], "topology.file");
            if (p.is_relative() && !dir.empty()) p = std::filesystem::path(dir) / p;
            return load_topology(p.string());
        }
    } catch (const InputError &) {
        throw;
    } catch (const std::exception &e) {
        r.fail(t, "topology", e.what());
    }
    r.fail(t["type"], "topology.type",
           "'" + type + "' (star, leaf_spine, fat_tree, three_tier or file)");
}

uint32_t node_id(const Reader &r, const YAML::Node &n, const std::string &f, const Topology &t,
                 bool host) {
    const uint32_t id = uint32_t(r.uint(n, f, 0, UINT32_MAX));
    if (id >= t.node_count())
        r.fail(
            n, f,
            std::to_string(id) + " is not a node (0.." + std::to_string(t.node_count() - 1) + ")");
    if (host && !t.is_host(id)) r.fail(n, f, std::to_string(id) + " is not a host");
    return id;
}

std::vector<uint32_t> host_list(const Reader &r, const YAML::Node &n, const std::string &f,
                                const Topology &t) {
    if (!n.IsSequence()) r.fail(n, f, "expected a list of host nodes");
    std::vector<uint32_t> v;
    for (size_t i = 0; i < n.size(); i++)
        v.push_back(node_id(r, n[i], f + "[" + std::to_string(i) + "]", t, true));
    return v;
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
std::string yaml_as_json(const YAML::Node &n) {
    return yaml_json(n).dump();
}

void read_hosts(const Reader &r, const YAML::Node &h, RoceHostSpec &R) {
    r.check_keys(h, "hosts",
                 {"dcqcn", "traffic", "mtu", "ack_every", "window", "rto", "byte_samples",
                  "standalone_header", "base_rtt"});
    if (h["mtu"]) R.mtu = uint32_t(r.uint(h["mtu"], "hosts.mtu", 256, 4096));
    if (h["ack_every"]) R.ack_every = uint32_t(r.uint(h["ack_every"], "hosts.ack_every", 0, 1 << 20));
    if (h["window"]) R.window = uint32_t(r.uint(h["window"], "hosts.window", 0, 1 << 24));
    if (h["rto"]) R.rto_ns = ns(r.time(h["rto"], "hosts.rto"));
    if (h["byte_samples"]) R.byte_samples_ns = ns(r.time(h["byte_samples"], "hosts.byte_samples"));
    if (h["base_rtt"]) R.base_rtt_ns = ns(r.time(h["base_rtt"], "hosts.base_rtt"));
    if (h["standalone_header"])
        R.standalone.header_bytes =
            uint32_t(r.uint(h["standalone_header"], "hosts.standalone_header", 0, 1000));
    if (h["dcqcn"]) R.dcqcn_text = yaml_as_json(h["dcqcn"]);
    if (h["traffic"]) R.traffic_text = yaml_as_json(h["traffic"]);
    // The same fields and rules as rocehost's config (roce/host_config_yaml.h).
    const YamlReader yr(r.source());
    try {
        if (auto t = h["traffic"]) roce::read_traffic_section(yr, t, "hosts.traffic", R.traffic);
        if (auto d = h["dcqcn"])
            roce::read_dcqcn_section(yr, d, "hosts.dcqcn", R.dcqcn, R.dcqcn_enabled,
                                     R.dcqcn_profile);
    } catch (const ConfigError &e) {
        throw InputError(e.what());
    }
}

}  // namespace

void parse_scenario(const std::string &yaml, const std::string &source, Scenario &s) {
    Reader r(source);
    YAML::Node root;
    try {
        root = YAML::Load(yaml);
    } catch (const YAML::Exception &e) {
        throw InputError(source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    if (root.IsNull()) return;
    r.check_keys(root, "",
                 {"topology", "qos_profile", "mtu", "lb", "sample_interval", "delays", "mbufs",
                  "until", "seed", "udp_flows", "events", "fib", "hosts", "roce_flows",
                  "workloads"});
    const std::string dir = std::filesystem::path(source).parent_path().string();
    s.source = source;
    if (auto t = root["topology"]) {
        if (s.has_topology) r.fail(t, "topology", "given twice (--topology and the scenario)");
        s.topo = read_topology(r, t, dir);
        s.has_topology = true;
    }
    if (auto q = root["qos_profile"]) {
        std::filesystem::path p = r.str(q, "qos_profile");
        if (p.is_relative() && !dir.empty() && !std::filesystem::exists(p))
            p = std::filesystem::path(dir) / p;
        try {
            s.qos = load_qos_file(p.string());
        } catch (const std::exception &e) {
            r.fail(q, "qos_profile", e.what());
        }
        s.qos_source = p.string();
    }
    if (auto n = root["mtu"]) s.mtu = uint32_t(r.uint(n, "mtu", 576, 9216));
    if (auto n = root["sample_interval"]) s.sample_interval = r.time(n, "sample_interval");
    if (auto n = root["delays"]) s.delays = r.boolean(n, "delays");
    if (auto n = root["mbufs"]) s.mbufs = uint32_t(r.uint(n, "mbufs", 1024, 1u << 26));
    if (auto n = root["until"]) s.until = r.time(n, "until");
    if (auto n = root["fib"]) {
        const std::string f = r.str(n, "fib");
        if (f != "compact" && f != "full") r.fail(n, "fib", "'" + f + "' is not one of compact, full");
        s.compact_fib = f == "compact";
    }
    if (auto n = root["seed"]) s.seed = r.uint(n, "seed", 0, UINT64_MAX);
    if (auto lb = root["lb"]) {
        r.check_keys(lb, "lb", {"policy", "seed", "flowlet_gap_us", "switches"});
        auto policy = [&](const YAML::Node &n, const std::string &f) {
            std::string p = r.str(n, f);
            std::string list;
            bool ok = false;
            for (auto x : lb_policy_names()) {
                if (!list.empty()) list += ", ";  // not ("" or ", ") + string: GCC 12's bogus
                list += x;                        // -Wstringop-overflow at the LTO link
                ok |= x == p;
            }
            if (!ok) r.fail(n, f, "'" + p + "' (" + list + ")");
            return p;
        };
        if (lb["policy"]) s.lb_policy = policy(lb["policy"], "lb.policy");
        if (lb["seed"]) s.lb_seed = r.uint(lb["seed"], "lb.seed", 0, UINT64_MAX);
        if (lb["flowlet_gap_us"])
            s.flowlet_gap_us =
                uint32_t(r.uint(lb["flowlet_gap_us"], "lb.flowlet_gap_us", 1, 1000000));
        if (auto sw = lb["switches"]) {
            if (!sw.IsMap()) r.fail(sw, "lb.switches", "expected a mapping node: policy");
            for (const auto &kv : sw) {
                const uint32_t id = uint32_t(r.uint(kv.first, "lb.switches", 0, UINT32_MAX));
                if (s.has_topology && (id >= s.topo.node_count() || !s.topo.is_switch(id)))
                    r.fail(kv.first, "lb.switches", std::to_string(id) + " is not a switch");
                s.lb_per_switch[id] = policy(kv.second, "lb.switches." + std::to_string(id));
            }
        }
    }
    const bool need_topo =
        root["udp_flows"] || root["events"] || root["roce_flows"] || root["workloads"];
    if (need_topo && !s.has_topology)
        r.fail(root, "topology", "flows and events need a topology (here or --topology)");
    if (auto fl = root["udp_flows"]) {
        if (!fl.IsSequence()) r.fail(fl, "udp_flows", "expected a list");
        for (size_t i = 0; i < fl.size(); i++) {
            const YAML::Node f = fl[i];
            const std::string w = "udp_flows[" + std::to_string(i) + "]";
            r.check_keys(
                f, w,
                {"src", "dst", "rate", "size", "start", "stop", "dscp", "ecn", "sport", "dport"});
            for (const char *k : {"src", "dst", "rate"})
                if (!f[k]) r.fail(f, w + "." + k, "missing");
            UdpFlowSpec u;
            u.line = uint32_t(f.Mark().line + 1);
            u.src = node_id(r, f["src"], w + ".src", s.topo, true);
            u.dst = node_id(r, f["dst"], w + ".dst", s.topo, true);
            if (u.src == u.dst) r.fail(f["dst"], w + ".dst", "same as src");
            u.rate_bps = r.rate(f["rate"], w + ".rate");
            if (!u.rate_bps) r.fail(f["rate"], w + ".rate", "must be > 0");
            if (f["size"]) u.frame_bytes = uint32_t(r.uint(f["size"], w + ".size", 66, s.mtu + 14));
            if (f["start"]) u.start = r.time(f["start"], w + ".start");
            if (f["stop"]) u.stop = r.time(f["stop"], w + ".stop");
            if (u.stop <= u.start) r.fail(f, w + ".stop", "must be after start");
            if (f["dscp"]) u.dscp = uint8_t(r.uint(f["dscp"], w + ".dscp", 0, 63));
            if (f["ecn"]) u.ecn = r.boolean(f["ecn"], w + ".ecn");
            u.sport = uint16_t(f["sport"] ? r.uint(f["sport"], w + ".sport", 1, 65535) : 10000 + i);
            if (f["dport"]) u.dport = uint16_t(r.uint(f["dport"], w + ".dport", 1, 65535));
            s.udp.push_back(u);
        }
    }
    if (auto h = root["hosts"]) {
        read_hosts(r, h, s.roce);
        s.roce_hosts = true;
    }
    if (auto fl = root["roce_flows"]) {
        if (!fl.IsSequence()) r.fail(fl, "roce_flows", "expected a list");
        for (size_t i = 0; i < fl.size(); i++) {
            const YAML::Node f = fl[i];
            const std::string w = "roce_flows[" + std::to_string(i) + "]";
            r.check_keys(f, w, {"src", "dst", "size", "start", "dport", "pg"});
            for (const char *k : {"src", "dst", "size"})
                if (!f[k]) r.fail(f, w + "." + k, "missing");
            FlowRecord fr;
            fr.line = uint32_t(f.Mark().line + 1);
            fr.src = node_id(r, f["src"], w + ".src", s.topo, true);
            fr.dst = node_id(r, f["dst"], w + ".dst", s.topo, true);
            if (fr.src == fr.dst) r.fail(f["dst"], w + ".dst", "same as src");
            fr.size_bytes = r.uint(f["size"], w + ".size", 1, UINT32_MAX);
            if (f["start"]) fr.start_ns = ns(r.time(f["start"], w + ".start"));
            if (f["dport"]) fr.dport = uint16_t(r.uint(f["dport"], w + ".dport", 0, 65535));
            if (f["pg"]) fr.pg = uint8_t(r.uint(f["pg"], w + ".pg", 0, 7));
            s.flows.push_back(fr);
        }
    }
    if (auto wl = root["workloads"]) {
        if (!wl.IsSequence()) r.fail(wl, "workloads", "expected a list");
        for (size_t i = 0; i < wl.size(); i++) {
            const YAML::Node x = wl[i];
            const std::string w = "workloads[" + std::to_string(i) + "]";
            if (!x.IsMap() || !x["type"]) r.fail(x, w + ".type", "missing (cdf, incast, ring_allreduce, all_to_all)");
            const std::string type = r.str(x["type"], w + ".type");
            const uint64_t start = x["start"] ? ns(r.time(x["start"], w + ".start")) : 0;
            if (type == "cdf") {
                r.check_keys(x, w, {"type", "cdf", "load", "duration", "start", "hosts", "dport", "seed", "pg"});
                if (!x["cdf"]) r.fail(x, w + ".cdf", "missing (a flow-size CDF file)");
                if (!x["duration"]) r.fail(x, w + ".duration", "missing");
                PoissonSpec p;
                std::filesystem::path cp = r.str(x["cdf"], w + ".cdf");
                if (cp.is_relative() && !dir.empty() && !std::filesystem::exists(cp))
                    cp = std::filesystem::path(dir) / cp;
                try {
                    p.cdf = SizeCdf::load(cp.string());
                } catch (const std::exception &e) {
                    r.fail(x["cdf"], w + ".cdf", e.what());
                }
                p.hosts = x["hosts"] ? host_list(r, x["hosts"], w + ".hosts", s.topo) : s.topo.hosts();
                if (p.hosts.size() < 2) r.fail(x, w + ".hosts", "needs at least 2 hosts");
                p.load = x["load"] ? r.real(x["load"], w + ".load", 1e-9, 1) : 0.3;
                p.duration_ns = ns(r.time(x["duration"], w + ".duration"));
                p.start_ns = start;
                p.host_rate_bps = s.topo.link(s.topo.ports(p.hosts[0]).at(0).link).rate_bps;
                p.seed = x["seed"] ? r.uint(x["seed"], w + ".seed", 0, UINT64_MAX) : s.seed + i;
                if (x["dport"]) p.dport = uint16_t(r.uint(x["dport"], w + ".dport", 0, 65535));
                if (x["pg"]) p.pg = uint8_t(r.uint(x["pg"], w + ".pg", 0, 7));
                for (const FlowRecord &f : poisson_cdf_flows(p)) s.flows.push_back(f);
            } else if (type == "incast") {
                r.check_keys(x, w, {"type", "senders", "receiver", "size", "start", "dport", "pg"});
                for (const char *k : {"senders", "receiver", "size"})
                    if (!x[k]) r.fail(x, w + "." + k, "missing");
                IncastSpec in;
                in.senders = host_list(r, x["senders"], w + ".senders", s.topo);
                in.receiver = node_id(r, x["receiver"], w + ".receiver", s.topo, true);
                for (uint32_t h : in.senders)
                    if (h == in.receiver) r.fail(x["senders"], w + ".senders", "holds the receiver");
                in.size_bytes = r.uint(x["size"], w + ".size", 1, UINT32_MAX);
                in.start_ns = start;
                if (x["dport"]) in.dport = uint16_t(r.uint(x["dport"], w + ".dport", 0, 65535));
                if (x["pg"]) in.pg = uint8_t(r.uint(x["pg"], w + ".pg", 0, 7));
                for (const FlowRecord &f : incast_flows(in)) s.flows.push_back(f);
            } else if (type == "ring_allreduce" || type == "all_to_all") {
                r.check_keys(x, w, {"type", "hosts", "bytes", "iterations", "compute_gap",
                                    "step_gap", "schedule", "start", "dport", "pg"});
                for (const char *k : {"hosts", "bytes"})
                    if (!x[k]) r.fail(x, w + "." + k, "missing");
                CollectiveWorkload j;
                j.start_ns = start;
                j.spec.kind = type == "ring_allreduce" ? Collective::ring_allreduce
                                                       : Collective::all_to_all;
                j.spec.hosts = host_list(r, x["hosts"], w + ".hosts", s.topo);
                if (j.spec.hosts.size() < 2) r.fail(x["hosts"], w + ".hosts", "needs at least 2 hosts");
                j.spec.bytes_per_rank = r.uint(x["bytes"], w + ".bytes", 1, UINT32_MAX);
                if (x["iterations"]) j.spec.iterations = uint32_t(r.uint(x["iterations"], w + ".iterations", 1, 1000000));
                if (x["compute_gap"]) j.spec.compute_gap_ns = ns(r.time(x["compute_gap"], w + ".compute_gap"));
                if (x["step_gap"]) j.spec.step_gap_ns = ns(r.time(x["step_gap"], w + ".step_gap"));
                if (x["schedule"]) {
                    const std::string sc = r.str(x["schedule"], w + ".schedule");
                    if (sc == "pairwise")
                        j.spec.a2a = AllToAllSchedule::pairwise;
                    else if (sc != "simultaneous")
                        r.fail(x["schedule"], w + ".schedule", "'" + sc + "' (simultaneous, pairwise)");
                }
                if (x["dport"]) j.spec.dport = uint16_t(r.uint(x["dport"], w + ".dport", 0, 65535));
                if (x["pg"]) j.spec.pg = uint8_t(r.uint(x["pg"], w + ".pg", 0, 7));
                s.jobs.push_back(j);
            } else {
                r.fail(x["type"], w + ".type", "'" + type + "' (cdf, incast, ring_allreduce, all_to_all)");
            }
        }
    }
    if (auto ev = root["events"]) {
        if (!ev.IsSequence()) r.fail(ev, "events", "expected a list");
        for (size_t i = 0; i < ev.size(); i++) {
            const YAML::Node e = ev[i];
            const std::string w = "events[" + std::to_string(i) + "]";
            r.check_keys(e, w,
                         {"at", "link_down", "link_up", "convergence", "pfc_storm",
                          "slow_receiver", "until", "priority", "interval", "xoff"});
            if (!e["at"]) r.fail(e, w + ".at", "missing");
            if (e["pfc_storm"] || e["slow_receiver"]) {
                if (e["pfc_storm"] && e["slow_receiver"])
                    r.fail(e, w, "one of pfc_storm, slow_receiver per event");
                HostEvent he;
                he.kind = e["pfc_storm"] ? HostEvent::pfc_storm : HostEvent::slow_receiver;
                const char *k = e["pfc_storm"] ? "pfc_storm" : "slow_receiver";
                he.node = node_id(r, e[k], w + "." + k, s.topo, true);
                he.at = r.time(e["at"], w + ".at");
                if (!e["until"]) r.fail(e, w + ".until", "missing");
                he.until = r.time(e["until"], w + ".until");
                if (he.until <= he.at) r.fail(e["until"], w + ".until", "must be after at");
                if (e["priority"]) he.priority = uint8_t(r.uint(e["priority"], w + ".priority", 0, 7));
                if (e["interval"]) he.interval = r.time(e["interval"], w + ".interval");
                if (!he.interval) r.fail(e["interval"], w + ".interval", "must be > 0");
                if (e["xoff"]) he.xoff_bytes = r.uint(e["xoff"], w + ".xoff", 0, 1ull << 40);
                s.host_events.push_back(he);
                continue;
            }
            LinkEvent le;
            le.at = r.time(e["at"], w + ".at");
            YAML::Node l = e["link_down"] ? e["link_down"] : e["link_up"];
            if (!l || (e["link_down"] && e["link_up"]))
                r.fail(e, w, "needs exactly one of link_down, link_up");
            const std::string lf = w + (e["link_down"] ? ".link_down" : ".link_up");
            le.up = bool(e["link_up"]);
            if (l.IsSequence()) {
                if (l.size() != 2) r.fail(l, lf, "expected [node_a, node_b] or a link index");
                const uint32_t a = node_id(r, l[0], lf, s.topo, false);
                const uint32_t b = node_id(r, l[1], lf, s.topo, false);
                bool found = false;
                for (uint32_t k = 0; k < s.topo.link_count() && !found; k++) {
                    const TopoLink &tl = s.topo.link(k);
                    if ((tl.a == a && tl.b == b) || (tl.a == b && tl.b == a)) {
                        le.link = k;
                        found = true;
                    }
                }
                if (!found)
                    r.fail(l, lf,
                           "no link between " + std::to_string(a) + " and " + std::to_string(b));
            } else {
                le.link = uint32_t(r.uint(l, lf, 0, s.topo.link_count() - 1));
            }
            if (e["convergence"]) le.convergence = r.time(e["convergence"], w + ".convergence");
            s.events.push_back(le);
        }
    }
}

void load_scenario(const std::string &path, Scenario &s) {
    std::ifstream in(path);
    if (!in) throw InputError(path + ": cannot open");
    std::stringstream ss;
    ss << in.rdbuf();
    parse_scenario(ss.str(), path, s);
}

}  // namespace rocesw::sim
