// Reading a Prometheus text exposition back in the pipeline tests: "name{labels}" -> value.
#pragma once

#include <map>
#include <sstream>
#include <string>

namespace rocesw::test {

inline std::map<std::string, double> parse_exposition(const std::string &text) {
    std::map<std::string, double> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        size_t sp = line.rfind(' ');
        out[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
    }
    return out;
}

}  // namespace rocesw::test
