// Configuration loader: one test per validation rule, each asserting the exact message a user
// would see, plus a full round trip and the shipped examples.
#include "common/strings.h"
#include "config/config.h"
#include "config/yaml_doc.h"
#include "config_message.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace rocesw {
namespace {

// Lines spliced into a small valid two-port config: `sw` under switch:, `p0`/`p1` into the
// port maps, `tail` appended at the top level (routes:, neighbours:).
struct Parts {
    std::string sw = "", p0 = "", p1 = "", tail = "";
};

std::string indent(const std::string &lines, const std::string &by) {
    std::istringstream in(lines);
    std::string out, line;
    while (std::getline(in, line)) out += by + line + "\n";
    return out;
}

std::string yaml(const Parts &p = {}) {
    return "switch:\n"
           "  name: sw1\n" +
           indent(p.sw, "  ") +
           "ports:\n"
           "  - name: p0\n"
           "    device: net_tap0,iface=sw1p0\n"
           "    mac: 02:00:00:00:01:01\n"
           "    ipv4: [10.0.1.1/24]\n"
           "    ipv6: [fd00:1::1/64]\n" +
           indent(p.p0, "    ") +
           "  - name: p1\n"
           "    device: net_tap1,iface=sw1p1\n"
           "    mac: 02:00:00:00:02:01\n"
           "    ipv4: [10.0.2.1/24]\n"
           "    ipv6: [fd00:2::1/64]\n" +
           indent(p.p1, "    ") + p.tail;
}

// `text` with the first occurrence of `line` removed, to drop a field from the base config.
std::string without(std::string text, const std::string &line) {
    size_t at = text.find(line);
    if (at == std::string::npos)
        ADD_FAILURE() << "base config has no line '" << line << "'";
    else
        text.erase(at, line.size());
    return text;
}

std::string error_of(const std::string &text) {
    try {
        load_config_string(text, "t.yaml");
    } catch (const ConfigError &e) {
        return test::without_line(e, "t.yaml");
    }
    return "(loaded without error)";
}

#define EXPECT_CONFIG_ERROR(text, message) EXPECT_EQ(error_of(text), message)

const std::string kExamples = ROCESW_TEST_DATA "/../../config/examples/";

// ---- the happy path ----

TEST(ConfigLoader, LoadsMinimalConfigWithDefaults) {
    Config c = load_config_string(
        "ports:\n  - {name: p0, device: net_ring0, mac: '02:00:00:00:00:01'}\n", "t.yaml");
    EXPECT_EQ(c.source, "t.yaml");
    EXPECT_EQ(c.sw.name, "rocesw");
    EXPECT_EQ(c.sw.workers, 1u);
    EXPECT_EQ(c.sw.idle, IdleMode::adaptive);
    EXPECT_EQ(c.sw.idle_sleep_max_us, 200u);
    EXPECT_EQ(c.sw.file_prefix, "roceswd-rocesw");
    EXPECT_EQ(c.sw.log_level, "info");
    EXPECT_EQ(c.sw.burst, 32u);
    EXPECT_EQ(c.sw.mbufs, 16384u);
    EXPECT_EQ(c.sw.memory_mb, 0u);
    EXPECT_TRUE(c.sw.cpus.empty());
    EXPECT_TRUE(c.sw.eal_args.empty());
    EXPECT_EQ(c.sw.control_socket, "/run/rocesw/rocesw.sock");
    EXPECT_TRUE(c.sw.telemetry);
    ASSERT_EQ(c.ports.size(), 1u);
    EXPECT_EQ(c.ports[0].mtu, 1500u);
    EXPECT_EQ(c.ports[0].speed_mbps, 10000u);
    EXPECT_EQ(c.ports[0].rx_desc, 1024u);
    EXPECT_EQ(c.ports[0].tx_desc, 1024u);
    EXPECT_TRUE(c.ports[0].ipv4.empty());
    EXPECT_TRUE(c.ports[0].ipv6.empty());
    EXPECT_TRUE(c.routes.empty());
    EXPECT_TRUE(c.neighbours.empty());
}

TEST(ConfigLoader, DerivesFilePrefixAndSocketFromName) {
    Config c = load_config_string(yaml(), "t.yaml");
    EXPECT_EQ(c.sw.file_prefix, "roceswd-sw1");
    EXPECT_EQ(c.sw.control_socket, "/run/rocesw/sw1.sock");
}

TEST(ConfigLoader, ParsesEveryFieldOfAFullConfig) {
    const char *text = R"(
switch:
  name: lab-7_x
  workers: 4
  idle: busy
  idle_sleep_max_us: 1000
  file_prefix: pfx.1
  log_level: debug
  burst: 64
  mbufs: 65536
  memory_mb: 2048
  cpus: [2, 3, 0]
  eal_args: ["--log-level=lib.eal:debug", "--no-pci"]
  control_socket: /tmp/lab.sock
  telemetry: false
ports:
  - name: eth.0
    device: "0000:3b:00.0"
    mac: "02:AB:cd:00:00:01"
    mtu: 9000
    speed: 2.5G
    rx_desc: 2048
    tx_desc: 512
    ipv4: ["10.0.1.1/24", "192.168.0.1/16"]
    ipv6: ["fd00:1::1/64"]
  - name: eth1
    device: net_tap1,iface=t1
    mac: 02:00:00:00:00:02
    speed: 25000
    ipv4: [10.0.2.1/30]
    ipv6: ["FD00:2:0::1/64"]
routes:
  - prefix: 10.0.3.0/24
    via: 10.0.2.2
  - prefix: 0.0.0.0/0
    via: 10.0.1.254
    port: eth.0
  - prefix: fd00:3::/48
    via: fd00:2::2
  - prefix: "::/0"
    via: fe80::1
    port: eth1
neighbours:
  - ip: 10.0.1.2
    mac: 02:00:00:00:01:02
  - ip: fd00:2::2
    mac: 02:00:00:00:02:02
    port: eth1
  - ip: fe80::1
    mac: 02:00:00:00:02:03
    port: eth1
)";
    Config c = load_config_string(text, "full.yaml");
    EXPECT_EQ(c.source, "full.yaml");
    EXPECT_EQ(c.sw.name, "lab-7_x");
    EXPECT_EQ(c.sw.workers, 4u);
    EXPECT_EQ(c.sw.idle, IdleMode::busy);
    EXPECT_EQ(c.sw.idle_sleep_max_us, 1000u);
    EXPECT_EQ(c.sw.file_prefix, "pfx.1");
    EXPECT_EQ(c.sw.log_level, "debug");
    EXPECT_EQ(c.sw.burst, 64u);
    EXPECT_EQ(c.sw.mbufs, 65536u);
    EXPECT_EQ(c.sw.memory_mb, 2048u);
    EXPECT_EQ(c.sw.cpus, (std::vector<uint32_t>{2, 3, 0}));
    EXPECT_EQ(c.sw.eal_args, (std::vector<std::string>{"--log-level=lib.eal:debug", "--no-pci"}));
    EXPECT_EQ(c.sw.control_socket, "/tmp/lab.sock");
    EXPECT_FALSE(c.sw.telemetry);

    ASSERT_EQ(c.ports.size(), 2u);
    const PortConfig &p0 = c.ports[0], &p1 = c.ports[1];
    EXPECT_EQ(p0.name, "eth.0");
    EXPECT_EQ(p0.device, "0000:3b:00.0");
    EXPECT_EQ(p0.mac.str(), "02:ab:cd:00:00:01");
    EXPECT_EQ(p0.mtu, 9000u);
    EXPECT_EQ(p0.speed_mbps, 2500u);
    EXPECT_EQ(p0.rx_desc, 2048u);
    EXPECT_EQ(p0.tx_desc, 512u);
    ASSERT_EQ(p0.ipv4.size(), 2u);
    EXPECT_EQ(p0.ipv4[0].str(), "10.0.1.1/24");
    EXPECT_EQ(p0.ipv4[0].addr.v4, 0x0a000101u);
    EXPECT_EQ(p0.ipv4[0].len, 24);
    EXPECT_EQ(p0.ipv4[1].str(), "192.168.0.1/16");
    EXPECT_EQ(p0.ipv4[1].subnet().str(), "192.168.0.0/16");
    ASSERT_EQ(p0.ipv6.size(), 1u);
    EXPECT_EQ(p0.ipv6[0].str(), "fd00:1::1/64");
    EXPECT_TRUE(p0.ipv6[0].addr.is_v6);
    EXPECT_EQ(p1.name, "eth1");
    EXPECT_EQ(p1.device, "net_tap1,iface=t1");
    EXPECT_EQ(p1.mac.str(), "02:00:00:00:00:02");
    EXPECT_EQ(p1.mtu, 1500u);
    EXPECT_EQ(p1.speed_mbps, 25000u);
    EXPECT_EQ(p1.ipv4[0].str(), "10.0.2.1/30");
    EXPECT_EQ(p1.ipv6[0].str(), "fd00:2::1/64");
    EXPECT_EQ(c.port_index("eth.0"), 0);
    EXPECT_EQ(c.port_index("eth1"), 1);
    EXPECT_EQ(c.port_index("eth2"), -1);

    ASSERT_EQ(c.routes.size(), 4u);
    EXPECT_EQ(c.routes[0].prefix.str(), "10.0.3.0/24");
    EXPECT_EQ(c.routes[0].via.str(), "10.0.2.2");
    EXPECT_EQ(c.routes[0].port, "eth1");  // filled in from the connected subnet
    EXPECT_EQ(c.routes[1].prefix.str(), "0.0.0.0/0");
    EXPECT_EQ(c.routes[1].via.str(), "10.0.1.254");
    EXPECT_EQ(c.routes[1].port, "eth.0");
    EXPECT_EQ(c.routes[2].prefix.str(), "fd00:3::/48");
    EXPECT_EQ(c.routes[2].port, "eth1");
    EXPECT_EQ(c.routes[3].prefix.str(), "::/0");
    EXPECT_EQ(c.routes[3].via.str(), "fe80::1");
    EXPECT_EQ(c.routes[3].port, "eth1");

