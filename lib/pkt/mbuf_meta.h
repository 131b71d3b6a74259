// Where the PacketMeta of an mbuf lives: the mbuf private area. Every mempool that feeds the
// pipeline is created with kMbufPrivSize (drivers/ethdev does this and checks it).
#pragma once

#include <rte_mbuf.h>

#include "pkt/meta.h"

namespace rocesw {

inline constexpr uint16_t kMbufPrivSize = RTE_ALIGN_CEIL(sizeof(PacketMeta), RTE_MBUF_PRIV_ALIGN);

inline PacketMeta *meta_of(rte_mbuf *m) {
    return static_cast<PacketMeta *>(rte_mbuf_to_priv(m));
}

}  // namespace rocesw
