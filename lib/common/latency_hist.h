// Per-worker latency histograms (doc/observability.md, "Latency"): log-linear buckets in the
// spirit of HdrHistogram, one histogram per traffic class, one block per worker.
//
// A value v (TSC ticks) falls in bucket
//   v                                   when v < 2 x kLatSub (exact, one tick wide)
//   shift x kLatSub + (v >> shift)      otherwise, shift = bit_width(v) - kLatSubBits - 1
// so every power of two above 2 x kLatSub is split into kLatSub equal buckets: a bucket is at
// most 1/kLatSub (3.1 %) of its lower bound wide, and its midpoint is within 1.6 % of any value
// in it. Values of 2^(kLatMaxShift + kLatSubBits + 1) ticks and more (about 15 minutes at
// 2.45 GHz) are counted in the last bucket.
//
// The worker that owns a block is its only writer (relaxed stores, like common/counters.h);
// readers take a LatencySnapshot, sum workers and subtract a baseline. Nothing is ever reset
// under a worker's feet: "clear" is a baseline the reader keeps.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "common/counters.h"

namespace rocesw {

inline constexpr unsigned kLatClasses = 8;  // traffic classes (PacketMeta::tc)
inline constexpr unsigned kLatSubBits = 5;
inline constexpr unsigned kLatSub = 1u << kLatSubBits;  // sub-buckets per power of two
inline constexpr unsigned kLatMaxShift = 35;
inline constexpr unsigned kLatBuckets = (kLatMaxShift + 2) * kLatSub;  // 1184

constexpr unsigned latency_bucket(uint64_t v) {
    if (v < 2 * kLatSub) return unsigned(v);
    const unsigned shift = unsigned(std::bit_width(v)) - kLatSubBits - 1;
    if (shift > kLatMaxShift) return kLatBuckets - 1;
    return shift * kLatSub + unsigned(v >> shift);
}
// Smallest value of bucket i.
constexpr uint64_t latency_bucket_lower(unsigned i) {
    if (i < 2 * kLatSub) return i;
    const unsigned shift = i / kLatSub - 1;
    return uint64_t(i - shift * kLatSub) << shift;
}
// One past the largest value of bucket i.
constexpr uint64_t latency_bucket_upper(unsigned i) {
    if (i < 2 * kLatSub) return uint64_t(i) + 1;
    const unsigned shift = i / kLatSub - 1;
    return uint64_t(i - shift * kLatSub + 1) << shift;
}

struct LatencyClassHist {
    std::array<Counter, kLatBuckets> buckets;
    Counter sum;  // ticks, for the mean and Prometheus' _sum
    Counter max;  // largest value ever recorded (ticks)
};

// One worker's histograms. Writer: that worker only.
struct alignas(kCacheLine) LatencyHist {
    std::array<LatencyClassHist, kLatClasses> tc;

    void record(uint8_t cls, uint64_t ticks) {
        LatencyClassHist &h = tc[cls & (kLatClasses - 1)];
        h.buckets[latency_bucket(ticks)].inc();
        h.sum.add(ticks);
        if (ticks > h.max.v) __atomic_store_n(&h.max.v, ticks, __ATOMIC_RELAXED);
    }
};

// A reader's copy: counts per bucket and class, summed over workers.
struct LatencyClassSnapshot {
    std::vector<uint64_t> buckets = std::vector<uint64_t>(kLatBuckets, 0);
    uint64_t count = 0, sum = 0;
    uint64_t max = 0;  // exact largest value since start (not windowed by a baseline)

    void add(const LatencyClassHist &h) {
        for (unsigned i = 0; i < kLatBuckets; i++) {
            const uint64_t c = h.buckets[i].load();
            buckets[i] += c;
            count += c;
        }
        sum += h.sum.load();
        max = std::max(max, h.max.load());
    }
    // Another reader's copy added in (histograms of several switches, as one).
    void add(const LatencyClassSnapshot &o) {
        for (unsigned i = 0; i < kLatBuckets; i++) buckets[i] += o.buckets[i];
        count += o.count;
        sum += o.sum;
        max = std::max(max, o.max);
    }
    // This minus an earlier snapshot of the same histograms (a "clear" baseline).
    LatencyClassSnapshot since(const LatencyClassSnapshot &base) const {
        LatencyClassSnapshot d;
        for (unsigned i = 0; i < kLatBuckets; i++) {
            d.buckets[i] = buckets[i] >= base.buckets[i] ? buckets[i] - base.buckets[i] : 0;
            d.count += d.buckets[i];
        }
        d.sum = sum >= base.sum ? sum - base.sum : 0;
        d.max = max;
        return d;
    }
    // The q-quantile (0 < q <= 1) in ticks: the midpoint of the bucket holding the
    // ceil(q x count)-th smallest value (exact below 2 x kLatSub ticks), never above the
    // largest value. 0 when empty.
    uint64_t quantile(double q) const {
        if (!count) return 0;
        uint64_t rank = uint64_t(q * double(count));
        if (double(rank) < q * double(count)) rank++;
        rank = std::clamp<uint64_t>(rank, 1, count);
        uint64_t seen = 0;
        for (unsigned i = 0; i < kLatBuckets; i++) {
            seen += buckets[i];
            if (seen >= rank) {
                const uint64_t lo = latency_bucket_lower(i), hi = latency_bucket_upper(i);
                const uint64_t mid = lo + (hi - lo - 1) / 2;
                return max ? std::min(mid, max) : mid;
            }
        }
        return max;
    }
    // The largest value in this window, to bucket precision: the top of the highest non-empty
    // bucket, capped by the exact all-time maximum. 0 when empty.
    uint64_t window_max() const {
        for (unsigned i = kLatBuckets; i-- > 0;)
            if (buckets[i]) return std::min(latency_bucket_upper(i) - 1, max ? max : UINT64_MAX);
        return 0;
    }
};

struct LatencySnapshot {
    std::array<LatencyClassSnapshot, kLatClasses> tc;
};

inline LatencySnapshot latency_snapshot(const LatencyHist *workers, size_t n_workers) {
    LatencySnapshot s;
    for (size_t w = 0; w < n_workers; w++)
        for (unsigned c = 0; c < kLatClasses; c++) s.tc[c].add(workers[w].tc[c]);
    return s;
}

}  // namespace rocesw
