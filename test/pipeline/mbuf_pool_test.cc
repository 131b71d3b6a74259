// create_mbuf_pool (lib/pkt/mbuf_meta.h) under the tests' EAL (--no-huge): what a packed pool
// changes against DPDK's default placement, and that its mbufs are the pipeline's.
#include <gtest/gtest.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <set>
#include <vector>

#include "pkt/mbuf_meta.h"

using namespace rocesw;

namespace {

std::vector<uintptr_t> object_addresses(rte_mempool *mp) {
    std::vector<uintptr_t> v;
    rte_mempool_obj_iter(
        mp,
        [](rte_mempool *, void *arg, void *obj, unsigned) {
            static_cast<std::vector<uintptr_t> *>(arg)->push_back(uintptr_t(obj));
        },
        &v);
    std::sort(v.begin(), v.end());
    return v;
}

}  // namespace

TEST(MbufPool, PackedPoolSpreadsMbufsOverCacheSetsAndSavesPages) {
    ASSERT_EQ(rte_eal_has_hugepages(), 0) << "the pipeline tests run the EAL with --no-huge";
    const unsigned n = 256;
    rte_mempool *paged = create_mbuf_pool("mbp_paged", n, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                          SOCKET_ID_ANY, false);
    rte_mempool *packed = create_mbuf_pool("mbp_packed", n, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                           SOCKET_ID_ANY, true);
    ASSERT_NE(paged, nullptr);
    ASSERT_NE(packed, nullptr);
    const uint32_t stride = packed->header_size + packed->elt_size + packed->trailer_size;
    ASSERT_LT(stride, 4096u);  // a 2 KB-room mbuf is smaller than a page

    // DPDK's default without hugepages: one object per 4 KB page, all at one page offset.
    auto a = object_addresses(paged);
    ASSERT_EQ(a.size(), n);
    std::set<uintptr_t> offsets;
    for (size_t i = 1; i < a.size(); i++) EXPECT_GE(a[i] - a[i - 1], 4096u);
    for (uintptr_t x : a) offsets.insert(x % 4096);
    EXPECT_EQ(offsets.size(), 1u);

    // Packed: objects at their stride, so 32 consecutive mbufs' headers fall in many L1 sets
    // (64 sets of 64 bytes in a 4 KB way).
    auto b = object_addresses(packed);
    ASSERT_EQ(b.size(), n);
    size_t at_stride = 0;
    for (size_t i = 1; i < b.size(); i++) at_stride += b[i] - b[i - 1] == stride;
    EXPECT_GE(at_stride, n - 8);  // a few gaps where memory chunks meet
    std::set<uintptr_t> sets;
    for (size_t i = 0; i < 32; i++) sets.insert((b[i] % 4096) / 64);
    EXPECT_GE(sets.size(), 16u);

    // The mbufs are the pipeline's: private area, data room, cache-aligned frames, usable.
    for (rte_mempool *mp : {paged, packed}) {
        EXPECT_EQ(rte_pktmbuf_priv_size(mp), kMbufPrivSize);
        EXPECT_EQ(rte_pktmbuf_data_room_size(mp), RTE_MBUF_DEFAULT_BUF_SIZE);
        std::vector<rte_mbuf *> ms(n);
        ASSERT_EQ(rte_pktmbuf_alloc_bulk(mp, ms.data(), n), 0);
        for (rte_mbuf *m : ms) {
            EXPECT_EQ(uintptr_t(rte_pktmbuf_mtod(m, char *)) % RTE_CACHE_LINE_SIZE, 0u);
            EXPECT_EQ(static_cast<void *>(meta_of(m)), static_cast<void *>(m + 1));
            EXPECT_EQ(rte_pktmbuf_tailroom(m), RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM);
            char *p = rte_pktmbuf_append(m, 1500);
            ASSERT_NE(p, nullptr);
            std::fill(p, p + 1500, char(0x5a));
        }
        rte_pktmbuf_free_bulk(ms.data(), n);
        EXPECT_EQ(rte_mempool_avail_count(mp), n);
    }
    rte_mempool_free(paged);
    rte_mempool_free(packed);
}
