// Typed switch configuration. Loaded from YAML and validated in full before anything runs:
// a bad value yields one ConfigError naming the file, the field path and the allowed range,
// and the running state is never half-applied. Units are in the field names.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/punt_class.h"
#include "config/config_error.h"
#include "pkt/addr.h"  // MacAddr, IpAddr, IpPrefix, IfAddr and their parsers

namespace rocesw {

enum class IdleMode { adaptive, busy };

struct SwitchConfig {
    std::string name = "rocesw";
    uint32_t workers = 1;                // worker lcores, 1..kMaxWorkers
    IdleMode idle = IdleMode::adaptive;  // adaptive: pause, then short sleeps when idle
    uint32_t idle_sleep_max_us = 200;    // longest sleep in adaptive mode, 1..100000
    std::string file_prefix;             // EAL --file-prefix; default "roceswd-<name>"
    std::string log_level = "info";
    uint32_t burst = 32;                // packets per rx/tx burst, 1..256
    uint32_t mbufs = 16384;             // mbufs in the pool, >= 1024
    uint32_t memory_mb = 0;             // EAL -m without hugepages; 0 = sized from FIB and mbufs
    std::vector<uint32_t> cpus;         // CPUs the lcores may run on; empty = all allowed
    std::vector<std::string> eal_args;  // extra EAL arguments, appended verbatim
    std::string control_socket;         // rocectl socket; default /run/rocesw/<name>.sock
    bool telemetry = true;              // register /rocesw/* rte_telemetry commands
    std::string qos_file;               // QoS profile (doc/qos.md); empty = built-in SONiC default
};

inline constexpr uint16_t kPrometheusDefaultPort = 9417;
inline constexpr uint16_t kPrometheusDefaultPorts = 64;

// The `telemetry:` section (doc/observability.md): Prometheus endpoint, counter clearing, trace.
struct TelemetryConfig {
    bool prometheus = true;                            // serve GET /metrics
    std::string prometheus_listen = "127.0.0.1:9417";  // "a.b.c.d:port" or "[v6]:port"; 0 = any
    // False while `listen` is the default: roceswd then takes the first free port of
    // 9417..9417+kPrometheusDefaultPorts-1, so several switches on one host start side by side.
    // A listen address given in the file is used exactly; a clash stops roceswd at start-up.
    bool prometheus_listen_given = false;
    bool allow_clear = false;                          // rocectl clear watermarks / latency
    bool latency = false;                              // RX->TX latency histograms per class
    std::string trace_file;                            // absolute path; empty = no trace
    uint32_t trace_interval_ms = 100;                  // queue depth sample period, 1..60000
};

// The `af_xdp:` section of a port (doc/ports.md): a kernel interface driven through DPDK's
// net_af_xdp with rocesw's XDP program. roceswd derives the device string from it.
enum class AfXdpMode { dedicated, shared };
// Where the kernel runs the XDP program: `native` in the driver, `generic` (SKB mode) in the
// core stack after the skb is built (any interface, slower), `auto` the kernel's choice (native
// when the driver has an XDP hook). DPDK 22.11's net_af_xdp always attaches in the kernel's
// choice; roceswd moves the program to generic mode after the port starts (doc/ports.md).
enum class XdpAttach { automatic, native, generic };
struct AfXdpConfig {
    std::string interface;                  // kernel interface name, 1..15 characters
    AfXdpMode mode = AfXdpMode::dedicated;  // dedicated: all frames; shared: the switch's only
    uint32_t queue_count = 1;               // queues from queue 0, 1..64, <= the interface's
    bool zero_copy = false;                 // false: copy mode (force_copy=1), works everywhere
    uint32_t busy_budget = 64;              // packets per busy poll, 0..1024; 0 = off (see doc)
    XdpAttach xdp_mode = XdpAttach::automatic;
};

// Each AF_XDP queue pins mbufs of the shared pool: its fill ring (2048, DPDK 22.11
// net_af_xdp), its completion ring (2048) and its RX and TX descriptors. A pool smaller than
// that is empty from the start and the port receives nothing (doc/ports.md).
inline constexpr uint32_t kAfXdpPinnedMbufs = 2048 + 2048;

struct PortConfig {
    std::string name;                         // [A-Za-z0-9_.-]{1,15}, unique
    std::string device;                       // PCI address or vdev string with args
    MacAddr mac;                              // required, unicast, non-zero, unique
    uint32_t mtu = 1500;                      // L3 MTU in bytes, 68..9600
    uint64_t speed_mbps = 10000;              // line rate for shaping/PFC timing, 1..800000
    uint32_t rx_desc = 1024, tx_desc = 1024;  // 64..16384, power of two
    std::vector<IfAddr> ipv4, ipv6;
    std::optional<AfXdpConfig> af_xdp;  // set: `device` was derived from it
};

inline constexpr size_t kMaxRoutePaths = 32;  // next hops of one multipath route

// One next hop of a multipath (ECMP) route.
struct RoutePath {
    IpAddr via;           // gateway, same family as the prefix
    std::string port;     // egress port; filled in from via's connected subnet when omitted
    uint32_t weight = 1;  // relative share of the group's buckets, 1..1000
};

struct RouteConfig {
    IpPrefix prefix;
    IpAddr via;        // next-hop gateway (same family as prefix)
    std::string port;  // egress port; if the file omits it, the loader
                       // fills in the port whose connected subnet holds via
};

// A route whose next hops form an ECMP group (doc/load-balancing.md): one with a list of vias,
// `nexthops`, or a `policy`. Kept apart from RouteConfig so single-path routes stay three fields.
struct MultipathRouteConfig {
    IpPrefix prefix;
    std::vector<RoutePath> paths;  // 1..kMaxRoutePaths
    std::string policy;            // load-balancing policy; empty = lb.default_policy
};

// The flow hash function (lib/lb/flow_hash.h, doc/load-balancing.md "The flow hash"): CRC32C
// (the SSE4.2 / ARMv8 instruction, a table fallback elsewhere) or mix64 (the murmur3 64-bit
// finalizer, the only hash before lb.hash_function existed).
enum class FlowHashFn : uint8_t { crc32c, mix64 };
inline const char *flow_hash_fn_name(FlowHashFn f) {
    return f == FlowHashFn::crc32c ? "crc32c" : "mix64";
}

// A name the file gives whose vocabulary a library above config owns, with where it was
// given: "sw.yaml: routes[3].policy", "big.routes:7: policy" (the start of an error message).
struct NameRef {
    std::string name;
    std::string where;
};

// Load balancing over ECMP groups (doc/load-balancing.md). Switch-wide settings.
struct LbConfig {
    FlowHashFn hash_function = FlowHashFn::crc32c;
    uint64_t seed = 0x5eed;     // per-switch hash seed; differs per tier (no polarization)
    bool symmetric = false;     // a->b and b->a hash alike
    bool hash_dest_qp = false;  // RoCEv2: add the BTH destination QP to the hash
    std::string default_policy = "hash";     // hash | flowlet | adaptive | spray | registered name
    uint32_t flowlet_gap_us = 50;            // idle gap that starts a new flowlet, 1..1000000
    uint32_t flowlet_age_us = 10000;         // idle time after which an entry is reclaimed, >= gap
    uint32_t flowlet_entries = 65536;        // per worker; a power of two, 64..2^24
    std::string flowlet_chooser = "random";  // `flowlet` new path: random | least_loaded
    uint32_t util_horizon_us = 10;           // adaptive: weight of the utilization EWMA, 0..10000
    bool trace_path_changes = false;         // record path changes in a per-worker event ring
    // The control socket serves `lb policy` (switch a policy at runtime) only when true.
    bool allow_policy_change = false;
    // Policy plugins (lb/plugin.h) to load before the policy names are checked: each a path
    // resolved against the config file's directory (name), and where the config gives it.
    std::vector<NameRef> plugins;
};

// The `control_plane:` section (doc/control-plane.md): host interfaces (a kernel TAP per port in
// roceswd's network namespace), the punt path and its policing, and netlink sync of the
// namespace's routes, neighbours and addresses (BGP through BIRD or FRR).
struct ControlPlaneConfig {
    bool host_interfaces = false;  // off: the embedded default (static routes, local ARP/ND/echo)
    bool netlink = false;          // follow the kernel's tables; needs host_interfaces
    // The control socket serves `route_learn` (set learned routes without a daemon: rocelab)
    // only when true.
    bool allow_route_learn = false;
    // The control socket serves `port_link PORT down|up` (a lab's link events) only when true.
    bool allow_port_link = false;
    std::array<uint32_t, kPuntClassCount> punt_pps = kPuntDefaultPps;  // per class, 0..1000000
    uint32_t punt_burst_ms = 50;     // bucket depth, in ms of each class's rate, 1..10000
    uint32_t punt_queue = 1024;      // per-worker queue to the hostif thread, 64..65536, power of 2
    uint32_t netlink_rcvbuf_kb = 8192;  // kernel socket buffer, 256..1048576
    // IPv4/IPv6 FIB room for learned routes beyond what the config installs, 0..16777216
    // (each IPv4 one costs about 800 bytes of EAL memory: two copies of two rte_rib nodes).
    uint32_t max_learned_routes = 65536;
};

struct NeighbourConfig {
    IpAddr ip;
    MacAddr mac;
    std::string port;  // if the file omits it, the loader fills in the
                       // port whose connected subnet holds ip
};

struct Config {
    std::string source;  // file the config came from, for messages
    SwitchConfig sw;
    std::vector<PortConfig> ports;    // 1..kMaxPorts
    std::vector<RouteConfig> routes;  // `routes`, then the lines of each of `route_files`
    std::vector<MultipathRouteConfig> multipath_routes;  // prefixes differ from routes'
    std::vector<NeighbourConfig> neighbours;
    TelemetryConfig telemetry;
    LbConfig lb;
    ControlPlaneConfig control_plane;
    // Every load-balancing policy name given (lb.default_policy, routes' and route files'
    // policies), in file order. lib/lb owns the policies and checks these names as part of
    // loading (check_lb_policy_names in lb/policy.h).
    std::vector<NameRef> lb_policy_refs;

    int port_index(const std::string &name) const;  // -1 when absent
};

Config load_config_file(const std::string &path);

// A load-balancing plugin as a switch config or a scenario names it (`lb.plugins`): a bare name
// (no '/', not ending in ".so") is the plugin of that name built with the running program,
// <its build dir>/lib/lb/plugins/rocesw_lb_<name>.so, where <its build dir> holds it as
// app/<program>/<program> (doc/load-balancing.md); anything else is a path, relative to `dir`
// unless absolute.
std::string lb_plugin_file(const std::string &given, const std::string &dir);
// `source` names the origin in error messages.
Config load_config_string(const std::string &yaml, const std::string &source = "<string>");

}  // namespace rocesw
