// The data-plane FIB: IPv4 longest-prefix match (rte_fib, DIR-24-8) and IPv6 (rte_lpm6) mapping
// to next-hop ids, and the next-hop table those ids index.
//
// Concurrency: workers read, one control thread writes. The FIB keeps two identical copies.
// A commit applies a batch of changes to the inactive copy, publishes it with one atomic
// pointer store, waits for a QSBR grace period (every worker has passed a quiescent point, so
// none still reads the old copy), then applies the same batch to the old copy. Workers never
// wait and never see a half-applied batch; the control thread pays the wait. Memory is twice
// one table, the price of lock-free readers for rte_fib and rte_lpm6: neither makes a reader
// safe against a concurrent writer (rte_fib has no RCU mode at all).
//
// Why rte_fib and not rte_lpm for IPv4: rte_lpm_add scans the rules of the same prefix length,
// so N adds of one length cost O(N^2) (1 M /24s: tens of minutes). rte_fib keeps its rules in
// an rte_rib trie (O(log N) per add) and its lookup table is the same DIR-24-8 as rte_lpm's.
#pragma once

#include <rte_fib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "lb/ecmp_group.h"

struct rte_fib6;
struct rte_lpm6;
struct rte_mempool;
struct rte_rcu_qsbr;

namespace rocesw {

// Next-hop id 0 is never a route target. Its entry stays drop_no_route, and the IPv4 lookup
// returns it for a miss (rte_fib's default_nh), so a miss and id 0 both mean no_route.
inline constexpr uint32_t kNoRouteNh = 0;
// No next-hop id: FibParams::max_nexthops is at most this (the Fib refuses more), so ids are
// below it. The worker marks the end of a burst's next-hop list with it (its run scan).
inline constexpr uint32_t kNoNhId = 0x7FFFFFFF;

enum class NextHopKind : uint8_t {
    drop_no_route,  // id 0 (kNoRouteNh): never installed as a route target, returned on miss
    forward,        // out of `port` to `dst_mac`
    local,          // one of the switch's own addresses
    glean,          // connected subnet, neighbour not known: punted (host interfaces) or no_neighbour drop
    unresolved,     // gateway whose neighbour is not known: no_neighbour drop
    ecmp_group,     // multipath: the load balancer picks a member of EcmpGroup `group`
    discard,        // a route that discards silently (the kernel's blackhole): dropped
    reject,         // a route that rejects (unreachable/prohibit): punted (host interfaces: the
                    // kernel answers ICMP unreachable) or dropped as route_discard
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
    // Compact tables: IPv4 and IPv6 are RIB-only (rte_fib/rte_fib6 type DUMMY: a lookup walks
    // the trie), so memory grows with the routes alone instead of two fixed 64 MiB tbl24s per
    // copy. For the simulator, which runs many small switches in one process; the tbl8 counts
    // are unused.
    bool compact = false;
    // One copy of the tables instead of two: a commit changes the tables readers use in place,
    // so no reader may run during it - for a single thread that both reads and commits (the
    // simulator). Needs no QSBR (the Fib refuses one). Halves the memory and the EAL memzones.
    bool single_copy = false;
};

// EAL memory of one rte_rib node as rte_rib allocates it: a 40-byte node in a mempool without
// NO_CACHE_ALIGN or NO_SPREAD flags, so a 64-byte object header, the node padded to 64 bytes,
// and the padding that spreads objects over memory channels (3 cache lines with 4 channels).
inline constexpr uint64_t kRibNodeBytes = 192;

// Bytes of EAL memory a Fib with these parameters takes (both copies). Per copy:
// - IPv4 (rte_fib DIR-24-8, 4-byte entries): a 2^24-entry tbl24 (64 MiB), 1 KiB per tbl8 group
//   (the count rounded up to 64, plus one), and the rte_rib behind it: 2 nodes per route
//   (a route and at most one branching node) and their mempool ring (8 bytes per slot, a power
//   of two);
// - IPv6 (rte_lpm6): a 2^24-entry tbl24 (64 MiB), 1 KiB per tbl8 group and the rule table;
// - the next-hop table, and 1 MiB for the rest (the structures, tbl8 bitmaps, mempool header).
// test/pipeline/fib_test.cc checks this against what the allocator hands out.
// Compact: the rte_rib/rte_rib6 nodes (2 per route, as above; an IPv6 node is 64 bytes larger),
// the next-hop table and the 1 MiB, per copy.
inline uint64_t fib_memory_bytes(const FibParams &p) {
    if (p.compact) {
        const uint64_t nodes4 = 2 * uint64_t(p.ipv4_max_routes), nodes6 = 2 * uint64_t(p.ipv6_max_routes);
        const uint64_t one = nodes4 * kRibNodeBytes + nodes6 * (kRibNodeBytes + 64) +
                             (nodes4 + nodes6) * 16 + uint64_t(p.max_nexthops) * sizeof(NextHop) +
                             (1ull << 20);
        return (p.single_copy ? 1 : 2) * one;
    }
    const uint64_t tbl24 = (1ull << 24) * 4;
    const uint64_t v4_tbl8s = (uint64_t(p.ipv4_tbl8s) + 63) / 64 * 64 + 1;
    const uint64_t rib_nodes = 2 * uint64_t(p.ipv4_max_routes);
    uint64_t ring = 1;
    while (ring < rib_nodes + 1) ring <<= 1;
    const uint64_t v4 = tbl24 + v4_tbl8s * 256 * 4 + rib_nodes * kRibNodeBytes + ring * 8;
    const uint64_t v6 = tbl24 + uint64_t(p.ipv6_tbl8s) * 256 * 4 + uint64_t(p.ipv6_max_routes) * 64;
    const uint64_t one = v4 + v6 + uint64_t(p.max_nexthops) * sizeof(NextHop) + (1ull << 20);
    return (p.single_copy ? 1 : 2) * one;
}

// The Fib roceswd builds for `cfg`: room for every IPv4 route the configuration installs
// (static routes, connected and local routes of the port addresses, neighbour host routes)
// plus control_plane.max_learned_routes (default 65536) for what the control plane may learn
// (netlink, doc/control-plane.md); each costs about 800 bytes of EAL memory (two copies of two
// rte_rib nodes). The IPv6 table keeps its default size unless the configuration
// alone needs more.
FibParams fib_params_for(const Config &cfg);

struct FibOp {
    enum class Type : uint8_t { set_nexthop, add_route, del_route } type;
    IpPrefix prefix;   // add/del
    uint32_t nexthop;  // add: target id; set_nexthop: id
    NextHop nh;        // set_nexthop
};

// Objects one copy of the tables holds from its fixed pools now. rte_rib/rte_rib6 nodes (2 at
// most per route: the route and a branching node) come from a mempool of 2 * max_routes; a
// route churned out and in again must give its nodes back (test/pipeline/fib_test.cc,
// RouteChurnReturnsEveryObject). tbl8 groups have no counter in DPDK; that test counts them by
// filling the table.
struct FibUsage {
    uint32_t v4_nodes = 0;  // rte_rib nodes of the IPv4 table
    uint32_t v6_nodes = 0;  // rte_rib6 nodes of the IPv6 table (compact; rte_lpm6 keeps none)
    bool operator==(const FibUsage &) const = default;
};

// One copy of the tables. Readers get it through Fib::reader().
struct FibTables {
    rte_fib *fib4 = nullptr;  // next-hop ids; kNoRouteNh for a miss
    rte_lpm6 *lpm6 = nullptr;     // IPv6, unless compact
    rte_fib6 *fib6 = nullptr;     // IPv6 when compact (RIB-only); a miss reads kNoRouteNh
    NextHop *nexthops = nullptr;  // max_nexthops entries
    // "::/0": rte_lpm6 refuses depth 0, so the IPv6 default route is kept here and a lookup
    // miss reads it. kNoRouteNh when there is none.
    uint32_t v6_default = kNoRouteNh;
    // The node pools behind fib4 and fib6 (rte_rib names its pool "MP_<name>"), for usage().
    const rte_mempool *v4_pool = nullptr, *v6_pool = nullptr;
};

class Fib {
  public:
    // `qsbr` may be null (single-threaded tests): commit then skips the grace period.
    Fib(const std::string &name, const FibParams &params, rte_rcu_qsbr *qsbr);
    ~Fib();
    Fib(const Fib &) = delete;
    Fib &operator=(const Fib &) = delete;

