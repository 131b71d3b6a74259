// Loading one YAML document safely, shared by every loader of ours (switch config, QoS).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace rocesw {

// Parses `text` as exactly one YAML document (a null node for an empty text). Throws
// ConfigError "<source>: line L, column C: <problem>" on a syntax error and "<source>: expected
// one YAML document, found 2 or more" for a stream of several. Unlike YAML::LoadAll it cannot
// loop forever: yaml-cpp 0.7's LoadAll allocates without bound on input its parser cannot
// advance past (a lone ",", yaml-cpp issue 1040, found by test/fuzz).
YAML::Node load_yaml_document(const std::string &text, const std::string &source);

// The whole text of a config file. Throws ConfigError "<path>: is a directory",
// "<path>: cannot open file" or "<path>: cannot read file".
std::string read_config_file(const std::string &path);

}  // namespace rocesw
