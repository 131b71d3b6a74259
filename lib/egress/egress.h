// The egress stage: where routed packets wait for their port. The switch's implementation is
// QosEgress (lib/qos: 8 queues per port, shared buffer, scheduler, shaper); the tests also
// use a plain FIFO per port (test/support/fifo_egress.h).
//
// Reads: PacketMeta (out_port). Counters: tx_packets/tx_bytes on the egress port when the
// device takes a packet; drops (tx_full and the queue reasons) when a packet is refused.
#pragma once

#include <cstdint>

#include "common/counters.h"

struct rte_mbuf;

namespace rocesw {

// What the caller of Egress::enqueue_summed knows of every packet of the burst, so that the
// egress need not read each packet for it: PacketMeta in_port and tc, the sum of the packets'
// pkt_len, and a bound below every pkt_len.
struct BurstSummary {
    // tc: the packets' TCs may differ (the ingress port's DSCP map has several): only bytes,
    // min_len and in_port hold for every packet.
    static constexpr uint8_t kSeveralTcs = 0xFF;
    uint64_t bytes = 0;    // the sum of pkt_len
    uint32_t min_len = 0;  // every pkt_len is at least this
    uint8_t in_port = 0;   // every packet's PacketMeta::in_port
    uint8_t tc = 0;        // every packet's PacketMeta::tc, or kSeveralTcs
};

class Egress {
  public:
    virtual ~Egress() = default;
    // Takes ownership of pkts[0..n), all bound for `port`.
    virtual void enqueue(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns) = 0;
    // enqueue() of a burst that `sum` describes (it must hold for every packet): the same
    // result; an egress may use the summary instead of reading each packet. Default: enqueue().
    virtual void enqueue_summed(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns,
                                const BurstSummary &sum) {
        (void)sum;
        enqueue(port, pkts, n, now_ns);
    }
    // The next enqueue() call is the last one for its port before the next flush(), and
    // nothing but other ports' enqueues reaches this egress or the switch's state (no RX burst,
    // no PFC frame) in between. An egress may then send at enqueue what that flush would send
    // for the port (QosEgress: cut-through). Worker::poll_once, which runs every RX burst of
    // a poll through the pipeline before it enqueues, calls it before each port's last
    // enqueue. Default: ignored.
    virtual void final_enqueue() {}
    // final_enqueue(), then enqueue_summed() with *sum (non-null) or enqueue(): one call for a
    // port's last enqueue. Default: those calls.
    virtual void enqueue_last(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns,
                              const BurstSummary *sum) {
        final_enqueue();
        if (sum)
            enqueue_summed(port, pkts, n, now_ns, *sum);
        else
            enqueue(port, pkts, n, now_ns);
    }
    // Hands queued packets to the devices. Returns the number the devices took (cut-through
    // sends since the last flush included).
    virtual uint32_t flush(uint64_t now_ns) = 0;
    // Packets still held (for drain at shutdown and for tests).
    virtual uint32_t backlog() const = 0;
    // Packets this egress holds for `port` (queued, refused by the device and kept, in a
    // handoff ring): the "queued" term of the accounting identity (doc/accounting.md). Any
    // thread may call it (relaxed reads).
    virtual uint32_t queued(uint16_t port) const = 0;
    // Frees everything held, counting each as `reason` on its port.
    virtual void discard_all(DropReason reason) = 0;
    // After a flush at `now_ns`: the earliest later time at which a flush could do something
    // the egress itself holds back now - a shaper or TX-ring-model credit, a received PFC
    // pause expiring, an XOFF to refresh, a watchdog deadline - or kNoEventNs.
    // What the device refused is the device's to announce. The simulator runs a switch at
    // this time instead of polling it (doc/rocesim.md).
    static constexpr uint64_t kNoEventNs = UINT64_MAX;
    virtual uint64_t next_event_ns(uint64_t now_ns) const {
        (void)now_ns;
        return kNoEventNs;
    }
};

}  // namespace rocesw
