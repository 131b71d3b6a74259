// Named DCQCN profiles (lib/roce/dcqcn_profile.h) and their selection from a rocehost config:
// each profile's values as doc/dcqcn.md cites them, overrides, and old configs unchanged.
#include <gtest/gtest.h>

#include <string>

#include "host_config.h"
#include "roce/dcqcn_profile.h"
#include "config_message.h"

namespace rocesw::roce {
namespace {

TEST(DcqcnProfile, PaperIsTheDefaultParameterSet) {
    auto p = dcqcn_profile("paper");
    ASSERT_TRUE(p);
    const DcqcnParams d;
    EXPECT_EQ(p->g, d.g);
    EXPECT_EQ(p->alpha_timer_ns, 55'000u);
    EXPECT_EQ(p->rate_increase_timer_ns, 55'000u);
    EXPECT_EQ(p->byte_counter_bytes, 10'000'000u);
    EXPECT_EQ(p->fast_recovery_steps, 5u);
    EXPECT_EQ(p->alpha_update, AlphaUpdate::on_cut);
    EXPECT_EQ(p->cut_timing, CutTiming::on_cnp);
    EXPECT_EQ(p->target_reset, TargetReset::every_cut);
    EXPECT_EQ(p->increase_rule, IncreaseRule::qcn);
    EXPECT_FALSE(p->scale_to_link);
}

TEST(DcqcnProfile, HpccNs3IsRunPysDcqcnPreset) {
    auto p = dcqcn_profile("hpcc-ns3");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->g, 0.00390625);
    EXPECT_EQ(p->alpha_timer_ns, 1'000u);
    EXPECT_EQ(p->rate_reduce_period_ns, 4'000u);
    EXPECT_EQ(p->rate_increase_timer_ns, 300'000u);
    EXPECT_EQ(p->fast_recovery_steps, 1u);
    EXPECT_EQ(p->byte_counter_bytes, 0u);
    EXPECT_EQ(p->min_rate_bps, 1'000'000'000u);
    EXPECT_EQ(p->alpha_update, AlphaUpdate::periodic);
    EXPECT_EQ(p->cut_timing, CutTiming::check_grid);
    EXPECT_EQ(p->target_reset, TargetReset::after_timer_increase);
    EXPECT_EQ(p->increase_rule, IncreaseRule::hpcc_ns3);
    EXPECT_EQ(p->rounding, RateRounding::truncate);
    EXPECT_TRUE(p->scale_to_link);
    EXPECT_EQ(p->reference_rate_bps, 25'000'000'000u);
    auto q = dcqcn_profile("hpcc-ns3-paper");
    ASSERT_TRUE(q);
    EXPECT_EQ(q->alpha_timer_ns, 50'000u);
    EXPECT_EQ(q->rate_reduce_period_ns, 50'000u);
    EXPECT_EQ(q->rate_increase_timer_ns, 55'000u);
}

TEST(DcqcnProfile, NvidiaIsTheConnectXDefaults) {
    auto p = dcqcn_profile("nvidia");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->g, 5.0 / 1024);  // dce_tcp_g 1019 = (1 - g) x 1024
    EXPECT_EQ(p->initial_alpha, 1023.0 / 1024);
    EXPECT_EQ(p->alpha_timer_ns, 1'000u);
    EXPECT_EQ(p->rate_reduce_period_ns, 4'000u);
    EXPECT_EQ(p->rate_increase_timer_ns, 300'000u);
    EXPECT_EQ(p->byte_counter_bytes, 32'767u);
    EXPECT_EQ(p->fast_recovery_steps, 1u);
    EXPECT_EQ(p->rate_ai_bps, 5'000'000u);
    EXPECT_EQ(p->rate_hai_bps, 50'000'000u);
    EXPECT_EQ(p->min_rate_bps, 1'000'000u);
    EXPECT_EQ(p->target_reset, TargetReset::after_timer_increase);
    EXPECT_EQ(p->cut_timing, CutTiming::check_grid);
    EXPECT_EQ(p->alpha_update, AlphaUpdate::periodic);
    EXPECT_FALSE(dcqcn_profile("mellanox"));
}

TEST(DcqcnProfile, RuleNamesRoundTrip) {
    DcqcnParams p;
    EXPECT_EQ(set_dcqcn_rule(p, "cut_timing", "check_grid"), nullptr);
    EXPECT_EQ(p.cut_timing, CutTiming::check_grid);
    EXPECT_STREQ(set_dcqcn_rule(p, "rounding", "up"), "nearest, truncate");
    EXPECT_STREQ(set_dcqcn_rule(p, "nonsense", "x"), "");
}

}  // namespace
}  // namespace rocesw::roce

namespace rocesw::rocehost {
namespace {

const std::string kHosts = R"(
hosts:
  - {name: h1, device: "net_ring0", mac: "02:00:00:00:01:02", ip: 10.0.1.2/24, gateway: 10.0.1.1, gateway_mac: "02:00:00:00:01:01", line_rate: 25G}
peers:
  - {name: h2, ip: 10.0.2.2}
)";

std::string error_of(const std::string &yaml) {
    try {
        load_host_config_string(yaml + kHosts, "t.yaml");
    } catch (const ConfigError &e) {
        return test::without_line(e, "t.yaml");
    }
    return "no error";
}

TEST(HostConfigDcqcnProfile, ProfileThenOverrides) {
    auto c = load_host_config_string(
        "dcqcn: {profile: nvidia, rate_ai: 10M, target_reset: every_cut, scale_to_link: true, "
        "reference_rate: 100G}\n" +
            kHosts,
        "t.yaml");
    EXPECT_EQ(c.dcqcn.g, 5.0 / 1024);  // from the profile
    EXPECT_EQ(c.dcqcn.rate_increase_timer_ns, 300'000u);
    EXPECT_EQ(c.dcqcn.rate_ai_bps, 10'000'000u);  // overridden
    EXPECT_EQ(c.dcqcn.target_reset, roce::TargetReset::every_cut);
    EXPECT_TRUE(c.dcqcn.scale_to_link);
    EXPECT_EQ(c.dcqcn.reference_rate_bps, 100'000'000'000u);
    EXPECT_EQ(c.dcqcn.cnp_interval_ns, 2'000u);  // the NP side comes with the profile
}

TEST(HostConfigDcqcnProfile, ConfigWithoutProfileKeepsThePaperRules) {
    auto c = load_host_config_string("dcqcn: {rate_reduce_period_us: 4}\n" + kHosts, "t.yaml");
    EXPECT_EQ(c.dcqcn.cut_timing, roce::CutTiming::on_cnp);
    EXPECT_EQ(c.dcqcn.alpha_update, roce::AlphaUpdate::on_cut);
    EXPECT_EQ(c.dcqcn.rate_reduce_period_ns, 4'000u);
    EXPECT_EQ(c.dcqcn.g, 1.0 / 256);
}

TEST(HostConfigDcqcnProfile, OneClearErrorPerMistake) {
    EXPECT_NE(
        error_of("dcqcn: {profile: mlx}\n")
            .find("dcqcn.profile: 'mlx' is not one of paper, hpcc-ns3, hpcc-ns3-paper, nvidia"),
        std::string::npos);
    EXPECT_NE(error_of("dcqcn: {alpha_update: sometimes}\n")
                  .find("dcqcn.alpha_update: 'sometimes' is not one of on_cut, periodic"),
              std::string::npos);
    EXPECT_NE(error_of("dcqcn: {cut_timing: check_grid}\n")
                  .find("check_grid needs rate_reduce_period_us > 0"),
              std::string::npos);
    EXPECT_EQ(error_of("dcqcn: {profile: hpcc-ns3, rate_reduce_period_us: 8}\n"), "no error");
}

}  // namespace
}  // namespace rocesw::rocehost
