#include "lb/policy.h"

#include "common/strings.h"
#include "lb/flowlet_policy.h"

#include <array>
#include <limits>
#include <mutex>
#include <stdexcept>

namespace rocesw {

namespace {

// hash: plain resilient ECMP. Never asked; kept so every id has an instance.
class HashPolicy final : public LbPolicy {
  public:
    LbGranularity granularity() const override { return LbGranularity::flow; }
    void choose(std::span<PathRequest> reqs, const LbView &) override {
        for (auto &r : reqs) r.choice = r.group->bucket_member(r.flow_hash);
    }
};

// The member with the least local load among the alive ones; ties go to the current member
// (no needless move), then to a hash-rotated start so tied flows spread. `assigned` holds the
// bytes given to each port earlier in this call, so one burst of new flowlets does not herd
// onto the member that looked least loaded when the burst began.
template <typename Score>
uint8_t least_loaded(const PathRequest &r, std::array<double, kMaxPorts> &assigned, Score score) {
    const EcmpGroup &g = *r.group;
    uint8_t best = kNoMember;
    double best_score = std::numeric_limits<double>::infinity();
    uint32_t start = uint32_t(r.flow_hash >> 40) % g.n_alive;
    for (uint32_t k = 0; k < g.n_alive; k++) {
        uint8_t slot = g.alive[(start + k) % g.n_alive];
        const LbMember &m = g.members[slot];
        double s = (score(m) + assigned[m.port]) / m.weight;
        if (s < best_score || (s == best_score && slot == r.current)) {
            best_score = s;
            best = slot;
        }
    }
    assigned[g.members[best].port] += r.bytes;
    return best;
}

// This worker's recent load on a port, in bytes: the EWMA over util_horizon_us plus what was
// sent since the EWMA was last folded.
inline double local_bytes(const LbView &v, uint8_t port) {
    return v.port_util[port] * v.settings->util_horizon_us + double(v.port_bytes[port]);
}

// adaptive: at a flowlet boundary, the member whose egress queue for the packet's class is
// shortest, plus the bytes its port's utilization would add over util_horizon_us.
class AdaptivePolicy final : public LbPolicy {
  public:
    LbGranularity granularity() const override { return LbGranularity::flowlet; }
    void choose(std::span<PathRequest> reqs, const LbView &v) override {
        const LoadSignal *ls = v.load && v.load->queue_bytes ? v.load : nullptr;
        std::array<double, kMaxPorts> assigned{};
        for (auto &r : reqs)
            r.choice = least_loaded(r, assigned, [&](const LbMember &m) {
                double q = ls ? double(ls->queue_bytes(ls->ctx, m.port, r.tc)) : 0.0;
                return q + local_bytes(v, m.port);
            });
    }
};

// spray: every packet to the next bucket of a per-worker walk with an odd stride over the
// bucket table, so members get packets in proportion to their weights.
class SprayPolicy final : public LbPolicy {
  public:
    explicit SprayPolicy(uint16_t worker) : i_(worker * 977u) {}
    LbGranularity granularity() const override { return LbGranularity::packet; }
    void choose(std::span<PathRequest> reqs, const LbView &) override {
        for (auto &r : reqs) {
            i_ += 2654435761u;
            r.choice = r.group->buckets[(i_ >> 20) & (kEcmpBuckets - 1)];
        }
    }

  private:
    uint32_t i_;
};

struct Registry {
    std::mutex mu;
    std::vector<std::pair<std::string, LbPolicyFactory>> list = {
        {"hash", [](uint16_t) { return std::make_unique<HashPolicy>(); }},
        {"flowlet", [](uint16_t w) { return std::make_unique<FlowletPolicy>(w); }},
        {"adaptive", [](uint16_t) { return std::make_unique<AdaptivePolicy>(); }},
        {"spray", [](uint16_t w) { return std::make_unique<SprayPolicy>(w); }},
    };
};

Registry &registry() {
    static Registry r;
    return r;
}

}  // namespace

void FlowletPolicy::choose(std::span<PathRequest> reqs, const LbView &v) {
    if (v.settings->chooser_least_loaded) {
        std::array<double, kMaxPorts> assigned{};
        for (auto &r : reqs)
            r.choice =
                least_loaded(r, assigned, [&](const LbMember &m) { return local_bytes(v, m.port); });
        return;
    }
    for (auto &r : reqs) r.choice = random_choice(*r.group, rng_);
}

uint8_t register_lb_policy(const std::string &name, LbPolicyFactory factory) {
    Registry &r = registry();
    std::lock_guard lk(r.mu);
    for (const auto &[n, f] : r.list)
        if (n == name) throw std::invalid_argument("load-balancing policy '" + name + "' exists");
    if (r.list.size() >= kMaxLbPolicies)
        throw std::length_error("at most " + std::to_string(kMaxLbPolicies) + " policies");
    r.list.emplace_back(name, std::move(factory));
    return uint8_t(r.list.size() - 1);
}

int lb_policy_id(const std::string &name) {
    Registry &r = registry();
    std::lock_guard lk(r.mu);
    for (size_t i = 0; i < r.list.size(); i++)
        if (r.list[i].first == name) return int(i);
    return -1;
}

std::string lb_policy_name(uint8_t id) {
    Registry &r = registry();
    std::lock_guard lk(r.mu);
    return id < r.list.size() ? r.list[id].first : "?";
}

std::vector<std::string> lb_policy_names() {
    Registry &r = registry();
    std::lock_guard lk(r.mu);
    std::vector<std::string> names;
    for (const auto &[n, f] : r.list) names.push_back(n);
    return names;
}

void check_lb_policy_names(const Config &cfg) {
    for (const auto &ref : cfg.lb_policy_refs) {
        if (lb_policy_id(ref.name) >= 0) continue;
        throw ConfigError(ref.where + ": unknown policy '" + ref.name + "' (" +
                          join(lb_policy_names()) + ")");
    }
}

size_t lb_policy_count() {
    Registry &r = registry();
    std::lock_guard lk(r.mu);
    return r.list.size();
}

std::unique_ptr<LbPolicy> make_lb_policy(uint8_t id, uint16_t worker) {
    Registry &r = registry();
    LbPolicyFactory f;
    {
        std::lock_guard lk(r.mu);
        if (id >= r.list.size()) return nullptr;
        f = r.list[id].second;
    }
    return f(worker);
}

}  // namespace rocesw
