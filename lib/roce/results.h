// Flow-completion results: the ideal completion time of a flow (its packets back to back at
// line rate plus a base round trip) and the summary rocehost prints: FCT slowdown by flow-size
// bucket (count, mean, median, p99).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rocesw::roce {

struct FlowResult {
    uint32_t id = 0;
    std::string src, dst;
    uint64_t size_bytes = 0;
    uint64_t start_ns = 0, finish_ns = 0;  // finish: the ACK of the last packet arrived
    uint64_t ideal_ns = 0;
    uint64_t base_rtt_ns = 0;  // the base RTT in ideal_ns (beyond the bytes at line rate)
    uint64_t retransmitted = 0;
    bool completed = false;
    uint64_t fct_ns() const { return completed ? finish_ns - start_ns : 0; }
    // FCT / ideal, at least 1 (as HPCC's analysis clamps it: an ideal is a model, and a flow
    // can beat it by the rounding of a clock); 0 when not completed or no ideal is known.
    double slowdown() const {
        if (!completed || !ideal_ns) return 0;
        const double s = double(fct_ns()) / double(ideal_ns);
        return s < 1 ? 1 : s;
    }
};

// Bytes on the wire (with FCS, preamble and inter-frame gap) of one RDMA WRITE data packet
// carrying `payload` bytes over IPv4 (`first`: with RETH).
uint32_t write_wire_bytes(uint32_t payload, bool first, bool ipv6 = false);

// Time to send `size` bytes segmented at `mtu` at `rate_bps`, plus `base_rtt_ns`.
uint64_t ideal_fct_ns(uint64_t size, uint32_t mtu, uint64_t rate_bps, uint64_t base_rtt_ns,
                      bool ipv6 = false);

// One link of a path, in the direction of the data.
struct PathLink {
    uint64_t rate_bps = 0;
    uint64_t delay_ps = 0;
};

// The FCT of a WRITE of `size` bytes alone on an idle store-and-forward path `links` (sender to
// receiver; the ACK returns over the same links): its packets leave back to back at the first
// link's rate, each switch forwards a packet once it has all of it (no processing time), and
// the FCT ends when the ACK of the last packet reaches the sender. That is the maximum, over
// the monotone staircases of the (link, packet) grid, of the packets' transmission times on the
// links they are counted on (a tandem of FIFO links), plus the links' delays, plus the ACK's
// transmission and delay on every link back. Exact in integer ps (each transmission time
// floored), returned as whole ns (floored, as the sender's clock reads the ACK). Its part
// beyond the flow's bytes at the bottleneck rate is the path's base RTT.
uint64_t path_ideal_fct_ns(uint64_t size, uint32_t mtu, std::span<const PathLink> links,
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

// One point of a flow's byte timeline (rocehost samples every `sample_us` and at completion).
struct ByteSample {
    uint64_t t_ns = 0;
    uint64_t sent_bytes = 0;   // payload sent at least once
    uint64_t acked_bytes = 0;  // payload acknowledged (delivered in order)
};

// Acknowledged bytes at `t_ns`, linear between samples (`s` sorted by time); before the first
// sample the first value, after the last the last value. 0 for an empty timeline.
double acked_bytes_at(const std::vector<ByteSample> &s, uint64_t t_ns);

struct FlowTimeline {
    uint64_t start_ns = 0, finish_ns = 0;
    bool completed = false;
    const std::vector<ByteSample> *samples = nullptr;
};

// Fairness while all flows are active: the window runs from the latest start to the earliest
// finish of the completed flows (so no flow has finished yet and none is still to start);
// each flow's throughput is its acknowledged bytes over the second half of that window.
// `valid` is false with fewer than two completed flows or an empty window.
struct OverlapFairness {
    bool valid = false;
    uint64_t window_start_ns = 0, window_end_ns = 0;  // the interval all flows were active
    uint64_t half_start_ns = 0;                       // its midpoint
    std::vector<double> rate_bps;                     // per flow, over [half_start, window_end]
    double jain = 0;
};
OverlapFairness overlap_fairness(const std::vector<FlowTimeline> &flows);

}  // namespace rocesw::roce
