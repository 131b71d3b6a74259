#include "roce/workload.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rocesw::roce {

SizeCdf SizeCdf::parse(std::string_view text, const std::string &source) {
    SizeCdf c;
    uint32_t line = 0, last_point_line = 0;
    size_t pos = 0;
    auto fail = [&](const std::string &msg) -> void {
        throw std::runtime_error(source + ":" + std::to_string(line) + ": " + msg);
    };
    while (pos <= text.size()) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        std::string l(text.substr(pos, nl - pos));
        pos = nl + 1;
        ++line;
        if (auto h = l.find('#'); h != std::string::npos) l.resize(h);
        std::istringstream ss(l);
        std::string a, b, extra;
        if (!(ss >> a)) {
            if (nl == text.size()) break;
            continue;
        }
        if (!(ss >> b)) fail("field 2 (cumulative percent): missing");
        if (ss >> extra) fail("field 3: unexpected '" + extra + "' (a line is: size percent)");
        char *end = nullptr;
        double x = std::strtod(a.c_str(), &end);
        if (*end != '\0' || !(x >= 0)) fail("field 1 (size): '" + a + "' is not a size in bytes");
        double y = std::strtod(b.c_str(), &end);
        if (*end != '\0' || !(y >= 0 && y <= 100))
            fail("field 2 (cumulative percent): '" + b + "' is not a percent in [0, 100]");
        if (c.pts_.empty() && y != 0)
            fail("field 2 (cumulative percent): the first point must be 0");
        if (!c.pts_.empty()) {
            if (x <= c.pts_.back().first) fail("field 1 (size): sizes must increase");
            if (y <= c.pts_.back().second)
                fail("field 2 (cumulative percent): percents must increase");
        }
        c.pts_.emplace_back(x, y);
        last_point_line = line;
        if (nl == text.size()) break;
    }
    if (c.pts_.size() < 2) throw std::runtime_error(source + ": a CDF needs at least two points");
    if (c.pts_.back().second != 100)
        throw std::runtime_error(source + ":" + std::to_string(last_point_line) +
                         ": field 2 (cumulative percent): the last point must be 100");
    return c;
}

SizeCdf SizeCdf::load(const std::string &path) {
    std::ifstream f(path);
    if (!f) throw std::runtime_error(path + ": cannot open");
    std::ostringstream ss;
    ss << f.rdbuf();
    return parse(ss.str(), path);
}

uint64_t SizeCdf::sample_hpcc(double u) const {
    const double r = u * 100;
    for (size_t i = 1; i < pts_.size(); ++i) {
        if (r <= pts_[i].second) {
            const auto [x0, y0] = pts_[i - 1];
            const auto [x1, y1] = pts_[i];
            const double v = x0 + (x1 - x0) / (y1 - y0) * (r - y0);
            const uint64_t s = uint64_t(v);
            return s == 0 ? 1 : s;
        }
    }
    return uint64_t(pts_.back().first);
}

double SizeCdf::mean_bytes_hpcc() const {
    double s = 0;
    for (size_t i = 1; i < pts_.size(); ++i)
        s += (pts_[i].first + pts_[i - 1].first) / 2.0 * (pts_[i].second - pts_[i - 1].second);
    return s / 100;
}

uint64_t SizeCdf::sample(double u) const {
    if (pts_.empty()) return 0;
    if (u <= pts_.front().second / 100)
        return uint64_t(std::llround(std::max(1.0, pts_.front().first)));
    for (size_t i = 1; i < pts_.size(); i++) {
        const double s1 = pts_[i].first, p1 = pts_[i].second / 100;
        if (u <= p1) {
            const double s0 = pts_[i - 1].first, p0 = pts_[i - 1].second / 100;
            double s = p1 > p0 ? s0 + (s1 - s0) * (u - p0) / (p1 - p0) : s1;
            return uint64_t(std::max<long long>(1, std::llround(s)));
        }
    }
    return uint64_t(pts_.back().first);
}

double SizeCdf::mean_bytes() const {
    double m = 0;
    for (size_t i = 1; i < pts_.size(); i++)
        m += (pts_[i].second / 100 - pts_[i - 1].second / 100) *
             (pts_[i].first + pts_[i - 1].first) / 2;
    return m;
}

Pattern parse_pattern(const std::string &s) {
    if (s == "pairs") return Pattern::pairs;
    if (s == "incast") return Pattern::incast;
    if (s == "all_to_all") return Pattern::all_to_all;
    if (s == "permutation") return Pattern::permutation;
    if (s == "cdf") return Pattern::cdf;
    if (s == "list") return Pattern::list;
    throw std::invalid_argument(
        "'" + s + "' is not a pattern (pairs, incast, all_to_all, permutation, cdf, list)");
}

