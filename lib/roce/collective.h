// Collective jobs (AI training traffic), shared by both engines: rocesim (lib/sim/roce_hosts)
// and rocehost (app/rocehost, rocelab's real engine) expand and drive them with this code.
//
//   ring all-reduce and all-to-all among a job's ranks, `iterations` times; each iteration a
//   compute gap, then the collective's steps (phases). Dependencies are per rank, as in NCCL:
//   rank r starts its sends of step s + 1 (after the step gap) once its own sends of step s
//   have completed (the last ACK arrived) and every message of step s addressed to it has
//   arrived (the receiver took the last packet in order). A slow transfer delays its two ends
//   first, the rest of the ring as the dependency travels round it.
//
// The engine reports events (JobRunner::on_sent, on_received) with the flow ids it gave the
// job's flows (bind), on one clock (the job's start times are on it); JobRunner answers which
// flows start when. Pure logic: no clock, no DPDK.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace rocesw::roce {

enum class Collective { ring_allreduce, all_to_all };
enum class AllToAllSchedule { simultaneous, pairwise };
const char *collective_name(Collective c);  // "ring_allreduce", "all_to_all"

struct CollectiveSpec {
    Collective kind = Collective::ring_allreduce;
    // The job's ranks in ring order: node ids (rocesim) or host indexes (rocehost).
    std::vector<uint32_t> hosts;
    uint64_t bytes_per_rank = 1 << 20;  // all-reduce: the buffer; all-to-all: sent per rank
    uint32_t iterations = 1;
    uint64_t compute_gap_ns = 0;  // before each iteration's first step
    uint64_t step_gap_ns = 0;     // between steps of an iteration
    AllToAllSchedule a2a = AllToAllSchedule::simultaneous;
    std::optional<uint8_t> pg{};  // the flows' priority group (rocesim: flow.txt's pg)
    uint16_t dport = 100;
};

struct CollectiveFlow {
    uint32_t src = 0, dst = 0;  // CollectiveSpec::hosts entries
    uint64_t size_bytes = 0;
};

struct CollectivePhase {
    uint32_t iteration = 0, step = 0;
    uint64_t gap_ns = 0;  // from the rank's previous phase (or the job's start) to its sends
    uint32_t first_flow = 0, flow_count = 0;
};

// Phases follow each other in order; the flows of a phase are consecutive.
//  ring all-reduce, n ranks, buffer B: 2(n-1) steps (n-1 reduce-scatter, n-1 all-gather); in
//    each, rank i sends B/n bytes (the first B mod n ranks' chunks one byte more, so the
//    chunks add up to B) to rank i+1 mod n.
//  all-to-all, n ranks, B per rank: every rank sends B/(n-1) to every other (same rounding);
//    simultaneous: one phase; pairwise: n-1 phases, in step s rank i sends to rank i+s mod n.
struct CollectiveJob {
    CollectiveSpec spec;
    std::vector<CollectiveFlow> flows;
    std::vector<CollectivePhase> phases;
    uint32_t phase_of(uint32_t flow) const;
};
// Throws std::invalid_argument for fewer than two ranks, a rank listed twice, 0 iterations.
CollectiveJob make_collective(const CollectiveSpec &s);

// One job's dependencies (per rank, above), from its flows' events.
class JobTracker {
  public:
    struct Start {
        uint32_t flow = 0;  // index into job.flows
        uint64_t at_ns = 0;
    };
    JobTracker(const CollectiveJob &job, uint64_t job_start_ns);
    // The first phase's flows with their start times.
    std::vector<Start> initial() const;
    // Flow `flow` completed at its sender (the last ACK) / arrived whole at its receiver, at
    // t_ns; returns the flows that become startable. Throws std::logic_error for an event
    // reported twice or for a flow that was never started.
    std::vector<Start> on_sent(uint32_t flow, uint64_t t_ns);
    std::vector<Start> on_received(uint32_t flow, uint64_t t_ns);
    bool done() const { return phases_done_ == job_.phases.size(); }
    uint64_t start_ns() const { return start_ns_; }
    uint64_t completion_ns() const { return done() ? phase_end_.back() : 0; }
    // When every rank had finished each iteration (0 while unfinished).
    const std::vector<uint64_t> &iteration_end_ns() const { return iteration_end_; }
    const std::vector<uint64_t> &phase_end_ns() const { return phase_end_; }

