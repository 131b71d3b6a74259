#include "roce/host_config_yaml.h"

#include "common/strings.h"
#include "roce/dcqcn_profile.h"

namespace rocesw::roce {

namespace {

uint64_t rate_bps(const YamlReader &r, const YAML::Node &n, const std::string &path) {
    return r.rate_mbps(n, path, 1, 800000) * 1'000'000;
}
uint64_t us_as_ns(const YamlReader &r, const YAML::Node &n, const std::string &path,
                  uint64_t lo, uint64_t hi) {
    return r.duration(n, path, TimeUnit::us, lo, hi) * 1000;
}
uint8_t priority(const YamlReader &r, const YAML::Node &n, const std::string &path) {
    return uint8_t(r.integer(n, path, 0, 7));
}

}  // namespace

void read_traffic_section(const YamlReader &r, const YAML::Node &t, const std::string &path,
                          TrafficConfig &T) {
    const std::string w = path + ".";
    r.fields(t, path,
             {"data_dscp", "data_ecn", "data_priority", "cnp_dscp", "cnp_priority", "ack_dscp",
              "ack_priority", "pfc_priorities"});
    if (t["data_dscp"]) T.data_dscp = uint8_t(r.integer(t["data_dscp"], w + "data_dscp", 0, 63));
    if (t["ack_dscp"]) T.ack_dscp = uint8_t(r.integer(t["ack_dscp"], w + "ack_dscp", 0, 63));
    if (t["cnp_dscp"]) T.cnp_dscp = uint8_t(r.integer(t["cnp_dscp"], w + "cnp_dscp", 0, 63));
    if (t["data_priority"]) T.data_priority = priority(r, t["data_priority"], w + "data_priority");
    if (t["cnp_priority"]) T.cnp_priority = priority(r, t["cnp_priority"], w + "cnp_priority");
    if (t["ack_priority"]) T.ack_priority = priority(r, t["ack_priority"], w + "ack_priority");
    if (t["data_ecn"])
        T.data_ecn = r.enumeration<Ecn>(t["data_ecn"], w + "data_ecn",
                                        {{"ect0", Ecn::ect0},
                                         {"ect1", Ecn::ect1},
                                         {"not_ect", Ecn::not_ect}});
    if (auto p = t["pfc_priorities"]) {
        if (!p.IsSequence()) r.fail(p, w + "pfc_priorities", "expected a list of priorities 0..7");
        T.pfc_mask = 0;
        for (size_t i = 0; i < p.size(); i++)
            T.pfc_mask |= uint8_t(
                1 << priority(r, p[i], at(w + "pfc_priorities", i)));
    }
}

void read_dcqcn_section(const YamlReader &r, const YAML::Node &d, const std::string &path,
                        DcqcnParams &D, bool &enabled, std::string &profile) {
    const std::string w = path + ".";
    r.fields(d, path,
             {"enabled", "g", "initial_alpha", "alpha_timer_us", "rate_increase_timer_us",
              "byte_counter", "fast_recovery_steps", "rate_ai", "rate_hai", "min_rate",
              "min_dec_factor", "rate_reduce_period_us", "cnp_interval_us", "profile",
              "alpha_update", "cut_timing", "target_reset", "increase_rule", "rounding",
              "check_grid_phase_ns", "scale_to_link", "reference_rate"});
    if (d["profile"]) {
        const std::string n = r.string(d["profile"], w + "profile");
        auto prof = dcqcn_profile(n);
        if (!prof) {
            r.fail(d["profile"], w + "profile",
                   "'" + n + "' is not one of " + join(dcqcn_profile_names()));
        }
        D = *prof;
        profile = n;
    }
    if (d["enabled"]) enabled = r.boolean(d["enabled"], w + "enabled");
    if (d["g"]) D.g = r.real(d["g"], w + "g", 0, 1);
    if (d["initial_alpha"]) D.initial_alpha = r.real(d["initial_alpha"], w + "initial_alpha", 0, 1);
    if (d["alpha_timer_us"])
        D.alpha_timer_ns = us_as_ns(r, d["alpha_timer_us"], w + "alpha_timer_us", 1, 10'000'000);
    if (d["rate_increase_timer_us"])
        D.rate_increase_timer_ns =
            us_as_ns(r, d["rate_increase_timer_us"], w + "rate_increase_timer_us", 1, 10'000'000);
    if (d["byte_counter"])
        D.byte_counter_bytes =
            r.size_bytes(d["byte_counter"], w + "byte_counter", 0, 1'000'000'000'000);
    if (d["fast_recovery_steps"])
        D.fast_recovery_steps =
            uint32_t(r.integer(d["fast_recovery_steps"], w + "fast_recovery_steps", 0, 1000));
    if (d["rate_ai"]) D.rate_ai_bps = rate_bps(r, d["rate_ai"], w + "rate_ai");
    if (d["rate_hai"]) D.rate_hai_bps = rate_bps(r, d["rate_hai"], w + "rate_hai");
    if (d["min_rate"]) D.min_rate_bps = rate_bps(r, d["min_rate"], w + "min_rate");
    if (d["min_dec_factor"])
        D.min_dec_factor = r.real(d["min_dec_factor"], w + "min_dec_factor", 0, 1);
    if (d["rate_reduce_period_us"])
        D.rate_reduce_period_ns =
            us_as_ns(r, d["rate_reduce_period_us"], w + "rate_reduce_period_us", 0, 1'000'000);
    if (d["cnp_interval_us"])
        D.cnp_interval_ns = us_as_ns(r, d["cnp_interval_us"], w + "cnp_interval_us", 0, 1'000'000);
    for (std::string_view k : dcqcn_rule_keys()) {
        const std::string key(k);
        if (!d[key]) continue;
        const std::string v = r.string(d[key], w + key);
        if (const char *accepted = set_dcqcn_rule(D, key, v))
            r.fail(d[key], w + key, "'" + v + "' is not one of " + accepted);
    }
    if (d["check_grid_phase_ns"])
        D.check_grid_phase_ns =
            r.integer(d["check_grid_phase_ns"], w + "check_grid_phase_ns", 0, 1'000'000);
    if (d["scale_to_link"]) D.scale_to_link = r.boolean(d["scale_to_link"], w + "scale_to_link");
    if (d["reference_rate"])
        D.reference_rate_bps = rate_bps(r, d["reference_rate"], w + "reference_rate");
    if (D.cut_timing == CutTiming::check_grid && !D.rate_reduce_period_ns)
        r.fail(w + "cut_timing", "check_grid needs rate_reduce_period_us > 0");
}

}  // namespace rocesw::roce
