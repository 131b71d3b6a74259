// The `telemetry:` config section: defaults, every field, and the exact error messages.
#include <gtest/gtest.h>

#include <string>

#include "config/config.h"
#include "config_message.h"

namespace rocesw {
namespace {

std::string yaml(const std::string &telemetry) {
    return "switch: {name: sw1}\n"
           "ports:\n"
           "  - {name: p0, device: net_null0, mac: \"02:00:00:00:01:01\"}\n" +
           telemetry;
}

std::string error_of(const std::string &telemetry) {
    try {
        load_config_string(yaml(telemetry), "sw.yaml");
    } catch (const ConfigError &e) {
        return test::without_line(e, "sw.yaml");
    }
    return "(no error)";
}

TEST(TelemetryConfig, DefaultsServeLoopbackWithoutClearOrTrace) {
    Config c = load_config_string(yaml(""), "sw.yaml");
    EXPECT_TRUE(c.telemetry.prometheus);
    EXPECT_EQ(c.telemetry.prometheus_listen, "127.0.0.1:9417");
    EXPECT_FALSE(c.telemetry.allow_clear);
    EXPECT_EQ(c.telemetry.trace_file, "");
    EXPECT_EQ(c.telemetry.trace_interval_ms, 100u);
    EXPECT_FALSE(c.telemetry.latency);
}

TEST(TelemetryConfig, LatencyIsABoolean) {
    EXPECT_TRUE(load_config_string(yaml("telemetry: {latency: true}\n"), "sw.yaml").telemetry.latency);
    EXPECT_FALSE(
        load_config_string(yaml("telemetry: {latency: false}\n"), "sw.yaml").telemetry.latency);
    EXPECT_EQ(error_of("telemetry: {latency: yes}\n"),
              "sw.yaml: telemetry.latency: expected true or false, got 'yes'");
    EXPECT_EQ(error_of("telemetry: {latency: 1}\n"),
              "sw.yaml: telemetry.latency: expected true or false, got '1'");
    EXPECT_EQ(error_of("telemetry: {latency: {enabled: true}}\n"),
              "sw.yaml: telemetry.latency: expected true or false, got a map");
}

TEST(TelemetryConfig, ReadsEveryField) {
    Config c = load_config_string(yaml("telemetry:\n"
                                       "  prometheus: {enabled: false, listen: \"[::1]:9500\"}\n"
                                       "  allow_clear: true\n"
                                       "  trace: {file: /tmp/t.csv, interval_ms: 5}\n"),
                                  "sw.yaml");
    EXPECT_FALSE(c.telemetry.prometheus);
    EXPECT_EQ(c.telemetry.prometheus_listen, "[::1]:9500");
    EXPECT_TRUE(c.telemetry.allow_clear);
    EXPECT_EQ(c.telemetry.trace_file, "/tmp/t.csv");
    EXPECT_EQ(c.telemetry.trace_interval_ms, 5u);
}

TEST(TelemetryConfig, AcceptsPortZeroForAnyFreePort) {
    Config c = load_config_string(yaml("telemetry: {prometheus: {listen: \"0.0.0.0:0\"}}\n"));
    EXPECT_EQ(c.telemetry.prometheus_listen, "0.0.0.0:0");
}

TEST(TelemetryConfig, RejectsBadListenAddresses) {
    const std::string msg = "sw.yaml: telemetry.prometheus.listen: '";
    const std::string tail =
        "' is not an address:port (e.g. 127.0.0.1:9417, [::1]:9417; port 0..65535)";
    for (const char *bad : {"localhost:9417", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
                            "127.0.0.1:94x7", "::1:9417", "[10.0.0.1]:9417", "1.2.3:80"})
        EXPECT_EQ(error_of(std::string("telemetry: {prometheus: {listen: \"") + bad + "\"}}\n"),
                  msg + bad + tail)
            << bad;
}

TEST(TelemetryConfig, RejectsRelativeTraceFileAndBadInterval) {
    EXPECT_EQ(error_of("telemetry: {trace: {file: trace.csv}}\n"),
              "sw.yaml: telemetry.trace.file: 'trace.csv' is not an absolute path");
    EXPECT_EQ(error_of("telemetry: {trace: {file: /tmp/t.csv, interval_ms: 0}}\n"),
              "sw.yaml: telemetry.trace.interval_ms: 0 is out of range 1..60000");
}

TEST(TelemetryConfig, RejectsUnknownFields) {
    EXPECT_EQ(error_of("telemetry: {prometheus: {port: 9417}}\n"),
              "sw.yaml: telemetry.prometheus: unknown field 'port'");
    EXPECT_EQ(
        error_of("telemetry: {allow_clear: maybe}\n").rfind("sw.yaml: telemetry.allow_clear: ", 0),
        0u);
    EXPECT_EQ(error_of("telemetry: {export: yes}\n"), "sw.yaml: telemetry: unknown field 'export'");
}

}  // namespace
}  // namespace rocesw
