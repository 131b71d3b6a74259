// Where the PacketMeta of an mbuf lives: the mbuf private area. Every mempool that feeds the
// pipeline is created with kMbufPrivSize (drivers/ethdev does this and checks it).
#pragma once

#include <rte_mbuf.h>

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

inline PacketMeta *meta_of(rte_mbuf *m) {
    return static_cast<PacketMeta *>(rte_mbuf_to_priv(m));
}

}  // namespace rocesw
