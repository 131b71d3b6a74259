// Named DCQCN parameter sets, each a faithful reading of one reference (sources and the reading
// of every value: doc/dcqcn.md):
//   paper           Zhu et al., SIGCOMM 2015 (rocehost's defaults: DcqcnParams{}).
//   hpcc-ns3        HPCC's ns-3 model (alibaba-edu/High-Precision-Congestion-Control), run.py
//                   --cc dcqcn: alpha 1 us, check grid 4 us, T 300 us, F 1, timer only.
//   hpcc-ns3-paper  the same model with run.py --cc dcqcn_paper: alpha 50 us, grid 50 us, T 55 us.
//   nvidia          NVIDIA ConnectX documented defaults (mlx5 roce_rp / roce_np parameters).
// The hpcc-ns3 sets scale R_AI and R_HAI by line rate / 25G as run.py does.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "roce/dcqcn.h"

namespace rocesw::roce {

std::optional<DcqcnParams> dcqcn_profile(std::string_view name);
std::span<const std::string_view> dcqcn_profile_names();

// Sets the rule switch `key` (alpha_update, cut_timing, target_reset, increase_rule, rounding)
// from its name in a config file. Returns nullptr on success, otherwise the accepted values
// (for the error message), or "" when `key` is not a rule switch.
const char *set_dcqcn_rule(DcqcnParams &p, std::string_view key, std::string_view value);
std::span<const std::string_view> dcqcn_rule_keys();

}  // namespace rocesw::roce
