// The one error every loader of ours throws (switch config, QoS profile, rocehost config).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace rocesw {

// Thrown only at load time (never on the data path). what() is the full message,
// "<file>:<line>: <field>: <problem>", e.g. "sw.yaml:12: ports[1].mtu: 70000 is out of range
// 68..9600", or "<file>: <field>: <problem>" when the problem has no single line (a missing
// field, a conflict between two). The parts are kept too: `line` is the 1-based line of the
// offending value (0: none), `field` its path.
struct ConfigError : std::runtime_error {
    using std::runtime_error::runtime_error;
    ConfigError(std::string file_, uint32_t line_, std::string field_, const std::string &what)
        : std::runtime_error(what), file(std::move(file_)), line(line_), field(std::move(field_)) {}
    std::string file;
    uint32_t line = 0;
    std::string field;
};

}  // namespace rocesw
