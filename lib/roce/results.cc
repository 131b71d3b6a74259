#include "roce/results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "roce/pacer.h"
#include "roce/packet.h"

namespace rocesw::roce {

uint32_t write_wire_bytes(uint32_t payload, bool first, bool ipv6) {
    uint32_t frame = 14 + (ipv6 ? 40 : 20) + 8 + kBthLen + (first ? kRethLen : 0) + payload +
                     ((4 - (payload & 3)) & 3) + kIcrcLen;
    return std::max<uint32_t>(frame, 60) + kWireOverheadBytes;
}

uint64_t ideal_fct_ns(uint64_t size, uint32_t mtu, uint64_t rate_bps, uint64_t base_rtt_ns,
                      bool ipv6) {
    const uint64_t n = size ? (size + mtu - 1) / mtu : 1;
    uint64_t bytes = 0;
    if (n == 1) {
        bytes = write_wire_bytes(uint32_t(size), true, ipv6);
    } else {
        bytes = write_wire_bytes(mtu, true, ipv6) + (n - 2) * write_wire_bytes(mtu, false, ipv6) +
                write_wire_bytes(uint32_t(size - (n - 1) * mtu), false, ipv6);
    }
    return uint64_t((unsigned __int128)bytes * 8 * 1'000'000'000ull / rate_bps) + base_rtt_ns;
}

uint64_t path_ideal_fct_ns(uint64_t size, uint32_t mtu, std::span<const PathLink> links,
                           bool ipv6) {
    if (links.empty() || mtu == 0) return 0;
    for (const PathLink &l : links)
        if (!l.rate_bps) return 0;
    // Columns of the grid: the first packet (RETH), then the full middle ones, then the last;
    // the middle ones form at most two single columns (where a staircase may turn) around a
    // block that a staircase crosses on one row (the block's packets are equal, so a turn
    // inside it is never better than at its ends).
    const uint64_t n = size ? (size + mtu - 1) / mtu : 1;
    struct Col {
        uint64_t packets, wire;
        bool turn;  // a staircase may go down here
    };
    std::vector<Col> cols;
    cols.push_back(
        {1, write_wire_bytes(uint32_t(std::min<uint64_t>(size, mtu)), true, ipv6), true});
    if (n >= 2) {
        const uint64_t mid = n - 2, wm = write_wire_bytes(mtu, false, ipv6);
        if (mid >= 1) cols.push_back({1, wm, true});
        if (mid >= 3) cols.push_back({mid - 2, wm, false});
        if (mid >= 2) cols.push_back({1, wm, true});
        cols.push_back({1, write_wire_bytes(uint32_t(size - (n - 1) * mtu), false, ipv6), true});
    }
    const auto ps = [](uint64_t bytes, uint64_t rate) {
        return uint64_t((unsigned __int128)bytes * 8'000'000'000'000ull / rate);
    };
    // best[c]: the longest staircase from (link 0, column 0) to (current link, column c).
    std::vector<uint64_t> best(cols.size(), 0);
    for (size_t h = 0; h < links.size(); h++) {
        for (size_t c = 0; c < cols.size(); c++) {
            const uint64_t w = ps(cols[c].packets * cols[c].wire, links[h].rate_bps);
            uint64_t from = 0;
            bool any = false;
            if (h > 0 && cols[c].turn) from = best[c], any = true;  // down from the link before
            if (c > 0 && best[c - 1] > from) from = best[c - 1], any = true;  // along this link
            if (h == 0 && c == 0) any = true;
            best[c] = any ? from + w : 0;
        }
    }
    uint64_t t = best.back();
    const uint32_t ack =
        std::max<uint32_t>(14 + (ipv6 ? 40 : 20) + 8 + kBthLen + kAethLen + kIcrcLen, 60) +
        kWireOverheadBytes;
    for (const PathLink &l : links) t += 2 * l.delay_ps + ps(ack, l.rate_bps);
    return t / 1000;
}

namespace {

double nearest_rank(const std::vector<double> &sorted, double q) {
    if (sorted.empty()) return 0;
    size_t rank = size_t(std::ceil(q * double(sorted.size())));
    return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

std::vector<SlowdownBucket> summarize(const std::vector<FlowResult> &flows) {
    std::vector<SlowdownBucket> b = {
        {"<10KB", 0, 10'000},
        {"10KB-100KB", 10'000, 100'000},
        {"100KB-1MB", 100'000, 1'000'000},
        {"1MB-10MB", 1'000'000, 10'000'000},
        {">=10MB", 10'000'000, UINT64_MAX},
        {"all", 0, UINT64_MAX},
    };
    for (auto &bk : b) {
        std::vector<double> sd;
        double fct = 0;
        for (const auto &f : flows) {
            if (!f.completed || f.size_bytes < bk.lo || f.size_bytes >= bk.hi) continue;
            sd.push_back(f.slowdown());
            fct += double(f.fct_ns()) / 1000;
        }
        std::sort(sd.begin(), sd.end());
        bk.count = sd.size();
        if (sd.empty()) continue;
        double sum = 0;
        for (double v : sd) sum += v;
        bk.mean = sum / double(sd.size());
        bk.median = nearest_rank(sd, 0.5);
        bk.p99 = nearest_rank(sd, 0.99);
        bk.mean_fct_us = fct / double(sd.size());
    }
    return b;
}

std::string format_summary(const std::vector<SlowdownBucket> &b) {
    std::string out = "size bucket     flows  mean FCT us  slowdown mean  median     p99\n";
    char line[160];
    for (const auto &k : b) {
        std::snprintf(line, sizeof(line), "%-14s %6llu %12.1f %14.2f %7.2f %7.2f\n",
                      k.label.c_str(), (unsigned long long)k.count, k.mean_fct_us, k.mean, k.median,
                      k.p99);
        out += line;
    }
    return out;
}

double jain_index(const std::vector<double> &x) {
    double s = 0, s2 = 0;
    for (double v : x) {
        s += v;
        s2 += v * v;
    }
    return x.empty() || s2 == 0 ? 0 : s * s / (double(x.size()) * s2);
}

double acked_bytes_at(const std::vector<ByteSample> &s, uint64_t t_ns) {
    if (s.empty()) return 0;
    if (t_ns <= s.front().t_ns) return double(s.front().acked_bytes);
    if (t_ns >= s.back().t_ns) return double(s.back().acked_bytes);
    auto hi = std::lower_bound(s.begin(), s.end(), t_ns,
                               [](const ByteSample &a, uint64_t t) { return a.t_ns < t; });
    auto lo = hi - 1;
    if (hi->t_ns == t_ns || hi->t_ns == lo->t_ns) return double(hi->acked_bytes);
    const double f = double(t_ns - lo->t_ns) / double(hi->t_ns - lo->t_ns);
    return double(lo->acked_bytes) + f * (double(hi->acked_bytes) - double(lo->acked_bytes));
}

OverlapFairness overlap_fairness(const std::vector<FlowTimeline> &flows) {
    OverlapFairness o;
    uint64_t lo = 0, hi = UINT64_MAX;
    size_t n = 0;
    for (const auto &f : flows) {
        if (!f.completed || !f.samples) continue;
        lo = std::max(lo, f.start_ns);
        hi = std::min(hi, f.finish_ns);
        n++;
    }
    if (n < 2 || hi <= lo + 1) return o;
    o.window_start_ns = lo;
    o.window_end_ns = hi;
    o.half_start_ns = lo + (hi - lo) / 2;
    const double secs = double(hi - o.half_start_ns) / 1e9;
    for (const auto &f : flows) {
        if (!f.completed || !f.samples) continue;
        const double b =
            acked_bytes_at(*f.samples, hi) - acked_bytes_at(*f.samples, o.half_start_ns);
        o.rate_bps.push_back(b * 8 / secs);
    }
    o.jain = jain_index(o.rate_bps);
    o.valid = true;
    return o;
}

}  // namespace rocesw::roce
