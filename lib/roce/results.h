// Flow-completion results: the ideal completion time of a flow (its packets back to back at
// line rate plus a base round trip) and the summary rocehost prints: FCT slowdown by flow-size
// bucket (count, mean, median, p99).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rocesw::roce {

struct FlowResult {
    uint32_t id = 0;
    std::string src, dst;
    uint64_t size_bytes = 0;
    uint64_t start_ns = 0, finish_ns = 0;  // finish: the ACK of the last packet arrived
    uint64_t ideal_ns = 0;
    uint64_t retransmitted = 0;
    bool completed = false;
    uint64_t fct_ns() const { return completed ? finish_ns - start_ns : 0; }
    double slowdown() const {
        return completed && ideal_ns ? double(fct_ns()) / double(ideal_ns) : 0;
    }
};

// Bytes on the wire (with FCS, preamble and inter-frame gap) of one RDMA WRITE data packet
// carrying `payload` bytes over IPv4 (`first`: with RETH).
uint32_t write_wire_bytes(uint32_t payload, bool first, bool ipv6 = false);

// Time to send `size` bytes segmented at `mtu` at `rate_bps`, plus `base_rtt_ns`.
uint64_t ideal_fct_ns(uint64_t size, uint32_t mtu, uint64_t rate_bps, uint64_t base_rtt_ns,
                      bool ipv6 = false);

struct SlowdownBucket {
    std::string label;
    uint64_t lo = 0, hi = 0;  // sizes in [lo, hi)
    uint64_t count = 0;
    double mean = 0, median = 0, p99 = 0;
    double mean_fct_us = 0;
};

// Buckets: < 10 KB, 10-100 KB, 100 KB-1 MB, 1-10 MB, >= 10 MB, and "all". Only completed
// flows count. Percentiles: nearest rank.
std::vector<SlowdownBucket> summarize(const std::vector<FlowResult> &flows);
std::string format_summary(const std::vector<SlowdownBucket> &b);

// Jain's fairness index of `x` (1.0 when all equal; 0 for an empty or all-zero input).
double jain_index(const std::vector<double> &x);

}  // namespace rocesw::roce
