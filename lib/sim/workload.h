// Workload generators for rocesim: pure logic, seeded, deterministic. The same spec and seed
// give the same flows on every machine, compiler and standard library: our own generator
// (xoshiro256**, seeded through SplitMix64) and our own logarithm (basic IEEE operations
// only), never std:: distributions or libm's log, whose last bits may differ across versions.
//
//   cdf flows    sizes from a flow-size CDF (config/workloads/*.txt, HPCC's traffic_gen
//                format and sampling), Poisson arrivals per host at `load` x the host link
//                rate, uniformly random destinations (HPCC traffic_gen.py's model)
//   incast       N senders to one receiver, all at one time
//   collectives  ring all-reduce and all-to-all: roce/collective.h (shared with rocehost)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "roce/collective.h"
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

// Collective jobs: one implementation for both engines (roce/collective.h); rocesim's
// RoceHosts drives them with a roce::JobRunner.
using roce::AllToAllSchedule;
using roce::Collective;
using roce::CollectiveSpec;

}  // namespace rocesw::sim
