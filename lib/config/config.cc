// Configuration loader. The whole file is read and validated before a Config is returned, so a
// caller either gets a complete, consistent configuration or one ConfigError; nothing is applied
// half-way. Every check names the field by its path (ports[1].mtu) so the message alone is
// enough to find and fix the line. doc/config.md lists every rule and message.
#include "config/config.h"
#include "common/strings.h"
#include "config/yaml_doc.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unordered_map>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string_view>
#include <utility>

#include "common/counters.h"

namespace rocesw {

namespace {

bool valid_name(const std::string &s, size_t max, std::string_view extra) {
    if (s.empty() || s.size() > max) return false;
    return std::all_of(s.begin(), s.end(), [&](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               extra.find(c) != std::string_view::npos;
    });
}


struct IpPrefixHash {
    size_t operator()(const IpPrefix &p) const {
        uint64_t h = p.addr.is_v6 ? 0x9e3779b97f4a7c15ull : 0;
        if (p.addr.is_v6)
            for (size_t i = 0; i < 16; i += 8) {
                uint64_t w;
                std::memcpy(&w, p.addr.v6.data() + i, 8);
                h = (h ^ w) * 0xff51afd7ed558ccdull;
            }
        else
            h = (h ^ p.addr.v4) * 0xff51afd7ed558ccdull;
        h = (h ^ p.len) * 0xc4ceb9fe1a85ec53ull;
        return size_t(h ^ (h >> 29));
    }
};

// A switch address, remembered so routes and neighbours cannot point back at the switch.
struct OwnAddr {
    IpAddr addr;
    size_t port;
};

class Loader : YamlReader {
  public:
    explicit Loader(std::string source) : YamlReader(source), source_(std::move(source)) {}

    Config load(const YAML::Node &root) {
        cfg_.source = source_;
        if (!root.IsNull() && !root.IsMap())
            fail("", "expected a map at the top level, got " + describe(root));
        Fields top = fields(root, "",
                            {"switch", "ports", "routes", "route_files", "neighbours", "lb",
                             "telemetry", "control_plane"});
        parse_switch(top.find("switch"));
        parse_lb(top.find("lb"));
        parse_ports(top.find("ports"));
        if (auto *n = top.find("routes")) {
            auto items = list(*n, "routes");
            for (size_t i = 0; i < items.size(); i++) parse_route(items[i], at("routes", i));
        }
        yaml_routes_ = cfg_.routes.size() + cfg_.multipath_routes.size();
        if (auto *n = top.find("route_files")) {
            auto items = list(*n, "route_files");
            for (size_t i = 0; i < items.size(); i++)
                parse_route_file(string(items[i], at("route_files", i)), at("route_files", i));
        }
        if (auto *n = top.find("neighbours")) {
            auto items = list(*n, "neighbours");
            for (size_t i = 0; i < items.size(); i++)
                parse_neighbour(items[i], at("neighbours", i));
        }
        parse_telemetry(top.find("telemetry"));
        parse_control_plane(top.find("control_plane"));
        return std::move(cfg_);
    }

  private:
    MacAddr mac(const YAML::Node &n, const std::string &path) const {
        std::string s = string(n, path);
        auto m = parse_mac(s);
        if (!m)
            fail(path,
                 "'" + s + "' is not a MAC address (expected six hex bytes, aa:bb:cc:dd:ee:ff)");
        if (m->is_multicast()) fail(path, "'" + s + "' is a multicast address");
        if (m->is_zero()) fail(path, "'" + s + "' is the zero address");
        return *m;
    }

    IpAddr ip(const YAML::Node &n, const std::string &path) const {
        std::string s = string(n, path);
        auto a = parse_ip(s);
        if (!a) fail(path, "'" + s + "' is not an IP address");
        return *a;
    }

