// The load-balancing policy interface. A policy decides which member of an ECMP group a flow,
// flowlet or packet takes; the balancer (lb/balancer.h) does everything around it: the flow
// hash, the flowlet table, the bucket fallback, counters and path-change events.
//
// What a policy sees: one PathRequest per decision (the group, the flow hash, the packet's
// traffic class and length, the member the flow used until now) and an LbView of local state
// (now, settings, queue depths through LoadSignal, this worker's per-port utilization).
// What it returns: `choice`, an alive slot of the request's group, for every request. A slot that
// is not alive is replaced by the hash bucket's member and counted as a fallback. The other
// fields are inputs: the balancer forwards and counts the packet by them as it gave them.
// When it is asked (granularity()):
//   flow     never: the resilient bucket table decides (the `hash` policy);
//   flowlet  for the first packet of every flowlet (a new flow, or a gap > flowlet_gap_us);
//            later packets of the flowlet follow the stored choice without asking;
//   packet   for every packet (the `spray` policy).
// Hot-path rules: choose() is called at most once per burst per policy, on the worker's lcore,
// with up to kMaxBurst requests. It must not allocate, lock, block, make syscalls or read a
// clock (use view.now_ns). An instance belongs to one worker (one per worker, built by the
// factory), so its own state needs no atomics; anything shared with other workers or the control
// thread must be read-only or atomic.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/counters.h"
#include "lb/ecmp_group.h"

namespace rocesw {

enum class LbGranularity : uint8_t { flow, flowlet, packet };

struct PathRequest {
    const EcmpGroup *group;  // the packet's group; at least one member is alive
    uint64_t flow_hash;      // flow_hash() of the packet
    uint32_t bytes;          // frame length
    uint8_t tc;              // traffic class (egress queue) of the packet
    uint8_t current;         // slot the flow used until now; kNoMember for a new flow
    uint8_t choice;          // OUT: an alive slot of `group`
};

struct LbView {
    uint64_t now_ns;
    const LbSettings *settings;
    const LoadSignal *load;      // null when the switch exposes no queue depths
    const double *port_util;     // [kMaxPorts] this worker's bytes per microsecond, EWMA
    const uint64_t *port_bytes;  // [kMaxPorts] bytes this worker sent since the EWMA's last fold
};

class LbPolicy {
  public:
    virtual ~LbPolicy() = default;
    virtual LbGranularity granularity() const = 0;
    virtual void choose(std::span<PathRequest> reqs, const LbView &view) = 0;
};

// Builds one instance for worker `worker`.
using LbPolicyFactory = std::function<std::unique_ptr<LbPolicy>(uint16_t worker)>;

// Registers a policy under `name` (which config files may then name) and returns its id. Call
// before the config is loaded and workers are built. Throws when the name is taken or
// kMaxLbPolicies are registered.
uint8_t register_lb_policy(const std::string &name, LbPolicyFactory factory);
int lb_policy_id(const std::string &name);  // -1 when unknown
std::string lb_policy_name(uint8_t id);
// Every registered name in id order: the built-ins hash, flowlet, adaptive, spray first.
std::vector<std::string> lb_policy_names();

// The load-time check of the policy names a config file gives (Config::lb_policy_refs): the
// first unknown one throws ConfigError "<where>: unknown policy 'x' (hash, flowlet, ...)".
// Whoever loads a switch config for use calls it right after load_config_file.
void check_lb_policy_names(const Config &cfg);
size_t lb_policy_count();
std::unique_ptr<LbPolicy> make_lb_policy(uint8_t id, uint16_t worker);

// A tiny per-worker generator for random choices (xorshift64*).
struct LbRng {
    uint64_t s;
    explicit LbRng(uint64_t seed) : s(seed | 1) {}
    static constexpr uint64_t kMul = 2685821657736338717ull;
    uint64_t next() {
        step();
        return s * kMul;
    }
    // next()'s low 32 bits (all a bucket index takes): the product's low half is the low
    // halves' product, one 32-bit multiply by an immediate (no 64-bit constant to load).
    uint32_t next_low32() {
        step();
        return uint32_t(s) * uint32_t(kMul);
    }

  private:
    void step() {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
    }
};

}  // namespace rocesw
