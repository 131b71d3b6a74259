// Waiting for a QSBR grace period, for the writers that free or change what workers read
// (EcmpGroups here, Fib in lib/route). Here, the lowest library that uses QSBR.
#pragma once

#include <rte_rcu_qsbr.h>

namespace rocesw {

// Returns once every online reader of `q` has reported a quiescent state since the call:
// rte_rcu_qsbr_synchronize for a caller that is not a reader, written with DPDK's inline
// start and check. Same code, but compiled here: the library function is built without
// ThreadSanitizer, which then cannot see the acquire loads that order a worker's last read of
// an old table before the writer frees it, and reports the free as a race (tools/sanitize tsan).
inline void qsbr_synchronize(rte_rcu_qsbr *q) {
    rte_rcu_qsbr_check(q, rte_rcu_qsbr_start(q), true);
}

}  // namespace rocesw
