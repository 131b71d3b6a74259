// Under ThreadSanitizer (tools/sanitize tsan): a mempool driver TSan can see through.
//
// DPDK's default mempool driver (ring_mp_mc) lives in an uninstrumented shared library, so TSan
// sees no synchronisation when one thread frees an mbuf and another allocates it again, and
// reports the second thread's writes to the recycled mbuf as a race with the first one's reads.
// This driver is the same ring, created the same way, with its enqueue and dequeue compiled
// here (inline rte_ring code, C11 atomics in the TSan build), so that handing an mbuf back and
// taking it out again orders the two threads as it really does. kTsanMempoolOpsArg selects it
// for every rte_pktmbuf_pool_create as an EAL argument. Without TSan this header adds nothing.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define ROCESW_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ROCESW_TSAN 1
#endif
#endif

#ifdef ROCESW_TSAN
#include <rte_mempool.h>
#include <rte_errno.h>
#include <rte_ring.h>

#include <cerrno>
#include <cstdio>

namespace rocesw::test::tsan_mempool {

inline int alloc(rte_mempool *mp) {
    char name[RTE_RING_NAMESIZE];
    if (std::snprintf(name, sizeof(name), RTE_MEMPOOL_MZ_FORMAT, mp->name) >=
        int(sizeof(name)))
        return -ENAMETOOLONG;
    rte_ring *r = rte_ring_create(name, rte_align32pow2(mp->size + 1), mp->socket_id, 0);
    if (r == nullptr) return -rte_errno;
    mp->pool_data = r;
    return 0;
}
inline void release(rte_mempool *mp) {
    rte_ring_free(static_cast<rte_ring *>(mp->pool_data));
}
inline int enqueue(rte_mempool *mp, void *const *objs, unsigned n) {
    return rte_ring_mp_enqueue_bulk(static_cast<rte_ring *>(mp->pool_data), objs, n, nullptr)
               ? 0
               : -ENOBUFS;
}
inline int dequeue(rte_mempool *mp, void **objs, unsigned n) {
    return rte_ring_mc_dequeue_bulk(static_cast<rte_ring *>(mp->pool_data), objs, n, nullptr)
               ? 0
               : -ENOBUFS;
}
inline unsigned count(const rte_mempool *mp) {
    return rte_ring_count(static_cast<const rte_ring *>(mp->pool_data));
}

inline rte_mempool_ops ops = [] {
    rte_mempool_ops o{};
    std::snprintf(o.name, sizeof(o.name), "%s", "rocesw_tsan_ring");
    o.alloc = alloc;
    o.free = release;
    o.enqueue = enqueue;
    o.dequeue = dequeue;
    o.get_count = count;
    return o;
}();

// Registers the driver (once, before any pool is made) and returns the EAL argument that makes
// it every pool's default.
inline const char *eal_arg() {
    static const bool registered = rte_mempool_register_ops(&ops) >= 0;
    return registered ? "--mbuf-pool-ops-name=rocesw_tsan_ring" : nullptr;
}

}  // namespace rocesw::test::tsan_mempool
#endif