    ASSERT_EQ(c.neighbours.size(), 3u);
    EXPECT_EQ(c.neighbours[0].ip.str(), "10.0.1.2");
    EXPECT_EQ(c.neighbours[0].mac.str(), "02:00:00:00:01:02");
    EXPECT_EQ(c.neighbours[0].port, "eth.0");
    EXPECT_EQ(c.neighbours[1].ip.str(), "fd00:2::2");
    EXPECT_EQ(c.neighbours[1].port, "eth1");
    EXPECT_EQ(c.neighbours[2].ip.str(), "fe80::1");
    EXPECT_EQ(c.neighbours[2].port, "eth1");
}

TEST(ConfigLoader, TreatsEmptySectionsAndListsAsEmpty) {
    Config c = load_config_string(
        yaml({.sw = "cpus:\neal_args:", .tail = "routes:\nneighbours:\n"}), "t.yaml");
    EXPECT_TRUE(c.sw.cpus.empty());
    EXPECT_TRUE(c.routes.empty());
    EXPECT_TRUE(c.neighbours.empty());
}

TEST(ConfigLoader, AcceptsNeighbourOnSubnetsOfTwoPortsWhenPortIsNamed) {
    Config c = load_config_string(
        without(yaml({.p1 = "ipv4: [10.0.1.129/25]",
                      .tail = "neighbours:\n"
                              "  - {ip: 10.0.1.200, mac: '02:00:00:00:00:09', port: p1}\n"}),
                "    ipv4: [10.0.2.1/24]\n"),
        "t.yaml");
    EXPECT_EQ(c.neighbours[0].port, "p1");
}

// ---- files and YAML syntax ----

TEST(ConfigLoader, RejectsMissingFile) {
    try {
        load_config_file("/nonexistent/sw.yaml");
        FAIL() << "loaded a missing file";
    } catch (const ConfigError &e) {
        EXPECT_STREQ(e.what(), "/nonexistent/sw.yaml: cannot open file");
    }
}

TEST(ConfigLoader, RejectsDirectoryAsFile) {
    try {
        load_config_file(ROCESW_TEST_DATA);
        FAIL() << "loaded a directory";
    } catch (const ConfigError &e) {
        EXPECT_EQ(std::string(e.what()), std::string(ROCESW_TEST_DATA ": is a directory"));
    }
}

TEST(ConfigLoader, ReportsYamlSyntaxErrorWithLineAndColumn) {
    EXPECT_CONFIG_ERROR("switch:\n  name: sw1\n  cpus: [1, 2\nports: []\n",
                        "t.yaml: line 4, column 6: end of sequence flow not found");
}

TEST(ConfigLoader, ReportsIllegalMapValueWithLineAndColumn) {
    EXPECT_CONFIG_ERROR("switch:\n  name: a: b\n", "t.yaml: line 2, column 10: illegal map value");
}

TEST(ConfigLoader, RejectsSeveralYamlDocuments) {
    EXPECT_CONFIG_ERROR(yaml() + "---\nswitch: {}\n",
                        "t.yaml: expected one YAML document, found 2 or more");
}

TEST(ConfigLoader, RejectsTopLevelList) {
    EXPECT_CONFIG_ERROR("- a\n- b\n", "t.yaml: expected a map at the top level, got a list");
}

TEST(ConfigLoader, RejectsEmptyFileForLackOfPorts) {
    EXPECT_CONFIG_ERROR("", "t.yaml: ports: required field missing");
}

// ---- unknown and duplicate fields ----

TEST(ConfigLoader, RejectsUnknownTopLevelField) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "route:\n  - {prefix: 10.0.3.0/24, via: 10.0.2.2}\n"}),
                        "t.yaml: unknown field 'route'");
}

TEST(ConfigLoader, RejectsUnknownSwitchField) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "worker: 2"}), "t.yaml: switch: unknown field 'worker'");
}

TEST(ConfigLoader, RejectsUnknownPortField) {
    EXPECT_CONFIG_ERROR(yaml({.p0 = "mtuu: 9000"}), "t.yaml: ports[0]: unknown field 'mtuu'");
}

TEST(ConfigLoader, RejectsUnknownRouteField) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "routes:\n  - {prefix: 10.0.3.0/24, gw: 10.0.2.2}\n"}),
                        "t.yaml: routes[0]: unknown field 'gw'");
}

TEST(ConfigLoader, RejectsUnknownNeighbourField) {
    EXPECT_CONFIG_ERROR(
        yaml({.tail = "neighbours:\n  - {ip: 10.0.1.2, mac: '02:00:00:00:00:02', vlan: 3}\n"}),
        "t.yaml: neighbours[0]: unknown field 'vlan'");
}

TEST(ConfigLoader, RejectsFieldGivenTwice) {
    EXPECT_CONFIG_ERROR(yaml({.p1 = "mtu: 1500\nmtu: 9000"}),
                        "t.yaml: ports[1]: duplicate field 'mtu'");
}

TEST(ConfigLoader, RejectsSwitchSectionThatIsNotAMap) {
    EXPECT_CONFIG_ERROR("switch: [a]\n", "t.yaml: switch: expected a map, got a list");
}

// ---- integers, strings, booleans ----

TEST(ConfigLoader, RejectsFractionalInteger) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "workers: 1.5"}),
                        "t.yaml: switch.workers: expected an integer, got '1.5'");
}

TEST(ConfigLoader, RejectsWordForInteger) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "workers: two"}),
                        "t.yaml: switch.workers: expected an integer, got 'two'");
}

// One rule for every loader (doc/config.md): SONiC profiles quote numbers, so a quoted integer
// reads as the integer. (This loader refused it before the three loaders shared one reader.)
TEST(ConfigLoader, AcceptsQuotedInteger) {
    Config c = load_config_string(yaml({.sw = "burst: \"32\""}), "t.yaml");
    EXPECT_EQ(c.sw.burst, 32u);
}

TEST(ConfigLoader, RejectsHexInteger) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "burst: 0x20"}),
                        "t.yaml: switch.burst: expected an integer, got '0x20'");
}

TEST(ConfigLoader, RejectsNegativeInteger) {
    EXPECT_CONFIG_ERROR(yaml({.p0 = "mtu: -1500"}),
                        "t.yaml: ports[0].mtu: -1500 is out of range 68..9600");
}

TEST(ConfigLoader, RejectsIntegerTooLargeForAnyType) {
    EXPECT_CONFIG_ERROR(
        yaml({.sw = "mbufs: 99999999999999999999999"}),
        "t.yaml: switch.mbufs: 99999999999999999999999 is out of range 1024..4194304");
}

TEST(ConfigLoader, RejectsListForInteger) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "burst: [32]"}),
                        "t.yaml: switch.burst: expected an integer, got a list");
}

TEST(ConfigLoader, RejectsEmptyValueForInteger) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "burst:"}),
                        "t.yaml: switch.burst: expected an integer, got an empty value");
}

TEST(ConfigLoader, RejectsMapForString) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "log_level: {a: b}"}),
                        "t.yaml: switch.log_level: expected a string, got a map");
}

TEST(ConfigLoader, RejectsNonBooleanTelemetry) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "telemetry: yes"}),
                        "t.yaml: switch.telemetry: expected true or false, got 'yes'");
}

// ---- switch ----

TEST(ConfigLoader, RejectsSwitchNameWithSpace) {
    EXPECT_CONFIG_ERROR(
        "switch:\n  name: sw 1\n",
        "t.yaml: switch.name: 'sw 1' is not a valid name (1 to 32 of A-Z a-z 0-9 _ -)");
}

TEST(ConfigLoader, RejectsSwitchNameLongerThan32) {
    EXPECT_CONFIG_ERROR("switch:\n  name: " + std::string(33, 'a') + "\n",
                        "t.yaml: switch.name: '" + std::string(33, 'a') +
                            "' is not a valid name (1 to 32 of A-Z a-z 0-9 _ -)");
}

TEST(ConfigLoader, RejectsZeroWorkers) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "workers: 0"}),
                        "t.yaml: switch.workers: 0 is out of range 1..16");
}

TEST(ConfigLoader, RejectsWorkersAboveMax) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "workers: 17"}),
                        "t.yaml: switch.workers: 17 is out of range 1..16");
}

TEST(ConfigLoader, RejectsUnknownIdleMode) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "idle: lazy"}),
                        "t.yaml: switch.idle: 'lazy' is not one of adaptive, busy");
}

TEST(ConfigLoader, RejectsIdleSleepAboveRange) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "idle_sleep_max_us: 100001"}),
                        "t.yaml: switch.idle_sleep_max_us: 100001 is out of range 1..100000");
}

TEST(ConfigLoader, RejectsFilePrefixWithSlash) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "file_prefix: a/b"}),
                        "t.yaml: switch.file_prefix: 'a/b' is not a valid file prefix "
                        "(1 to 64 of A-Z a-z 0-9 _ . -, not . or ..)");
}

TEST(ConfigLoader, RejectsDotDotFilePrefix) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "file_prefix: .."}),
                        "t.yaml: switch.file_prefix: '..' is not a valid file prefix "
                        "(1 to 64 of A-Z a-z 0-9 _ . -, not . or ..)");
}

TEST(ConfigLoader, RejectsUnknownLogLevel) {
    EXPECT_CONFIG_ERROR(
        yaml({.sw = "log_level: verbose"}),
        "t.yaml: switch.log_level: 'verbose' is not one of trace, debug, info, warn, error, "
        "critical, off");
}

TEST(ConfigLoader, RejectsBurstAboveRange) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "burst: 257"}),
                        "t.yaml: switch.burst: 257 is out of range 1..256");
}

TEST(ConfigLoader, RejectsTooFewMbufs) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "mbufs: 1023"}),
                        "t.yaml: switch.mbufs: 1023 is out of range 1024..4194304");
}

TEST(ConfigLoader, RejectsMemoryBelowRange) {
    EXPECT_CONFIG_ERROR(
        yaml({.sw = "memory_mb: 63"}),
        "t.yaml: switch.memory_mb: 63 is out of range 64..65536 (0 sizes it automatically)");
}

TEST(ConfigLoader, RejectsCpuIdAboveRange) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "cpus: [0, 1024]"}),
                        "t.yaml: switch.cpus[1]: 1024 is out of range 0..1023");
}

TEST(ConfigLoader, RejectsDuplicateCpu) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "cpus: [1, 2, 1]"}),
                        "t.yaml: switch.cpus[2]: CPU 1 is listed twice");
}

TEST(ConfigLoader, RejectsCpusGivenAsScalar) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "cpus: 3"}), "t.yaml: switch.cpus: expected a list, got '3'");
}