    void parse_switch(const YAML::Node *node) {
        const std::string p = "switch";
        SwitchConfig &sw = cfg_.sw;
        Fields f = fields(
            node ? *node : YAML::Node(), p,
            {"name", "workers", "idle", "idle_sleep_max_us", "file_prefix", "log_level", "burst",
             "mbufs", "memory_mb", "cpus", "eal_args", "control_socket", "telemetry",
              "qos"});
        if (auto *n = f.find("name")) {
            sw.name = string(*n, at(p, "name"));
            if (!valid_name(sw.name, 32, "_-"))
                fail(at(p, "name"),
                     "'" + sw.name + "' is not a valid name (1 to 32 of A-Z a-z 0-9 _ -)");
        }
        if (auto *n = f.find("workers"))
            sw.workers = uint32_t(integer(*n, at(p, "workers"), 1, kMaxWorkers));
        if (auto *n = f.find("idle"))
            sw.idle = enumeration<IdleMode>(*n, at(p, "idle"),
                                            {{"adaptive", IdleMode::adaptive},
                                             {"busy", IdleMode::busy}});
        if (auto *n = f.find("idle_sleep_max_us"))
            sw.idle_sleep_max_us =
                uint32_t(duration(*n, at(p, "idle_sleep_max_us"), TimeUnit::us, 1, 100000));
        sw.file_prefix = "roceswd-" + sw.name;
        if (auto *n = f.find("file_prefix")) {
            sw.file_prefix = string(*n, at(p, "file_prefix"));
            // EAL makes a directory of this name, so "." and ".." would escape it.
            if (!valid_name(sw.file_prefix, 64, "_.-") || sw.file_prefix == "." ||
                sw.file_prefix == "..")
                fail(
                    at(p, "file_prefix"),
                    "'" + sw.file_prefix +
                        "' is not a valid file prefix (1 to 64 of A-Z a-z 0-9 _ . -, not . or ..)");
        }
        if (auto *n = f.find("log_level")) {
            static const char *const kLevels[] = {"trace", "debug",    "info", "warn",
                                                  "error", "critical", "off"};
            sw.log_level = string(*n, at(p, "log_level"));
            if (std::none_of(std::begin(kLevels), std::end(kLevels),
                             [&](const char *l) { return sw.log_level == l; }))
                fail(at(p, "log_level"),
                     "'" + sw.log_level +
                         "' is not one of trace, debug, info, warn, error, critical, off");
        }
        if (auto *n = f.find("burst")) sw.burst = uint32_t(integer(*n, at(p, "burst"), 1, 256));
        if (auto *n = f.find("mbufs"))
            sw.mbufs = uint32_t(integer(*n, at(p, "mbufs"), 1024, 4194304));
        if (auto *n = f.find("memory_mb")) {
            sw.memory_mb = uint32_t(integer(*n, at(p, "memory_mb"), 0, 65536));
            if (sw.memory_mb != 0 && sw.memory_mb < 64)
                fail(at(p, "memory_mb"),
                     std::to_string(sw.memory_mb) +
                         " is out of range 64..65536 (0 sizes it automatically)");
        }
        if (auto *n = f.find("cpus")) {
            auto items = list(*n, at(p, "cpus"));
            for (size_t i = 0; i < items.size(); i++) {
                std::string ip = at(at(p, "cpus"), i);
                auto cpu = uint32_t(integer(items[i], ip, 0, 1023));
                if (std::find(sw.cpus.begin(), sw.cpus.end(), cpu) != sw.cpus.end())
                    fail(ip, "CPU " + std::to_string(cpu) + " is listed twice");
                sw.cpus.push_back(cpu);
            }
        }
        if (auto *n = f.find("eal_args")) {
            auto items = list(*n, at(p, "eal_args"));
            for (size_t i = 0; i < items.size(); i++) {
                std::string ip = at(at(p, "eal_args"), i);
                sw.eal_args.push_back(string(items[i], ip));
                if (sw.eal_args.back().empty()) fail(ip, "must not be empty");
            }
        }
        sw.control_socket = "/run/rocesw/" + sw.name + ".sock";
        if (auto *n = f.find("control_socket")) {
            std::string s = string(*n, at(p, "control_socket"));
            if (s.empty() || s[0] != '/')
                fail(at(p, "control_socket"), "'" + s + "' is not an absolute path");
            // sockaddr_un.sun_path holds 108 bytes including the terminating NUL.
            if (s.size() > 107)
                fail(at(p, "control_socket"), "path is " + std::to_string(s.size()) +
                                                  " bytes, a Unix socket path allows at most 107");
            sw.control_socket = s;
        }
        if (auto *n = f.find("telemetry")) sw.telemetry = boolean(*n, at(p, "telemetry"));
        if (auto *n = f.find("qos")) {
            sw.qos_file = string(*n, at(p, "qos"));
            if (sw.qos_file.empty()) fail(at(p, "qos"), "must name a QoS profile file");
        }
    }

    void parse_telemetry(const YAML::Node *node) {
        const std::string p = "telemetry";
        TelemetryConfig &t = cfg_.telemetry;
        Fields f = fields(node ? *node : YAML::Node(), p,
                          {"prometheus", "allow_clear", "trace", "latency"});
        if (auto *n = f.find("allow_clear")) t.allow_clear = boolean(*n, at(p, "allow_clear"));
        if (auto *n = f.find("latency")) t.latency = boolean(*n, at(p, "latency"));
        if (auto *n = f.find("prometheus")) {
            const std::string pp = at(p, "prometheus");
            Fields pf = fields(*n, pp, {"enabled", "listen"});
            if (auto *e = pf.find("enabled")) t.prometheus = boolean(*e, at(pp, "enabled"));
            if (auto *l = pf.find("listen")) {
                t.prometheus_listen = string(*l, at(pp, "listen"));
                t.prometheus_listen_given = true;
                if (!valid_listen(t.prometheus_listen))
                    fail(at(pp, "listen"), "'" + t.prometheus_listen +
                                               "' is not an address:port (e.g. 127.0.0.1:9417, "
                                               "[::1]:9417; port 0..65535)");
            }
        }
        if (auto *n = f.find("trace")) {
            const std::string tp = at(p, "trace");
            Fields tf = fields(*n, tp, {"file", "interval_ms"});
            if (auto *e = tf.find("file")) {
                t.trace_file = string(*e, at(tp, "file"));
                if (t.trace_file.empty() || t.trace_file[0] != '/')
                    fail(at(tp, "file"), "'" + t.trace_file + "' is not an absolute path");
            }
            if (auto *e = tf.find("interval_ms"))
                t.trace_interval_ms =
                    uint32_t(duration(*e, at(tp, "interval_ms"), TimeUnit::ms, 1, 60000));
        }
    }

