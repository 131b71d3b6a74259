// Helpers shared by the simulator's tests: reading result files, per-test scratch folders,
// summary.json without the lines that measure the machine (wall time, RSS), and the accounting
// identity every run must end with.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/engine.h"

namespace rocesw::sim::test {

inline std::string slurp(const std::string &p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A fresh, empty folder under the temporary directory, unique to this process and `name`.
inline std::string tmpdir(const std::string &prefix, const std::string &name) {
    auto d = std::filesystem::temp_directory_path() /
             (prefix + std::to_string(getpid()) + "_" + name);
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d.string();
}

// summary.json without its wall-time and peak-RSS lines: what must be identical run to run.
inline std::string summary_without_machine(const std::string &dir) {
    std::string out, line;
    std::istringstream in(slurp(dir + "/summary.json"));
    while (std::getline(in, line))
        if (line.find("wall_time_s") == std::string::npos &&
            line.find("peak_rss_kb") == std::string::npos)
            out += line + "\n";
    return out;
}

// Every switch of the run balances its accounting identity exactly (doc/accounting.md): what
// every run must end with. Returns the terms summed over the switches.
inline AccountingPort expect_accounting_balanced(const Engine &e) {
    const Engine::AccountingSummary a = e.accounting();
    EXPECT_GT(a.switches, 0u);
    for (const auto &u : a.unbalanced) ADD_FAILURE() << "accounting: " << u;
    return a.total;
}

}  // namespace rocesw::sim::test
