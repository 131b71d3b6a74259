// Injector: the way in for frames the switch originates outside a worker (host interfaces,
// doc/control-plane.md). One call per burst from a non-worker thread; the implementation hands
// the frames to the egress port's scheduler owner (TrafficManager: the port's handoff ring).
#pragma once

#include <cstdint>

struct rte_mbuf;

namespace rocesw {

class Injector {
  public:
    virtual ~Injector() = default;
    // Any thread: hands `pkts` (PacketMeta filled, tc set) to `port`'s egress. Returns how many
    // were taken; the caller keeps (and frees or counts) the rest.
    virtual unsigned inject(uint16_t port, rte_mbuf **pkts, unsigned n) = 0;
};

}  // namespace rocesw