    void parse_control_plane(const YAML::Node *node) {
        const std::string p = "control_plane";
        ControlPlaneConfig &c = cfg_.control_plane;
        Fields f = fields(node ? *node : YAML::Node(), p,
                          {"host_interfaces", "netlink", "punt_pps", "punt_burst_ms", "punt_queue",
                           "netlink_rcvbuf_kb", "max_learned_routes", "allow_route_learn",
                           "allow_port_link"});
        if (auto *n = f.find("allow_route_learn"))
            c.allow_route_learn = boolean(*n, at(p, "allow_route_learn"));
        if (auto *n = f.find("allow_port_link"))
            c.allow_port_link = boolean(*n, at(p, "allow_port_link"));
        if (auto *n = f.find("host_interfaces"))
            c.host_interfaces = boolean(*n, at(p, "host_interfaces"));
        c.netlink = c.host_interfaces;  // default: follow the kernel when it has interfaces
        if (auto *n = f.find("netlink")) c.netlink = boolean(*n, at(p, "netlink"));
        if (c.netlink && !c.host_interfaces)
            fail(at(p, "netlink"), "needs host_interfaces: true (routes are learned through the "
                                   "ports' host interfaces)");
        if (auto *n = f.find("punt_pps")) {
            const std::string pp = at(p, "punt_pps");
            std::vector<std::string_view> names;
            for (size_t i = 0; i < kPuntClassCount; i++)
                names.push_back(punt_class_name(PuntClass(i)));
            if (!n->IsMap()) fail(pp, "expected a map of class: packets/s, got " + describe(*n));
            for (const auto &kv : *n) {
                const std::string key = kv.first.as<std::string>();
                size_t i = 0;
                while (i < kPuntClassCount && names[i] != key) i++;
                if (i == kPuntClassCount) {
                    fail(at(pp, key), "unknown punt class (" + join(names) + ")");
                }
                c.punt_pps[i] = uint32_t(integer(kv.second, at(pp, key), 0, 1000000));
            }
        }
        if (auto *n = f.find("punt_burst_ms"))
            c.punt_burst_ms = uint32_t(duration(*n, at(p, "punt_burst_ms"), TimeUnit::ms, 1, 10000));
        if (auto *n = f.find("punt_queue")) {
            c.punt_queue = uint32_t(integer(*n, at(p, "punt_queue"), 64, 65536));
            if (c.punt_queue & (c.punt_queue - 1))
                fail(at(p, "punt_queue"), std::to_string(c.punt_queue) + " is not a power of two");
        }
        if (auto *n = f.find("netlink_rcvbuf_kb"))
            c.netlink_rcvbuf_kb = uint32_t(integer(*n, at(p, "netlink_rcvbuf_kb"), 256, 1048576));
        if (auto *n = f.find("max_learned_routes"))
            c.max_learned_routes =
                uint32_t(integer(*n, at(p, "max_learned_routes"), 0, 16777216));
    }

    // "a.b.c.d:port" or "[v6]:port" with a numeric port 0..65535.
    static bool valid_listen(const std::string &s) {
        size_t colon = s.rfind(':');
        if (colon == std::string::npos || colon + 1 >= s.size() || colon + 6 < s.size())
            return false;
        std::string host = s.substr(0, colon), port = s.substr(colon + 1);
        if (port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) > 65535)
            return false;
        if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
            auto a = parse_ip(host.substr(1, host.size() - 2));
            return a && a->is_v6;
        }
        auto a = parse_ip(host);
        return a && !a->is_v6;
    }

    void parse_ports(const YAML::Node *node) {
        if (!node) fail("ports", "required field missing");
        auto items = list(*node, "ports");
        if (items.empty()) fail("ports", "at least one port is required");
        if (items.size() > kMaxPorts)
            fail("ports", std::to_string(items.size()) + " ports, at most " +
                              std::to_string(kMaxPorts) + " allowed");
        for (size_t i = 0; i < items.size(); i++) parse_port(items[i], at("ports", i), i);
        // AF_XDP rings pin mbufs from the one pool (kAfXdpPinnedMbufs): too few and RX stops
        // silently. Ask for what they pin plus the switch's own 1024 per port.
        uint64_t need = 0;
        for (const auto &pc : cfg_.ports)
            need += pc.af_xdp ? uint64_t(pc.af_xdp->queue_count) *
                                        (kAfXdpPinnedMbufs + pc.rx_desc + pc.tx_desc) +
                                    1024
                              : 0;
        if (need && cfg_.sw.mbufs < need)
            fail("switch.mbufs",
                 std::to_string(cfg_.sw.mbufs) +
                     " is too few for the AF_XDP "
                     "ports: each queue pins " +
                     std::to_string(kAfXdpPinnedMbufs) +
                     " mbufs in its fill and completion rings plus rx_desc + tx_desc, and RX stops "
                     "when the pool runs dry; need >= " +
                     std::to_string(need));
    }

    AfXdpConfig parse_af_xdp(const YAML::Node &node, const std::string &p) {
        Fields f = fields(node, p,
                          {"interface", "mode", "queue_count", "copy", "zero_copy", "busy_budget",
                           "xdp_mode"});
        AfXdpConfig ax;
        ax.interface = string(require(f, p, "interface"), at(p, "interface"));
        if (!valid_name(ax.interface, 15, "_.-@:"))
            fail(at(p, "interface"), "'" + ax.interface +
                                         "' is not an interface name (1 to 15 "
                                         "characters)");
        for (size_t j = 0; j < cfg_.ports.size(); j++)
            if (cfg_.ports[j].af_xdp && cfg_.ports[j].af_xdp->interface == ax.interface)
                fail(at(p, "interface"),
                     "'" + ax.interface + "' is already used by " + at("ports", j));
        if (auto *n = f.find("mode"))
            ax.mode = enumeration<AfXdpMode>(
                *n, at(p, "mode"),
                {{"dedicated", AfXdpMode::dedicated}, {"shared", AfXdpMode::shared}});
        if (auto *n = f.find("queue_count"))
            ax.queue_count = uint32_t(integer(*n, at(p, "queue_count"), 1, 64));
        if (f.find("copy") && f.find("zero_copy"))
            fail(at(p, "zero_copy"), "give copy or zero_copy, not both");
        if (auto *n = f.find("copy")) ax.zero_copy = !boolean(*n, at(p, "copy"));
        if (auto *n = f.find("zero_copy")) ax.zero_copy = boolean(*n, at(p, "zero_copy"));
        if (auto *n = f.find("busy_budget"))
            ax.busy_budget = uint32_t(integer(*n, at(p, "busy_budget"), 0, 1024));
        if (auto *n = f.find("xdp_mode")) {
            ax.xdp_mode = enumeration<XdpAttach>(*n, at(p, "xdp_mode"),
                                                 {{"auto", XdpAttach::automatic},
                                                  {"native", XdpAttach::native},
                                                  {"generic", XdpAttach::generic}});
            // A zero-copy socket needs the driver's XDP: generic mode copies every frame.
            if (ax.xdp_mode == XdpAttach::generic && ax.zero_copy)
                fail(at(p, "xdp_mode"),
                     "generic XDP copies every frame into the socket: it does not go with "
                     "zero_copy (use copy, or xdp_mode native)");
        }
        return ax;
    }

