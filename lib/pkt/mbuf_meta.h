// Where the PacketMeta of an mbuf lives: the mbuf private area. Every mempool that feeds the
// pipeline is created with kMbufPrivSize (drivers/ethdev does this and checks it).
#pragma once

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#include <cstring>
#include <string>

#include "pkt/meta.h"

namespace rocesw {

// A whole cache line, not sizeof(PacketMeta) rounded to RTE_MBUF_PRIV_ALIGN (48): the frame
// starts at buf_addr + headroom, buf_addr right after the private area, so 48 put every frame
// at 48 bytes into a cache line. Its headers (Ethernet + IPv4 + UDP + BTH, 54 bytes) then
// spanned two lines, and a 4 KB frame 65 lines instead of 64, in the PMD's copy and in every
// stage. The mempool's object stride does not grow: DPDK spreads objects to an odd number of
// cache lines either way (9150-byte rooms: 147 lines with 48 or 64).
inline constexpr uint16_t kMbufPrivSize = RTE_ALIGN_CEIL(sizeof(PacketMeta), RTE_CACHE_LINE_SIZE);
static_assert((sizeof(rte_mbuf) + kMbufPrivSize + RTE_PKTMBUF_HEADROOM) % RTE_CACHE_LINE_SIZE == 0,
              "frames start on a cache line");

// The pipeline's mbuf pool: rte_pktmbuf_pool_create's steps with the private area above, and
// with `packed` the objects at their own stride (RTE_MEMPOOL_F_NO_IOVA_CONTIG). Without hugepages
// DPDK otherwise keeps an object smaller than a 4 KB page inside one page: a 2 KB-room mbuf (2.4
// KB) then takes a whole page (40 % of the pool wasted), and every mbuf header, PacketMeta and
// frame start at the same page offset, so on the same L1 sets: a burst of 32 overflows their 8
// ways at every stage. Packed suits ports that copy frames (memif, TAP, pcap, null, rings,
// af_packet); a device that DMAs into the pool or maps it (PCI, AF_XDP's umem) needs
// page-contained objects. With hugepages objects are packed inside each hugepage either way.
// Returns nullptr with rte_errno set, as rte_pktmbuf_pool_create does.
inline rte_mempool *create_mbuf_pool(const std::string &name, unsigned n, unsigned cache,
                                     uint16_t room, int socket, bool packed) {
    const unsigned elt = unsigned(sizeof(rte_mbuf)) + kMbufPrivSize + room;
    rte_mempool *mp = rte_mempool_create_empty(name.c_str(), n, elt, cache,
                                               sizeof(rte_pktmbuf_pool_private), socket,
                                               packed ? RTE_MEMPOOL_F_NO_IOVA_CONTIG : 0);
    if (!mp) return nullptr;
    int rc = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), nullptr);
    if (rc == 0) {
        rte_pktmbuf_pool_private priv;
        std::memset(&priv, 0, sizeof(priv));
        priv.mbuf_data_room_size = room;
        priv.mbuf_priv_size = kMbufPrivSize;
        rte_pktmbuf_pool_init(mp, &priv);
        rc = rte_mempool_populate_default(mp);
    }
    if (rc < 0) {
        rte_mempool_free(mp);
        rte_errno = -rc;
        return nullptr;
    }
    rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
    return mp;
}

inline PacketMeta *meta_of(rte_mbuf *m) {
    return static_cast<PacketMeta *>(rte_mbuf_to_priv(m));
}

}  // namespace rocesw