TEST(ConfigLoader, RejectsNonStringEalArg) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "eal_args: [[--no-pci]]"}),
                        "t.yaml: switch.eal_args[0]: expected a string, got a list");
}

TEST(ConfigLoader, RejectsEmptyEalArg) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "eal_args: [\"--no-pci\", \"\"]"}),
                        "t.yaml: switch.eal_args[1]: must not be empty");
}

TEST(ConfigLoader, RejectsRelativeControlSocket) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "control_socket: run/sw1.sock"}),
                        "t.yaml: switch.control_socket: 'run/sw1.sock' is not an absolute path");
}

TEST(ConfigLoader, RejectsControlSocketTooLongForSunPath) {
    EXPECT_CONFIG_ERROR(yaml({.sw = "control_socket: /" + std::string(107, 's')}),
                        "t.yaml: switch.control_socket: path is 108 bytes, a Unix socket path "
                        "allows at most 107");
}

// ---- ports ----

TEST(ConfigLoader, RejectsMissingPorts) {
    EXPECT_CONFIG_ERROR("switch:\n  name: sw1\n", "t.yaml: ports: required field missing");
}

TEST(ConfigLoader, RejectsEmptyPortList) {
    EXPECT_CONFIG_ERROR("ports: []\n", "t.yaml: ports: at least one port is required");
}

TEST(ConfigLoader, RejectsMorePortsThanMax) {
    std::string text = "ports:\n";
    for (int i = 0; i < 33; i++) {
        char mac[32];
        std::snprintf(mac, sizeof mac, "02:00:00:00:00:%02x", i + 1);
        text += "  - {name: p" + std::to_string(i) + ", device: net_ring" + std::to_string(i) +
                ", mac: '" + mac + "'}\n";
    }
    EXPECT_CONFIG_ERROR(text, "t.yaml: ports: 33 ports, at most 32 allowed");
}

TEST(ConfigLoader, RejectsPortWithoutName) {
    EXPECT_CONFIG_ERROR("ports:\n  - {device: net_ring0, mac: '02:00:00:00:00:01'}\n",
                        "t.yaml: ports[0].name: required field missing");
}

TEST(ConfigLoader, RejectsPortWithoutDevice) {
    EXPECT_CONFIG_ERROR("ports:\n  - {name: p0, mac: '02:00:00:00:00:01'}\n",
                        "t.yaml: ports[0].device: required field missing");
}

TEST(ConfigLoader, RejectsPortWithoutMac) {
    EXPECT_CONFIG_ERROR("ports:\n  - {name: p0, device: net_ring0}\n",
                        "t.yaml: ports[0].mac: required field missing");
}

TEST(ConfigLoader, RejectsEmptyPortEntry) {
    EXPECT_CONFIG_ERROR("ports:\n  -\n", "t.yaml: ports[0].name: required field missing");
}

TEST(ConfigLoader, RejectsPortNameLongerThan15) {
    EXPECT_CONFIG_ERROR(
        "ports:\n  - {name: abcdefghijklmnop, device: net_ring0, mac: '02:00:00:00:00:01'}\n",
        "t.yaml: ports[0].name: 'abcdefghijklmnop' is not a valid port name "
        "(1 to 15 of A-Z a-z 0-9 _ . -)");
}

TEST(ConfigLoader, RejectsDuplicatePortName) {
    EXPECT_CONFIG_ERROR(
        "ports:\n"
        "  - {name: p0, device: net_ring0, mac: '02:00:00:00:00:01'}\n"
        "  - {name: p0, device: net_ring1, mac: '02:00:00:00:00:02'}\n",
        "t.yaml: ports[1].name: 'p0' is already used by ports[0]");
}

TEST(ConfigLoader, RejectsEmptyDevice) {
    EXPECT_CONFIG_ERROR("ports:\n  - {name: p0, device: '', mac: '02:00:00:00:00:01'}\n",
                        "t.yaml: ports[0].device: must not be empty");
}

TEST(ConfigLoader, RejectsDuplicateDevice) {
    EXPECT_CONFIG_ERROR(
        "ports:\n"
        "  - {name: p0, device: net_ring0, mac: '02:00:00:00:00:01'}\n"
        "  - {name: p1, device: net_ring0, mac: '02:00:00:00:00:02'}\n",
        "t.yaml: ports[1].device: device 'net_ring0' is already used by ports[0]");
}

TEST(ConfigLoader, RejectsSameDeviceNameWithDifferentArguments) {
    EXPECT_CONFIG_ERROR(
        "ports:\n"
        "  - {name: p0, device: 'net_tap0,iface=a', mac: '02:00:00:00:00:01'}\n"
        "  - {name: p1, device: 'net_tap0,iface=b', mac: '02:00:00:00:00:02'}\n",
        "t.yaml: ports[1].device: device 'net_tap0' is already used by ports[0]");
}

TEST(ConfigLoader, RejectsMalformedMac) {
    EXPECT_CONFIG_ERROR("ports:\n  - {name: p0, device: net_ring0, mac: '02:00:00:00:01'}\n",
                        "t.yaml: ports[0].mac: '02:00:00:00:01' is not a MAC address "
                        "(expected six hex bytes, aa:bb:cc:dd:ee:ff)");
}

TEST(ConfigLoader, RejectsMulticastPortMac) {
    EXPECT_CONFIG_ERROR("ports:\n  - {name: p0, device: net_ring0, mac: '01:00:5e:00:00:01'}\n",
                        "t.yaml: ports[0].mac: '01:00:5e:00:00:01' is a multicast address");
}

TEST(ConfigLoader, RejectsZeroPortMac) {
    EXPECT_CONFIG_ERROR("ports:\n  - {name: p0, device: net_ring0, mac: '00:00:00:00:00:00'}\n",
                        "t.yaml: ports[0].mac: '00:00:00:00:00:00' is the zero address");
}

TEST(ConfigLoader, RejectsDuplicatePortMac) {
    EXPECT_CONFIG_ERROR(
        "ports:\n"
        "  - {name: p0, device: net_ring0, mac: '02:00:00:00:00:0a'}\n"
        "  - {name: p1, device: net_ring1, mac: '02:00:00:00:00:0A'}\n",
        "t.yaml: ports[1].mac: '02:00:00:00:00:0A' is already used by ports[0]");
}

TEST(ConfigLoader, RejectsMtuAboveRange) {
    EXPECT_CONFIG_ERROR(yaml({.p1 = "mtu: 70000"}),
                        "t.yaml: ports[1].mtu: 70000 is out of range 68..9600");
}

TEST(ConfigLoader, RejectsMtuBelowRange) {
    EXPECT_CONFIG_ERROR(yaml({.p0 = "mtu: 67"}),
                        "t.yaml: ports[0].mtu: 67 is out of range 68..9600");
}

TEST(ConfigLoader, RejectsSpeedWithUnknownUnit) {
    EXPECT_CONFIG_ERROR(yaml({.p0 = "speed: 10T"}),
                        "t.yaml: ports[0].speed: '10T' is not a speed "
                        "(e.g. 100G, 2.5G, 25000M, or Mb/s as an integer)");
}

TEST(ConfigLoader, RejectsSpeedThatIsNotWholeMbps) {
    EXPECT_CONFIG_ERROR(yaml({.p0 = "speed: 2.5M"}),
                        "t.yaml: ports[0].speed: '2.5M' is not a speed "
                        "(e.g. 100G, 2.5G, 25000M, or Mb/s as an integer)");
}

TEST(ConfigLoader, RejectsSpeedAboveRange) {
    EXPECT_CONFIG_ERROR(yaml({.p0 = "speed: 900G"}),
                        "t.yaml: ports[0].speed: 900G is out of range 1..800000 Mb/s");
}

TEST(ConfigLoader, RejectsZeroSpeed) {
    EXPECT_CONFIG_ERROR(yaml({.p0 = "speed: 0"}),
                        "t.yaml: ports[0].speed: 0 is out of range 1..800000 Mb/s");
}

TEST(ConfigLoader, RejectsRxDescNotPowerOfTwo) {
    EXPECT_CONFIG_ERROR(yaml({.p0 = "rx_desc: 1000"}),
                        "t.yaml: ports[0].rx_desc: 1000 is not a power of two");
}

TEST(ConfigLoader, RejectsTxDescAboveRange) {
    EXPECT_CONFIG_ERROR(yaml({.p0 = "tx_desc: 32768"}),
                        "t.yaml: ports[0].tx_desc: 32768 is out of range 64..16384");
}

TEST(ConfigLoader, RejectsInterfaceAddressWithoutLength) {
    EXPECT_CONFIG_ERROR(
        "ports:\n  - {name: p0, device: net_ring0, mac: '02:00:00:00:00:01', ipv4: [10.0.1.1]}\n",
        "t.yaml: ports[0].ipv4[0]: '10.0.1.1' is not an address/length (e.g. 10.0.1.1/24)");
}

TEST(ConfigLoader, RejectsMalformedIpv6InterfaceAddress) {
    EXPECT_CONFIG_ERROR(
        "ports:\n  - {name: p0, device: net_ring0, mac: '02:00:00:00:00:01', "
        "ipv6: ['fd00:::1/64']}\n",
        "t.yaml: ports[0].ipv6[0]: 'fd00:::1/64' is not an address/length "
        "(e.g. fd00:1::1/64)");
}

TEST(ConfigLoader, RejectsIpv6AddressInIpv4List) {
    EXPECT_CONFIG_ERROR(
        "ports:\n  - {name: p0, device: net_ring0, mac: '02:00:00:00:00:01', "
        "ipv4: ['fd00:1::1/64']}\n",
        "t.yaml: ports[0].ipv4[0]: 'fd00:1::1/64' is not an IPv4 address");
}

TEST(ConfigLoader, RejectsIpv4AddressInIpv6List) {
    EXPECT_CONFIG_ERROR(without(yaml({.p1 = "ipv6: [10.0.9.1/24]"}), "    ipv6: [fd00:2::1/64]\n"),
                        "t.yaml: ports[1].ipv6[0]: '10.0.9.1/24' is not an IPv6 address");
}

TEST(ConfigLoader, RejectsIpv4PrefixLengthAbove32) {
    EXPECT_CONFIG_ERROR(
        "ports:\n  - {name: p0, device: net_ring0, mac: '02:00:00:00:00:01', ipv4: "
        "[10.0.1.1/33]}\n",
        "t.yaml: ports[0].ipv4[0]: prefix length 33 is out of range 0..32");
}

