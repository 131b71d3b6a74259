#include "sim/workload.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "roce/workload.h"

namespace rocesw::sim {

namespace {
// The one SplitMix64 (lib/roce/workload.h) seeds xoshiro here as it does rocehost's workloads.
using roce::SplitMix64;
uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}
}  // namespace

Rng::Rng(uint64_t seed) {
    SplitMix64 g(seed);
    for (auto &w : s_) w = g.next();
}

uint64_t Rng::next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
}

double det_log(double x) {
    if (!(x > 0)) throw std::domain_error("det_log: x must be > 0");
    int e = 0;
    double m = std::frexp(x, &e);  // x = m * 2^e, m in [0.5, 1): exact
    if (m < 0.70710678118654752440) {
        m *= 2;  // exact
        --e;
    }
    // ln m = 2 atanh(z), z = (m - 1) / (m + 1), |z| <= 0.1716: 12 odd terms reach 1e-19.
    const double z = (m - 1) / (m + 1), z2 = z * z;
    double sum = 0;
    for (int k = 23; k >= 1; k -= 2) {
        volatile double term = 1.0 / k;  // volatile: keep the compiler from contracting to FMA
        sum = sum * z2 + term;
    }
    volatile double lnm = 2 * z * sum;
    volatile double ep = double(e) * 0.69314718055994530942;
    return ep + lnm;
}

double Rng::exponential(double mean) {
    return -det_log(1.0 - uniform()) * mean;
}

