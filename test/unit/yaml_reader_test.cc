// The one YAML reader every loader uses (switch config, QoS profile, rocehost config): the rule
// set of doc/config.md "How values are read", and errors that name file, line and field.
#include "config/yaml_doc.h"

#include <gtest/gtest.h>

#include <string>

namespace rocesw {
namespace {

// The value of `key` in a one-line map, as a loader would see it.
YAML::Node value(const std::string &yaml, const char *key = "v") {
    return load_yaml_document(yaml, "t.yaml")[key];
}

template <typename Fn>
ConfigError error_of(Fn fn) {
    try {
        fn();
    } catch (const ConfigError &e) {
        return e;
    }
    return ConfigError("(no error)");
}

const YamlReader r("t.yaml");

TEST(YamlReader, ReadsQuotedAndPlainIntegersAlike) {
    EXPECT_EQ(r.integer(value("v: 32"), "v", 0, 100), 32u);
    EXPECT_EQ(r.integer(value("v: \"32\""), "v", 0, 100), 32u);
    EXPECT_EQ(r.integer(value("v: '32'"), "v", 0, 100), 32u);
    EXPECT_EQ(r.signed_integer(value("v: \"-3\""), "v", -8, 8), -3);
}

TEST(YamlReader, RefusesHexOctalAndFractionsForIntegers) {
    for (const char *v : {"0x20", "0o10", "1.5", "1_000", "ten", "\"\""})
        EXPECT_STREQ(error_of([&] { r.integer(value(std::string("v: ") + v), "v", 0, 100); }).what(),
                     (std::string("t.yaml:1: v: expected an integer, got '") +
                      (v[0] == '"' ? "" : v) + "'")
                         .c_str())
            << v;
    // A leading zero is decimal, not octal.
    EXPECT_EQ(r.integer(value("v: 010"), "v", 0, 100), 10u);
}

TEST(YamlReader, ReadsTrueAndFalseQuotedOrNotButNotYesOrOn) {
    EXPECT_TRUE(r.boolean(value("v: true"), "v"));
    EXPECT_TRUE(r.boolean(value("v: \"True\""), "v"));
    EXPECT_FALSE(r.boolean(value("v: FALSE"), "v"));
    for (const char *v : {"yes", "no", "on", "off", "1", "y"})
        EXPECT_STREQ(error_of([&] { r.boolean(value(std::string("v: ") + v), "v"); }).what(),
                     (std::string("t.yaml:1: v: expected true or false, got '") + v + "'").c_str());
}

TEST(YamlReader, ReadsSizesWithDecimalUnits) {
    EXPECT_EQ(r.size_bytes(value("v: 4096"), "v", 0, 1 << 30), 4096u);
    EXPECT_EQ(r.size_bytes(value("v: 64K"), "v", 0, 1 << 30), 64'000u);
    EXPECT_EQ(r.size_bytes(value("v: \"2.5M\""), "v", 0, 1 << 30), 2'500'000u);
    EXPECT_EQ(r.size_bytes(value("v: 1g"), "v", 0, uint64_t(1) << 40), 1'000'000'000u);
    EXPECT_STREQ(error_of([&] { r.size_bytes(value("v: 1.0005K"), "v", 0, 1 << 30); }).what(),
                 "t.yaml:1: v: '1.0005K' is not a size in bytes (e.g. 4096, 64K, 1M)");
    EXPECT_STREQ(error_of([&] { r.size_bytes(value("v: 2M"), "v", 0, 1'000'000); }).what(),
                 "t.yaml:1: v: 2M is out of range 0..1000000");
}

TEST(YamlReader, ReadsRatesInMbpsWithUnits) {
    EXPECT_EQ(r.rate_mbps(value("v: 100G"), "v", 1, 800000), 100'000u);
    EXPECT_EQ(r.rate_mbps(value("v: \"2.5G\""), "v", 1, 800000), 2'500u);
    EXPECT_EQ(r.rate_mbps(value("v: 25000"), "v", 1, 800000), 25'000u);
    EXPECT_STREQ(error_of([&] { r.rate_mbps(value("v: 10Gbps"), "v", 1, 800000); }).what(),
                 "t.yaml:1: v: '10Gbps' is not a rate (e.g. 100G, 2.5G, 25000M, or Mb/s as an "
                 "integer)");
    EXPECT_STREQ(error_of([&] { r.rate_mbps(value("v: 0"), "v", 1, 800000); }).what(),
                 "t.yaml:1: v: 0 is out of range 1..800000 Mb/s");
}

TEST(YamlReader, ReadsDurationsInTheFieldsUnitOrWithTheirOwn) {
    EXPECT_EQ(r.duration(value("v: 50"), "v", TimeUnit::us, 1, 1'000'000), 50u);
    EXPECT_EQ(r.duration(value("v: \"50\""), "v", TimeUnit::us, 1, 1'000'000), 50u);
    EXPECT_EQ(r.duration(value("v: 2ms"), "v", TimeUnit::us, 1, 1'000'000), 2'000u);
    EXPECT_EQ(r.duration(value("v: 1s"), "v", TimeUnit::ms, 1, 60'000), 1'000u);
    EXPECT_EQ(r.duration(value("v: 3000ns"), "v", TimeUnit::us, 1, 1'000'000), 3u);
    EXPECT_STREQ(error_of([&] { r.duration(value("v: 1500us"), "v", TimeUnit::ms, 1, 100); }).what(),
                 "t.yaml:1: v: 1500us is not a whole number of ms");
    EXPECT_STREQ(error_of([&] { r.duration(value("v: 2s"), "v", TimeUnit::ms, 1, 1000); }).what(),
                 "t.yaml:1: v: 2s is out of range 1ms..1000ms");
    // Not a duration: the integer messages.
    EXPECT_STREQ(error_of([&] { r.duration(value("v: 10min"), "v", TimeUnit::ms, 1, 100); }).what(),
                 "t.yaml:1: v: expected an integer, got '10min'");
    EXPECT_STREQ(error_of([&] { r.duration(value("v: 0"), "v", TimeUnit::ms, 1, 100); }).what(),
                 "t.yaml:1: v: 0 is out of range 1..100");
}

TEST(YamlReader, ReadsEnumerationsByExactWord) {
    enum class Mode { a, b };
    EXPECT_EQ(r.enumeration<Mode>(value("v: b"), "v", {{"a", Mode::a}, {"b", Mode::b}}), Mode::b);
    EXPECT_STREQ(
        error_of([&] { r.enumeration<Mode>(value("v: B"), "v", {{"a", Mode::a}, {"b", Mode::b}}); })
            .what(),
        "t.yaml:1: v: 'B' is not one of a, b");
}

TEST(YamlReader, ErrorsNameFileLineAndField) {
    YAML::Node root = load_yaml_document("switch:\n  name: x\n  burst: 0x20\n", "sw.yaml");
    YamlReader rd("sw.yaml");
    Fields f = rd.fields(root["switch"], "switch", {"name", "burst"});
    ConfigError e = error_of([&] { rd.integer(*f.find("burst"), "switch.burst", 1, 256); });
    EXPECT_STREQ(e.what(), "sw.yaml:3: switch.burst: expected an integer, got '0x20'");
    EXPECT_EQ(e.file, "sw.yaml");
    EXPECT_EQ(e.line, 3u);
    EXPECT_EQ(e.field, "switch.burst");

    e = error_of([&] { rd.fields(root["switch"], "switch", {"name"}); });
    EXPECT_STREQ(e.what(), "sw.yaml:3: switch: unknown field 'burst'");
    EXPECT_EQ(e.line, 3u);

    e = error_of([&] { rd.require(f, "switch", "mtu"); });
    EXPECT_STREQ(e.what(), "sw.yaml: switch.mtu: required field missing");
    EXPECT_EQ(e.line, 0u);  // a missing field has no line of its own
}

TEST(YamlReader, ErrorsFromATextFileNameItsLine) {
    YamlReader rd("sw.yaml");
    const std::string file = "big.routes";
    rd.set_text_origin(&file, 7);
    ConfigError e = error_of([&] { rd.integer("x", "weight", 1, 10); });
    EXPECT_STREQ(e.what(), "big.routes:7: weight: expected an integer, got 'x'");
    EXPECT_EQ(e.file, "big.routes");
    EXPECT_EQ(e.line, 7u);
}

}  // namespace
}  // namespace rocesw