TEST(ConfigLoader, RejectsIpv6PrefixLengthAbove128) {
    EXPECT_CONFIG_ERROR(
        "ports:\n  - {name: p0, device: net_ring0, mac: '02:00:00:00:00:01', "
        "ipv6: ['fd00::1/129']}\n",
        "t.yaml: ports[0].ipv6[0]: prefix length 129 is out of range 0..128");
}

TEST(ConfigLoader, RejectsAddressAssignedToTwoPorts) {
    EXPECT_CONFIG_ERROR(
        "ports:\n"
        "  - {name: p0, device: net_ring0, mac: '02:00:00:00:00:01', ipv4: [10.0.1.1/24]}\n"
        "  - {name: p1, device: net_ring1, mac: '02:00:00:00:00:02', ipv4: [10.0.1.1/16]}\n",
        "t.yaml: ports[1].ipv4[0]: 10.0.1.1 is already an address of ports[0]");
}

// ---- routes ----

TEST(ConfigLoader, RejectsRouteWithoutPrefix) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "routes:\n  - {via: 10.0.2.2}\n"}),
                        "t.yaml: routes[0].prefix: required field missing");
}

TEST(ConfigLoader, RejectsRouteWithoutVia) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "routes:\n  - {prefix: 10.0.3.0/24}\n"}),
                        "t.yaml: routes[0].via: required field missing");
}

TEST(ConfigLoader, RejectsMalformedRoutePrefix) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "routes:\n  - {prefix: 10.0.3/24, via: 10.0.2.2}\n"}),
                        "t.yaml: routes[0].prefix: '10.0.3/24' is not a prefix "
                        "(e.g. 10.0.3.0/24 or fd00:3::/64)");
}

TEST(ConfigLoader, RejectsRoutePrefixWithHostBitsSet) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "routes:\n  - {prefix: 10.0.3.1/24, via: 10.0.2.2}\n"}),
                        "t.yaml: routes[0].prefix: host bits set in 10.0.3.1/24");
}

TEST(ConfigLoader, RejectsIpv6RoutePrefixWithHostBitsSet) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "routes:\n  - {prefix: 'fd00:3::1/64', via: 'fd00:2::2'}\n"}),
                        "t.yaml: routes[0].prefix: host bits set in fd00:3::1/64");
}

TEST(ConfigLoader, RejectsRoutePrefixLengthAboveRange) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "routes:\n  - {prefix: 10.0.3.0/40, via: 10.0.2.2}\n"}),
                        "t.yaml: routes[0].prefix: prefix length 40 is out of range 0..32");
}

TEST(ConfigLoader, RejectsDuplicateRoutePrefix) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "routes:\n"
                                      "  - {prefix: 10.0.3.0/24, via: 10.0.2.2}\n"
                                      "  - {prefix: 10.0.3.0/24, via: 10.0.1.2}\n"}),
                        "t.yaml: routes[1].prefix: 10.0.3.0/24 is already routed by routes[0]");
}

TEST(ConfigLoader, RejectsMalformedVia) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "routes:\n  - {prefix: 10.0.3.0/24, via: 10.0.2}\n"}),
                        "t.yaml: routes[0].via: '10.0.2' is not an IP address");
}

TEST(ConfigLoader, RejectsViaOfOtherFamily) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "routes:\n  - {prefix: 'fd00:3::/64', via: 10.0.2.2}\n"}),
                        "t.yaml: routes[0].via: 10.0.2.2 is IPv4 but the prefix is IPv6");
}

TEST(ConfigLoader, RejectsRouteToUnknownPort) {
    EXPECT_CONFIG_ERROR(
        yaml({.tail = "routes:\n  - {prefix: 10.0.3.0/24, via: 10.0.2.2, port: p9}\n"}),
        "t.yaml: routes[0].port: no port named 'p9'");
}

TEST(ConfigLoader, RejectsViaOutsideSubnetsOfNamedPort) {
    EXPECT_CONFIG_ERROR(
        yaml({.tail = "routes:\n  - {prefix: 10.0.3.0/24, via: 10.0.2.2, port: p0}\n"}),
        "t.yaml: routes[0].via: 10.0.2.2 is not in a connected subnet of port p0");
}

TEST(ConfigLoader, RejectsViaOutsideEveryConnectedSubnet) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "routes:\n  - {prefix: 10.0.3.0/24, via: 10.0.9.9}\n"}),
                        "t.yaml: routes[0].via: 10.0.9.9 is not in a connected subnet of any port");
}

TEST(ConfigLoader, RejectsViaInSubnetsOfSeveralPortsWithoutPort) {
    EXPECT_CONFIG_ERROR(
        without(yaml({.p1 = "ipv4: [10.0.1.129/25]",
                      .tail = "routes:\n  - {prefix: 10.0.3.0/24, via: 10.0.1.200}\n"}),
                "    ipv4: [10.0.2.1/24]\n"),
        "t.yaml: routes[0].via: 10.0.1.200 is in connected subnets of several "
        "ports (p0, p1); choose one with 'port'");
}

TEST(ConfigLoader, RejectsViaThatIsASwitchAddress) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "routes:\n  - {prefix: 10.0.3.0/24, via: 10.0.2.1}\n"}),
                        "t.yaml: routes[0].via: 10.0.2.1 is an address of the switch (port p1)");
}

TEST(ConfigLoader, RejectsLinkLocalViaWithoutPort) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "routes:\n  - {prefix: '::/0', via: 'fe80::1'}\n"}),
                        "t.yaml: routes[0].via: fe80::1 is link-local, so 'port' is required");
}

TEST(ConfigLoader, RejectsRoutesThatAreNotAList) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "routes: {prefix: 10.0.3.0/24}\n"}),
                        "t.yaml: routes: expected a list, got a map");
}

// ---- route files ----

// A directory of route files for one test, removed afterwards.
class RouteFiles : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("rocesw-routes-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    // Writes `text` to `name` in the test's directory; returns its path.
    std::string write(const std::string &name, const std::string &text) {
        std::string path = (dir_ / name).string();
        std::ofstream(path) << text;
        return path;
    }
    // The base config with `route_files: [paths...]` (and optional YAML routes).
    std::string with_files(std::initializer_list<std::string> paths,
                           const std::string &routes = "") {
        return yaml({.tail = routes + "route_files: [" + join(paths) + "]\n"});
    }
    std::filesystem::path dir_;
};

TEST_F(RouteFiles, LoadsRoutesAfterTheYamlOnes) {
    std::string f = write("a.routes",
                          "# static routes\n"
                          "\n"
                          "10.0.3.0/24 via 10.0.2.2\n"
                          "  10.0.4.0/24   via 10.0.1.2   port p0   # a comment\n"
                          "fd00:3::/48 via fd00:2::2\r\n"
                          "::/0 via fe80::1 port p1\n"
                          "0.0.0.0/0\tvia\t10.0.1.254");  // no newline at the end
    Config c = load_config_string(
        with_files({f}, "routes:\n  - {prefix: 10.0.9.0/24, via: 10.0.2.2}\n"), "t.yaml");
    ASSERT_EQ(c.routes.size(), 6u);
    EXPECT_EQ(c.routes[0].prefix.str(), "10.0.9.0/24");
    EXPECT_EQ(c.routes[1].prefix.str(), "10.0.3.0/24");
    EXPECT_EQ(c.routes[1].via.str(), "10.0.2.2");
    EXPECT_EQ(c.routes[1].port, "p1");  // filled in from the connected subnet
    EXPECT_EQ(c.routes[2].prefix.str(), "10.0.4.0/24");
    EXPECT_EQ(c.routes[2].port, "p0");
    EXPECT_EQ(c.routes[3].prefix.str(), "fd00:3::/48");
    EXPECT_EQ(c.routes[3].port, "p1");
    EXPECT_EQ(c.routes[4].prefix.str(), "::/0");
    EXPECT_EQ(c.routes[4].via.str(), "fe80::1");
    EXPECT_EQ(c.routes[4].port, "p1");
    EXPECT_EQ(c.routes[5].prefix.str(), "0.0.0.0/0");
    EXPECT_EQ(c.routes[5].port, "p0");
}

TEST_F(RouteFiles, ResolvesARelativePathAgainstTheConfigFile) {
    write("b.routes", "10.0.3.0/24 via 10.0.2.2\n");
    std::string cfg = write("sw.yaml", with_files({"b.routes"}));
    Config c = load_config_file(cfg);
    ASSERT_EQ(c.routes.size(), 1u);
    EXPECT_EQ(c.routes[0].prefix.str(), "10.0.3.0/24");
}

TEST_F(RouteFiles, RejectsMissingFile) {
    EXPECT_CONFIG_ERROR(with_files({"/nonexistent/x.routes"}),
                        "t.yaml: route_files[0]: /nonexistent/x.routes: cannot open file");
}

TEST_F(RouteFiles, RejectsDirectory) {
    EXPECT_CONFIG_ERROR(with_files({dir_.string()}),
                        "t.yaml: route_files[0]: " + dir_.string() + ": is a directory");
}

TEST_F(RouteFiles, RejectsDevice) {
    EXPECT_CONFIG_ERROR(with_files({"/dev/zero"}),
                        "t.yaml: route_files[0]: /dev/zero: not a regular file");
}

TEST_F(RouteFiles, RejectsListOfNonStrings) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "route_files: [[a]]\n"}),
                        "t.yaml: route_files[0]: expected a string, got a list");
}

TEST_F(RouteFiles, RejectsBadPrefix) {
    std::string f = write("r", "10.0.3.0/24 via 10.0.2.2\n10.0.3/24 via 10.0.2.2\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":2: prefix: '10.0.3/24' is not a prefix "
                                             "(e.g. 10.0.3.0/24 or fd00:3::/64)");
}

