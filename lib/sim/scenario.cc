// The native YAML scenario: all of rocesim's YAML reading is in this file (yaml-cpp), so the
// unified YAML reader can take it over in one place. Errors: "<file>:<line>: <field>: <why>".
#include "sim/scenario.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

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
    const std::string &source() const { return src_; }

  private:
    std::string src_;
};

Topology read_topology(const Reader &r, const YAML::Node &t, const std::string &dir) {
    r.check_keys(t, "topology",
                 {"type", "hosts", "leaves", "spines", "hosts_per_leaf", "oversubscription",
                  "uplink_rate", "k", "file", "link_rate", "fabric_rate", "link_delay"});
    if (!t["type"]) r.fail(t, "topology.type", "missing (star, leaf_spine, fat_tree or file)");
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
    r.fail(t["type"], "topology.type", "'" + type + "' (star, leaf_spine, fat_tree or file)");
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
                  "until", "seed", "udp_flows", "events", "fib"});
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
        static const std::set<std::string> policies = {"hash", "flowlet", "adaptive", "spray"};
        auto policy = [&](const YAML::Node &n, const std::string &f) {
            std::string p = r.str(n, f);
            if (!policies.count(p)) r.fail(n, f, "'" + p + "' (hash, flowlet, adaptive, spray)");
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
    const bool need_topo = root["udp_flows"] || root["events"];
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
    if (auto ev = root["events"]) {
        if (!ev.IsSequence()) r.fail(ev, "events", "expected a list");
        for (size_t i = 0; i < ev.size(); i++) {
            const YAML::Node e = ev[i];
            const std::string w = "events[" + std::to_string(i) + "]";
            r.check_keys(e, w, {"at", "link_down", "link_up", "convergence"});
            if (!e["at"]) r.fail(e, w + ".at", "missing");
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
