// rocectl watch: a live, refreshing view of per-port rates, queue depths, ECN marks and drops.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "telemetry/control_client.h"

namespace rocesw {

struct WatchOptions {
    double interval_s = 1.0;         // between frames, 0.05..3600
    long count = 0;                  // frames to print; 0 = until Ctrl-C
    bool json = false;               // one JSON object per frame and line
    bool all_queues = false;         // also queues that never held a packet
    bool clear_screen = false;       // redraw in place (stdout is a terminal)
    std::vector<std::string> ports;  // only these ports; empty = all
};

// One frame's numbers, computed from two samples of "ports" and "queues" (prev may be null:
// the first frame has no rates). Exposed for tests.
nlohmann::json watch_frame(const nlohmann::json &ports, const nlohmann::json &queues,
                           const nlohmann::json *prev_ports, const nlohmann::json *prev_queues,
                           double dt_s, const WatchOptions &opt);
// Pause rows (port, priority) from the switch's "pfc" view: priorities that sent or received a
// pause, or all lossless ones with --all.
nlohmann::json watch_pfc_rows(const nlohmann::json &pfc, const nlohmann::json *prev_pfc,
                              double dt_s, const WatchOptions &opt);
// The frame as text columns.
std::string format_watch(const nlohmann::json &frame, const WatchOptions &opt);

// Runs until Ctrl-C (SIGINT/SIGTERM), --count frames, or a lost connection. Returns the exit
// status: 0, 1 (the switch reported an error), 3 (connection lost).
int run_watch(ControlClient &client, const WatchOptions &opt, const std::string &name);

}  // namespace rocesw