TEST_F(RouteFiles, RejectsPrefixLengthAboveRange) {
    std::string f = write("r", "10.0.3.0/33 via 10.0.2.2\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":1: prefix: prefix length 33 is out of range 0..32");
}

TEST_F(RouteFiles, RejectsHostBitsSet) {
    std::string f = write("r", "# one\n10.0.3.1/24 via 10.0.2.2\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":2: prefix: host bits set in 10.0.3.1/24");
}

TEST_F(RouteFiles, RejectsDuplicateInTheFile) {
    std::string f = write("r",
                          "10.0.3.0/24 via 10.0.2.2\n10.0.4.0/24 via 10.0.2.2\n\n"
                          "10.0.3.0/24 via 10.0.1.2\n");
    EXPECT_CONFIG_ERROR(with_files({f}),
                        f + ":4: prefix: 10.0.3.0/24 is already routed by " + f + ":1");
}

TEST_F(RouteFiles, RejectsDuplicateOfAYamlRoute) {
    std::string f = write("r", "10.0.3.0/24 via 10.0.2.2\n");
    EXPECT_CONFIG_ERROR(with_files({f},
                                   "routes:\n  - {prefix: 10.0.5.0/24, via: 10.0.2.2}\n"
                                   "  - {prefix: 10.0.3.0/24, via: 10.0.2.2}\n"),
                        f + ":1: prefix: 10.0.3.0/24 is already routed by routes[1]");
}

TEST_F(RouteFiles, RejectsDuplicateAcrossFiles) {
    std::string a = write("a", "10.0.3.0/24 via 10.0.2.2\n10.0.4.0/24 via 10.0.2.2\n");
    std::string b = write("b", "10.0.5.0/24 via 10.0.2.2\n10.0.4.0/24 via 10.0.2.2\n");
    EXPECT_CONFIG_ERROR(with_files({a, b}),
                        b + ":2: prefix: 10.0.4.0/24 is already routed by " + a + ":2");
}

TEST_F(RouteFiles, RejectsUnknownPort) {
    std::string f = write("r", "10.0.3.0/24 via 10.0.2.2 port p9\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":1: port: no port named 'p9'");
}

TEST_F(RouteFiles, RejectsGatewayOutsideThePortsSubnet) {
    std::string f = write("r", "10.0.3.0/24 via 10.0.2.2 port p0\n");
    EXPECT_CONFIG_ERROR(with_files({f}),
                        f + ":1: via: 10.0.2.2 is not in a connected subnet of port p0");
}

TEST_F(RouteFiles, RejectsGatewayInNoSubnet) {
    std::string f = write("r", "10.0.3.0/24 via 10.0.9.9\n");
    EXPECT_CONFIG_ERROR(with_files({f}),
                        f + ":1: via: 10.0.9.9 is not in a connected subnet of any port");
}

TEST_F(RouteFiles, RejectsMalformedGateway) {
    std::string f = write("r", "10.0.3.0/24 via 10.0.2\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":1: via: '10.0.2' is not an IP address");
}

TEST_F(RouteFiles, RejectsGatewayOfTheOtherFamily) {
    std::string f = write("r", "fd00:3::/64 via 10.0.2.2\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":1: via: 10.0.2.2 is IPv4 but the prefix is IPv6");
}

TEST_F(RouteFiles, RejectsLineThatIsNotARoute) {
    std::string f = write("r", "10.0.3.0/24 10.0.2.2   # no via\n");
    EXPECT_CONFIG_ERROR(with_files({f}),
                        f + ":1: expected 'PREFIX via GATEWAY [GATEWAY ...] [port NAME] "
                            "[policy NAME]', got '10.0.3.0/24 10.0.2.2'");
    f = write("s", "10.0.3.0/24 via 10.0.2.2 dev p1\n");
    EXPECT_CONFIG_ERROR(with_files({f}),
                        f + ":1: expected 'PREFIX via GATEWAY [GATEWAY ...] [port NAME] "
                            "[policy NAME]', got '10.0.3.0/24 via 10.0.2.2 dev p1'");
    for (const char *line :
         {"10.0.3.0/24 via", "10.0.3.0/24 via port p1", "10.0.3.0/24 via 10.0.2.2 port",
          "10.0.3.0/24 via 10.0.2.2 policy", "10.0.3.0/24 via 10.0.2.2 port p1 port p1",
          "10.0.3.0/24 via 10.0.2.2 policy hash policy hash",
          "10.0.3.0/24 via 10.0.2.2 port p1 10.0.2.3",
          "10.0.3.0/24 via 10.0.2.2 port policy hash"}) {
        f = write("t", std::string(line) + "\n");
        EXPECT_CONFIG_ERROR(with_files({f}),
                            f +
                                ":1: expected 'PREFIX via GATEWAY [GATEWAY ...] [port NAME] "
                                "[policy NAME]', got '" +
                                line + "'");
    }
}

// Several gateways, or a policy, make a multipath route, as a YAML `via` list does.
TEST_F(RouteFiles, LoadsMultipathRoutes) {
    std::string f = write("m.routes",
                          "10.0.3.0/24 via 10.0.2.2\n"
                          "10.0.4.0/24 via 10.0.2.2 10.0.2.3 10.0.1.2\n"
                          "10.0.5.0/24 via 10.0.2.2\t10.0.2.3 policy flowlet   # comment\n"
                          "10.0.6.0/24 via 10.0.2.2 10.0.2.3 policy hash port p1\n"
                          "10.0.7.0/24 via 10.0.1.2 policy spray\n"
                          "::/0 via fe80::1 fe80::2 port p1 policy adaptive\n");
    Config c = load_config_string(with_files({f}), "t.yaml");
    ASSERT_EQ(c.routes.size(), 1u);
    EXPECT_EQ(c.routes[0].prefix.str(), "10.0.3.0/24");
    ASSERT_EQ(c.multipath_routes.size(), 5u);
    const MultipathRouteConfig &a = c.multipath_routes[0];
    EXPECT_EQ(a.prefix.str(), "10.0.4.0/24");
    ASSERT_EQ(a.paths.size(), 3u);
    EXPECT_EQ(a.paths[0].via.str(), "10.0.2.2");
    EXPECT_EQ(a.paths[0].port, "p1");  // each gateway's port from its connected subnet
    EXPECT_EQ(a.paths[1].via.str(), "10.0.2.3");
    EXPECT_EQ(a.paths[1].port, "p1");
    EXPECT_EQ(a.paths[2].via.str(), "10.0.1.2");
    EXPECT_EQ(a.paths[2].port, "p0");
    EXPECT_EQ(a.paths[2].weight, 1u);
    EXPECT_EQ(a.policy, "");  // lb.default_policy
    EXPECT_EQ(c.multipath_routes[1].prefix.str(), "10.0.5.0/24");
    EXPECT_EQ(c.multipath_routes[1].paths.size(), 2u);
    EXPECT_EQ(c.multipath_routes[1].policy, "flowlet");
    EXPECT_EQ(c.multipath_routes[2].policy, "hash");
    EXPECT_EQ(c.multipath_routes[2].paths[1].port, "p1");
    // One gateway with a policy: a one-member group, as in YAML.
    const MultipathRouteConfig &one = c.multipath_routes[3];
    EXPECT_EQ(one.prefix.str(), "10.0.7.0/24");
    ASSERT_EQ(one.paths.size(), 1u);
    EXPECT_EQ(one.paths[0].via.str(), "10.0.1.2");
    EXPECT_EQ(one.paths[0].port, "p0");
    EXPECT_EQ(one.policy, "spray");
    // `port` applies to every gateway (here link-local ones, which need it).
    const MultipathRouteConfig &v6 = c.multipath_routes[4];
    EXPECT_EQ(v6.prefix.str(), "::/0");
    ASSERT_EQ(v6.paths.size(), 2u);
    EXPECT_EQ(v6.paths[1].via.str(), "fe80::2");
    EXPECT_EQ(v6.paths[1].port, "p1");
    EXPECT_EQ(v6.policy, "adaptive");
}

TEST_F(RouteFiles, NamesTheLineOfAMultipathRouteInDuplicates) {
    std::string f = write("r",
                          "10.0.3.0/24 via 10.0.2.2\n10.0.4.0/24 via 10.0.2.2 10.0.2.3\n"
                          "10.0.5.0/24 via 10.0.2.2 policy hash\n10.0.4.0/24 via 10.0.2.2\n");
    EXPECT_CONFIG_ERROR(with_files({f}),
                        f + ":4: prefix: 10.0.4.0/24 is already routed by " + f + ":2");
}

TEST_F(RouteFiles, RejectsGatewayListedTwice) {
    std::string f = write("r", "10.0.3.0/24 via 10.0.2.2 10.0.2.3 10.0.2.2\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":1: via: 10.0.2.2 is listed twice");
}

TEST_F(RouteFiles, RejectsMoreGatewaysThanAGroupHolds) {
    std::string gws;
    for (size_t i = 0; i < kMaxRoutePaths; i++) gws += " 10.0.2." + std::to_string(10 + i);
    std::string f =
        write("r", "10.0.3.0/24 via" + gws + "\n10.0.4.0/24 via" + gws + " 10.0.2.99 port p1\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":2: via: more than 32 next hops");
    // Far past the limit (the reader keeps one gateway past it): the same message.
    std::string more;
    for (size_t i = 0; i < kMaxRoutePaths; i++) more += " 10.0.2." + std::to_string(100 + i);
    f = write("s", "10.0.4.0/24 via" + gws + more + "\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":1: via: more than 32 next hops");
}

// The `nexthop` form: each path with its own port and weight, as YAML `nexthops`; the same
// routes from either give the same Config.
TEST_F(RouteFiles, LoadsNexthopLinesAsYamlNexthops) {
    std::string f = write("n.routes",
                          "10.0.3.0/24 nexthop via 10.0.2.2 weight 3 nexthop via 10.0.1.2\n"
                          "10.0.4.0/24 nexthop via 10.0.2.2 port p1 weight 1000 "
                          "nexthop via 10.0.2.3 policy flowlet  # comment\n"
                          "::/0 nexthop via fe80::1 port p0 nexthop via fe80::1 weight 2 port p1\n"
                          "10.0.5.0/24\tnexthop via 10.0.1.2\n");
    const std::string yaml_routes =
        "routes:\n"
        "  - {prefix: 10.0.3.0/24, nexthops: [{via: 10.0.2.2, weight: 3}, {via: 10.0.1.2}]}\n"
        "  - {prefix: 10.0.4.0/24, policy: flowlet, nexthops: [{via: 10.0.2.2, port: p1, "
        "weight: 1000}, {via: 10.0.2.3}]}\n"
        "  - {prefix: \"::/0\", nexthops: [{via: \"fe80::1\", port: p0}, {via: \"fe80::1\", "
        "port: p1, weight: 2}]}\n"
        "  - {prefix: 10.0.5.0/24, nexthops: [{via: 10.0.1.2}]}\n";
    Config c = load_config_string(with_files({f}), "t.yaml");
    Config y = load_config_string(yaml({.tail = yaml_routes}), "t.yaml");
    ASSERT_EQ(c.routes.size(), 0u);
    ASSERT_EQ(c.multipath_routes.size(), 4u);
    ASSERT_EQ(y.multipath_routes.size(), 4u);
    for (size_t i = 0; i < 4; i++) {
        const MultipathRouteConfig &a = c.multipath_routes[i], &b = y.multipath_routes[i];
        EXPECT_EQ(a.prefix.str(), b.prefix.str()) << i;
        EXPECT_EQ(a.policy, b.policy) << i;
        ASSERT_EQ(a.paths.size(), b.paths.size()) << i;
        for (size_t j = 0; j < a.paths.size(); j++) {
            EXPECT_EQ(a.paths[j].via.str(), b.paths[j].via.str()) << i << "/" << j;
            EXPECT_EQ(a.paths[j].port, b.paths[j].port) << i << "/" << j;
            EXPECT_EQ(a.paths[j].weight, b.paths[j].weight) << i << "/" << j;
        }
    }
    // The values themselves, not only their agreement.
    const MultipathRouteConfig &r0 = c.multipath_routes[0];
    EXPECT_EQ(r0.paths[0].via.str(), "10.0.2.2");
    EXPECT_EQ(r0.paths[0].port, "p1");  // from its connected subnet
    EXPECT_EQ(r0.paths[0].weight, 3u);
    EXPECT_EQ(r0.paths[1].port, "p0");
    EXPECT_EQ(r0.paths[1].weight, 1u);
    EXPECT_EQ(r0.policy, "");  // lb.default_policy
    EXPECT_EQ(c.multipath_routes[1].paths[0].weight, 1000u);
    EXPECT_EQ(c.multipath_routes[1].policy, "flowlet");
    // One link-local gateway on two ports: two paths.
    const MultipathRouteConfig &v6 = c.multipath_routes[2];
    EXPECT_EQ(v6.paths[0].port, "p0");
    EXPECT_EQ(v6.paths[1].port, "p1");
    EXPECT_EQ(v6.paths[1].weight, 2u);
    EXPECT_EQ(c.multipath_routes[3].paths.size(), 1u);  // one nexthop: a one-member group
    ASSERT_EQ(c.lb_policy_refs.size(), 1u);
    EXPECT_EQ(c.lb_policy_refs[0].where, f + ":2: policy");
}

TEST_F(RouteFiles, RejectsBadNexthopLines) {
    const std::string form =
        ":1: expected 'PREFIX nexthop via GATEWAY [port NAME] [weight N] [nexthop ...] "
        "[policy NAME]', got '";
    for (const char *line :
         {"10.0.3.0/24 nexthop", "10.0.3.0/24 nexthop 10.0.2.2",
          "10.0.3.0/24 nexthop via", "10.0.3.0/24 nexthop via port p1",
          "10.0.3.0/24 nexthop via 10.0.2.2 port", "10.0.3.0/24 nexthop via 10.0.2.2 weight",
          "10.0.3.0/24 nexthop via 10.0.2.2 weight 2 weight 2",
          "10.0.3.0/24 nexthop via 10.0.2.2 port p1 port p1",
          "10.0.3.0/24 nexthop via 10.0.2.2 10.0.2.3",
          "10.0.3.0/24 nexthop via 10.0.2.2 nexthop",
          "10.0.3.0/24 nexthop via 10.0.2.2 policy",
          "10.0.3.0/24 nexthop via 10.0.2.2 policy hash nexthop via 10.0.2.3",
          "10.0.3.0/24 nexthop via 10.0.2.2 policy hash policy hash",
          "10.0.3.0/24 nexthop via 10.0.2.2 dev p1",
          "10.0.3.0/24 nexthop via 10.0.2.2 port weight 2"}) {
        std::string f = write("t", std::string(line) + "\n");
        EXPECT_CONFIG_ERROR(with_files({f}), f + form + line + "'");
    }
    struct Case {
        const char *line, *error;
    } cases[] = {
        {"10.0.3.0/24 nexthop via 10.0.2.2 nexthop via 10.0.2.x",
         "nexthop 2: via: '10.0.2.x' is not an IP address"},
        {"10.0.3.0/24 nexthop via fd00:2::2", "nexthop 1: via: fd00:2::2 is IPv6 but the prefix is IPv4"},
        {"10.0.3.0/24 nexthop via 10.0.2.2 port p9", "nexthop 1: port: no port named 'p9'"},
        {"10.0.3.0/24 nexthop via 10.0.2.2 port p0",
         "nexthop 1: via: 10.0.2.2 is not in a connected subnet of port p0"},
        {"fd00:3::/64 nexthop via fe80::1", "nexthop 1: via: fe80::1 is link-local, so 'port' is required"},
        {"10.0.3.0/24 nexthop via 10.0.2.2 weight 0", "nexthop 1: weight: 0 is out of range 1..1000"},
        {"10.0.3.0/24 nexthop via 10.0.2.2 weight 1001",
         "nexthop 1: weight: 1001 is out of range 1..1000"},
        {"10.0.3.0/24 nexthop via 10.0.2.2 nexthop via 10.0.2.2 weight 2",
         "nexthop 2: via: 10.0.2.2 is listed twice"},
        {"10.0.3.1/24 nexthop via 10.0.2.2", "prefix: host bits set in 10.0.3.1/24"},
    };
    for (const Case &k : cases) {
        std::string f = write("u", std::string(k.line) + "\n");
        EXPECT_CONFIG_ERROR(with_files({f}), f + ":1: " + k.error);
    }
    // Weights are integers, as in YAML.
    std::string f = write("w", "10.0.3.0/24 nexthop via 10.0.2.2 weight 1.5\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":1: nexthop 1: weight: expected an integer, got '1.5'");
    f = write("x", "10.0.3.0/24 nexthop via 10.0.2.2 weight -1\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":1: nexthop 1: weight: -1 is out of range 1..1000");
    // More paths than a group holds.
    std::string hops;
    for (size_t i = 0; i < kMaxRoutePaths; i++) hops += " nexthop via 10.0.2." + std::to_string(10 + i);
    f = write("m", "10.0.3.0/24" + hops + "\n10.0.4.0/24" + hops + " nexthop via 10.0.2.99\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":2: nexthop: more than 32 next hops");
    // A prefix a `nexthop` line routes is taken, as any other's.
    f = write("d", "10.0.3.0/24 nexthop via 10.0.2.2\n10.0.3.0/24 via 10.0.2.3\n");
    EXPECT_CONFIG_ERROR(with_files({f}),
                        f + ":2: prefix: 10.0.3.0/24 is already routed by " + f + ":1");
}

// lib/lb owns the policy names and checks them (lb_config_test); the loader records each one
// with the place a message names.
TEST_F(RouteFiles, RecordsEachPolicyNameWithItsFileAndLine) {
    std::string f = write("r", "10.0.3.0/24 via 10.0.2.2 10.0.2.3 policy magic\n"
                               "10.0.4.0/24 via 10.0.2.2 policy hash\n");
    Config c = load_config_string(with_files({f}), "t.yaml");
    ASSERT_EQ(c.lb_policy_refs.size(), 2u);
    EXPECT_EQ(c.lb_policy_refs[0].name, "magic");
    EXPECT_EQ(c.lb_policy_refs[0].where, f + ":1: policy");
    EXPECT_EQ(c.lb_policy_refs[1].name, "hash");
    EXPECT_EQ(c.lb_policy_refs[1].where, f + ":2: policy");
}

TEST_F(RouteFiles, RejectsMultipathGatewaysOfMixedFamilies) {
    std::string f = write("r", "10.0.3.0/24 via 10.0.2.2 fd00:2::2\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":1: via: fd00:2::2 is IPv6 but the prefix is IPv4");
    f = write("s", "fd00:3::/64 via fd00:2::2 10.0.2.2 policy hash\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":1: via: 10.0.2.2 is IPv4 but the prefix is IPv6");
}

TEST_F(RouteFiles, ResolvesEachMultipathGatewayLikeASingleOne) {
    std::string f = write("r", "10.0.3.0/24 via 10.0.2.2 10.0.1.2 port p1\n");
    EXPECT_CONFIG_ERROR(with_files({f}),
                        f + ":1: via: 10.0.1.2 is not in a connected subnet of port p1");
    f = write("s", "10.0.3.0/24 via 10.0.2.2 10.0.9.9\n");
    EXPECT_CONFIG_ERROR(with_files({f}),
                        f + ":1: via: 10.0.9.9 is not in a connected subnet of any port");
    f = write("t", "10.0.3.0/24 via 10.0.2.2 10.0.2.1\n");
    EXPECT_CONFIG_ERROR(with_files({f}),
                        f + ":1: via: 10.0.2.1 is an address of the switch (port p1)");
    f = write("u", "::/0 via fd00:2::2 fe80::1\n");
    EXPECT_CONFIG_ERROR(with_files({f}),
                        f + ":1: via: fe80::1 is link-local, so 'port' is required");
    f = write("v", "10.0.3.0/24 via 10.0.2.2 10.0.2.3 port p9\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":1: port: no port named 'p9'");
    f = write("w", "10.0.3.0/24 via 10.0.2.2 10.0.2\n");
    EXPECT_CONFIG_ERROR(with_files({f}), f + ":1: via: '10.0.2' is not an IP address");
}

// ---- neighbours ----

TEST(ConfigLoader, RejectsNeighbourWithoutIp) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "neighbours:\n  - {mac: '02:00:00:00:00:02'}\n"}),
                        "t.yaml: neighbours[0].ip: required field missing");
}

TEST(ConfigLoader, RejectsNeighbourWithoutMac) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "neighbours:\n  - {ip: 10.0.1.2}\n"}),
                        "t.yaml: neighbours[0].mac: required field missing");
}

TEST(ConfigLoader, RejectsMalformedNeighbourIp) {
    EXPECT_CONFIG_ERROR(
        yaml({.tail = "neighbours:\n  - {ip: 10.0.1.256, mac: '02:00:00:00:00:02'}\n"}),
        "t.yaml: neighbours[0].ip: '10.0.1.256' is not an IP address");
}

TEST(ConfigLoader, RejectsMulticastNeighbourMac) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "neighbours:\n"
                                      "  - {ip: 10.0.1.2, mac: '02:00:00:00:00:02'}\n"
                                      "  - {ip: 10.0.1.3, mac: '02:00:00:00:00:03'}\n"
                                      "  - {ip: 10.0.1.4, mac: 'ff:ff:ff:ff:ff:ff'}\n"}),
                        "t.yaml: neighbours[2].mac: 'ff:ff:ff:ff:ff:ff' is a multicast address");
}

TEST(ConfigLoader, RejectsZeroNeighbourMac) {
    EXPECT_CONFIG_ERROR(
        yaml({.tail = "neighbours:\n  - {ip: 10.0.1.2, mac: '00:00:00:00:00:00'}\n"}),
        "t.yaml: neighbours[0].mac: '00:00:00:00:00:00' is the zero address");
}

TEST(ConfigLoader, RejectsNeighbourOnUnknownPort) {
    EXPECT_CONFIG_ERROR(
        yaml({.tail = "neighbours:\n  - {ip: 10.0.1.2, mac: '02:00:00:00:00:02', port: p2}\n"}),
        "t.yaml: neighbours[0].port: no port named 'p2'");
}

TEST(ConfigLoader, RejectsNeighbourOutsideEveryConnectedSubnet) {
    EXPECT_CONFIG_ERROR(
        yaml({.tail = "neighbours:\n  - {ip: 'fd00:9::2', mac: '02:00:00:00:00:02'}\n"}),
        "t.yaml: neighbours[0].ip: fd00:9::2 is not in a connected subnet of any port");
}

TEST(ConfigLoader, RejectsNeighbourOutsideSubnetsOfNamedPort) {
    EXPECT_CONFIG_ERROR(
        yaml({.tail = "neighbours:\n  - {ip: 10.0.1.2, mac: '02:00:00:00:00:02', port: p1}\n"}),
        "t.yaml: neighbours[0].ip: 10.0.1.2 is not in a connected subnet of port p1");
}

TEST(ConfigLoader, RejectsNeighbourThatIsASwitchAddress) {
    EXPECT_CONFIG_ERROR(
        yaml({.tail = "neighbours:\n  - {ip: 'fd00:1::1', mac: '02:00:00:00:00:02'}\n"}),
        "t.yaml: neighbours[0].ip: fd00:1::1 is an address of the switch (port p0)");
}

TEST(ConfigLoader, RejectsDuplicateNeighbourOnSamePort) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "neighbours:\n"
                                      "  - {ip: 10.0.1.2, mac: '02:00:00:00:00:02'}\n"
                                      "  - {ip: 10.0.1.2, mac: '02:00:00:00:00:03', port: p0}\n"}),
                        "t.yaml: neighbours[1].ip: 10.0.1.2 on port p0 is already defined by "
                        "neighbours[0]");
}

