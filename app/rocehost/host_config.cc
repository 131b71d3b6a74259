#include "host_config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "config/yaml_doc.h"
#include "roce/host_config_yaml.h"
#include "roce/udp_flow.h"

namespace rocesw::rocehost {

namespace {

// Values are read by lib/config's YamlReader: the rules of every config file of ours.
struct Loader : YamlReader {
    Loader(const std::string &source, std::string base) : YamlReader(source), base_dir(std::move(base)) {}
    std::string base_dir;

    void check_keys(const YAML::Node &n, const std::string &path,
                    std::initializer_list<std::string_view> keys) const {
        fields(n, path, keys);
    }
    uint64_t rate_bps(const YAML::Node &n, const std::string &path) const {
        return rate_mbps(n, path, 1, 800000) * 1'000'000;
    }
    uint64_t us_as_ns(const YAML::Node &n, const std::string &path,
                      uint64_t hi = 3'600'000'000) const {
        return duration(n, path, TimeUnit::us, 0, hi) * 1000;
    }
    uint64_t ms_as_ns(const YAML::Node &n, const std::string &path, uint64_t lo,
                      uint64_t hi) const {
        return duration(n, path, TimeUnit::ms, lo, hi) * 1'000'000;
    }
    uint8_t priority(const YAML::Node &n, const std::string &path) const {
        return uint8_t(integer(n, path, 0, 7));
    }
};

// A list flow's own class: {data_dscp, data_priority, ack_dscp, ack_priority}; a field left
// out is the run's (`traffic`).
roce::FlowClass read_flow_class(const Loader &L, const YAML::Node &k, const std::string &kp,
                                const TrafficConfig &t) {
    L.check_keys(k, kp, {"data_dscp", "data_priority", "ack_dscp", "ack_priority"});
    roce::FlowClass fc{t.data_dscp, t.data_priority, t.ack_dscp, t.ack_prio()};
    if (k["data_dscp"]) fc.data_dscp = uint8_t(L.integer(k["data_dscp"], kp + ".data_dscp", 0, 63));
    if (k["data_priority"])
        fc.data_priority = L.priority(k["data_priority"], kp + ".data_priority");
    if (k["ack_dscp"]) fc.ack_dscp = uint8_t(L.integer(k["ack_dscp"], kp + ".ack_dscp", 0, 63));
    if (k["ack_priority"]) fc.ack_priority = L.priority(k["ack_priority"], kp + ".ack_priority");
    return fc;
}

// udp_flows: [{src, dst, rate, frame_bytes, start_ns, stop_ns, dscp, ecn, priority, sport,
// dport}] (doc/rocehost.md, "UDP flows"); IPv4 hosts only.
void read_udp_flows(const Loader &L, const YAML::Node &us, HostRunConfig &c) {
    if (!us.IsSequence()) L.fail("udp_flows", "expected a list");
    auto hidx = [&](const YAML::Node &n, const std::string &path) {
        const std::string s = L.string(n, path);
        const int i = c.host_index(s);
        if (i < 0) L.fail(path, "no host or peer named '" + s + "'");
        return uint32_t(i);
    };
    for (size_t i = 0; i < us.size(); i++) {
        const std::string up = at("udp_flows", i);
        const YAML::Node &n = us[i];
        L.check_keys(n, up, {"src", "dst", "rate", "frame_bytes", "start_ns", "stop_ns", "dscp",
                             "ecn", "priority", "sport", "dport"});
        if (!n["src"] || !n["dst"] || !n["rate"]) L.fail(up, "src, dst and rate are required");
        roce::UdpFlowConfig u;
        u.src = hidx(n["src"], up + ".src");
        if (!c.hosts[u.src].local())
            L.fail(up + ".src", "'" + c.hosts[u.src].name + "' is a peer, not a local host");
        u.dst = hidx(n["dst"], up + ".dst");
        if (u.dst == u.src) L.fail(up + ".dst", "same as src");
        if (c.hosts[u.src].ip.addr.is_v6) L.fail(up, "UDP flows are IPv4 only");
        u.rate_bps = L.rate_bps(n["rate"], up + ".rate");
        if (n["frame_bytes"])
            u.frame_bytes = uint32_t(L.size_bytes(n["frame_bytes"], up + ".frame_bytes",
                                                  roce::kUdpFlowMinFrame, 9000 + 14));
        const uint64_t day = 86'400'000'000'000ull;
        if (n["start_ns"]) u.start_ns = L.integer(n["start_ns"], up + ".start_ns", 0, day);
        if (n["stop_ns"]) u.stop_ns = L.integer(n["stop_ns"], up + ".stop_ns", 0, day);
        if (u.stop_ns <= u.start_ns) L.fail(up + ".stop_ns", "must be after start_ns");
        if (n["dscp"]) u.dscp = uint8_t(L.integer(n["dscp"], up + ".dscp", 0, 63));
        if (n["ecn"]) u.ecn = L.boolean(n["ecn"], up + ".ecn");
        if (n["priority"]) u.priority = L.priority(n["priority"], up + ".priority");
        if (n["sport"]) u.sport = uint16_t(L.integer(n["sport"], up + ".sport", 1, 65535));
        if (n["dport"]) u.dport = uint16_t(L.integer(n["dport"], up + ".dport", 1, 65535));
        c.udp_flows.push_back(u);
    }
}

std::string resolve(const std::string &base, const std::string &p) {
    if (p.empty() || p[0] == '/' || std::filesystem::exists(p)) return p;
    std::string b = base + "/" + p;
    return std::filesystem::exists(b) ? b : p;
}

}  // namespace

HostRunConfig load_host_config_string(const std::string &yaml, const std::string &source,
                                      const std::string &base_dir) {
    Loader L(source, base_dir);
    YAML::Node root = load_yaml_document(yaml, source);
    HostRunConfig c;
    c.source = source;
    if (!root.IsMap()) L.fail("", "expected a map at the top level, got " + describe(root));
    L.check_keys(root, "",
                 {"rocehost", "traffic", "dcqcn", "hosts", "peers", "workload", "faults",
                  "udp_flows", "jobs"});

    if (auto r = root["rocehost"]) {
        L.check_keys(
            r, "rocehost",
            {"name", "file_prefix", "memory_mb", "mbufs", "mtu", "duration_ms", "start_delay_ms",
             "linger_ms", "ack_every", "rto_us", "base_rtt_us", "pacer_slack_ns", "verify_icrc",
             "exit_when_done", "out_dir", "idle_sleep_us", "window", "sample_us"});
        auto &R = c.run;
        if (r["name"]) R.name = L.string(r["name"], "rocehost.name");
        if (r["file_prefix"]) R.file_prefix = L.string(r["file_prefix"], "rocehost.file_prefix");
        if (r["memory_mb"])
            R.memory_mb = uint32_t(L.integer(r["memory_mb"], "rocehost.memory_mb", 64, 65536));
        if (r["mbufs"]) R.mbufs = uint32_t(L.integer(r["mbufs"], "rocehost.mbufs", 1023, 1 << 22));
        if (r["mtu"]) {
            R.mtu = uint32_t(L.integer(r["mtu"], "rocehost.mtu", 256, 4096));
            if (R.mtu & (R.mtu - 1))
                L.fail("rocehost.mtu",
                       std::to_string(R.mtu) + " is not one of 256, 512, 1024, 2048, 4096");
        }
        if (r["duration_ms"])
            R.duration_ns =
                L.ms_as_ns(r["duration_ms"], "rocehost.duration_ms", 1, 86'400'000);
        if (r["start_delay_ms"])
            R.start_delay_ns =
                L.ms_as_ns(r["start_delay_ms"], "rocehost.start_delay_ms", 0, 600'000);
        if (r["linger_ms"])
            R.linger_ns = L.ms_as_ns(r["linger_ms"], "rocehost.linger_ms", 0, 600'000);
        if (r["ack_every"])
            R.ack_every = uint32_t(L.integer(r["ack_every"], "rocehost.ack_every", 0, 1 << 20));
        if (r["window"]) R.window = uint32_t(L.integer(r["window"], "rocehost.window", 0, 1 << 22));
        if (r["rto_us"]) R.rto_ns = L.us_as_ns(r["rto_us"], "rocehost.rto_us");
        if (r["base_rtt_us"]) R.base_rtt_ns = L.us_as_ns(r["base_rtt_us"], "rocehost.base_rtt_us");
        if (r["pacer_slack_ns"])
            R.pacer_slack_ns = L.duration(r["pacer_slack_ns"], "rocehost.pacer_slack_ns",
                                          TimeUnit::ns, 0, 1'000'000);
        if (r["verify_icrc"]) R.verify_icrc = L.boolean(r["verify_icrc"], "rocehost.verify_icrc");
        if (r["exit_when_done"])
            R.exit_when_done = L.boolean(r["exit_when_done"], "rocehost.exit_when_done");
        if (r["out_dir"]) R.out_dir = L.string(r["out_dir"], "rocehost.out_dir");
        if (r["idle_sleep_us"])
            R.idle_sleep_us =
                L.duration(r["idle_sleep_us"], "rocehost.idle_sleep_us", TimeUnit::us, 0, 10'000);
        if (r["sample_us"])
            R.sample_ns = L.us_as_ns(r["sample_us"], "rocehost.sample_us", 1'000'000);
    }
    if (auto t = root["traffic"]) roce::read_traffic_section(L, t, "traffic", c.traffic);
    if (auto d = root["dcqcn"]) {
        std::string profile;
        roce::read_dcqcn_section(L, d, "dcqcn", c.dcqcn, c.dcqcn_enabled, profile);
    }

    std::set<std::string> names;
    auto host = [&](const YAML::Node &h, const std::string &path, bool peer) {
        if (peer)
            L.check_keys(h, path, {"name", "ip", "line_rate"});
        else
            L.check_keys(h, path,
                         {"name", "device", "mac", "ip", "gateway", "gateway_mac", "line_rate"});
        HostConfig hc;
        if (!h["name"]) L.fail(at(path, "name"), "required field missing");
        hc.name = L.string(h["name"], at(path, "name"));
        if (!names.insert(hc.name).second)
            L.fail(at(path, "name"), "'" + hc.name + "' is used twice");
        if (!h["ip"]) L.fail(at(path, "ip"), "required field missing");
        std::string ip = L.string(h["ip"], at(path, "ip"));
        const bool v6 = ip.find(':') != std::string::npos;
        auto ia =
            parse_if_addr(ip.find('/') == std::string::npos ? ip + (v6 ? "/128" : "/32") : ip);
        if (!ia) L.fail(at(path, "ip"), "'" + ip + "' is not an IPv4 or IPv6 address[/len]");
        if (!c.hosts.empty() && c.hosts[0].ip.addr.is_v6 != ia->addr.is_v6)
            L.fail(at(path, "ip"), "'" + ip + "' is " + (v6 ? "IPv6" : "IPv4") +
                                       " but hosts[0] is not: one family per run");
        hc.ip = *ia;
        if (h["line_rate"]) hc.line_rate_bps = L.rate_bps(h["line_rate"], at(path, "line_rate"));
        if (!peer) {
            if (!h["device"]) L.fail(at(path, "device"), "required field missing");
            hc.device = L.string(h["device"], at(path, "device"));
            if (!h["mac"]) L.fail(at(path, "mac"), "required field missing");
            auto m = parse_mac(L.string(h["mac"], at(path, "mac")));
            if (!m || m->is_multicast() || m->is_zero())
                L.fail(at(path, "mac"), "not a unicast MAC address");
            hc.mac = *m;
            if (h["gateway"]) {
                auto g = parse_ip(L.string(h["gateway"], at(path, "gateway")));
                if (!g || g->is_v6 != hc.ip.addr.is_v6)
                    L.fail(
                        at(path, "gateway"),
                        std::string("not an ") + (hc.ip.addr.is_v6 ? "IPv6" : "IPv4") + " address");
                if (!hc.ip.subnet().contains(*g))
                    L.fail(at(path, "gateway"), "not in the host's subnet " + hc.ip.subnet().str());
                hc.gateway = *g;
            }
            if (h["gateway_mac"]) {
                auto m2 = parse_mac(L.string(h["gateway_mac"], at(path, "gateway_mac")));
                if (!m2 || m2->is_multicast() || m2->is_zero())
                    L.fail(at(path, "gateway_mac"), "not a unicast MAC address");
                hc.gateway_mac = *m2;
            }
        }
        c.hosts.push_back(hc);
    };
    auto hosts = root["hosts"];
    if (!hosts || !hosts.IsSequence() || hosts.size() == 0)
        throw ConfigError(source + ": hosts: a list of at least one host is required");
    for (size_t i = 0; i < hosts.size(); i++) host(hosts[i], at("hosts", i), false);
    if (auto peers = root["peers"]) {
        if (!peers.IsSequence()) L.fail("peers", "expected a list");
        for (size_t i = 0; i < peers.size(); i++) host(peers[i], at("peers", i), true);
    }

    auto &W = c.workload.spec;
    W.n_hosts = uint32_t(c.hosts.size());
    W.line_rate_bps = c.hosts[0].line_rate_bps;
    auto hidx = [&](const YAML::Node &n, const std::string &path) {
        std::string s = L.string(n, path);
        int i = c.host_index(s);
        if (i < 0) L.fail(path, "no host or peer named '" + s + "'");
        return uint32_t(i);
    };
    if (auto w = root["workload"]) {
        L.check_keys(w, "workload",
                     {"pattern", "seed", "size", "count", "start_us", "interval_us", "stagger_us",
                      "pairs", "senders", "receiver", "cdf", "load", "duration_ms", "flows"});
        try {
            if (w["pattern"])
                W.pattern = roce::parse_pattern(L.string(w["pattern"], "workload.pattern"));
        } catch (const std::invalid_argument &e) {
            L.fail("workload.pattern", e.what());
        }
        if (w["seed"]) W.seed = L.integer(w["seed"], "workload.seed", 0, UINT64_MAX);
        if (w["size"]) {
            W.size_bytes = L.size_bytes(w["size"], "workload.size", 0, 1'000'000'000'000);
            // One RDMA WRITE per flow: RETH carries a 32-bit length; 1 GiB keeps the PSN
            // span of a message far inside the 24-bit window even at MTU 256.
            if (W.size_bytes > (1u << 30))
                L.fail("workload.size", std::to_string(W.size_bytes) + " is above 1 GiB");
        }
        if (w["count"]) W.count = uint32_t(L.integer(w["count"], "workload.count", 0, 1'000'000));
        if (w["start_us"]) W.start_ns = L.us_as_ns(w["start_us"], "workload.start_us");
        if (w["interval_us"]) W.interval_ns = L.us_as_ns(w["interval_us"], "workload.interval_us");
        if (w["stagger_us"]) W.stagger_ns = L.us_as_ns(w["stagger_us"], "workload.stagger_us");
        if (w["receiver"]) W.receiver = hidx(w["receiver"], "workload.receiver");
        if (auto s = w["senders"]) {
            if (!s.IsSequence()) L.fail("workload.senders", "expected a list of host names");
            for (size_t i = 0; i < s.size(); i++)
                W.senders.push_back(hidx(s[i], at("workload.senders", i)));
        }
        if (auto p = w["pairs"]) {
            if (!p.IsSequence()) L.fail("workload.pairs", "expected a list of [src, dst]");
            for (size_t i = 0; i < p.size(); i++) {
                std::string pp = at("workload.pairs", i);
                if (!p[i].IsSequence() || p[i].size() != 2) L.fail(pp, "expected [src, dst]");
                W.pairs.emplace_back(hidx(p[i][0], at(pp, 0)), hidx(p[i][1], at(pp, 1)));
            }
        }
        if (auto fl = w["flows"]) {  // pattern list: {src, dst, size, start_ns, class} each
            if (!fl.IsSequence()) L.fail("workload.flows", "expected a list of flows");
            for (size_t i = 0; i < fl.size(); i++) {
                const std::string fp = at("workload.flows", i);
                L.check_keys(fl[i], fp, {"src", "dst", "size", "start_ns", "class"});
                roce::FlowSpec f;
                if (!fl[i]["src"] || !fl[i]["dst"] || !fl[i]["size"])
                    L.fail(fp, "src, dst and size are required");
                f.src = hidx(fl[i]["src"], fp + ".src");
                f.dst = hidx(fl[i]["dst"], fp + ".dst");
                f.size_bytes = L.size_bytes(fl[i]["size"], fp + ".size", 1, 1u << 30);
                if (fl[i]["start_ns"])
                    f.start_ns = L.integer(fl[i]["start_ns"], fp + ".start_ns", 0,
                                           86'400'000'000'000ull);
                if (auto k = fl[i]["class"])
                    f.cls = read_flow_class(L, k, fp + ".class", c.traffic);
                W.list.push_back(f);
            }
        } else if (W.pattern == roce::Pattern::list) {
            L.fail("workload.flows", "required by pattern list");
        }
        if (w["load"]) W.load = L.real(w["load"], "workload.load", 0.001, 1);
        if (w["duration_ms"])
            W.duration_ns =
                L.ms_as_ns(w["duration_ms"], "workload.duration_ms", 1, 86'400'000);
        if (w["cdf"]) {
            c.workload.cdf_file = resolve(L.base_dir, L.string(w["cdf"], "workload.cdf"));
            try {
                W.cdf = roce::SizeCdf::load(c.workload.cdf_file);
            } catch (const std::runtime_error &e) {
                L.fail("workload.cdf", e.what());
            }
        } else if (W.pattern == roce::Pattern::cdf) {
            L.fail("workload.cdf", "required by pattern cdf");
        }
        try {
            roce::generate_workload(W);
        } catch (const std::invalid_argument &e) {
            L.fail("workload", e.what());
        }
    } else {
        W.count = 0;
        W.pattern = roce::Pattern::pairs;
    }
    // faults: [{host, pfc_storm | slow_receiver: {at_us, until_us, priority, interval_us,
    // xoff_bytes, max_catch_up}}] (doc/rocehost.md, "Host faults").
    if (auto fs = root["faults"]) {
        if (!fs.IsSequence()) L.fail("faults", "expected a list");
        for (size_t i = 0; i < fs.size(); i++) {
            const std::string fp = at("faults", i);
            L.check_keys(fs[i], fp, {"host", "pfc_storm", "slow_receiver"});
            roce::HostFault f;
            if (!fs[i]["host"]) L.fail(fp + ".host", "required field missing");
            f.host = hidx(fs[i]["host"], fp + ".host");
            if (!c.hosts[f.host].local())
                L.fail(fp + ".host", "'" + c.hosts[f.host].name + "' is a peer, not a local host");
            if (bool(fs[i]["pfc_storm"]) == bool(fs[i]["slow_receiver"]))
                L.fail(fp, "needs exactly one of pfc_storm, slow_receiver");
            f.kind = fs[i]["pfc_storm"] ? roce::HostFault::pfc_storm
                                        : roce::HostFault::slow_receiver;
            const std::string kp = fp + (fs[i]["pfc_storm"] ? ".pfc_storm" : ".slow_receiver");
            YAML::Node k = fs[i]["pfc_storm"] ? fs[i]["pfc_storm"] : fs[i]["slow_receiver"];
            L.check_keys(k, kp, {"at_us", "until_us", "priority", "interval_us", "xoff_bytes",
                                 "max_catch_up"});
            if (!k["at_us"] || !k["until_us"]) L.fail(kp, "at_us and until_us are required");
            f.at_ns = L.us_as_ns(k["at_us"], kp + ".at_us");
            f.until_ns = L.us_as_ns(k["until_us"], kp + ".until_us");
            if (f.until_ns <= f.at_ns) L.fail(kp + ".until_us", "must be after at_us");
            if (k["priority"]) f.priority = L.priority(k["priority"], kp + ".priority");
            if (k["interval_us"]) {
                f.interval_ns = L.us_as_ns(k["interval_us"], kp + ".interval_us", 1'000'000);
                if (!f.interval_ns) L.fail(kp + ".interval_us", "must be above 0");
            }
            if (k["xoff_bytes"])
                f.xoff_bytes = L.size_bytes(k["xoff_bytes"], kp + ".xoff_bytes", 1, 1u << 30);
            if (k["max_catch_up"]) {
                if (f.kind != roce::HostFault::pfc_storm)
                    L.fail(kp + ".max_catch_up", "only for pfc_storm");
                f.max_catch_up =
                    uint32_t(L.integer(k["max_catch_up"], kp + ".max_catch_up", 1, 65536));
            }
            c.faults.push_back(f);
        }
    }
    if (auto us = root["udp_flows"]) read_udp_flows(L, us, c);
    // jobs: [{kind, hosts, bytes, iterations, compute_gap_ns, step_gap_ns, schedule,
    // start_ns, class}] (doc/rocehost.md, "Collective jobs").
    if (auto js = root["jobs"]) {
        if (!js.IsSequence()) L.fail("jobs", "expected a list");
        for (size_t i = 0; i < js.size(); i++) {
            const std::string jp = at("jobs", i);
            L.check_keys(js[i], jp,
                         {"kind", "hosts", "bytes", "iterations", "compute_gap_ns", "step_gap_ns",
                          "schedule", "start_ns", "class"});
            roce::JobConfig j;
            if (!js[i]["kind"]) L.fail(jp + ".kind", "required field missing");
            j.spec.kind = L.enumeration<roce::Collective>(
                js[i]["kind"], jp + ".kind",
                {{"ring_allreduce", roce::Collective::ring_allreduce},
                 {"all_to_all", roce::Collective::all_to_all}});
            auto hn = js[i]["hosts"];
            if (!hn || !hn.IsSequence() || hn.size() < 2)
                L.fail(jp + ".hosts", "a list of at least two host names is required");
            for (size_t k = 0; k < hn.size(); k++) {
                const std::string hp = at(jp + ".hosts", k);
                const uint32_t h = hidx(hn[k], hp);
                // A rank's step waits for its own receive: every rank runs in this process.
                if (!c.hosts[h].local())
                    L.fail(hp, "'" + c.hosts[h].name +
                                   "' is a peer: a job's hosts must all be local hosts");
                for (uint32_t x : j.spec.hosts)
                    if (x == h) L.fail(hp, "'" + c.hosts[h].name + "' is listed twice");
                j.spec.hosts.push_back(h);
            }
            if (!js[i]["bytes"]) L.fail(jp + ".bytes", "required field missing");
            j.spec.bytes_per_rank = L.size_bytes(js[i]["bytes"], jp + ".bytes", 1, 1u << 30);
            if (js[i]["iterations"])
                j.spec.iterations =
                    uint32_t(L.integer(js[i]["iterations"], jp + ".iterations", 1, 1'000'000));
            if (js[i]["compute_gap_ns"])
                j.spec.compute_gap_ns = L.integer(js[i]["compute_gap_ns"], jp + ".compute_gap_ns",
                                                  0, 3'600'000'000'000ull);
            if (js[i]["step_gap_ns"])
                j.spec.step_gap_ns =
                    L.integer(js[i]["step_gap_ns"], jp + ".step_gap_ns", 0, 3'600'000'000'000ull);
            if (js[i]["schedule"])
                j.spec.a2a = L.enumeration<roce::AllToAllSchedule>(
                    js[i]["schedule"], jp + ".schedule",
                    {{"simultaneous", roce::AllToAllSchedule::simultaneous},
                     {"pairwise", roce::AllToAllSchedule::pairwise}});
            if (js[i]["start_ns"])
                j.start_ns =
                    L.integer(js[i]["start_ns"], jp + ".start_ns", 0, 86'400'000'000'000ull);
            // class: one class for every rank's flows, or a list of one per rank (in `hosts`'
            // order; null: the run's `traffic`), as rocelab writes a pg resolved per switch port.
            if (auto k = js[i]["class"]) {
                const std::string kp = jp + ".class";
                if (k.IsMap()) {
                    j.rank_class.assign(j.spec.hosts.size(), read_flow_class(L, k, kp, c.traffic));
                } else if (k.IsSequence()) {
                    if (k.size() != j.spec.hosts.size())
                        L.fail(kp, "one class per host is required (" +
                                       std::to_string(j.spec.hosts.size()) + " hosts, " +
                                       std::to_string(k.size()) + " given)");
                    for (size_t r = 0; r < k.size(); r++) {
                        if (k[r].IsNull())
                            j.rank_class.emplace_back();
                        else if (k[r].IsMap())
                            j.rank_class.emplace_back(
                                read_flow_class(L, k[r], at(kp, r), c.traffic));
                        else
                            L.fail(at(kp, r), "expected a class {data_dscp, data_priority, "
                                              "ack_dscp, ack_priority} or null");
                    }
                } else {
                    L.fail(kp, "expected a class {data_dscp, data_priority, ack_dscp, "
                               "ack_priority} or a list of one per host");
                }
            }
            c.jobs.push_back(j);
        }
    }
    return c;
}

HostRunConfig load_host_config_file(const std::string &path) {
    std::string text = read_config_file(path);
    std::string dir = std::filesystem::path(path).parent_path().string();
    return load_host_config_string(text, path, dir.empty() ? "." : dir);
}

}  // namespace rocesw::rocehost
