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

}  // namespace rocesw::sim
