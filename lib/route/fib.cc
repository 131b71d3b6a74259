#include "route/fib.h"

#include <rte_errno.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include <stdexcept>

namespace rocesw {

Fib::Fib(const std::string &name, const FibParams &params, rte_rcu_qsbr *qsbr)
    : params_(params), qsbr_(qsbr), groups_(qsbr) {
    for (int i = 0; i < 2; i++) {
        std::string n4 = name + "_v4_" + std::to_string(i);
        std::string n6 = name + "_v6_" + std::to_string(i);
        rte_lpm_config c4{params.ipv4_max_routes, params.ipv4_tbl8s, 0};
        rte_lpm6_config c6{params.ipv6_max_routes, params.ipv6_tbl8s, 0};
        FibTables &t = copies_[i];
        t.lpm4 = rte_lpm_create(n4.c_str(), SOCKET_ID_ANY, &c4);
        t.lpm6 = rte_lpm6_create(n6.c_str(), SOCKET_ID_ANY, &c6);
        t.nexthops = static_cast<NextHop *>(
            rte_zmalloc("rocesw_nexthops", sizeof(NextHop) * params.max_nexthops, 64));
        if (!t.lpm4 || !t.lpm6 || !t.nexthops) {
            std::string err = std::string("cannot allocate FIB '") + name +
                              "': " + rte_strerror(rte_errno) +
                              " (is EAL memory large enough? see switch.memory_mb)";
            for (auto &c : copies_) {
                rte_lpm_free(c.lpm4);
                rte_lpm6_free(c.lpm6);
                rte_free(c.nexthops);
            }
            throw std::runtime_error(err);
        }
        for (uint32_t j = 0; j < params.max_nexthops; j++) t.nexthops[j] = NextHop{};
    }
    active_.store(&copies_[0], std::memory_order_release);
}

Fib::~Fib() {
    for (auto &c : copies_) {
        rte_lpm_free(c.lpm4);
        rte_lpm6_free(c.lpm6);
        rte_free(c.nexthops);
    }
}

bool Fib::apply(FibTables &t, const FibOp &op) {
    switch (op.type) {
        case FibOp::Type::set_nexthop:
            if (op.nexthop >= params_.max_nexthops) return false;
            t.nexthops[op.nexthop] = op.nh;
            return true;
        case FibOp::Type::add_route:
            if (op.nexthop >= params_.max_nexthops) return false;
            if (op.prefix.addr.is_v6)
                return rte_lpm6_add(t.lpm6, op.prefix.addr.v6.data(), op.prefix.len, op.nexthop) ==
                       0;
            return rte_lpm_add(t.lpm4, op.prefix.addr.v4, op.prefix.len, op.nexthop) == 0;
        case FibOp::Type::del_route:
            if (op.prefix.addr.is_v6)
                return rte_lpm6_delete(t.lpm6, op.prefix.addr.v6.data(), op.prefix.len) == 0;
            return rte_lpm_delete(t.lpm4, op.prefix.addr.v4, op.prefix.len) == 0;
    }
    return false;
}

std::vector<bool> Fib::commit(const std::vector<FibOp> &ops) {
    std::vector<bool> ok(ops.size());
    const FibTables *old = active_.load(std::memory_order_relaxed);
    FibTables &next = copies_[old == &copies_[0] ? 1 : 0];
    for (size_t i = 0; i < ops.size(); i++) ok[i] = apply(next, ops[i]);
    active_.store(&next, std::memory_order_release);
    // Wait until no worker can still hold `old`, then bring it level with `next`.
    if (qsbr_) rte_rcu_qsbr_synchronize(qsbr_, RTE_QSBR_THRID_INVALID);
    FibTables &stale = copies_[&next == &copies_[0] ? 1 : 0];
    for (size_t i = 0; i < ops.size(); i++)
        if (ok[i]) apply(stale, ops[i]);
    return ok;
}

}  // namespace rocesw