TEST(ConfigLoader, AcceptsSameLinkLocalNeighbourOnTwoPorts) {
    Config c = load_config_string(
        yaml({.tail = "neighbours:\n"
                      "  - {ip: 'fe80::2', mac: '02:00:00:00:00:02', port: p0}\n"
                      "  - {ip: 'fe80::2', mac: '02:00:00:00:00:03', port: p1}\n"}),
        "t.yaml");
    EXPECT_EQ(c.neighbours.size(), 2u);
}

// ---- parse helpers ----

TEST(ConfigParsers, ParsesMacInEitherCaseAndPrintsLowercase) {
    auto m = parse_mac("02:AB:cd:EF:00:9f");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->str(), "02:ab:cd:ef:00:9f");
    EXPECT_FALSE(parse_mac("02:ab:cd:ef:00"));
    EXPECT_FALSE(parse_mac("02-ab-cd-ef-00-9f"));
    EXPECT_FALSE(parse_mac("02:ab:cd:ef:00:9g"));
    EXPECT_FALSE(parse_mac("02:ab:cd:ef:00:9f:"));
}

TEST(ConfigParsers, KeepsIpv4InHostByteOrder) {
    auto a = parse_ip("10.1.2.3");
    ASSERT_TRUE(a);
    EXPECT_FALSE(a->is_v6);
    EXPECT_EQ(a->v4, 0x0a010203u);
    EXPECT_EQ(a->str(), "10.1.2.3");
    EXPECT_FALSE(parse_ip("10.1.2"));
    EXPECT_FALSE(parse_ip("10.1.2.3/8"));
    EXPECT_FALSE(parse_ip(""));
}

