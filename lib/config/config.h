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

namespace rocesw {

struct MacAddr {
    std::array<uint8_t, 6> b{};
    bool operator==(const MacAddr &) const = default;
    bool is_multicast() const { return b[0] & 1; }
    bool is_zero() const { return b == std::array<uint8_t, 6>{}; }
    std::string str() const;
};

// An IPv4 or IPv6 address; IPv4 is kept in host byte order in v4, IPv6 as 16 bytes.
struct IpAddr {
    bool is_v6 = false;
    uint32_t v4 = 0;
    std::array<uint8_t, 16> v6{};
    bool operator==(const IpAddr &) const = default;
    std::string str() const;
};

struct IpPrefix {
    IpAddr addr;  // host bits cleared by the loader
    uint8_t len = 0;
    bool operator==(const IpPrefix &) const = default;
    bool contains(const IpAddr &a) const;
    std::string str() const;
};

// An interface address: the switch's own address plus the connected subnet length.
struct IfAddr {
    IpAddr addr;
    uint8_t len = 0;
    IpPrefix subnet() const;
    std::string str() const;
};

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

struct PortConfig {
    std::string name;                         // [A-Za-z0-9_.-]{1,15}, unique
    std::string device;                       // PCI address or vdev string with args
    MacAddr mac;                              // required, unicast, non-zero, unique
    uint32_t mtu = 1500;                      // L3 MTU in bytes, 68..9600
    uint64_t speed_mbps = 10000;              // line rate for shaping/PFC timing, 1..800000
    uint32_t rx_desc = 1024, tx_desc = 1024;  // 64..16384, power of two
    std::vector<IfAddr> ipv4, ipv6;
};

struct RouteConfig {
    IpPrefix prefix;
    IpAddr via;        // next-hop gateway (same family as prefix)
    std::string port;  // egress port; if the file omits it, the loader
                       // fills in the port whose connected subnet holds via
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
    std::vector<PortConfig> ports;  // 1..kMaxPorts
    std::vector<RouteConfig> routes;
    std::vector<NeighbourConfig> neighbours;

    int port_index(const std::string &name) const;  // -1 when absent
};

// Thrown only at load time (never on the data path). what() is the full message,
// "<file>: <field>: <problem>", e.g. "sw.yaml: ports[1].mtu: 70000 is out of range 68..9600".
struct ConfigError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

Config load_config_file(const std::string &path);
// `source` names the origin in error messages.
Config load_config_string(const std::string &yaml, const std::string &source = "<string>");

// Parsers shared with rocectl and tests; nullopt on bad syntax.
std::optional<MacAddr> parse_mac(const std::string &s);
std::optional<IpAddr> parse_ip(const std::string &s);
std::optional<IfAddr> parse_if_addr(const std::string &s);       // "10.0.0.1/24"
std::optional<IpPrefix> parse_prefix(const std::string &s);      // host bits must be zero
std::optional<uint64_t> parse_speed_mbps(const std::string &s);  // "100G", "25000M", "10g"

}  // namespace rocesw