    void parse_port(const YAML::Node &node, const std::string &p, size_t index) {
        Fields f = fields(node, p,
                          {"name", "device", "mac", "mtu", "speed", "rx_desc", "tx_desc", "ipv4",
                           "ipv6", "af_xdp"});
        PortConfig pc;
        pc.name = string(require(f, p, "name"), at(p, "name"));
        if (!valid_name(pc.name, 15, "_.-"))
            fail(at(p, "name"),
                 "'" + pc.name + "' is not a valid port name (1 to 15 of A-Z a-z 0-9 _ . -)");
        if (int other = cfg_.port_index(pc.name); other >= 0)
            fail(at(p, "name"), "'" + pc.name + "' is already used by " + at("ports", other));

        if (auto *n = f.find("af_xdp")) {
            if (f.find("device"))
                fail(at(p, "device"),
                     "give either device or af_xdp, not both (af_xdp derives "
                     "the net_af_xdp device)");
            pc.af_xdp = parse_af_xdp(*n, at(p, "af_xdp"));
            const AfXdpConfig &ax = *pc.af_xdp;
            pc.device = "net_af_xdp" + std::to_string(index) + ",iface=" + ax.interface +
                        ",queue_count=" + std::to_string(ax.queue_count) +
                        ",busy_budget=" + std::to_string(ax.busy_budget) +
                        (ax.zero_copy ? "" : ",force_copy=1");
        } else {
            pc.device = string(require(f, p, "device"), at(p, "device"));
        }
        if (pc.device.empty()) fail(at(p, "device"), "must not be empty");
        // Devices are told apart by the name before the first comma: DPDK refuses two vdevs
        // (or two probes of a PCI address) with the same name whatever their arguments.
        std::string dev_name = pc.device.substr(0, pc.device.find(','));
        for (size_t j = 0; j < cfg_.ports.size(); j++)
            if (cfg_.ports[j].device.substr(0, cfg_.ports[j].device.find(',')) == dev_name)
                fail(at(p, "device"),
                     "device '" + dev_name + "' is already used by " + at("ports", j));

        pc.mac = mac(require(f, p, "mac"), at(p, "mac"));
        for (size_t j = 0; j < cfg_.ports.size(); j++)
            if (cfg_.ports[j].mac == pc.mac)
                fail(at(p, "mac"),
                     "'" + f.find("mac")->Scalar() + "' is already used by " + at("ports", j));

        if (auto *n = f.find("mtu")) pc.mtu = uint32_t(integer(*n, at(p, "mtu"), 68, 9600));
        if (auto *n = f.find("speed"))
            pc.speed_mbps = rate_mbps(*n, at(p, "speed"), 1, 800000, "speed");
        for (auto [key, field] : {std::pair{"rx_desc", &pc.rx_desc}, {"tx_desc", &pc.tx_desc}}) {
            if (auto *n = f.find(key)) {
                uint64_t v = integer(*n, at(p, key), 64, 16384);
                if (v & (v - 1)) fail(at(p, key), n->Scalar() + " is not a power of two");
                *field = uint32_t(v);
            }
        }
        for (bool v6 : {false, true}) {
            const char *key = v6 ? "ipv6" : "ipv4";
            auto *n = f.find(key);
            if (!n) continue;
            auto items = list(*n, at(p, key));
            for (size_t j = 0; j < items.size(); j++) {
                std::string ap = at(at(p, key), j);
                std::string s = string(items[j], ap);
                IfAddr ifa;
                unsigned len = 0;
                if (!split_addr_len(s, ifa.addr, len))
                    fail(ap, "'" + s + "' is not an address/length (e.g. " +
                                 (v6 ? "fd00:1::1/64" : "10.0.1.1/24") + ")");
                if (ifa.addr.is_v6 != v6)
                    fail(ap, "'" + s + "' is not an " + (v6 ? "IPv6" : "IPv4") + " address");
                if (len > max_prefix_len(ifa.addr))
                    fail(ap, "prefix length " + std::to_string(len) + " is out of range 0.." +
                                 std::to_string(max_prefix_len(ifa.addr)));
                ifa.len = uint8_t(len);
                for (auto &o : own_)
                    if (o.addr == ifa.addr)
                        fail(ap,
                             ifa.addr.str() + " is already an address of " + at("ports", o.port));
                own_.push_back({ifa.addr, index});
                (v6 ? pc.ipv6 : pc.ipv4).push_back(ifa);
            }
        }
        cfg_.ports.push_back(std::move(pc));
    }

    bool in_subnet_of(const PortConfig &pc, const IpAddr &a) const {
        for (auto *list : {&pc.ipv4, &pc.ipv6})
            for (auto &ifa : *list)
                if (ifa.subnet().contains(a)) return true;
        return false;
    }

    // The port through which `a` is reached: the given one (a must be on one of its subnets, or
    // IPv6 link-local, which every IPv6 port has), else the only port with a subnet holding `a`.
    int resolve_port(const IpAddr &a, int given, const std::string &path) const {
        for (auto &o : own_)
            if (o.addr == a)
                fail(path, a.str() + " is an address of the switch (port " +
                               cfg_.ports[o.port].name + ")");
        if (given >= 0) {
            if (is_link_local(a) || in_subnet_of(cfg_.ports[given], a)) return given;
            fail(path, a.str() + " is not in a connected subnet of port " + cfg_.ports[given].name);
        }
        if (is_link_local(a)) fail(path, a.str() + " is link-local, so 'port' is required");
        std::vector<int> found;
        for (size_t i = 0; i < cfg_.ports.size(); i++)
            if (in_subnet_of(cfg_.ports[i], a)) found.push_back(int(i));
        if (found.empty()) fail(path, a.str() + " is not in a connected subnet of any port");
        if (found.size() > 1) {
            const std::string names =
                join(found, ", ", [&](int i) -> const std::string & { return cfg_.ports[i].name; });
            fail(path, a.str() + " is in connected subnets of several ports (" + names +
                           "); choose one with 'port'");
        }
        return found[0];
    }