    // Applies `ops` atomically as seen by readers. Returns, per op, true when it took effect
    // (an add fails when the table is full: no rte_rib node or tbl8 group left; the route is
    // reported not installed and the existing ones keep forwarding). Control thread only.
    std::vector<bool> commit(const std::vector<FibOp> &ops);

    // The copy readers use now. A worker keeps the pointer only until its next quiescent point.
    const FibTables *reader() const { return active_.load(std::memory_order_acquire); }

    const FibParams &params() const { return params_; }

    // What copy `i` (0, or 1 unless single_copy) holds from its pools. Control thread.
    FibUsage usage(int i) const;

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

// IPv4 lookup of a burst as the worker does it: `ids[i]` is the next-hop id for `dst[i]`,
// kNoRouteNh when no route covers it. rte_fib returns 64-bit next hops; they are narrowed here
// (ids are below max_nexthops).
inline void fib_lookup4_bulk(const FibTables *t, const uint32_t *dst, uint32_t *ids, unsigned n) {
    constexpr unsigned kChunk = 64;
    uint64_t nh[kChunk];
    for (unsigned off = 0; off < n; off += kChunk) {
        const unsigned k = std::min(kChunk, n - off);
        // rte_fib_lookup_bulk does not write the addresses; its prototype lacks the const.
        rte_fib_lookup_bulk(t->fib4, const_cast<uint32_t *>(dst + off), nh, int(k));
        for (unsigned i = 0; i < k; i++) ids[off + i] = uint32_t(nh[i]);
    }
}

// The same with rte_fib's 64-bit next hops as they are (no narrowing pass): the worker's form.
inline void fib_lookup4_bulk(const FibTables *t, const uint32_t *dst, uint64_t *ids, unsigned n) {
    rte_fib_lookup_bulk(t->fib4, const_cast<uint32_t *>(dst), ids, int(n));
}

// IPv6 lookup of a burst as the worker does it: `ids[i]` is the next-hop id for `dst[i]`, the
// "::/0" slot (FibTables::v6_default, kNoRouteNh when there is none) when no other route covers
// it. rte_lpm6 (or, compact, rte_fib6) and the default in one place: the worker, the tests and
// the benchmarks all call this.
void fib_lookup6_bulk(const FibTables *t, const uint8_t (*dst)[16], uint32_t *ids, unsigned n);

}  // namespace rocesw
