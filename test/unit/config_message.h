// The message of an error in the YAML text `source` without its line number: "f.yaml:12: x: y"
// -> "f.yaml: x: y" (errors in other files, e.g. route files, keep theirs).
// Most config tests assert the file, field and problem; the line is asserted by tests of its
// own (YamlReader.ErrorsNameFileLineAndField and the route-file tests), so a test's YAML can
// gain a line without rewriting every expected message.
#pragma once

#include <string>

#include "config/config_error.h"

namespace rocesw::test {

inline std::string without_line(const ConfigError &e, const std::string &source) {
    const std::string w = e.what();
    const std::string pre = e.file + ":" + std::to_string(e.line) + ": ";
    if (e.line && e.file == source && w.rfind(pre, 0) == 0) return e.file + ": " + w.substr(pre.size());
    return w;
}

}  // namespace rocesw::test
