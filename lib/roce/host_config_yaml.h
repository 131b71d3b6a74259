// The `traffic` and `dcqcn` sections of a host configuration, read by the one YAML reader
// (config/yaml_doc.h). rocehost's config file (app/rocehost/host_config.cc) and rocesim's
// scenario (`hosts:`, lib/sim/scenario.cc) both call these, so the two accept the same fields by
// the same rules; doc/rocehost.md lists the fields. Errors are ConfigError naming
// "<file>:<line>: <path>.<field>: <problem>".
#pragma once

#include <string>

#include "config/yaml_doc.h"
#include "roce/dcqcn.h"
#include "roce/host_config.h"

namespace rocesw::roce {

// `path`: the section's field path in messages ("traffic", "hosts.traffic").
void read_traffic_section(const YamlReader &r, const YAML::Node &t, const std::string &path,
                          TrafficConfig &out);

// A named profile (roce/dcqcn_profile.h) first, then every other field overrides it.
// `enabled` gets `enabled:`; `profile` the profile's name when one is given.
void read_dcqcn_section(const YamlReader &r, const YAML::Node &d, const std::string &path,
                        DcqcnParams &out, bool &enabled, std::string &profile);

}  // namespace rocesw::roce