SizeCdf SizeCdf::parse(std::string_view text, const std::string &source) {
    SizeCdf c;
    uint32_t line = 0, last_point_line = 0;
    size_t pos = 0;
    auto fail = [&](const std::string &msg) -> void {
        throw InputError(source + ":" + std::to_string(line) + ": " + msg);
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
    if (c.pts_.size() < 2) throw InputError(source + ": a CDF needs at least two points");
    if (c.pts_.back().second != 100)
        throw InputError(source + ":" + std::to_string(last_point_line) +
                         ": field 2 (cumulative percent): the last point must be 100");
    return c;
}

SizeCdf SizeCdf::load(const std::string &path) {
    std::ifstream f(path);
    if (!f) throw InputError(path + ": cannot open");
    std::ostringstream ss;
    ss << f.rdbuf();
    return parse(ss.str(), path);
}

uint64_t SizeCdf::sample(double u) const {
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

double SizeCdf::mean_bytes() const {
    double s = 0;
    for (size_t i = 1; i < pts_.size(); ++i)
        s += (pts_[i].first + pts_[i - 1].first) / 2.0 * (pts_[i].second - pts_[i - 1].second);
    return s / 100;
}

std::vector<FlowRecord> poisson_cdf_flows(const PoissonSpec &s) {
    if (s.hosts.size() < 2) throw std::invalid_argument("poisson: needs at least two hosts");
    if (!(s.load > 0 && s.load <= 1))
        throw std::invalid_argument("poisson: load must be in (0, 1]");
    if (s.host_rate_bps == 0) throw std::invalid_argument("poisson: host rate must be > 0");
    const double mean_gap_ns = s.cdf.mean_bytes() * 8e9 / (double(s.host_rate_bps) * s.load);
    struct Tagged {
        FlowRecord f;
        uint32_t host_index;
        uint64_t nth;
    };
    std::vector<Tagged> all;
    const uint64_t end = s.start_ns + s.duration_ns;
    for (uint32_t hi = 0; hi < s.hosts.size(); ++hi) {
        Rng rng(SplitMix64(s.seed ^ (0xD1B54A32D192ED03ull * (uint64_t(hi) + 1))).next());
        uint64_t t = s.start_ns;
        for (uint64_t nth = 0;; ++nth) {
            t += uint64_t(rng.exponential(mean_gap_ns));
            if (t >= end) break;
            FlowRecord f;
            f.src = s.hosts[hi];
            uint64_t d = rng.below(s.hosts.size() - 1);
            if (d >= hi) ++d;  // uniform over the other hosts
            f.dst = s.hosts[d];
            f.size_bytes = s.cdf.sample(rng.uniform());
            f.start_ns = t;
            f.pg = s.pg;
            f.dport = s.dport;
            all.push_back({f, hi, nth});
        }
    }
    std::sort(all.begin(), all.end(), [](const Tagged &a, const Tagged &b) {
        if (a.f.start_ns != b.f.start_ns) return a.f.start_ns < b.f.start_ns;
        if (a.host_index != b.host_index) return a.host_index < b.host_index;
        return a.nth < b.nth;
    });
    std::vector<FlowRecord> out;
    out.reserve(all.size());
    for (auto &t : all) out.push_back(t.f);
    return out;
}

std::vector<FlowRecord> incast_flows(const IncastSpec &s) {
    std::vector<FlowRecord> out;
    for (uint32_t src : s.senders) {
        if (src == s.receiver) throw std::invalid_argument("incast: a sender is the receiver");
        FlowRecord f;
        f.src = src;
        f.dst = s.receiver;
        f.size_bytes = s.size_bytes;
        f.start_ns = s.start_ns;
        f.pg = s.pg;
        f.dport = s.dport;
        out.push_back(f);
    }
    return out;
}

CollectiveJob make_collective(const CollectiveSpec &s) {
    const uint32_t n = uint32_t(s.hosts.size());
    if (n < 2) throw std::invalid_argument("collective: needs at least two hosts");
    if (s.iterations == 0) throw std::invalid_argument("collective: iterations must be >= 1");
    {
        auto sorted = s.hosts;
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
            throw std::invalid_argument("collective: a host is listed twice");
    }
    CollectiveJob job;
    job.spec = s;
    auto flow = [&](uint32_t src, uint32_t dst, uint64_t size) {
        FlowRecord f;
        f.src = src;
        f.dst = dst;
        f.size_bytes = size == 0 ? 1 : size;
        f.pg = s.pg;
        f.dport = s.dport;
        job.flows.push_back(f);
    };
    // Share `total` over `parts` chunks: the first total % parts get one byte more.
    auto share = [](uint64_t total, uint64_t parts, uint64_t i) {
        return total / parts + (i < total % parts ? 1 : 0);
    };
    for (uint32_t it = 0; it < s.iterations; ++it) {
        std::vector<std::vector<std::pair<uint32_t, uint32_t>>> steps;  // (src rank, dst rank)
        std::vector<std::vector<uint64_t>> sizes;
        if (s.kind == Collective::ring_allreduce) {
            for (uint32_t st = 0; st < 2 * (n - 1); ++st) {
                std::vector<std::pair<uint32_t, uint32_t>> v;
                std::vector<uint64_t> sz;
                for (uint32_t i = 0; i < n; ++i) {
                    v.emplace_back(i, (i + 1) % n);
                    // The chunk rank i sends: (i - st) mod n in reduce-scatter step st,
                    // (i + 1 - st') mod n in all-gather step st' = st - (n - 1).
                    const uint32_t c =
                        st < n - 1 ? (i + n - st) % n : (i + 1 + n - (st - (n - 1))) % n;
                    sz.push_back(share(s.bytes_per_rank, n, c));
                }
                steps.push_back(std::move(v));
                sizes.push_back(std::move(sz));
            }
        } else if (s.a2a == AllToAllSchedule::simultaneous) {
            std::vector<std::pair<uint32_t, uint32_t>> v;
            std::vector<uint64_t> sz;
            for (uint32_t i = 0; i < n; ++i)
                for (uint32_t k = 1; k < n; ++k) {
                    v.emplace_back(i, (i + k) % n);
                    sz.push_back(share(s.bytes_per_rank, n - 1, k - 1));
                }
            steps.push_back(std::move(v));
            sizes.push_back(std::move(sz));
        } else {
            for (uint32_t k = 1; k < n; ++k) {
                std::vector<std::pair<uint32_t, uint32_t>> v;
                std::vector<uint64_t> sz;
                for (uint32_t i = 0; i < n; ++i) {
                    v.emplace_back(i, (i + k) % n);
                    sz.push_back(share(s.bytes_per_rank, n - 1, k - 1));
                }
                steps.push_back(std::move(v));
                sizes.push_back(std::move(sz));
            }
        }
        for (uint32_t st = 0; st < steps.size(); ++st) {
            CollectivePhase p;
            p.iteration = it;
            p.step = st;
            p.after = int32_t(job.phases.size()) - 1;
            p.gap_ns = st == 0 ? s.compute_gap_ns : s.step_gap_ns;
            p.first_flow = uint32_t(job.flows.size());
            for (size_t j = 0; j < steps[st].size(); ++j)
                flow(s.hosts[steps[st][j].first], s.hosts[steps[st][j].second], sizes[st][j]);
            p.flow_count = uint32_t(job.flows.size()) - p.first_flow;
            job.phases.push_back(p);
        }
    }
    return job;
}

JobTracker::JobTracker(const CollectiveJob &job, uint64_t job_start_ns)
    : job_(job),
      start_ns_(job_start_ns),
      remaining_(job.phases.size()),
      flow_done_(job.flows.size(), 0),
      phase_started_(job.phases.size(), 0),
      successors_(job.phases.size()),
      phase_end_(job.phases.size(), 0),
      iteration_end_(job.spec.iterations, 0) {
    for (size_t p = 0; p < job.phases.size(); ++p) {
        remaining_[p] = job.phases[p].flow_count;
        if (job.phases[p].after < 0) phase_started_[p] = 1;
        if (job.phases[p].after >= 0)
            successors_[size_t(job.phases[p].after)].push_back(uint32_t(p));
    }
}

std::vector<JobTracker::Start> JobTracker::initial() const {
    std::vector<Start> out;
    for (const auto &p : job_.phases)
        if (p.after < 0)
            for (uint32_t f = p.first_flow; f < p.first_flow + p.flow_count; ++f)
                out.push_back({f, start_ns_ + p.gap_ns});
    return out;
}

std::vector<JobTracker::Start> JobTracker::on_flow_complete(uint32_t flow, uint64_t t_ns) {
    if (flow >= job_.flows.size() || flow_done_[flow])
        throw std::logic_error("JobTracker: flow completed twice or unknown");
    // Find the flow's phase (phases hold consecutive flows, ascending).
    auto it =
        std::upper_bound(job_.phases.begin(), job_.phases.end(), flow,
                         [](uint32_t f, const CollectivePhase &p) { return f < p.first_flow; });
    const size_t p = size_t(it - job_.phases.begin()) - 1;
    const auto &ph = job_.phases[p];
    if (!phase_started_[p])
        throw std::logic_error("JobTracker: flow completed before its phase could start");
    flow_done_[flow] = 1;
    std::vector<Start> out;
    if (--remaining_[p] != 0) return out;
    phase_end_[p] = t_ns;
    ++phases_done_;
    if (p + 1 == job_.phases.size() || job_.phases[p + 1].iteration != ph.iteration)
        iteration_end_[ph.iteration] = t_ns;
    for (uint32_t s : successors_[p]) {
        phase_started_[s] = 1;
        const auto &sp = job_.phases[s];
        for (uint32_t f = sp.first_flow; f < sp.first_flow + sp.flow_count; ++f)
            out.push_back({f, t_ns + sp.gap_ns});
    }
    return out;
}

}  // namespace rocesw::sim
