// A plain egress for tests and micro-benchmarks: one FIFO per port per worker, flushed in
// bursts to the worker's TX queue. The switch itself uses QosEgress (lib/qos).
//
// Counters: tx_packets/tx_bytes on the egress port when the device takes a packet; tx_full
// when a FIFO overflows; discard_all's reason for what it frees.
#pragma once

#include <cstdint>
#include <vector>

#include "common/counters.h"
#include "egress/egress.h"
#include "pipeline/dataplane.h"
#include "port/port_io.h"

namespace rocesw {

class FifoEgress final : public Egress {
  public:
    // `tx_queue`: this worker's TX queue on every port. `capacity`: packets per port FIFO.
    FifoEgress(PortIo &io, uint16_t n_ports, uint16_t tx_queue, WorkerCounters &counters,
               uint32_t capacity = 1024, uint16_t burst = 32);
    ~FifoEgress() override;
    void enqueue(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns) override;
    uint32_t flush(uint64_t now_ns) override;
    uint32_t backlog() const override;
    // One thread only (the tests'): plain reads.
    uint32_t queued(uint16_t port) const override {
        return port < fifos_.size() ? fifos_[port].size() : 0;
    }
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

// Builds a FifoEgress per worker for the Dataplane assembly: `capacity` packets per port FIFO,
// the worker's TX queue and the options' egress burst.
EgressFactory fifo_egress_factory(uint32_t capacity = 1024);

}  // namespace rocesw
