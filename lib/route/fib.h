// The data-plane FIB: IPv4 and IPv6 longest-prefix match (rte_lpm, rte_lpm6) mapping to next-hop
// ids, and the next-hop table those ids index.
//
// Concurrency: workers read, one control thread writes. The FIB keeps two identical copies.
// A commit applies a batch of changes to the inactive copy, publishes it with one atomic
// pointer store, waits for a QSBR grace period (every worker has passed a quiescent point, so
// none still reads the old copy), then applies the same batch to the old copy. Workers never
// wait and never see a half-applied batch; the control thread pays the wait. Memory is twice
// one table, the price of lock-free readers for rte_lpm6, which has no RCU support of its own.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "lb/ecmp_group.h"

struct rte_lpm;
struct rte_lpm6;
struct rte_rcu_qsbr;

namespace rocesw {

enum class NextHopKind : uint8_t {
    drop_no_route,  // id 0: never installed as a route target, returned on lookup miss
    forward,        // out of `port` to `dst_mac`
    local,          // one of the switch's own addresses
    glean,          // connected subnet, neighbour not known: no_neighbour drop (punt later)
    unresolved,     // gateway whose neighbour is not known: no_neighbour drop
    ecmp_group,     // multipath: the load balancer picks a member of EcmpGroup `group`
};

struct NextHop {
    NextHopKind kind = NextHopKind::drop_no_route;
    uint8_t port = 0;
    MacAddr dst_mac;
    uint16_t group = 0;  // ecmp_group: the EcmpGroups id
    bool operator==(const NextHop &) const = default;
};

struct FibParams {
    uint32_t max_nexthops = 65536;
    uint32_t ipv4_max_routes = 1u << 20, ipv4_tbl8s = 1u << 12;
    uint32_t ipv6_max_routes = 1u << 16, ipv6_tbl8s = 1u << 14;
};

// Bytes of EAL memory a Fib with these parameters takes (both copies): rte_lpm and rte_lpm6
// each have a 2^24-entry tbl24 (64 MiB), plus 1 KiB per tbl8 group and the rule tables.
inline uint64_t fib_memory_bytes(const FibParams &p) {
    const uint64_t tbl24 = (1ull << 24) * 4;
    uint64_t one = 2 * tbl24 + (uint64_t(p.ipv4_tbl8s) + p.ipv6_tbl8s) * 256 * 4 +
                   uint64_t(p.ipv4_max_routes) * 8 + uint64_t(p.ipv6_max_routes) * 64 +
                   uint64_t(p.max_nexthops) * sizeof(NextHop);
    return 2 * one;
}

struct FibOp {
    enum class Type : uint8_t { set_nexthop, add_route, del_route } type;
    IpPrefix prefix;   // add/del
    uint32_t nexthop;  // add: target id; set_nexthop: id
    NextHop nh;        // set_nexthop
};

// One copy of the tables. Readers get it through Fib::reader().
struct FibTables {
    rte_lpm *lpm4 = nullptr;
    rte_lpm6 *lpm6 = nullptr;
    NextHop *nexthops = nullptr;  // max_nexthops entries
};

class Fib {
  public:
    // `qsbr` may be null (single-threaded tests): commit then skips the grace period.
    Fib(const std::string &name, const FibParams &params, rte_rcu_qsbr *qsbr);
    ~Fib();
    Fib(const Fib &) = delete;
    Fib &operator=(const Fib &) = delete;

    // Applies `ops` atomically as seen by readers. Returns, per op, true when it took effect
    // (an add fails when the LPM is full: the route is reported not installed and the existing
    // ones keep forwarding). Control thread only.
    std::vector<bool> commit(const std::vector<FibOp> &ops);

    // The copy readers use now. A worker keeps the pointer only until its next quiescent point.
    const FibTables *reader() const { return active_.load(std::memory_order_acquire); }

    const FibParams &params() const { return params_; }

    // The ECMP groups next hops of kind ecmp_group name, published under the same QSBR.
    EcmpGroups &groups() { return groups_; }
    const EcmpGroups &groups() const { return groups_; }

  private:
    bool apply(FibTables &t, const FibOp &op);
    FibParams params_;
    rte_rcu_qsbr *qsbr_;
    std::array<FibTables, 2> copies_;
    std::atomic<const FibTables *> active_;
    EcmpGroups groups_;
};

}  // namespace rocesw