    int port_ref(const Fields &f, const std::string &p) const {
        auto *n = f.find("port");
        if (!n) return -1;
        std::string name = string(*n, at(p, "port"));
        int i = cfg_.port_index(name);
        if (i < 0) fail(at(p, "port"), "no port named '" + name + "'");
        return i;
    }

    // A route's prefix: syntax, length, host bits, and not routed before (YAML or route file).
    // `path` names it in messages ("routes[3].prefix", "big.routes:7: prefix").
    IpPrefix route_prefix(const std::string &s, const std::string &path) {
        IpPrefix prefix;
        unsigned len = 0;
        if (!split_addr_len(s, prefix.addr, len))
            fail(path, "'" + s + "' is not a prefix (e.g. 10.0.3.0/24 or fd00:3::/64)");
        if (len > max_prefix_len(prefix.addr))
            fail(path, "prefix length " + std::to_string(len) + " is out of range 0.." +
                           std::to_string(max_prefix_len(prefix.addr)));
        prefix.len = uint8_t(len);
        if (masked(prefix.addr, prefix.len) != prefix.addr) fail(path, "host bits set in " + s);
        // An index, not a scan: a route table may hold a million entries.
        auto [seen, fresh] =
            route_index_.emplace(prefix, cfg_.routes.size() + cfg_.multipath_routes.size());
        if (!fresh)
            fail(path, prefix.str() + " is already routed by " + route_origin(seen->second));
        return prefix;
    }

    // Where route number `i` (YAML routes first, then the route files in order) was given.
    std::string route_origin(size_t i) const {
        if (route_files_.empty() || i < yaml_routes_) return at("routes", i);
        size_t f = 0;
        while (f + 1 < route_files_.size() && route_files_[f + 1].first <= i) f++;
        return route_files_[f].second + ":" + std::to_string(route_lines_[i - yaml_routes_]);
    }

    // A route-file line that is not of `form`: the message quotes the line, trimmed.
    [[noreturn]] void fail_route_syntax(std::string_view line, const char *form) const {
        size_t b = line.find_first_not_of(" \t"), e = line.find_last_not_of(" \t\r");
        fail("", std::string("expected '") + form + "', got '" +
                     std::string(line.substr(b, e + 1 - b)) + "'");
    }

    // A route-file port word: the index of the port it names.
    int route_port(std::string_view word, const std::string &path) const {
        std::string name(word);
        int port = cfg_.port_index(name);
        if (port < 0) fail(path, "no port named '" + name + "'");
        return port;
    }

    // A route's gateway (any form: YAML `via`, `nexthops`, route-file lines) is of its prefix's
    // family.
    void check_gateway_family(const IpAddr &a, const IpPrefix &prefix,
                              const std::string &path) const {
        if (a.is_v6 != prefix.addr.is_v6)
            fail(path, a.str() + " is " + (a.is_v6 ? "IPv6" : "IPv4") + " but the prefix is " +
                           (a.is_v6 ? "IPv4" : "IPv6"));
    }

    // A multipath route's next path (any form): not one it lists already (`path`), and at most
    // kMaxRoutePaths of them (`limit_path`).
    void add_route_path(MultipathRouteConfig &mp, RoutePath rp, const std::string &path,
                        const std::string &limit_path) const {
        for (const auto &o : mp.paths)
            if (o.via == rp.via && o.port == rp.port)
                fail(path, rp.via.str() + " is listed twice");
        if (mp.paths.size() == kMaxRoutePaths)
            fail(limit_path, "more than " + std::to_string(kMaxRoutePaths) + " next hops");
        mp.paths.push_back(std::move(rp));
    }

    // A route-file gateway word: an IP address of the prefix's family.
    IpAddr route_gateway(std::string_view s, const IpPrefix &prefix, const std::string &path) const {
        std::string via(s);
        auto a = parse_ip(via);
        if (!a) fail(path, "'" + via + "' is not an IP address");
        check_gateway_family(*a, prefix, path);
        return *a;
    }

    // A route file (`route_files`): one route per line,
    // `PREFIX via GATEWAY [GATEWAY ...] [port NAME] [policy NAME]` or the `nexthop` form
    // (parse_nexthop_line), blank lines and `#` comments ignored; streamed, so a million routes
    // need no YAML tree. One gateway and no policy is a single-path route; several gateways, or
    // a policy, a multipath one, as in `routes`. The checks and messages are those of `routes`,
    // from "<file>:<line>: <field>: ".
    // A path the file gives, relative to the file's directory unless absolute.
    std::string beside_file(const std::string &given) const {
        std::filesystem::path fp(given);
        if (fp.is_relative()) fp = std::filesystem::path(source_).parent_path() / fp;
        return fp.lexically_normal().string();
    }

