// The egress stage: where routed packets wait for their port. The switch's implementation is
// QosEgress (lib/qos: 8 queues per port, shared buffer, scheduler, shaper); the tests also
// use a plain FIFO per port (test/support/fifo_egress.h).
//
// Reads: PacketMeta (out_port). Counters: tx_packets/tx_bytes on the egress port when the
// device takes a packet; drops (tx_full and the queue reasons) when a packet is refused.
#pragma once

#include <cstdint>
#include <vector>

#include "common/counters.h"
#include "pipeline/port_io.h"

struct rte_mbuf;

namespace rocesw {

class Egress {
  public:
    virtual ~Egress() = default;
    // Takes ownership of pkts[0..n), all bound for `port`.
    virtual void enqueue(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns) = 0;
    // Hands queued packets to the devices. Returns the number the devices took.
    virtual uint32_t flush(uint64_t now_ns) = 0;
    // Packets still held (for drain at shutdown and for tests).
    virtual uint32_t backlog() const = 0;
    // Frees everything held, counting each as `reason` on its port.
    virtual void discard_all(DropReason reason) = 0;
};

class FifoEgress final : public Egress {
  public:
    // `tx_queue`: this worker's TX queue on every port. `capacity`: packets per port FIFO.
    FifoEgress(PortIo &io, uint16_t n_ports, uint16_t tx_queue, WorkerCounters &counters,
               uint32_t capacity = 1024, uint16_t burst = 32);
    ~FifoEgress() override;
    void enqueue(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns) override;
    uint32_t flush(uint64_t now_ns) override;
    uint32_t backlog() const override;
    void discard_all(DropReason reason) override;

  private:
    struct Fifo {
        std::vector<rte_mbuf *> slots;  // power-of-two ring
        uint32_t head = 0, tail = 0;    // free-running
        uint32_t size() const { return tail - head; }
    };
    PortIo &io_;
    uint16_t tx_queue_;
    uint16_t burst_;
    WorkerCounters &ctr_;
    std::vector<Fifo> fifos_;
};

}  // namespace rocesw
