// The built-in `flowlet` policy's class, shared by lb/policy.cc (its choose(), the generic
// interface every policy has) and the balancer (lb/balancer.cc), which makes the LetFlow
// (`random`) chooser's choice itself, inline in its new-flowlet loop, instead of building a
// PathRequest per new flowlet and calling choose() through the interface. Both draw from the
// one per-worker generator below in request order, so the choices are the same
// (LbBalancer.FlowletFastPathDecidesAsTheGenericInterface).
#pragma once

#include "lb/policy.h"

namespace rocesw {

// flowlet: LetFlow (a random member, weighted through the bucket table) or least-loaded by
// this worker's utilization of the member ports.
class FlowletPolicy final : public LbPolicy {
  public:
    explicit FlowletPolicy(uint16_t worker) : rng_(0x9e3779b97f4a7c15ull * (worker + 1)) {}
    LbGranularity granularity() const override { return LbGranularity::flowlet; }
    void choose(std::span<PathRequest> reqs, const LbView &v) override;

    // The LetFlow choice for a new flowlet of group g, drawn from `rng` (rng_, or a copy the
    // caller keeps in a register and writes back).
    static uint8_t random_choice(const EcmpGroup &g, LbRng &rng) {
        static_assert(kEcmpBuckets <= uint64_t(1) << 32);
        return g.buckets[rng.next_low32() & (kEcmpBuckets - 1)];
    }
    LbRng &rng() { return rng_; }

  private:
    LbRng rng_;
};

}  // namespace rocesw
