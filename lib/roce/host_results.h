// The results of a HostSet run (doc/rocehost.md, "Outputs"): flows.csv, qp_rates.csv,
// flow_bytes.csv, receivers.csv, hosts.csv, pauses.csv and summary.json in a directory, and the
// summary printed to stdout. The pieces are exposed for tests and the simulator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "roce/collective.h"
#include "roce/host_set.h"
#include "roce/results.h"

namespace rocesw::roce {

// Scheduling jitter of a wall-clock polling loop while local flows were active: the longest gap
// between two polls and how many gaps exceeded 100 us and 1 ms. Zero in virtual time.
struct LoopStats {
    uint64_t gap_max_ns = 0, gaps_100us = 0, gaps_1ms = 0;
    // CLOCK_MONOTONIC (ns) at the loop's time 0, the clock of every t_ns in the results: other
    // processes' times map onto it (rocelab's real engine); 0 = not known.
    uint64_t start_monotonic_ns = 0;
    void on_gap(uint64_t gap_ns) {
        if (gap_ns > gap_max_ns) gap_max_ns = gap_ns;
        gaps_100us += gap_ns > 100'000;
        gaps_1ms += gap_ns > 1'000'000;
    }
};

// What the receivers of the local hosts saw, summed over their QPs.
struct ReceiverTotals {
    uint64_t packets = 0, bytes = 0, messages = 0, psn_gaps = 0, missing = 0, duplicates = 0;
    uint64_t ce = 0, cnps = 0;
};

// One FlowResult per local flow (the ones this HostSet sends), in workload order.
std::vector<FlowResult> flow_results(const HostSet &hs);
ReceiverTotals receiver_totals(const HostSet &hs);

// Writes every file to `dir` (created if needed) and prints the summary. `run_ns`: the time
// the run ended (pause totals are taken at it). With `jobs` (collective jobs), also jobs.csv,
// job_flows.csv (JobRunner::write_csv, write_flows_csv) and summary.json's `jobs` totals.
// Returns false when a file cannot be written.
bool write_host_results(const HostSet &hs, const std::string &dir, uint64_t run_ns,
                        const LoopStats &loop = {}, const JobRunner *jobs = nullptr);

}  // namespace rocesw::roce
