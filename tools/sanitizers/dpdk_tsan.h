// Force-included in every file of the TSan build (tools/sanitize tsan), before DPDK's headers.
//
// DPDK 22.11's multi-producer and multi-consumer rings (rte_ring_c11_pvt.h,
// __rte_ring_update_tail) wait for the earlier enqueues' tail update with a relaxed load, then
// publish their own tail with a release store. On x86 every load is an acquire, so the consumer
// that acquires the later tail also sees the earlier producers' slots; in the C11 model TSan
// checks, the relaxed wait breaks that chain and TSan reports the consumer's read of an earlier
// producer's slot (and of the mbuf behind it) as a race. These are DPDK's waits with acquire
// loads: the same instructions on x86, the ordering the code relies on made visible to TSan.
#pragma once

#include <stdint.h>

#define RTE_WAIT_UNTIL_EQUAL_ARCH_DEFINED 1

#define ROCESW_TSAN_WAIT_EQUAL(bits)                                                             \
    static inline __attribute__((always_inline)) void rte_wait_until_equal_##bits(               \
        volatile uint##bits##_t *addr, uint##bits##_t expected, int memorder) {                 \
        (void)memorder;                                                                         \
        while (__atomic_load_n(addr, __ATOMIC_ACQUIRE) != expected) __builtin_ia32_pause();     \
    }
ROCESW_TSAN_WAIT_EQUAL(16)
ROCESW_TSAN_WAIT_EQUAL(32)
ROCESW_TSAN_WAIT_EQUAL(64)
#undef ROCESW_TSAN_WAIT_EQUAL

#define RTE_WAIT_UNTIL_MASKED(addr, mask, cond, expected, memorder)                   \
    do {                                                                              \
        (void)(memorder);                                                             \
        __typeof__(*(addr)) expected_value = (expected);                              \
        while (!((__atomic_load_n((addr), __ATOMIC_ACQUIRE) & (mask)) cond expected_value)) \
            __builtin_ia32_pause();                                                   \
    } while (0)