    void parse_route_file(const std::string &given, const std::string &p) {
        const std::string name = beside_file(given);
        std::error_code ec;
        if (std::filesystem::is_directory(name, ec)) fail(p, name + ": is a directory");
        std::ifstream in(name);
        if (!in) fail(p, name + ": cannot open file");
        // Not a device or FIFO: /dev/zero would be read for ever.
        if (!std::filesystem::is_regular_file(name, ec)) fail(p, name + ": not a regular file");
        route_files_.emplace_back(cfg_.routes.size() + cfg_.multipath_routes.size(), name);
        // A route line is at least 20 bytes ("1.0.0.0/8 via 2.0.0.1"): size the index once.
        if (auto bytes = std::filesystem::file_size(name, ec); !ec)
            route_index_.reserve(route_index_.size() + bytes / 20);
        const std::string *file = &route_files_.back().second;
        std::string text;
        std::array<IpAddr, kMaxRoutePaths + 1> vias;  // a line's gateways, parsed
        file_line_ = 0;
        while (std::getline(in, text)) {
            file_line_++;
            set_text_origin(file, file_line_);  // fail() now names the file and line
            std::string_view v(text);
            v = v.substr(0, v.find('#'));
            size_t pos = 0;
            auto next = [&]() {  // the next word, empty at the end of the line
                auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
                while (pos < v.size() && space(v[pos])) pos++;
                size_t b = pos;
                while (pos < v.size() && !space(v[pos])) pos++;
                return v.substr(b, pos - b);
            };
            std::string_view prefix_w = next();
            if (prefix_w.empty()) continue;
            // Syntax first: `via`, one or more gateways (kept up to one past the limit, so the
            // message can say there are too many), then `port NAME` and `policy NAME` in either
            // order, each at most once.
            std::array<std::string_view, kMaxRoutePaths + 1> gw;
            size_t ngw = 0;
            std::string_view port_w, policy_w;
            const std::string_view second = next();
            if (second == "nexthop") {
                parse_nexthop_line(prefix_w, v, next);
                continue;
            }
            bool ok = second == "via";
            std::string_view w = next();
            auto keyword = [](std::string_view k) { return k == "port" || k == "policy"; };
            // A gateway is a word with a dot or colon: `dev p1` is bad syntax, not two gateways.
            auto address = [](std::string_view a) { return a.find_first_of(".:") != a.npos; };
            for (; ok && !w.empty() && address(w); w = next())
                if (ngw < gw.size())
                    gw[ngw++] = w;
                else
                    ngw = gw.size();  // more than enough to fail on
            ok = ok && ngw > 0;
            while (ok && !w.empty()) {
                ok = keyword(w);
                std::string_view &slot = w == "port" ? port_w : policy_w;
                std::string_view value = next();
                ok = ok && slot.empty() && !value.empty() && !keyword(value);
                slot = value;
                w = next();
            }
            if (!ok)
                fail_route_syntax(v, "PREFIX via GATEWAY [GATEWAY ...] [port NAME] [policy NAME]");
            IpPrefix prefix = route_prefix(std::string(prefix_w), "prefix");
            for (size_t i = 0; i < ngw; i++) vias[i] = route_gateway(gw[i], prefix, "via");
            const int port = port_w.empty() ? -1 : route_port(port_w, "port");
            // With `port`, every gateway must be on it; without, each one's connected subnet
            // names its port.
            auto port_of = [&](const IpAddr &a) -> const std::string & {
                return cfg_.ports[resolve_port(a, port, "via")].name;
            };
            if (ngw == 1 && policy_w.empty()) {
                RouteConfig rc;
                rc.prefix = prefix;
                rc.via = vias[0];
                rc.port = port_of(rc.via);
                route_lines_.push_back(file_line_);
                cfg_.routes.push_back(std::move(rc));
                continue;
            }
            MultipathRouteConfig mp{prefix, {}, {}};
            mp.paths.reserve(std::min(ngw, kMaxRoutePaths));
            for (size_t i = 0; i < ngw; i++)
                add_route_path(mp, RoutePath{vias[i], port_of(vias[i]), 1}, "via", "via");
            if (!policy_w.empty()) {
                mp.policy = std::string(policy_w);
                policy_ref(mp.policy, *file + ":" + std::to_string(file_line_) + ": policy");
            }
            route_lines_.push_back(file_line_);
            cfg_.multipath_routes.push_back(std::move(mp));
        }
        set_text_origin(nullptr, 0);
        if (in.bad()) fail(p, name + ": cannot read file");
    }

    // A route file's line in the `nexthop` form, after its prefix (prefix_w) and the first
    // `nexthop` word: `nexthop via GATEWAY [port NAME] [weight N]`, once per path (at most
    // kMaxRoutePaths), then `[policy NAME]`; a multipath route with each path's own port and
    // weight, as YAML `nexthops`. `next` gives the line's following words (empty at its end).
    template <class Next>
    void parse_nexthop_line(std::string_view prefix_w, std::string_view line, Next &next) {
        struct Words {
            std::string_view via, port, weight;
        };
        std::array<Words, kMaxRoutePaths + 1> hops;
        size_t nh = 0;
        std::string_view policy_w;
        auto keyword = [](std::string_view k) {
            return k == "nexthop" || k == "via" || k == "port" || k == "weight" || k == "policy";
        };
        // Syntax first: each `nexthop` is followed by `via GATEWAY`, then `port` and `weight`
        // in either order, each at most once; `policy` ends the line.
        bool ok = true;
        std::string_view w = "nexthop";
        while (ok && w == "nexthop") {
            Words h;
            ok = next() == "via";
            h.via = next();
            ok = ok && !h.via.empty() && !keyword(h.via);
            for (w = next(); ok && (w == "port" || w == "weight"); w = next()) {
                std::string_view &slot = w == "port" ? h.port : h.weight;
                std::string_view value = next();
                ok = slot.empty() && !value.empty() && !keyword(value);
                slot = value;
            }
            if (nh < hops.size())
                hops[nh++] = h;
            else
                nh = hops.size();  // more than enough to fail on
        }
        if (ok && w == "policy") {
            policy_w = next();
            ok = !policy_w.empty() && !keyword(policy_w);
            w = next();
        }
        if (!ok || !w.empty())
            fail_route_syntax(line, "PREFIX nexthop via GATEWAY [port NAME] [weight N] "
                                    "[nexthop ...] [policy NAME]");
        IpPrefix prefix = route_prefix(std::string(prefix_w), "prefix");
        MultipathRouteConfig mp{prefix, {}, {}};
        mp.paths.reserve(std::min(nh, kMaxRoutePaths));
        for (size_t i = 0; i < nh; i++) {
            const std::string at_hop = "nexthop " + std::to_string(i + 1) + ": ";
            // The limit before the words of a path past it.
            if (i == kMaxRoutePaths)
                fail("nexthop", "more than " + std::to_string(kMaxRoutePaths) + " next hops");
            const Words &h = hops[i];
            const IpAddr a = route_gateway(h.via, prefix, at_hop + "via");
            const int port = h.port.empty() ? -1 : route_port(h.port, at_hop + "port");
            uint32_t weight = 1;
            if (!h.weight.empty()) weight = uint32_t(integer(h.weight, at_hop + "weight", 1, 1000));
            const std::string &port_name = cfg_.ports[resolve_port(a, port, at_hop + "via")].name;
            add_route_path(mp, RoutePath{a, port_name, weight}, at_hop + "via", "nexthop");
        }
        if (!policy_w.empty()) {
            mp.policy = std::string(policy_w);
            policy_ref(mp.policy, route_files_.back().second + ":" + std::to_string(file_line_) +
                                      ": policy");
        }
        route_lines_.push_back(file_line_);
        cfg_.multipath_routes.push_back(std::move(mp));
    }

