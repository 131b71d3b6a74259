// ECMP groups: the members of a multipath route and the resilient bucket table that maps a flow
// hash to one of them, published to workers under RCU/QSBR.
//
// Resilient table: kEcmpBuckets buckets, each owned by the member that wins a weighted
// rendezvous (highest-random-weight) draw between the bucket number and the member's key. The
// key is a hash of the member's gateway address (and of its port for a link-local gateway, which
// names a router only with its link), so the table is a function of the member *set* alone: the
// order members were added does not matter, a restart with the same seed rebuilds the same
// table, removing a member re-draws only its buckets (each goes to its runner-up), and adding
// one takes only the buckets it now wins.
//
// Slots: a member keeps its slot (0..kMaxGroupMembers-1) for as long as it is configured, alive
// or not, so flowlet-table entries and per-member counters that name a slot stay meaningful when
// other members come and go.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "pkt/addr.h"

struct rte_rcu_qsbr;

namespace rocesw {

inline constexpr uint32_t kEcmpBuckets = 4096;  // power of two; 4 KiB of uint8 per group
inline constexpr uint32_t kMaxGroupMembers = uint32_t(kMaxRoutePaths);
inline constexpr uint32_t kMaxEcmpGroups = 512;
inline constexpr uint32_t kMaxLbPolicies = 16;
inline constexpr uint8_t kNoMember = 0xFF;

// Built-in policy ids; registered policies get the ids after these (lb/policy.h).
enum class LbPolicyId : uint8_t { hash = 0, flowlet = 1, adaptive = 2, spray = 3 };

struct LbMember {
    uint64_t key = 0;     // rendezvous key: lb_member_key(gateway, port)
    uint32_t weight = 1;  // relative share of the buckets
    bool alive = false;   // resolved (neighbour known); dead members own no bucket
    uint8_t port = 0;
    MacAddr dst_mac;
    // lb_member_fp(key, port), set by build_ecmp_group: the member in a flowlet entry, so that a
    // flowlet goes on on its next hop when its route moves to another group.
    uint16_t fp = 0;
    bool operator==(const LbMember &) const = default;
};

struct alignas(64) EcmpGroup {
    uint16_t id = 0;
    uint8_t policy = 0;   // LbPolicyId or a registered policy's id
    uint8_t n_slots = 0;  // slots in use (alive or not): members[0..n_slots)
    uint8_t n_alive = 0;
    // Every bucket names an alive slot below n_slots (ecmp_buckets_alive(): what
    // build_ecmp_group makes, dead members own no bucket), so a member drawn from the buckets
    // needs no alive check. A group is rebuilt whenever a member goes down or up.
    bool buckets_alive = false;
    std::array<uint8_t, kMaxGroupMembers> alive;  // the alive slots, n_alive of them
    std::array<LbMember, kMaxGroupMembers> members;
    std::array<uint8_t, kEcmpBuckets> buckets;  // slot per bucket (kNoMember when none alive)

    uint8_t bucket_member(uint64_t hash) const { return buckets[hash & (kEcmpBuckets - 1)]; }
};

// The rendezvous key of a gateway address.
uint64_t lb_member_key(const IpAddr &via);
// A gateway that names a router only with its link: IPv6 fe80::/10, IPv4 169.254/16.
inline bool lb_gateway_link_local(const IpAddr &via) {
    return is_link_local(via) || (!via.is_v6 && (via.v4 >> 16) == 0xA9FE);
}
// The rendezvous key of the member through gateway `via` on `port`: lb_member_key(via), and for
// a link-local gateway (fe80::/10, 169.254/16) mixed with the port, since the same link-local
// address on two links (fe80::1 on every spine's port, BGP unnumbered) is two routers.
uint64_t lb_member_key(const IpAddr &via, uint8_t port);
// A member's fingerprint in a flowlet entry: its key's high bits and its port.
inline uint16_t lb_member_fp(uint64_t key, uint8_t port) { return uint16_t(key >> 48) ^ port; }

// Builds a group from its slots (members[i] is slot i): the alive list, the bucket table and
// buckets_alive.
std::unique_ptr<EcmpGroup> build_ecmp_group(uint16_t id, uint8_t policy,
                                            const std::vector<LbMember> &slots);

// Whether every bucket of `g` names an alive slot below n_slots (EcmpGroup::buckets_alive;
// whoever edits a built group's buckets or members sets the flag from this again).
bool ecmp_buckets_alive(const EcmpGroup &g);

// Switch-wide settings the workers read (published like groups: replaced whole, under RCU).
struct LbSettings {
    FlowHashFn hash_function = FlowHashFn::crc32c;
    uint64_t seed = 0x5eed;
    bool symmetric = false;
    bool hash_dest_qp = false;
    uint32_t flowlet_gap_us = 50;
    uint32_t flowlet_age_us = 10000;
    uint32_t flowlet_entries = 65536;   // per worker; read once when a worker is built
    bool chooser_least_loaded = false;  // `flowlet` policy's new-path chooser
    uint32_t util_horizon_us = 10;
    bool trace_path_changes = false;
    uint8_t default_policy = 0;
};

// Local load signals for congestion-aware policies. Plain function pointer, not a virtual
// class: it is called once per candidate member at a flowlet boundary, never per packet, and
// the switch binds it to the QoS egress without lib/lb depending on lib/qos.
struct LoadSignal {
    // Bytes queued on `port` in the egress queue of traffic class `tc`. Any thread.
    uint64_t (*queue_bytes)(const void *ctx, uint16_t port, uint8_t tc) = nullptr;
    const void *ctx = nullptr;
};

// The groups and settings workers read. Control thread writes; workers read lock-free. A
// replaced group or settings block is freed only after a QSBR grace period, so a worker may use
// what it loaded until its next quiescent point.
class EcmpGroups {
  public:
    explicit EcmpGroups(rte_rcu_qsbr *qsbr);  // null qsbr: no grace period (single-thread tests)
    ~EcmpGroups();
    EcmpGroups(const EcmpGroups &) = delete;
    EcmpGroups &operator=(const EcmpGroups &) = delete;

    // Worker side.
    const EcmpGroup *group(uint32_t id) const {
        return id < kMaxEcmpGroups ? groups_[id].load(std::memory_order_acquire) : nullptr;
    }
    const LbSettings &settings() const { return *settings_.load(std::memory_order_acquire); }
    const LoadSignal *load_signal() const { return load_.load(std::memory_order_acquire); }

    // Control side. Publishes every (id, group) pair (null removes), then waits one grace
    // period and frees what was replaced.
    void publish(std::vector<std::pair<uint16_t, std::unique_ptr<EcmpGroup>>> changes);
    void set_settings(const LbSettings &s);
    // Set once before workers start; `signal` must outlive the workers.
    void set_load_signal(const LoadSignal *signal) { load_.store(signal); }

  private:
    void synchronize();
    rte_rcu_qsbr *qsbr_;
    std::array<std::atomic<const EcmpGroup *>, kMaxEcmpGroups> groups_{};
    std::atomic<const LbSettings *> settings_;
    std::atomic<const LoadSignal *> load_{nullptr};
};

// LbConfig (names) -> LbSettings (ids). Unknown policy names map to hash.
LbSettings lb_settings_from(const LbConfig &c);

}  // namespace rocesw
