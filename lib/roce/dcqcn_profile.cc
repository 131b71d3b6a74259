#include "roce/dcqcn_profile.h"

#include <array>

namespace rocesw::roce {

namespace {

constexpr std::array<std::string_view, 4> kProfiles = {"paper", "hpcc-ns3", "hpcc-ns3-paper",
                                                       "nvidia"};
constexpr std::array<std::string_view, 5> kRuleKeys = {"alpha_update", "cut_timing", "target_reset",
                                                       "increase_rule", "rounding"};

// run.py writes CC_MODE 1 (rdma-hw.cc's "Mellanox version"), CLAMP_TARGET_RATE 0,
// FAST_RECOVERY_TIMES 1, MIN_RATE 1000Mb/s, EWMA_GAIN 0.00390625, RATE_AI 5 x bw/25 Mb/s and
// RATE_HAI 50 x bw/25 Mb/s; RateOnFirstCnp keeps its default 1.0 (no change on the first CNP).
// An ACK carries a CNP for each CE-marked packet: no NP interval.
DcqcnParams hpcc_ns3(uint64_t alpha_us, uint64_t check_us, uint64_t timer_us) {
    DcqcnParams p;
    p.g = 1.0 / 256;
    p.initial_alpha = 1.0;
    p.alpha_timer_ns = alpha_us * 1000;
    p.rate_increase_timer_ns = timer_us * 1000;
    p.byte_counter_bytes = 0;
    p.fast_recovery_steps = 1;
    p.rate_ai_bps = 5'000'000;
    p.rate_hai_bps = 50'000'000;
    p.min_rate_bps = 1'000'000'000;
    p.min_dec_factor = 0.5;  // never binds: alpha <= 1
    p.rate_reduce_period_ns = check_us * 1000;
    p.cnp_interval_ns = 0;
    p.alpha_update = AlphaUpdate::periodic;
    p.cut_timing = CutTiming::check_grid;
    p.check_grid_phase_ns = 1;  // rdma-hw.cc delays the grid 1 ns to follow the alpha tick
    p.target_reset = TargetReset::after_timer_increase;
    p.increase_rule = IncreaseRule::hpcc_ns3;
    p.rounding = RateRounding::truncate;
    p.scale_to_link = true;
    p.reference_rate_bps = 25'000'000'000;
    return p;
}

DcqcnParams nvidia() {
    DcqcnParams p;
    p.g = 5.0 / 1024;                    // dce_tcp_g 1019: alpha keeps 1019/1024 per period
    p.initial_alpha = 1023.0 / 1024;     // initial_alpha_value 1023
    p.alpha_timer_ns = 1'000;            // dce_tcp_rtt 1 us
    p.rate_increase_timer_ns = 300'000;  // rpg_time_reset 300 us
    p.byte_counter_bytes = 32'767;       // rpg_byte_reset
    p.fast_recovery_steps = 1;           // rpg_threshold
    p.rate_ai_bps = 5'000'000;           // rpg_ai_rate 5 Mb/s
    p.rate_hai_bps = 50'000'000;         // rpg_hai_rate 50 Mb/s
    p.min_rate_bps = 1'000'000;          // rpg_min_rate 1 Mb/s
    p.min_dec_factor = 0.5;              // rpg_min_dec_fac 50 %
    p.rate_reduce_period_ns = 4'000;     // rate_reduce_monitor_period 4 us
    p.cnp_interval_ns = 2'000;           // min_time_between_cnps (device listing, see the doc)
    p.alpha_update = AlphaUpdate::periodic;
    p.cut_timing = CutTiming::check_grid;
    p.check_grid_phase_ns = 0;
    p.target_reset = TargetReset::after_timer_increase;  // clamp_tgt_rate 0,
                                                         // clamp_tgt_rate_after_time_inc 1
    p.increase_rule = IncreaseRule::qcn;
    p.rounding = RateRounding::nearest;
    p.scale_to_link = false;  // the firmware defaults are the same at every link speed
    p.reference_rate_bps = 25'000'000'000;
    return p;
}

}  // namespace

std::optional<DcqcnParams> dcqcn_profile(std::string_view name) {
    if (name == "paper") return DcqcnParams{};
    if (name == "hpcc-ns3") return hpcc_ns3(1, 4, 300);
    if (name == "hpcc-ns3-paper") return hpcc_ns3(50, 50, 55);
    if (name == "nvidia") return nvidia();
    return std::nullopt;
}

std::span<const std::string_view> dcqcn_profile_names() {
    return kProfiles;
}
std::span<const std::string_view> dcqcn_rule_keys() {
    return kRuleKeys;
}

const char *set_dcqcn_rule(DcqcnParams &p, std::string_view key, std::string_view v) {
    if (key == "alpha_update") {
        if (v == "on_cut") return p.alpha_update = AlphaUpdate::on_cut, nullptr;
        if (v == "periodic") return p.alpha_update = AlphaUpdate::periodic, nullptr;
        return "on_cut, periodic";
    }
    if (key == "cut_timing") {
        if (v == "on_cnp") return p.cut_timing = CutTiming::on_cnp, nullptr;
        if (v == "check_grid") return p.cut_timing = CutTiming::check_grid, nullptr;
        return "on_cnp, check_grid";
    }
    if (key == "target_reset") {
        if (v == "every_cut") return p.target_reset = TargetReset::every_cut, nullptr;
        if (v == "after_timer_increase")
            return p.target_reset = TargetReset::after_timer_increase, nullptr;
        return "every_cut, after_timer_increase";
    }
    if (key == "increase_rule") {
        if (v == "qcn") return p.increase_rule = IncreaseRule::qcn, nullptr;
        if (v == "hpcc_ns3") return p.increase_rule = IncreaseRule::hpcc_ns3, nullptr;
        return "qcn, hpcc_ns3";
    }
    if (key == "rounding") {
        if (v == "nearest") return p.rounding = RateRounding::nearest, nullptr;
        if (v == "truncate") return p.rounding = RateRounding::truncate, nullptr;
        return "nearest, truncate";
    }
    return "";
}

}  // namespace rocesw::roce
