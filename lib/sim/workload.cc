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

std::vector<FlowRecord> poisson_cdf_flows(const PoissonSpec &s) {
    if (s.hosts.size() < 2) throw std::invalid_argument("poisson: needs at least two hosts");
    if (!(s.load > 0 && s.load <= 1))
        throw std::invalid_argument("poisson: load must be in (0, 1]");
    if (s.host_rate_bps == 0) throw std::invalid_argument("poisson: host rate must be > 0");
    const double mean_gap_ns = s.cdf.mean_bytes_hpcc() * 8e9 / (double(s.host_rate_bps) * s.load);
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
            f.size_bytes = s.cdf.sample_hpcc(rng.uniform());
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
