// The one error every loader of ours throws (switch config, QoS profile, rocehost config).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace rocesw {

// Thrown only at load time (never on the data path). what() is the full message,
// "<file>: <field>: <problem>", e.g. "sw.yaml: ports[1].mtu: 70000 is out of range 68..9600"
// ("<file>:<line>: <field>: <problem>" for a line of a route file). The parts are kept too, for
// a caller that wants to point at the line: `line` is the 1-based line of the offending value,
// 0 when the problem has no single line (a missing field, a conflict between two).
struct ConfigError : std::runtime_error {
    using std::runtime_error::runtime_error;
    ConfigError(std::string file_, uint32_t line_, std::string field_, const std::string &what)
        : std::runtime_error(what), file(std::move(file_)), line(line_), field(std::move(field_)) {}
    std::string file;
    uint32_t line = 0;
    std::string field;
};

}  // namespace rocesw
