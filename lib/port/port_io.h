// The data path's view of ports: burst RX and TX by port index and queue. drivers/ethdev
// implements it over rte_ethdev; tests and the simulator can implement it over anything.
// One virtual call per burst, never per packet. Below every stage: the egress stages
// transmit through it, the worker receives through it, drivers implement it.
#pragma once

#include <cstdint>

struct rte_mbuf;

namespace rocesw {

class PortIo {
  public:
    virtual ~PortIo() = default;
    virtual uint16_t rx_burst(uint16_t port, uint16_t queue, rte_mbuf **pkts, uint16_t n) = 0;
    // Returns how many of pkts[0..n) the device took; the caller still owns the rest.
    virtual uint16_t tx_burst(uint16_t port, uint16_t queue, rte_mbuf **pkts, uint16_t n) = 0;
};

// One RX queue a worker polls: (port index, queue).
struct RxAssignment {
    uint16_t port;
    uint16_t queue;
};

}  // namespace rocesw
