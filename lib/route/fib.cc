#include "route/fib.h"

#include <rte_errno.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_lpm6.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>
#include <rte_rib.h>

#include <stdexcept>

#include "lb/qsbr.h"

namespace rocesw {

FibParams fib_params_for(const Config &cfg) {
    FibParams p;
    uint64_t v4 = 0, v6 = 0;
    auto count = [&](bool is_v6, uint64_t n) { (is_v6 ? v6 : v4) += n; };
    for (const auto &r : cfg.routes) count(r.prefix.addr.is_v6, 1);
    for (const auto &r : cfg.multipath_routes) count(r.prefix.addr.is_v6, 1);
    for (const auto &n : cfg.neighbours) count(n.ip.is_v6, 1);  // host route
    for (const auto &port : cfg.ports) {
        count(false, 2 * port.ipv4.size());  // connected subnet + local address
        count(true, 2 * port.ipv6.size());
    }
    const uint64_t learned = cfg.control_plane.max_learned_routes;
    p.ipv4_max_routes = uint32_t(std::min<uint64_t>(v4 + learned, INT32_MAX / 2));
    p.ipv6_max_routes = uint32_t(std::max<uint64_t>(p.ipv6_max_routes, v6 + learned));
    return p;
}

namespace {

void free_tables(FibTables &t) {
    rte_fib_free(t.fib4);
    rte_lpm6_free(t.lpm6);
    rte_fib6_free(t.fib6);
    rte_free(t.nexthops);
    t = FibTables{};
}

// rte_fib_add for IPv4, around a DPDK 22.11 accounting bug in DIR-24-8. It counts the /24s
// that hold a route longer than /24 (each may need a tbl8 group, and adds beyond the groups are
// refused up front): an add counts its /24 unless another such route is there, a delete
// uncounts it when it was the last. But an add whose covering route has the same next hop
// returns before counting (the table needs no change), while its delete uncounts all the same.
// The count then drops below the truth and, from zero, wraps: every later route longer than /24
// in a /24 without one is refused (ENOSPC), the same route too, for the table's life. Routes
// sharing a next-hop id make that common here: a learned /25 through the gateway of a learned
// /16, a device route inside the connected subnet. So a new route longer than /24 goes in
// through next hop 0 (the covering route's is never 0: adds to it are refused), which makes
// DPDK count it, then is set to its own next hop. The copy is not being read (commit) and
// rte_fib_add only modifies a route that exists, so the detour is never seen and cannot fail
// halfway. Compact tables (RTE_FIB_DUMMY) keep no count. Checked by fib_test.cc,
// RouteChurnReturnsEveryObject.
bool add4(rte_fib *fib, bool compact, uint32_t ip, uint8_t depth, uint32_t nexthop) {
    if (depth > 24 && !compact && !rte_rib_lookup_exact(rte_fib_get_rib(fib), ip, depth)) {
        if (rte_fib_add(fib, ip, depth, kNoRouteNh) != 0) return false;
    }
    return rte_fib_add(fib, ip, depth, nexthop) == 0;
}

}  // namespace

Fib::Fib(const std::string &name, const FibParams &params, rte_rcu_qsbr *qsbr)
    : params_(params), qsbr_(qsbr), groups_(qsbr) {
    if (params.single_copy && qsbr)
        throw std::runtime_error("FIB '" + name + "': one table copy cannot serve QSBR readers");
    if (params.max_nexthops > kNoNhId)
        throw std::runtime_error("FIB '" + name + "': more next hops than ids below 2^31 - 1");
    for (int i = 0; i < (params.single_copy ? 1 : 2); i++) {
        std::string n4 = name + "_v4_" + std::to_string(i);
        std::string n6 = name + "_v6_" + std::to_string(i);
        rte_fib_conf c4{};
        c4.type = params.compact ? RTE_FIB_DUMMY : RTE_FIB_DIR24_8;
        c4.default_nh = kNoRouteNh;  // a miss reads next hop 0: drop_no_route
        c4.max_routes = int(params.ipv4_max_routes);
        c4.rib_ext_sz = 0;
        c4.dir24_8.nh_sz = RTE_FIB_DIR24_8_4B;  // ids up to 2^31-1; 2B would cap at 32767
        c4.dir24_8.num_tbl8 = params.ipv4_tbl8s;
        rte_lpm6_config c6{params.ipv6_max_routes, params.ipv6_tbl8s, 0};
        FibTables &t = copies_[i];
        t.fib4 = rte_fib_create(n4.c_str(), SOCKET_ID_ANY, &c4);
        int err = t.fib4 ? 0 : rte_errno;
        if (params.compact) {
            rte_fib6_conf f6{};
            f6.type = RTE_FIB6_DUMMY;
            f6.default_nh = kNoRouteNh;
            f6.max_routes = int(params.ipv6_max_routes);
            t.fib6 = rte_fib6_create(n6.c_str(), SOCKET_ID_ANY, &f6);
            if (!err && !t.fib6) err = rte_errno;
        } else {
            t.lpm6 = rte_lpm6_create(n6.c_str(), SOCKET_ID_ANY, &c6);
            if (!err && !t.lpm6) err = rte_errno;
        }
        t.nexthops = static_cast<NextHop *>(
            rte_zmalloc("rocesw_nexthops", sizeof(NextHop) * params.max_nexthops, 64));
        if (!err && !t.nexthops) err = ENOMEM;
        if (err) {
            std::string msg = std::string("cannot allocate FIB '") + name +
                              "': " + rte_strerror(err) +
                              " (is EAL memory large enough? see switch.memory_mb)";
            for (auto &c : copies_) free_tables(c);
            throw std::runtime_error(msg);
        }
        for (uint32_t j = 0; j < params.max_nexthops; j++) t.nexthops[j] = NextHop{};
        t.v4_pool = rte_mempool_lookup(("MP_" + n4).c_str());
        if (t.fib6) t.v6_pool = rte_mempool_lookup(("MP_" + n6).c_str());
    }
    active_.store(&copies_[0], std::memory_order_release);
}

Fib::~Fib() {
    for (auto &c : copies_) free_tables(c);
}

FibUsage Fib::usage(int i) const {
    const FibTables &t = copies_.at(size_t(i));
    FibUsage u;
    if (t.v4_pool) u.v4_nodes = rte_mempool_in_use_count(t.v4_pool);
    if (t.v6_pool) u.v6_nodes = rte_mempool_in_use_count(t.v6_pool);
    return u;
}

bool Fib::apply(FibTables &t, const FibOp &op) {
    switch (op.type) {
        case FibOp::Type::set_nexthop:
            // Id 0 is what a miss reads: it stays drop_no_route.
            if (op.nexthop >= params_.max_nexthops || op.nexthop == kNoRouteNh) return false;
            t.nexthops[op.nexthop] = op.nh;
            return true;
        case FibOp::Type::add_route:
            // Id 0 is what a miss returns; a route to it would be indistinguishable.
            if (op.nexthop >= params_.max_nexthops || op.nexthop == kNoRouteNh) return false;
            if (op.prefix.addr.is_v6 && op.prefix.len == 0) {
                t.v6_default = op.nexthop;
                return true;
            }
            if (op.prefix.addr.is_v6 && t.fib6)
                return rte_fib6_add(t.fib6, op.prefix.addr.v6.data(), op.prefix.len,
                                    op.nexthop) == 0;
            if (op.prefix.addr.is_v6)
                return rte_lpm6_add(t.lpm6, op.prefix.addr.v6.data(), op.prefix.len, op.nexthop) ==
                       0;
            return add4(t.fib4, params_.compact, op.prefix.addr.v4, op.prefix.len, op.nexthop);
        case FibOp::Type::del_route:
            if (op.prefix.addr.is_v6 && op.prefix.len == 0) {
                const bool had = t.v6_default != kNoRouteNh;
                t.v6_default = kNoRouteNh;
                return had;
            }
            if (op.prefix.addr.is_v6 && t.fib6)
                return rte_fib6_delete(t.fib6, op.prefix.addr.v6.data(), op.prefix.len) == 0;
            if (op.prefix.addr.is_v6)
                return rte_lpm6_delete(t.lpm6, op.prefix.addr.v6.data(), op.prefix.len) == 0;
            return rte_fib_delete(t.fib4, op.prefix.addr.v4, op.prefix.len) == 0;
    }
    return false;
}

std::vector<bool> Fib::commit(const std::vector<FibOp> &ops) {
    std::vector<bool> ok(ops.size());
    if (params_.single_copy) {  // no concurrent reader (constructor): change it in place
        for (size_t i = 0; i < ops.size(); i++) ok[i] = apply(copies_[0], ops[i]);
        return ok;
    }
    const FibTables *old = active_.load(std::memory_order_relaxed);
    FibTables &next = copies_[old == &copies_[0] ? 1 : 0];
    for (size_t i = 0; i < ops.size(); i++) ok[i] = apply(next, ops[i]);
    active_.store(&next, std::memory_order_release);
    // Wait until no worker can still hold `old`, then bring it level with `next`.
    if (qsbr_) qsbr_synchronize(qsbr_);
    FibTables &stale = copies_[&next == &copies_[0] ? 1 : 0];
    for (size_t i = 0; i < ops.size(); i++)
        if (ok[i]) apply(stale, ops[i]);
    return ok;
}

void fib_lookup6_bulk(const FibTables *t, const uint8_t (*dst)[16], uint32_t *ids, unsigned n) {
    constexpr unsigned kChunk = 64;
    const uint32_t dflt = t->v6_default;
    if (t->lpm6) {
        int32_t nh[kChunk];
        for (unsigned off = 0; off < n; off += kChunk) {
            const unsigned k = std::min(kChunk, n - off);
            // Neither writes the addresses; the prototypes lack the const.
            rte_lpm6_lookup_bulk_func(t->lpm6, const_cast<uint8_t (*)[16]>(dst + off), nh, k);
            for (unsigned i = 0; i < k; i++) ids[off + i] = nh[i] < 0 ? dflt : uint32_t(nh[i]);
        }
        return;
    }
    uint64_t nh[kChunk];  // compact (RIB-only): a miss reads kNoRouteNh
    for (unsigned off = 0; off < n; off += kChunk) {
        const unsigned k = std::min(kChunk, n - off);
        rte_fib6_lookup_bulk(t->fib6, const_cast<uint8_t (*)[16]>(dst + off), nh, int(k));
        for (unsigned i = 0; i < k; i++) ids[off + i] = nh[i] == kNoRouteNh ? dflt : uint32_t(nh[i]);
    }
}

}  // namespace rocesw