    void parse_route(const YAML::Node &node, const std::string &p) {
        Fields f = fields(node, p, {"prefix", "via", "port", "nexthops", "policy"});
        RouteConfig rc;
        rc.prefix = route_prefix(string(require(f, p, "prefix"), at(p, "prefix")), at(p, "prefix"));

        // Multipath: `via` as a list of gateways, or `nexthops` as a list of {via, port, weight}.
        const YAML::Node *via = f.find("via");
        const YAML::Node *nhs = f.find("nexthops");
        if (via && nhs) fail(p, "give either 'via' or 'nexthops', not both");
        if (!via && !nhs) fail(at(p, "via"), "required field missing");
        MultipathRouteConfig mp{rc.prefix, {}, {}};
        auto add_path = [&](const IpAddr &a, int port, uint32_t weight, const std::string &ap) {
            check_gateway_family(a, rc.prefix, ap);
            add_route_path(mp, RoutePath{a, cfg_.ports[resolve_port(a, port, ap)].name, weight}, ap,
                           ap);
        };
        if (via && via->IsSequence()) {
            if (f.find("port"))
                fail(at(p, "port"), "with a list of vias, give ports in 'nexthops'");
            auto items = list(*via, at(p, "via"));
            if (items.empty()) fail(at(p, "via"), "empty list");
            for (size_t i = 0; i < items.size(); i++)
                add_path(ip(items[i], at(at(p, "via"), i)), -1, 1, at(at(p, "via"), i));
        } else if (nhs) {
            if (f.find("port")) fail(at(p, "port"), "give ports inside 'nexthops'");
            auto items = list(*nhs, at(p, "nexthops"));
            if (items.empty()) fail(at(p, "nexthops"), "empty list");
            for (size_t i = 0; i < items.size(); i++) {
                std::string ip_ = at(at(p, "nexthops"), i);
                Fields nf = fields(items[i], ip_, {"via", "port", "weight"});
                uint32_t w = 1;
                if (auto *n = nf.find("weight"))
                    w = uint32_t(integer(*n, at(ip_, "weight"), 1, 1000));
                add_path(ip(require(nf, ip_, "via"), at(ip_, "via")), port_ref(nf, ip_), w,
                         at(ip_, "via"));
            }
        } else {
            rc.via = ip(*via, at(p, "via"));
            check_gateway_family(rc.via, rc.prefix, at(p, "via"));
            int port = port_ref(f, p);
            rc.port = cfg_.ports[resolve_port(rc.via, port, at(p, "via"))].name;
        }
        if (auto *n = f.find("policy")) {
            mp.policy = string(*n, at(p, "policy"));
            policy_ref(mp.policy, source_ + ": " + at(p, "policy"));
            if (mp.paths.empty()) mp.paths.push_back(RoutePath{rc.via, rc.port, 1});
        }
        if (!mp.paths.empty()) {
            cfg_.multipath_routes.push_back(std::move(mp));
            return;
        }
        cfg_.routes.push_back(std::move(rc));
    }

    // The names are checked by lib/lb, which owns them (check_lb_policy_names).
    void policy_ref(const std::string &name, std::string where) {
        cfg_.lb_policy_refs.push_back({name, std::move(where)});
    }

