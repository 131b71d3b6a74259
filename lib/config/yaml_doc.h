// The YAML reader shared by every loader of ours (switch config, QoS profile, rocehost config):
// one document loaded safely, then fields and typed values read by one rule set
// (doc/config.md, "How values are read"):
//   - integers are decimal, with an optional sign; quoted or not ("32" reads as 32: SONiC
//     profiles quote every value). No hex, octal, fractions or separators: 0x20, 010 and 1_000
//     are refused, so a value means what it looks like.
//   - booleans are true/True/TRUE and false/False/FALSE, quoted or not. yes/no/on/off are
//     refused (YAML 1.2; `no` is not a country code here).
//   - sizes are bytes: an integer, or a decimal with K, M or G (powers of 1000): 64K, 2.5M.
//   - rates: a decimal with M or G (Mb/s, Gb/s), or an integer in Mb/s: 100G, 2.5G, 25000.
//   - durations: fields carry their unit in the name (_ns, _us, _ms); a bare integer is in that
//     unit, or an integer with ns, us, ms or s: 50us, 10ms. The value must be whole in the
//     field's unit.
//   - enumerations: one of the listed words, exactly.
// Every error is a ConfigError "<source>: <field path>: <problem>" with the line of the value.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config_error.h"

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

// "<digits>[.<digits>]" times `unit`, when the result is a whole number: ("2.5", 1000) is
// 2500, ("2.0005", 1000) is nullopt. At most 12 digits before the point and 9 after, so no
// step overflows with a unit up to 10^6.
std::optional<uint64_t> parse_decimal_times(std::string_view s, uint64_t unit);

// A rate in Mb/s: "<digits>[.<digits>][M|G]", the unit case-insensitive, no unit meaning Mb/s
// ("100G", "25000M", "10g", "25000"); a fraction only where the result is whole ("2.5G" yes,
// "2.5M" no). nullopt on bad syntax.
std::optional<uint64_t> parse_speed_mbps(const std::string &s);

// The fields of one YAML map, in file order.
struct Field {
    std::string key;
    YAML::Node value;
};
struct Fields {
    std::vector<Field> entries;
    const YAML::Node *find(std::string_view key) const {
        for (auto &e : entries)
            if (e.key == key) return &e.value;
        return nullptr;
    }
    auto begin() const { return entries.begin(); }
    auto end() const { return entries.end(); }
};

enum class TimeUnit : uint64_t { ns = 1, us = 1'000, ms = 1'000'000, s = 1'000'000'000 };

// Reads the values of one document by the rules above. A loader keeps one (or derives from it)
// and names every value by its path; the first failure throws.
class YamlReader {
  public:
    explicit YamlReader(std::string source) : source_(std::move(source)) {}
    const std::string &source() const { return source_; }

    // "<source>: <path>: <problem>" (no "<path>: " when path is empty). With a node, the error
    // carries the node's line.
    [[noreturn]] void fail(const std::string &path, const std::string &problem) const;
    [[noreturn]] void fail(const YAML::Node &n, const std::string &path,
                           const std::string &problem) const;

    // While set, errors come from line `line` of the text file `file` (a route file):
    // "<file>:<line>: <path>: <problem>". `file` must outlive the setting.
    void set_text_origin(const std::string *file, uint32_t line) {
        text_file_ = file;
        text_line_ = line;
    }

    // The entries of a map (an empty value is an empty map); a non-scalar or repeated key is
    // an error. `what` names the keys in messages ("field", "table").
    Fields entries(const YAML::Node &n, const std::string &path,
                   std::string_view what = "field") const;
    // The entries, each of which must be one of `allowed` ("unknown field 'x'").
    Fields fields(const YAML::Node &n, const std::string &path,
                  std::initializer_list<std::string_view> allowed) const;
    const YAML::Node &require(const Fields &f, const std::string &path,
                              std::string_view key) const;
    // An empty value (`key:` with nothing after it) is an empty list.
    std::vector<YAML::Node> list(const YAML::Node &n, const std::string &path) const;

    std::string string(const YAML::Node &n, const std::string &path) const;
    uint64_t integer(const YAML::Node &n, const std::string &path, uint64_t lo,
                     uint64_t hi) const;
    int64_t signed_integer(const YAML::Node &n, const std::string &path, int64_t lo,
                           int64_t hi) const;
    // The same rules for text that is not a YAML value of its own: a map key, an item of a
    // comma-separated list.
    uint64_t integer(std::string_view s, const std::string &path, uint64_t lo, uint64_t hi) const;
    int64_t signed_integer(std::string_view s, const std::string &path, int64_t lo,
                           int64_t hi) const;
    // A decimal number (fractions and exponents allowed), finite.
    double real(const YAML::Node &n, const std::string &path, double lo, double hi) const;
    bool boolean(const YAML::Node &n, const std::string &path) const;
    uint64_t size_bytes(const YAML::Node &n, const std::string &path, uint64_t lo,
                        uint64_t hi) const;
    // Mb/s. `noun` names the kind of value in the syntax message ("speed", "rate").
    uint64_t rate_mbps(const YAML::Node &n, const std::string &path, uint64_t lo, uint64_t hi,
                       std::string_view noun = "rate") const;
    // In `unit`, the field's own; lo and hi too.
    uint64_t duration(const YAML::Node &n, const std::string &path, TimeUnit unit, uint64_t lo,
                      uint64_t hi) const;
    // One of `choices` by its exact word; "'x' is not one of a, b, c" otherwise.
    template <typename E>
    E enumeration(const YAML::Node &n, const std::string &path,
                  std::initializer_list<std::pair<std::string_view, E>> choices) const {
        const std::string s = string(n, path);
        std::string all;
        for (auto &[word, value] : choices) {
            if (s == word) return value;
            if (!all.empty()) all += ", ";
            all += word;
        }
        fail(n, path, "'" + s + "' is not one of " + all);
    }

  private:
    // A decimal integer's sign and magnitude (`fits`: the magnitude fits 64 bits); anything
    // else fails "expected an integer".
    struct Decimal {
        bool negative;
        bool fits;
        uint64_t magnitude;
    };
    Decimal decimal_at(std::string_view s, const std::string &path, uint32_t line) const;
    uint64_t unsigned_at(std::string_view s, const std::string &path, uint64_t lo, uint64_t hi,
                         uint32_t line) const;
    int64_t signed_at(std::string_view s, const std::string &path, int64_t lo, int64_t hi,
                      uint32_t line) const;
    [[noreturn]] void fail_at(uint32_t line, const std::string &path,
                              const std::string &problem) const;

    std::string source_;
    const std::string *text_file_ = nullptr;
    uint32_t text_line_ = 0;
};

}  // namespace rocesw
