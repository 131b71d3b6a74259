// `two_choices`: the power of two choices (Mitzenmacher) as a load-balancing plugin, the worked
// example of doc/load-balancing.md, "A policy as a plugin". At each flowlet's start it draws two
// different alive members at random and takes the one whose egress queue for the packet's
// traffic class holds fewer bytes per unit of weight, counting what this call has already given
// each port; on a tie the flow's current member when it is one of the two, else the first draw.
// Without a queue signal (a switch without QoS) it is a random choice of two.
#include <array>
#include <memory>
#include <span>

#include "lb/plugin.h"

namespace {

using rocesw::EcmpGroup;
using rocesw::LbView;
using rocesw::PathRequest;

class TwoChoices final : public rocesw::LbPolicy {
  public:
    explicit TwoChoices(uint16_t worker) : rng_(0x2c1b3c6d5e7f8091ull * (worker + 1u)) {}

    rocesw::LbGranularity granularity() const override {
        return rocesw::LbGranularity::flowlet;
    }

    void choose(std::span<PathRequest> reqs, const LbView &v) override {
        std::array<uint64_t, rocesw::kMaxPorts> assigned{};  // bytes given out in this call
        for (PathRequest &r : reqs) {
            const EcmpGroup &g = *r.group;
            const uint32_t n = g.n_alive;
            const uint32_t i = rng_.next_low32() % n;
            uint8_t a = g.alive[i];
            uint8_t b = n > 1 ? g.alive[(i + 1 + rng_.next_low32() % (n - 1)) % n] : a;
            if (b == r.current) std::swap(a, b);  // a tie keeps the current member
            // bytes(a) / weight(a) <= bytes(b) / weight(b), without a division.
            const unsigned __int128 qa = load(g, a, r.tc, v, assigned), qb = load(g, b, r.tc, v, assigned);
            r.choice = qa * g.members[b].weight <= qb * g.members[a].weight ? a : b;
            assigned[g.members[r.choice].port % rocesw::kMaxPorts] += r.bytes;
        }
    }

  private:
    static uint64_t load(const EcmpGroup &g, uint8_t slot, uint8_t tc, const LbView &v,
                         const std::array<uint64_t, rocesw::kMaxPorts> &assigned) {
        const uint8_t port = g.members[slot].port;
        uint64_t q = assigned[port % rocesw::kMaxPorts];
        if (v.load && v.load->queue_bytes) q += v.load->queue_bytes(v.load->ctx, port, tc);
        return q;
    }

    rocesw::LbRng rng_;
};

}  // namespace

ROCESW_LB_PLUGIN(ctx) {
    std::string err;
    return ctx.add("two_choices", [](uint16_t w) { return std::make_unique<TwoChoices>(w); }, &err);
}
