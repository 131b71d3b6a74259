// Workloads for rocehost: the list of flows (one RDMA WRITE message each) the hosts of a run
// send. Generated from a seed with our own generator (SplitMix64), never std:: distributions,
// so the same seed gives the same flows on every machine and compiler.
//
//   pairs        every (src, dst) pair listed sends `count` flows of `size_bytes`
//   incast       every sender sends `count` flows of `size_bytes` to one receiver, all at once
//   all_to_all   every host to every other host
//   permutation  a random derangement: host i sends to perm[i], never to itself
//   cdf          sizes drawn from a CDF file, Poisson arrivals per sender at `load` x line rate,
//                uniformly random destinations, for `duration_ns` or `count` flows per sender
//   list         the flows given, each with its own start (rocelab's real engine: the flows a
//                scenario expands to, rocesim --emit-lab)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rocesw::roce {

class SplitMix64 {
  public:
    explicit SplitMix64(uint64_t seed) : s_(seed) {}
    uint64_t next() {
        uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, 1) with 53 random bits.
    double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }
    // Uniform integer in [0, n).
    uint64_t below(uint64_t n) { return n ? uint64_t((unsigned __int128)next() * n >> 64) : 0; }

  private:
    uint64_t s_;
};

// A flow-size CDF in HPCC's traffic_gen format (rocehost's cdf workload and rocesim's share
// it): "<size bytes> <cumulative percent>" per line, the first percent 0, the last 100, sizes
// and percents strictly increasing ('#' comments and blank lines allowed).
class SizeCdf {
  public:
    // Throws std::runtime_error "<source>:<line>: field N (<name>): <problem>".
    static SizeCdf parse(std::string_view text, const std::string &source);
    static SizeCdf load(const std::string &path);
    // rocehost: inverse transform, linear interpolation between points, rounded to the
    // nearest byte, at least 1; u in [0, 1).
    uint64_t sample(double u) const;
    // rocehost: the distribution's mean, bytes.
    double mean_bytes() const;
    // rocesim (HPCC's traffic_gen): getValueFromPercentile(u * 100) truncated, at least 1.
    uint64_t sample_hpcc(double u) const;
    // rocesim: HPCC's getAvg (the same mean, HPCC's order of operations).
    double mean_bytes_hpcc() const;
    const std::vector<std::pair<double, double>> &points() const { return pts_; }

  private:
    std::vector<std::pair<double, double>> pts_;  // (size, percent)
};

// A flow's own traffic class, when it is not the run's (TrafficConfig): its data packets'
// DSCP and 802.1p priority (the priority whose PFC pauses them) and its ACK/NAKs' (rocesim:
// flow.txt's pg, HPCC's priority group).
struct FlowClass {
    uint8_t data_dscp = 26, data_priority = 3;
    uint8_t ack_dscp = 26, ack_priority = 3;
    bool operator==(const FlowClass &) const = default;
};

struct FlowSpec {
    uint32_t id = 0;
    uint32_t src = 0, dst = 0;  // host indexes
    uint64_t size_bytes = 0;
    uint64_t start_ns = 0;  // from the start of the run
    // The flow's ideal FCT when its path is known (rocesim: roce/results.h path_ideal_fct_ns);
    // 0: its bytes at the sender's line rate + the configured base RTT.
    uint64_t ideal_ns = 0;
    // With ideal_ns: its part beyond the flow's bytes at the path's bottleneck rate (the
    // path's base RTT, flows.csv's base_rtt_ns).
    uint64_t base_rtt_ns = 0;
    std::optional<FlowClass> cls{};  // unset: the run's TrafficConfig
};

enum class Pattern { pairs, incast, all_to_all, permutation, cdf, list };

struct WorkloadSpec {
    Pattern pattern = Pattern::pairs;
    uint32_t n_hosts = 0;
    uint64_t seed = 1;
    uint64_t size_bytes = 1 << 20;  // fixed-size patterns
    uint32_t count = 1;             // flows per sender (or per pair)
    uint64_t start_ns = 0;          // first flow start
    uint64_t interval_ns = 0;       // between a sender's successive fixed-size flows
    uint64_t stagger_ns = 0;        // pairs, incast: the i-th pair/sender starts i x this later
    std::vector<std::pair<uint32_t, uint32_t>> pairs;  // pairs
    std::vector<uint32_t> senders;  // incast (empty: every host but the receiver)
    uint32_t receiver = 0;          // incast
    // cdf
    SizeCdf cdf;
    double load = 0.5;  // fraction of each sender's line rate
    uint64_t line_rate_bps = 10'000'000'000;
    uint64_t duration_ns = 0;  // arrivals in [start, start + duration); 0: use count
    std::vector<FlowSpec> list;  // list: src, dst, size, start, cls (ids are assigned)
};

// Flows sorted by start time (ties keep the pattern's order, for `list` the given order), then id; ids are 0..n-1 in that order. Throws
// std::invalid_argument on an impossible spec (a host index out of range, permutation of < 2).
std::vector<FlowSpec> generate_workload(const WorkloadSpec &w);

Pattern parse_pattern(const std::string &s);  // throws std::invalid_argument
const char *pattern_name(Pattern p);

}  // namespace rocesw::roce
