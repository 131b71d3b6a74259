// The load-balancing parts of the switch config: multipath routes and the lb section.
#include <gtest/gtest.h>

#include <string>

#include "config/config.h"
#include "lb/policy.h"
#include "config_message.h"

namespace rocesw {
namespace {

const std::string kPorts =
    "ports:\n"
    "  - {name: p0, device: net_null0, mac: '02:00:00:00:01:01', ipv4: [10.0.1.1/24],"
    " ipv6: ['fd00:1::1/64']}\n"
    "  - {name: p1, device: net_null1, mac: '02:00:00:00:02:01', ipv4: [10.0.2.1/24]}\n"
    "  - {name: p2, device: net_null2, mac: '02:00:00:00:03:01', ipv4: [10.0.3.1/24]}\n";

Config load(const std::string &tail) {
    return load_config_string(kPorts + tail, "sw.yaml");
}

// Loading as roceswd does: the file, then lib/lb's check of the policy names it gives.
std::string error_of(const std::string &tail) {
    try {
        check_lb_policy_names(load(tail));
    } catch (const ConfigError &e) {
        return test::without_line(e, "sw.yaml");
    }
    return "";
}

TEST(LbConfig, ViaListMakesAMultipathRouteWithPortsFilledIn) {
    Config c = load("routes:\n  - {prefix: 10.99.0.0/16, via: [10.0.2.2, 10.0.3.2]}\n");
    EXPECT_TRUE(c.routes.empty());
    ASSERT_EQ(c.multipath_routes.size(), 1u);
    const auto &r = c.multipath_routes[0];
    EXPECT_EQ(r.prefix.str(), "10.99.0.0/16");
    ASSERT_EQ(r.paths.size(), 2u);
    EXPECT_EQ(r.paths[0].via.str(), "10.0.2.2");
    EXPECT_EQ(r.paths[0].port, "p1");
    EXPECT_EQ(r.paths[1].port, "p2");
    EXPECT_EQ(r.paths[1].weight, 1u);
    EXPECT_EQ(r.policy, "");
}

TEST(LbConfig, NexthopsCarryWeightsPortsAndAPolicy) {
    Config c = load(
        "routes:\n"
        "  - prefix: 10.99.0.0/16\n"
        "    policy: flowlet\n"
        "    nexthops:\n"
        "      - {via: 10.0.2.2, weight: 3}\n"
        "      - {via: 10.0.3.2, port: p2}\n"
        "  - {prefix: 10.98.0.0/16, via: 10.0.2.2}\n");
    ASSERT_EQ(c.multipath_routes.size(), 1u);
    ASSERT_EQ(c.routes.size(), 1u);
    EXPECT_EQ(c.multipath_routes[0].policy, "flowlet");
    EXPECT_EQ(c.multipath_routes[0].paths[0].weight, 3u);
    EXPECT_EQ(c.multipath_routes[0].paths[1].port, "p2");
}

TEST(LbConfig, APolicyOnASinglePathRouteMakesAOneMemberGroup) {
    Config c = load("routes:\n  - {prefix: 10.99.0.0/16, via: 10.0.2.2, policy: spray}\n");
    ASSERT_EQ(c.multipath_routes.size(), 1u);
    EXPECT_EQ(c.multipath_routes[0].paths.size(), 1u);
    EXPECT_EQ(c.multipath_routes[0].policy, "spray");
}

TEST(LbConfig, LbSectionIsReadWithDefaults) {
    Config d = load("");
    EXPECT_EQ(d.lb.hash_function, FlowHashFn::crc32c);
    EXPECT_EQ(d.lb.default_policy, "hash");
    EXPECT_EQ(load("lb:\n  hash_function: mix64\n").lb.hash_function, FlowHashFn::mix64);
    EXPECT_EQ(load("lb:\n  hash_function: crc32c\n").lb.hash_function, FlowHashFn::crc32c);
    EXPECT_EQ(d.lb.flowlet_gap_us, 50u);
    Config c = load(
        "lb:\n  seed: 12345\n  symmetric: true\n  hash_dest_qp: true\n  default_policy: adaptive\n"
        "  flowlet_gap_us: 200\n  flowlet_age_us: 5000\n  flowlet_entries: 1024\n"
        "  flowlet_chooser: least_loaded\n  util_horizon_us: 20\n  trace_path_changes: true\n");
    EXPECT_EQ(c.lb.seed, 12345u);
    EXPECT_TRUE(c.lb.symmetric);
    EXPECT_TRUE(c.lb.hash_dest_qp);
    EXPECT_EQ(c.lb.default_policy, "adaptive");
    EXPECT_EQ(c.lb.flowlet_gap_us, 200u);
    EXPECT_EQ(c.lb.flowlet_age_us, 5000u);
    EXPECT_EQ(c.lb.flowlet_entries, 1024u);
    EXPECT_EQ(c.lb.flowlet_chooser, "least_loaded");
    EXPECT_EQ(c.lb.util_horizon_us, 20u);
    EXPECT_TRUE(c.lb.trace_path_changes);
}

TEST(LbConfig, ErrorsNameTheField) {
    EXPECT_EQ(error_of("routes:\n  - {prefix: 10.99.0.0/16, via: [10.0.2.2], policy: magic}\n")
                  .rfind("sw.yaml: routes[0].policy: unknown policy 'magic' (hash, flowlet, "
                         "adaptive, spray",
                         0),
              0u);
    EXPECT_EQ(error_of("routes:\n  - {prefix: 10.99.0.0/16, via: [10.0.2.2, 10.0.2.2]}\n"),
              "sw.yaml: routes[0].via[1]: 10.0.2.2 is listed twice");
    EXPECT_EQ(error_of("routes:\n  - {prefix: 10.99.0.0/16, via: []}\n"),
              "sw.yaml: routes[0].via: empty list");
    EXPECT_EQ(error_of("routes:\n  - {prefix: 10.99.0.0/16, via: [10.0.2.2], nexthops: []}\n"),
              "sw.yaml: routes[0]: give either 'via' or 'nexthops', not both");
    EXPECT_EQ(
        error_of("routes:\n  - prefix: 10.99.0.0/16\n    nexthops: [{via: 10.0.2.2, weight: 0}]\n"),
        "sw.yaml: routes[0].nexthops[0].weight: 0 is out of range 1..1000");
    EXPECT_EQ(error_of("routes:\n  - {prefix: 10.99.0.0/16, via: ['fd00:1::2']}\n"),
              "sw.yaml: routes[0].via[0]: fd00:1::2 is IPv6 but the prefix is IPv4");
    // The checks every route form shares (route files: config_test): the family of a
    // nexthops entry and of a single via, a path listed twice, the path limit.
    EXPECT_EQ(error_of("routes:\n  - prefix: 10.99.0.0/16\n    nexthops: [{via: 10.0.2.2}, "
                       "{via: 'fd00:1::2'}]\n"),
              "sw.yaml: routes[0].nexthops[1].via: fd00:1::2 is IPv6 but the prefix is IPv4");
    EXPECT_EQ(error_of("routes:\n  - {prefix: 10.99.0.0/16, via: 'fd00:1::2'}\n"),
              "sw.yaml: routes[0].via: fd00:1::2 is IPv6 but the prefix is IPv4");
    EXPECT_EQ(error_of("routes:\n  - prefix: 10.99.0.0/16\n    nexthops: [{via: 10.0.2.2}, "
                       "{via: 10.0.2.2, weight: 3}]\n"),
              "sw.yaml: routes[0].nexthops[1].via: 10.0.2.2 is listed twice");
    {
        std::string vias;
        for (int i = 0; i <= 32; i++) vias += (i ? ", 10.0.2." : "10.0.2.") + std::to_string(i + 2);
        EXPECT_EQ(error_of("routes:\n  - {prefix: 10.99.0.0/16, via: [" + vias + "]}\n"),
                  "sw.yaml: routes[0].via[32]: more than 32 next hops");
    }
    EXPECT_EQ(error_of("routes:\n  - {prefix: 10.99.0.0/16, via: [10.0.2.2]}\n"
                       "  - {prefix: 10.99.0.0/16, via: 10.0.2.2}\n"),
              "sw.yaml: routes[1].prefix: 10.99.0.0/16 is already routed by routes[0]");
    EXPECT_EQ(error_of("lb:\n  flowlet_entries: 1000\n"),
              "sw.yaml: lb.flowlet_entries: 1000 is not a power of two");
    EXPECT_EQ(error_of("lb:\n  flowlet_gap_us: 500\n  flowlet_age_us: 100\n"),
              "sw.yaml: lb.flowlet_age_us: 100 is shorter than flowlet_gap_us 500");
    EXPECT_EQ(error_of("lb:\n  flowlet_chooser: best\n"),
              "sw.yaml: lb.flowlet_chooser: 'best' is not one of random, least_loaded");
    EXPECT_EQ(error_of("lb:\n  hash_function: crc32\n"),
              "sw.yaml: lb.hash_function: 'crc32' is not one of crc32c, mix64");
    EXPECT_EQ(error_of("lb:\n  colour: red\n"), "sw.yaml: lb: unknown field 'colour'");
}

TEST(LbConfig, AnUnknownPolicyInARouteFileNamesTheFileAndLine) {
    Config c;
    c.lb_policy_refs = {{"hash", "sw.yaml: lb.default_policy"}, {"magic", "big.routes:19: policy"}};
    try {
        check_lb_policy_names(c);
        ADD_FAILURE() << "no error";
    } catch (const ConfigError &e) {
        EXPECT_EQ(std::string(e.what()).rfind("big.routes:19: policy: unknown policy 'magic' (hash, "
                                              "flowlet, adaptive, spray",
                                              0),
                  0u);
    }
}

TEST(LbConfig, ARegisteredPolicyNameIsAccepted) {
    EXPECT_NE(error_of("lb:\n  default_policy: my_policy\n"), "");
    register_lb_policy("my_policy", [](uint16_t) { return make_lb_policy(0, 0); });
    EXPECT_EQ(error_of("lb:\n  default_policy: my_policy\n"), "");
    EXPECT_GE(lb_policy_id("my_policy"), 4);
    EXPECT_THROW(register_lb_policy("hash", nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace rocesw