  private:
    std::vector<Start> on_event(uint32_t flow, uint32_t rank, uint64_t t_ns);
    void start_phase(uint32_t rank, uint32_t phase, uint64_t at_ns, std::vector<Start> &out) const;
    uint32_t rank_of(uint32_t host) const;

    const CollectiveJob &job_;
    uint64_t start_ns_;
    size_t n_ = 0, phases_ = 0;
    std::vector<uint32_t> pending_;  // [rank * phases + phase]: its sends and receives not done
    std::vector<uint64_t> last_;     // [rank * phases + phase]: the latest of those events
    std::vector<uint32_t> at_;       // per rank: the phase it works on (phases_: finished)
    std::vector<uint64_t> ready_;    // per rank: when it started that phase's sends
    std::vector<uint8_t> sent_, received_;  // per flow
    std::vector<uint32_t> ranks_done_;      // per phase
    std::vector<uint64_t> phase_end_, iteration_end_;
    size_t phases_done_ = 0;
};

// Every job of a run and the engine's flow ids of their flows: what both engines drive.
class JobRunner {
  public:
    struct Start {
        uint32_t job = 0, flow = 0;  // flow: index into job(job).flows
        uint64_t at_ns = 0;
    };
    // Adds a job starting at start_ns (on the engine's job clock); returns its index.
    uint32_t add(const CollectiveSpec &spec, uint64_t start_ns);
    // The first flows of every job added so far.
    std::vector<Start> initial() const;
    // The engine added job flow (job, flow) as its flow `engine_flow`.
    void bind(uint32_t engine_flow, uint32_t job, uint32_t flow);
    // Events of the engine's flows (flows of no job are ignored); the flows to start.
    std::vector<Start> on_sent(uint32_t engine_flow, uint64_t t_ns);
    std::vector<Start> on_received(uint32_t engine_flow, uint64_t t_ns);

    size_t size() const { return jobs_.size(); }
    bool done() const;
    const CollectiveJob &job(size_t j) const { return jobs_[j]; }
    const JobTracker &tracker(size_t j) const { return trackers_[j]; }
    // (job, job flow) of engine flow `engine_flow`, or nullptr.
    struct Binding {
        uint32_t job = 0, flow = 0;
        bool bound = false;
    };
    const Binding *binding(uint32_t engine_flow) const {
        return engine_flow < bind_.size() && bind_[engine_flow].bound ? &bind_[engine_flow]
                                                                      : nullptr;
    }

    struct Totals {
        uint64_t jobs = 0, jobs_completed = 0, iterations = 0, iterations_completed = 0;
    };
    Totals totals() const;
    // jobs.csv: per job and iteration "job,kind,ranks,bytes_per_rank,iteration,start_ns,end_ns,
    // duration_ns" (an iteration starts when the previous one ended, the first at the job's
    // start), then the job as iteration "all"; unfinished iterations are left out and an
    // unfinished job has end and duration 0.
    void write_csv(std::FILE *f) const;
    // job_flows.csv: "flow,job,job_flow,iteration,step,size_bytes" per bound flow.
    void write_flows_csv(std::FILE *f) const;

  private:
    std::vector<Start> tag(uint32_t job, std::vector<JobTracker::Start> s) const;
    std::deque<CollectiveJob> jobs_;  // deques: the trackers keep references to their jobs
    std::deque<JobTracker> trackers_;
    std::vector<Binding> bind_;  // by engine flow id
};

}  // namespace rocesw::roce