    void parse_lb(const YAML::Node *node) {
        const std::string p = "lb";
        if (!node) return;
        Fields f = fields(*node, p,
                          {"hash_function", "seed", "symmetric", "hash_dest_qp", "default_policy",
                           "flowlet_gap_us", "flowlet_age_us", "flowlet_entries", "flowlet_chooser",
                           "util_horizon_us", "trace_path_changes", "allow_policy_change",
                           "plugins"});
        LbConfig &lb = cfg_.lb;
        if (auto *n = f.find("hash_function")) {
            auto word = [](FlowHashFn fn) {
                return std::pair<std::string_view, FlowHashFn>{flow_hash_fn_name(fn), fn};
            };
            lb.hash_function = enumeration<FlowHashFn>(
                *n, at(p, "hash_function"), {word(FlowHashFn::crc32c), word(FlowHashFn::mix64)});
        }
        if (auto *n = f.find("seed")) lb.seed = integer(*n, at(p, "seed"), 0, UINT64_MAX);
        if (auto *n = f.find("symmetric")) lb.symmetric = boolean(*n, at(p, "symmetric"));
        if (auto *n = f.find("hash_dest_qp")) lb.hash_dest_qp = boolean(*n, at(p, "hash_dest_qp"));
        if (auto *n = f.find("default_policy")) {
            lb.default_policy = string(*n, at(p, "default_policy"));
            policy_ref(lb.default_policy, source_ + ": " + at(p, "default_policy"));
        }
        if (auto *n = f.find("flowlet_gap_us"))
            lb.flowlet_gap_us =
                uint32_t(duration(*n, at(p, "flowlet_gap_us"), TimeUnit::us, 1, 1000000));
        if (auto *n = f.find("flowlet_age_us"))
            lb.flowlet_age_us =
                uint32_t(duration(*n, at(p, "flowlet_age_us"), TimeUnit::us, 1, 600000000));
        if (lb.flowlet_age_us < lb.flowlet_gap_us)
            fail(at(p, "flowlet_age_us"), std::to_string(lb.flowlet_age_us) +
                                              " is shorter than flowlet_gap_us " +
                                              std::to_string(lb.flowlet_gap_us));
        if (auto *n = f.find("flowlet_entries")) {
            lb.flowlet_entries = uint32_t(integer(*n, at(p, "flowlet_entries"), 64, 1u << 24));
            if (lb.flowlet_entries & (lb.flowlet_entries - 1))
                fail(at(p, "flowlet_entries"),
                     std::to_string(lb.flowlet_entries) + " is not a power of two");
        }
        if (auto *n = f.find("flowlet_chooser")) {
            lb.flowlet_chooser = string(*n, at(p, "flowlet_chooser"));
            if (lb.flowlet_chooser != "random" && lb.flowlet_chooser != "least_loaded")
                fail(at(p, "flowlet_chooser"),
                     "'" + lb.flowlet_chooser + "' is not one of random, least_loaded");
        }
        if (auto *n = f.find("util_horizon_us"))
            lb.util_horizon_us =
                uint32_t(duration(*n, at(p, "util_horizon_us"), TimeUnit::us, 0, 10000));
        if (auto *n = f.find("trace_path_changes"))
            lb.trace_path_changes = boolean(*n, at(p, "trace_path_changes"));
        if (auto *n = f.find("allow_policy_change"))
            lb.allow_policy_change = boolean(*n, at(p, "allow_policy_change"));
        if (auto *n = f.find("plugins")) {
            // Checked here: a regular file; loaded by lib/lb (load_lb_plugins), which names the
            // entry in its errors.
            auto items = list(*n, at(p, "plugins"));
            for (size_t i = 0; i < items.size(); i++) {
                const std::string w = at(at(p, "plugins"), i);
                const std::string name = lb_plugin_file(
                    string(items[i], w), std::filesystem::path(source_).parent_path().string());
                std::error_code ec;
                if (!std::filesystem::exists(name, ec)) fail(items[i], w, name + ": no such file");
                if (!std::filesystem::is_regular_file(name, ec))
                    fail(items[i], w, name + ": not a regular file");
                const auto mark = items[i].Mark();
                cfg_.lb.plugins.push_back(
                    {name, source_ + (mark.is_null() ? "" : ":" + std::to_string(mark.line + 1)) +
                               ": " + w});
            }
        }
    }

    void parse_neighbour(const YAML::Node &node, const std::string &p) {
        Fields f = fields(node, p, {"ip", "mac", "port"});
        NeighbourConfig nc;
        nc.ip = ip(require(f, p, "ip"), at(p, "ip"));
        nc.mac = mac(require(f, p, "mac"), at(p, "mac"));
        int port = port_ref(f, p);
        nc.port = cfg_.ports[resolve_port(nc.ip, port, at(p, "ip"))].name;
        auto [seen, fresh] =
            neighbour_index_.emplace(nc.port + "|" + nc.ip.str(), cfg_.neighbours.size());
        if (!fresh)
            fail(at(p, "ip"), nc.ip.str() + " on port " + nc.port + " is already defined by " +
                                  at("neighbours", seen->second));
        cfg_.neighbours.push_back(std::move(nc));
    }

    std::string source_;
    Config cfg_;
    std::vector<OwnAddr> own_;
    std::unordered_map<std::string, size_t> neighbour_index_;
    // Route numbers count the YAML routes first (yaml_routes_ of them), then each route file's.
    std::unordered_map<IpPrefix, size_t, IpPrefixHash> route_index_;  // prefix -> number
    size_t yaml_routes_ = 0;
    std::vector<std::pair<size_t, std::string>> route_files_;  // first number, file name
    std::vector<uint32_t> route_lines_;                        // line of each route-file route
    uint32_t file_line_ = 0;  // the line of the route file being read
};

}  // namespace

int Config::port_index(const std::string &name) const {
    for (size_t i = 0; i < ports.size(); i++)
        if (ports[i].name == name) return int(i);
    return -1;
}

std::string lb_plugin_file(const std::string &given, const std::string &dir) {
    const bool bare = given.find('/') == std::string::npos &&
                      !(given.size() >= 3 && given.compare(given.size() - 3, 3, ".so") == 0);
    std::filesystem::path p(given);
    if (bare) {
        std::error_code ec;
        const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
        p = exe.parent_path().parent_path().parent_path() / "lib" / "lb" / "plugins" /
            ("rocesw_lb_" + given + ".so");
    } else if (p.is_relative() && !dir.empty()) {
        p = std::filesystem::path(dir) / p;
    }
    return p.lexically_normal().string();
}

Config load_config_string(const std::string &yaml, const std::string &source) {
    YAML::Node root = load_yaml_document(yaml, source);
    try {
        return Loader(source).load(root);
    } catch (const YAML::Exception &e) {
        throw ConfigError(source + ": " + e.msg);  // not expected: the loader checks node kinds
    }
}

Config load_config_file(const std::string &path) {
    Config c = load_config_string(read_config_file(path), path);
    // A relative QoS profile path is relative to the file that names it.
    if (!c.sw.qos_file.empty() && std::filesystem::path(c.sw.qos_file).is_relative())
        c.sw.qos_file = (std::filesystem::path(path).parent_path() / c.sw.qos_file).lexically_normal();
    return c;
}

}  // namespace rocesw
