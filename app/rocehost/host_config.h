// rocehost configuration: the emulated hosts (one DPDK port each), the remote peers, the
// traffic classes, DCQCN parameters and the workload. Loaded from YAML and validated in full;
// errors read "<file>: <field>: <problem>". See doc/rocehost.md for every field.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"  // ConfigError
#include "roce/host_config.h"

namespace rocesw::rocehost {

// The data types live in lib/roce (roce/host_config.h) so that the emulated hosts and the
// simulator share them; the names stay available here.
using roce::HostConfig;
using roce::HostRunConfig;
using roce::RunConfig;
using roce::TrafficConfig;
using roce::WorkloadConfig;

HostRunConfig load_host_config_file(const std::string &path);
HostRunConfig load_host_config_string(const std::string &yaml, const std::string &source,
                                      const std::string &base_dir = ".");

}  // namespace rocesw::rocehost