TEST(ConfigParsers, ParsesIpv6AndPrintsCanonicalForm) {
    auto a = parse_ip("FD00:0001:0::0002");
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->is_v6);
    EXPECT_EQ(a->v6[0], 0xfd);
    EXPECT_EQ(a->v6[15], 0x02);
    EXPECT_EQ(a->str(), "fd00:1::2");
    EXPECT_FALSE(parse_ip("fe80::1%eth0"));
}

TEST(ConfigParsers, PrefixRejectsHostBitsAndBadLengths) {
    auto p = parse_prefix("10.0.3.0/24");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->str(), "10.0.3.0/24");
    EXPECT_FALSE(parse_prefix("10.0.3.1/24"));
    EXPECT_FALSE(parse_prefix("10.0.3.0/33"));
    EXPECT_FALSE(parse_prefix("10.0.3.0/"));
    EXPECT_FALSE(parse_prefix("10.0.3.0"));
    EXPECT_TRUE(parse_prefix("0.0.0.0/0"));
    EXPECT_TRUE(parse_prefix("::/0"));
    EXPECT_TRUE(parse_prefix("fd00:3::/48"));
    EXPECT_FALSE(parse_prefix("fd00:3::1/48"));
    EXPECT_TRUE(parse_prefix("fd00:3::1/128"));
    EXPECT_FALSE(parse_prefix("fd00:3::1/129"));
    EXPECT_FALSE(parse_prefix("fd00:3:0:8000::/48"));
    EXPECT_TRUE(parse_prefix("fd00:3:0:8000::/49"));
}

TEST(ConfigParsers, PrefixContainsOnlyItsOwnFamilyAndRange) {
    auto p = *parse_prefix("10.0.0.0/9");
    EXPECT_TRUE(p.contains(*parse_ip("10.127.255.255")));
    EXPECT_FALSE(p.contains(*parse_ip("10.128.0.0")));
    EXPECT_FALSE(p.contains(*parse_ip("::a00:1")));
    auto all4 = *parse_prefix("0.0.0.0/0");
    EXPECT_TRUE(all4.contains(*parse_ip("255.255.255.255")));
    EXPECT_FALSE(all4.contains(*parse_ip("::")));
    auto p6 = *parse_prefix("fd00:1::/63");
    EXPECT_TRUE(p6.contains(*parse_ip("fd00:1:0:1::5")));
    EXPECT_FALSE(p6.contains(*parse_ip("fd00:1:0:2::5")));
    auto host = *parse_prefix("fd00::1/128");
    EXPECT_TRUE(host.contains(*parse_ip("fd00::1")));
    EXPECT_FALSE(host.contains(*parse_ip("fd00::2")));
}

TEST(ConfigParsers, InterfaceAddressKeepsHostBitsAndGivesSubnet) {
    auto a = parse_if_addr("10.0.1.77/26");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->str(), "10.0.1.77/26");
    EXPECT_EQ(a->subnet().str(), "10.0.1.64/26");
    auto b = parse_if_addr("fd00:1::1/64");
    ASSERT_TRUE(b);
    EXPECT_EQ(b->subnet().str(), "fd00:1::/64");
    EXPECT_FALSE(parse_if_addr("10.0.1.77"));
    EXPECT_FALSE(parse_if_addr("10.0.1.77/-1"));
}

TEST(ConfigParsers, ParsesSpeedWithUnits) {
    EXPECT_EQ(parse_speed_mbps("100G"), 100000u);
    EXPECT_EQ(parse_speed_mbps("25g"), 25000u);
    EXPECT_EQ(parse_speed_mbps("2.5G"), 2500u);
    EXPECT_EQ(parse_speed_mbps("0.1G"), 100u);
    EXPECT_EQ(parse_speed_mbps("25000M"), 25000u);
    EXPECT_EQ(parse_speed_mbps("100m"), 100u);
    EXPECT_EQ(parse_speed_mbps("25000"), 25000u);
    EXPECT_EQ(parse_speed_mbps("10.0"), 10u);
    EXPECT_FALSE(parse_speed_mbps("2.5M"));
    EXPECT_FALSE(parse_speed_mbps("2.0005G"));
    EXPECT_FALSE(parse_speed_mbps("G"));
    EXPECT_FALSE(parse_speed_mbps(""));
    EXPECT_FALSE(parse_speed_mbps(".5G"));
    EXPECT_FALSE(parse_speed_mbps("5.G"));
    EXPECT_FALSE(parse_speed_mbps("10 G"));
    EXPECT_FALSE(parse_speed_mbps("10Gbps"));
    EXPECT_FALSE(parse_speed_mbps("-1G"));
    EXPECT_FALSE(parse_speed_mbps("9999999999999G"));
}

// ---- shipped examples ----

TEST(ConfigExamples, EveryExampleLoads) {
    size_t n = 0;
    for (auto &e : std::filesystem::directory_iterator(kExamples)) {
        if (e.path().extension() != ".yaml") continue;
        SCOPED_TRACE(e.path().string());
        EXPECT_NO_THROW(load_config_file(e.path().string()));
        n++;
    }
    EXPECT_GE(n, 4u);
}

TEST(ConfigExamples, TwoHostsTapHasBothFamiliesAndStaticNeighbours) {
    Config c = load_config_file(kExamples + "two-hosts-tap.yaml");
    EXPECT_EQ(c.sw.workers, 1u);
    EXPECT_EQ(c.sw.idle, IdleMode::adaptive);
    ASSERT_EQ(c.ports.size(), 2u);
    for (auto &p : c.ports) {
        EXPECT_EQ(p.device.rfind("net_tap", 0), 0u) << p.device;
        EXPECT_EQ(p.ipv4.size(), 1u);
        EXPECT_EQ(p.ipv6.size(), 1u);
    }
    ASSERT_EQ(c.neighbours.size(), 4u);
    std::vector<std::string> ips;
    for (auto &n : c.neighbours) ips.push_back(n.ip.str() + "@" + n.port);
    EXPECT_EQ(ips, (std::vector<std::string>{"10.0.1.2@p0", "10.0.2.2@p1", "fd00:1::2@p0",
                                             "fd00:2::2@p1"}));
}

