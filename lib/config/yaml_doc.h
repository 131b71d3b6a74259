// Loading one YAML document safely, shared by every loader of ours (switch config, QoS).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

namespace rocesw {

// Parses `text` as exactly one YAML document (a null node for an empty text). Throws
// ConfigError "<source>: line L, column C: <problem>" on a syntax error and "<source>: expected
// one YAML document, found 2 or more" for a stream of several. Unlike YAML::LoadAll it cannot
// loop forever: yaml-cpp 0.7's LoadAll allocates without bound on input its parser cannot
// advance past (a lone ",", yaml-cpp issue 1040, found by test/fuzz).
YAML::Node load_yaml_document(const std::string &text, const std::string &source);

// How an error message names a value: 'text', a list, a map, or an empty value.
std::string describe(const YAML::Node &n);

// Field paths in error messages: at("ports[1]", "mtu") == "ports[1].mtu", at("ports", 1) ==
// "ports[1]", at("", "switch") == "switch".
inline std::string at(const std::string &path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
}
inline std::string at(const std::string &path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

// The whole text of a config file. Throws ConfigError "<path>: is a directory",
// "<path>: cannot open file" or "<path>: cannot read file".
std::string read_config_file(const std::string &path);

}  // namespace rocesw
