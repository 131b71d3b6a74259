// Workload generators for rocesim: pure logic, seeded, deterministic. The same spec and seed
// give the same flows on every machine, compiler and standard library: our own generator
// (xoshiro256**, seeded through SplitMix64) and our own logarithm (basic IEEE operations
// only), never std:: distributions or libm's log, whose last bits may differ across versions.
//
//   cdf flows    sizes from a flow-size CDF (config/workloads/*.txt, HPCC's traffic_gen
//                format and sampling), Poisson arrivals per host at `load` x the host link
//                rate, uniformly random destinations (HPCC traffic_gen.py's model)
//   incast       N senders to one receiver, all at one time
//   collectives  ring all-reduce and all-to-all among a job's hosts, `iterations` times, each
//                iteration a compute gap then the collective's steps; a step (phase) starts
//                when the previous phase's flows have all completed plus a gap. The engine
//                reports flow completions to a JobTracker, which says which flows start when.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "roce/workload.h"
#include "sim/topology.h"

namespace rocesw::sim {

// xoshiro256** (Blackman & Vigna), state seeded from SplitMix64(seed).
class Rng {
  public:
    explicit Rng(uint64_t seed);
    uint64_t next();
    // Uniform in [0, 1), 53 bits.
    double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }
    // Uniform in [0, n) (Lemire's multiply, no modulo bias worth naming at 64 bits).
    uint64_t below(uint64_t n) { return n ? uint64_t((unsigned __int128)next() * n >> 64) : 0; }
    // Exponential with the given mean.
    double exponential(double mean);

  private:
    uint64_t s_[4];
};

// Natural logarithm of x > 0 from +, *, / and frexp only: the same bits everywhere.
double det_log(double x);

using roce::SizeCdf;  // HPCC's traffic_gen CDF; rocesim samples it as HPCC does (_hpcc)

struct PoissonSpec {
    std::vector<uint32_t> hosts;  // senders and receivers (node ids)
    SizeCdf cdf;
    double load = 0.3;  // fraction of each host's link rate
    uint64_t host_rate_bps = 100'000'000'000;
    uint64_t start_ns = 0;
    uint64_t duration_ns = 0;  // arrivals in [start, start + duration)
    uint64_t seed = 1;
    std::optional<uint8_t> pg{};  // FlowRecord::pg
    uint16_t dport = 100;
};
// Per host, inter-arrival times ~ Exp(mean = mean_size * 8e9 / (rate * load)) ns, truncated
// to whole ns as HPCC does; each host has its own stream (seed, host), so adding a host does
// not change the others' flows. Sorted by (start, src, per-host order).
std::vector<FlowRecord> poisson_cdf_flows(const PoissonSpec &s);

struct IncastSpec {
    std::vector<uint32_t> senders;
    uint32_t receiver = 0;
    uint64_t size_bytes = 1 << 20;
    uint64_t start_ns = 0;
    std::optional<uint8_t> pg{};  // FlowRecord::pg
    uint16_t dport = 200;  // fct_analysis.py's incast selector
};
std::vector<FlowRecord> incast_flows(const IncastSpec &s);

enum class Collective { ring_allreduce, all_to_all };
enum class AllToAllSchedule { simultaneous, pairwise };

struct CollectiveSpec {
    Collective kind = Collective::ring_allreduce;
    std::vector<uint32_t> hosts;        // the job's ranks, in ring order
    uint64_t bytes_per_rank = 1 << 20;  // all-reduce: the buffer; all-to-all: sent per rank
    uint32_t iterations = 1;
    uint64_t compute_gap_ns = 0;  // before each iteration's first step
    uint64_t step_gap_ns = 0;     // between steps of an iteration
    AllToAllSchedule a2a = AllToAllSchedule::simultaneous;
    std::optional<uint8_t> pg{};  // FlowRecord::pg
    uint16_t dport = 100;
};

struct CollectivePhase {
    uint32_t iteration = 0, step = 0;
    int32_t after = -1;   // predecessor phase, -1: the job's start
    uint64_t gap_ns = 0;  // from the predecessor's completion (or job start) to this start
    uint32_t first_flow = 0, flow_count = 0;
};

// Flows of a phase are consecutive; FlowRecord::start_ns is 0 (the tracker decides).
//  ring all-reduce, n ranks, buffer B: 2(n-1) steps (n-1 reduce-scatter, n-1 all-gather); in
//    each, rank i sends B/n bytes (the first B mod n ranks' chunks one byte more, so the
//    chunks add up to B) to rank i+1 mod n.
//  all-to-all, n ranks, B per rank: every rank sends B/(n-1) to every other (same rounding);
//    simultaneous: one phase; pairwise: n-1 phases, in step s rank i sends to rank i+s mod n.
struct CollectiveJob {
    CollectiveSpec spec;
    std::vector<FlowRecord> flows;
    std::vector<CollectivePhase> phases;
};
CollectiveJob make_collective(const CollectiveSpec &s);

// Drives a job's dependencies from flow completions.
class JobTracker {
  public:
    struct Start {
        uint32_t flow = 0;  // index into job.flows
        uint64_t at_ns = 0;
    };
    JobTracker(const CollectiveJob &job, uint64_t job_start_ns);
    // Flows of the phases with no predecessor, with their start times.
    std::vector<Start> initial() const;
    // Records a completion; returns the flows that become startable. Throws
    // std::logic_error for a flow completed twice or never started.
    std::vector<Start> on_flow_complete(uint32_t flow, uint64_t t_ns);
    bool done() const { return phases_done_ == job_.phases.size(); }
    uint64_t completion_ns() const { return done() ? phase_end_.back() : 0; }
    // Completion time of each finished iteration (0 while unfinished).
    const std::vector<uint64_t> &iteration_end_ns() const { return iteration_end_; }
    const std::vector<uint64_t> &phase_end_ns() const { return phase_end_; }

  private:
    const CollectiveJob &job_;
    uint64_t start_ns_;
    std::vector<uint32_t> remaining_;  // per phase: flows not yet complete
    std::vector<uint8_t> flow_done_;
    std::vector<uint8_t> phase_started_;
    std::vector<std::vector<uint32_t>> successors_;
    std::vector<uint64_t> phase_end_, iteration_end_;
    size_t phases_done_ = 0;
};

}  // namespace rocesw::sim