TEST(ConfigExamples, PcapGoldenUsesPcapPorts) {
    Config c = load_config_file(kExamples + "pcap-golden.yaml");
    for (auto &p : c.ports) EXPECT_EQ(p.device.rfind("net_pcap", 0), 0u) << p.device;
}

TEST(ConfigExamples, RingPortsUsesRingPorts) {
    Config c = load_config_file(kExamples + "ring-ports.yaml");
    for (auto &p : c.ports) EXPECT_EQ(p.device.rfind("net_ring", 0), 0u) << p.device;
}

TEST(ConfigExamples, FullReferenceSetsEveryField) {
    Config c = load_config_file(kExamples + "full-reference.yaml");
    EXPECT_FALSE(c.sw.cpus.empty());
    EXPECT_FALSE(c.sw.eal_args.empty());
    EXPECT_FALSE(c.routes.empty());
    EXPECT_FALSE(c.neighbours.empty());
}

}  // namespace
}  // namespace rocesw

// ---- control_plane (doc/control-plane.md) ----

namespace rocesw {
namespace {

Config load_tail(const std::string &tail) { return load_config_string(yaml({.tail = tail}), "t.yaml"); }

TEST(ControlPlaneConfig, DefaultsToTheEmbeddedControlPlane) {
    Config c = load_tail("");
    EXPECT_FALSE(c.control_plane.host_interfaces);
    EXPECT_FALSE(c.control_plane.netlink);
    EXPECT_EQ(c.control_plane.punt_pps[size_t(PuntClass::arp)], 600u);
    EXPECT_EQ(c.control_plane.punt_pps[size_t(PuntClass::bgp)], 2000u);
    EXPECT_EQ(c.control_plane.punt_queue, 1024u);
    EXPECT_FALSE(c.control_plane.allow_route_learn);  // mutating: off unless said (security.md)
    EXPECT_FALSE(c.control_plane.allow_port_link);
    EXPECT_FALSE(c.lb.allow_policy_change);
}

TEST(ControlPlaneConfig, MutatingCommandGates) {
    Config c =
        load_tail("control_plane: {allow_route_learn: true, allow_port_link: true}\n"
                  "lb: {allow_policy_change: true}\n");
    EXPECT_TRUE(c.control_plane.allow_route_learn);
    EXPECT_TRUE(c.control_plane.allow_port_link);
    EXPECT_TRUE(c.lb.allow_policy_change);
    EXPECT_EQ(error_of(yaml({.tail = "control_plane: {allow_route_learn: maybe}\n"}))
                  .rfind("t.yaml: control_plane.allow_route_learn: ", 0),
              0u);
    EXPECT_EQ(error_of(yaml({.tail = "control_plane: {allow_port_link: 2}\n"}))
                  .rfind("t.yaml: control_plane.allow_port_link: ", 0),
              0u);
}

TEST(ControlPlaneConfig, HostInterfacesTurnNetlinkOnUnlessSaidOtherwise) {
    Config c = load_tail("control_plane:\n  host_interfaces: true\n  punt_pps: {arp: 0, ttl: 50}\n");
    EXPECT_TRUE(c.control_plane.netlink);
    EXPECT_EQ(c.control_plane.punt_pps[size_t(PuntClass::arp)], 0u);
    EXPECT_EQ(c.control_plane.punt_pps[size_t(PuntClass::ttl)], 50u);
    EXPECT_EQ(c.control_plane.punt_pps[size_t(PuntClass::icmp)], 600u);  // untouched
    c = load_tail("control_plane: {host_interfaces: true, netlink: false}\n");
    EXPECT_FALSE(c.control_plane.netlink);
    EXPECT_EQ(c.control_plane.max_learned_routes, 65536u);
    c = load_tail("control_plane: {max_learned_routes: 1000000}\n");
    EXPECT_EQ(c.control_plane.max_learned_routes, 1000000u);
}

TEST(ControlPlaneConfig, RejectsBadValuesNamingTheField) {
    EXPECT_CONFIG_ERROR(yaml({.tail = "control_plane: {netlink: true}\n"}),
                        "t.yaml: control_plane.netlink: needs host_interfaces: true (routes are "
                        "learned through the ports' host interfaces)");
    EXPECT_CONFIG_ERROR(yaml({.tail = "control_plane: {punt_pps: {bfd: 10}}\n"}),
                        "t.yaml: control_plane.punt_pps.bfd: unknown punt class (arp, nd, icmp, "
                        "bgp, l4, lldp, ttl, unreachable, mtu, glean, other)");
    EXPECT_CONFIG_ERROR(yaml({.tail = "control_plane: {punt_queue: 1000}\n"}),
                        "t.yaml: control_plane.punt_queue: 1000 is not a power of two");
    EXPECT_NE(error_of(yaml({.tail = "control_plane: {max_learned_routes: 16777217}\n"}))
                  .find("control_plane.max_learned_routes"),
              std::string::npos);
    EXPECT_NE(error_of(yaml({.tail = "control_plane: {punt_pps: {arp: 2000000}}\n"})).find(
                  "control_plane.punt_pps.arp"),
              std::string::npos);
    EXPECT_NE(error_of(yaml({.tail = "control_plane: {punt_pps: [1, 2]}\n"})).find(
                  "control_plane.punt_pps"),
              std::string::npos);
    EXPECT_NE(error_of(yaml({.tail = "control_plane: {hostif: true}\n"})).find("hostif"),
              std::string::npos);
}

// ---- af_xdp ports (doc/ports.md) ----

std::string af_xdp_yaml(const std::string &p0, const std::string &sw = "") {
    return without(yaml({.sw = sw, .p0 = p0}), "    device: net_tap0,iface=sw1p0\n");
}

TEST(ConfigLoader, DerivesTheNetAfXdpDeviceFromAnAfXdpSection) {
    Config c = load_config_string(af_xdp_yaml("af_xdp: {interface: eth1}"), "t.yaml");
    ASSERT_TRUE(c.ports[0].af_xdp);
    EXPECT_EQ(c.ports[0].af_xdp->mode, AfXdpMode::dedicated);
    EXPECT_EQ(c.ports[0].device,
              "net_af_xdp0,iface=eth1,queue_count=1,busy_budget=64,force_copy=1");
    EXPECT_FALSE(c.ports[1].af_xdp);
}

TEST(ConfigLoader, ReadsEveryAfXdpField) {
    Config c = load_config_string(
        af_xdp_yaml("af_xdp: {interface: eth1, mode: shared, queue_count: 2, zero_copy: true, "
                    "busy_budget: 0}",
                    "mbufs: 32768"),
        "t.yaml");
    const AfXdpConfig &ax = *c.ports[0].af_xdp;
    EXPECT_EQ(ax.interface, "eth1");
    EXPECT_EQ(ax.mode, AfXdpMode::shared);
    EXPECT_EQ(ax.queue_count, 2u);
    EXPECT_TRUE(ax.zero_copy);
    EXPECT_EQ(ax.busy_budget, 0u);
    EXPECT_EQ(ax.xdp_mode, XdpAttach::automatic);
    EXPECT_EQ(c.ports[0].device, "net_af_xdp0,iface=eth1,queue_count=2,busy_budget=0");
}

TEST(ConfigLoader, ReadsTheXdpAttachMode) {
    for (auto [text, want] : {std::pair{"auto", XdpAttach::automatic},
                              std::pair{"native", XdpAttach::native},
                              std::pair{"generic", XdpAttach::generic}}) {
        Config c = load_config_string(
            af_xdp_yaml(std::string("af_xdp: {interface: eth1, xdp_mode: ") + text + "}"),
            "t.yaml");
        EXPECT_EQ(c.ports[0].af_xdp->xdp_mode, want) << text;
        // The device string is the same: DPDK 22.11's PMD has no attach-mode argument.
        EXPECT_EQ(c.ports[0].device,
                  "net_af_xdp0,iface=eth1,queue_count=1,busy_budget=64,force_copy=1");
    }
}

TEST(ConfigLoader, RejectsUnknownXdpAttachMode) {
    EXPECT_CONFIG_ERROR(af_xdp_yaml("af_xdp: {interface: eth1, xdp_mode: skb}"),
                        "t.yaml: ports[0].af_xdp.xdp_mode: 'skb' is not one of auto, native, "
                        "generic");
}

TEST(ConfigLoader, RejectsGenericXdpWithZeroCopy) {
    EXPECT_CONFIG_ERROR(
        af_xdp_yaml("af_xdp: {interface: eth1, zero_copy: true, xdp_mode: generic}"),
        "t.yaml: ports[0].af_xdp.xdp_mode: generic XDP copies every frame into the socket: it "
        "does not go with zero_copy (use copy, or xdp_mode native)");
}

TEST(ConfigLoader, RejectsDeviceAndAfXdpTogether) {
    EXPECT_CONFIG_ERROR(yaml({.p0 = "af_xdp: {interface: eth1}"}),
                        "t.yaml: ports[0].device: give either device or af_xdp, not both "
                        "(af_xdp derives the net_af_xdp device)");
}

TEST(ConfigLoader, RejectsAfXdpWithoutInterface) {
    EXPECT_CONFIG_ERROR(af_xdp_yaml("af_xdp: {mode: shared}"),
                        "t.yaml: ports[0].af_xdp.interface: required field missing");
}

TEST(ConfigLoader, RejectsUnknownAfXdpMode) {
    EXPECT_CONFIG_ERROR(af_xdp_yaml("af_xdp: {interface: eth1, mode: half}"),
                        "t.yaml: ports[0].af_xdp.mode: 'half' is not one of dedicated, shared");
}

TEST(ConfigLoader, RejectsAfXdpQueueCountOutOfRange) {
    EXPECT_CONFIG_ERROR(af_xdp_yaml("af_xdp: {interface: eth1, queue_count: 65}"),
                        "t.yaml: ports[0].af_xdp.queue_count: 65 is out of range 1..64");
}

TEST(ConfigLoader, RejectsTooFewMbufsForTheAfXdpRings) {
    EXPECT_CONFIG_ERROR(
        af_xdp_yaml("af_xdp: {interface: eth1}", "mbufs: 4096"),
        "t.yaml: switch.mbufs: 4096 is too few for the AF_XDP ports: each queue pins 4096 mbufs "
        "in its fill and completion rings plus rx_desc + tx_desc, and RX stops when the pool "
        "runs dry; need >= 7168");
}

}  // namespace
}  // namespace rocesw