const char *pattern_name(Pattern p) {
    switch (p) {
        case Pattern::pairs:
            return "pairs";
        case Pattern::incast:
            return "incast";
        case Pattern::all_to_all:
            return "all_to_all";
        case Pattern::permutation:
            return "permutation";
        case Pattern::cdf:
            return "cdf";
        case Pattern::list:
            return "list";
    }
    return "?";
}

std::vector<FlowSpec> generate_workload(const WorkloadSpec &w) {
    std::vector<FlowSpec> flows;
    SplitMix64 rng(w.seed);
    auto check_host = [&](uint32_t h) {
        if (h >= w.n_hosts)
            throw std::invalid_argument("host index " + std::to_string(h) + " out of range (" +
                                        std::to_string(w.n_hosts) + " hosts)");
    };
    auto fixed = [&](uint32_t s, uint32_t d, uint64_t start) {
        check_host(s);
        check_host(d);
        if (s == d) throw std::invalid_argument("a flow from a host to itself");
        for (uint32_t k = 0; k < w.count; k++)
            flows.push_back({0, s, d, w.size_bytes, start + k * w.interval_ns});
    };
    switch (w.pattern) {
        case Pattern::list:
            for (const FlowSpec &f : w.list) {
                check_host(f.src);
                check_host(f.dst);
                if (f.src == f.dst) throw std::invalid_argument("a flow from a host to itself");
                flows.push_back({0, f.src, f.dst, f.size_bytes, f.start_ns});
                flows.back().cls = f.cls;  // a flow's own class (rocelab: its resolved pg)
            }
            break;
        case Pattern::pairs:
            for (size_t i = 0; i < w.pairs.size(); i++)
                fixed(w.pairs[i].first, w.pairs[i].second, w.start_ns + i * w.stagger_ns);
            break;
        case Pattern::incast: {
            check_host(w.receiver);
            std::vector<uint32_t> senders = w.senders;
            if (senders.empty())
                for (uint32_t h = 0; h < w.n_hosts; h++)
                    if (h != w.receiver) senders.push_back(h);
            for (size_t i = 0; i < senders.size(); i++)
                fixed(senders[i], w.receiver, w.start_ns + i * w.stagger_ns);
            break;
        }
        case Pattern::all_to_all:
            for (uint32_t s = 0; s < w.n_hosts; s++)
                for (uint32_t d = 0; d < w.n_hosts; d++)
                    if (s != d) fixed(s, d, w.start_ns);
            break;
        case Pattern::permutation: {
            if (w.n_hosts < 2) throw std::invalid_argument("a permutation needs 2 or more hosts");
            // Sattolo's algorithm: a uniformly random cyclic permutation, hence no fixed point.
            std::vector<uint32_t> perm(w.n_hosts);
            for (uint32_t i = 0; i < w.n_hosts; i++) perm[i] = i;
            for (uint32_t i = w.n_hosts - 1; i > 0; i--) std::swap(perm[i], perm[rng.below(i)]);
            for (uint32_t s = 0; s < w.n_hosts; s++) fixed(s, perm[s], w.start_ns);
            break;
        }
        case Pattern::cdf: {
            if (w.n_hosts < 2) throw std::invalid_argument("a CDF workload needs 2 or more hosts");
            if (w.load <= 0 || w.load > 1) throw std::invalid_argument("load must be in (0, 1]");
            if (!w.duration_ns && !w.count)
                throw std::invalid_argument("a CDF workload needs a duration or a count");
            const double mean = w.cdf.mean_bytes();
            // Mean inter-arrival per sender so that the offered load is `load` x line rate.
            const double mean_gap_ns = mean * 8 * 1e9 / (w.load * double(w.line_rate_bps));
            std::vector<uint32_t> senders = w.senders;
            if (senders.empty())
                for (uint32_t h = 0; h < w.n_hosts; h++) senders.push_back(h);
            for (uint32_t s : senders) {
                check_host(s);
                double t = double(w.start_ns);
                for (uint32_t k = 0;; k++) {
                    if (!w.duration_ns && k >= w.count) break;
                    t += -std::log(1.0 - rng.uniform()) * mean_gap_ns;
                    if (w.duration_ns && t >= double(w.start_ns + w.duration_ns)) break;
                    uint32_t d = uint32_t(rng.below(w.n_hosts - 1));
                    if (d >= s) d++;
                    flows.push_back({0, s, d, w.cdf.sample(rng.uniform()), uint64_t(t)});
                }
            }
            break;
        }
    }
    std::stable_sort(flows.begin(), flows.end(),
                     [](const FlowSpec &a, const FlowSpec &b) { return a.start_ns < b.start_ns; });
    for (uint32_t i = 0; i < flows.size(); i++) flows[i].id = i;
    return flows;
}

}  // namespace rocesw::roce
