#include <rte_mbuf.h>

#include <algorithm>
#include <bit>

#include "support/fifo_egress.h"

namespace rocesw {

FifoEgress::FifoEgress(PortIo &io, uint16_t n_ports, uint16_t tx_queue, WorkerCounters &counters,
                       uint32_t capacity, uint16_t burst)
    : io_(io), tx_queue_(tx_queue), burst_(std::min<uint16_t>(burst, 256)), ctr_(counters), fifos_(n_ports) {
    for (auto &f : fifos_) f.slots.resize(std::bit_ceil(std::max<uint32_t>(capacity, 2)));
}

FifoEgress::~FifoEgress() {
    discard_all(DropReason::port_stopped);
}

void FifoEgress::enqueue(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t) {
    Fifo &f = fifos_[port];
    const uint32_t mask = uint32_t(f.slots.size() - 1);
    uint16_t i = 0;
    for (; i < n && f.size() < f.slots.size(); i++) f.slots[f.tail++ & mask] = pkts[i];
    if (i < n) {
        ctr_.ports[port].drops[size_t(DropReason::tx_full)].add(n - i);
        rte_pktmbuf_free_bulk(pkts + i, n - i);
    }
}

uint32_t FifoEgress::flush(uint64_t) {
    uint32_t sent_total = 0;
    for (uint16_t port = 0; port < fifos_.size(); port++) {
        Fifo &f = fifos_[port];
        const uint32_t mask = uint32_t(f.slots.size() - 1);
        while (f.size()) {
            // A contiguous run of the ring, at most one burst.
            uint32_t start = f.head & mask;
            uint16_t n =
                uint16_t(std::min<uint32_t>({f.size(), uint32_t(f.slots.size()) - start, burst_}));
            // Lengths are read before the device takes the frames: it may free them at once.
            uint32_t len[256];
            for (uint16_t i = 0; i < n; i++) len[i] = f.slots[start + i]->pkt_len;
            uint16_t sent = io_.tx_burst(port, tx_queue_, &f.slots[start], n);
            uint64_t bytes = 0;
            for (uint16_t i = 0; i < sent; i++) bytes += len[i];
            PortCounters &pc = ctr_.ports[port];
            pc.tx_packets.add(sent);
            pc.tx_bytes.add(bytes);
            f.head += sent;
            sent_total += sent;
            if (sent < n) break;  // the device ring is full: the rest waits for the next poll
        }
    }
    return sent_total;
}

uint32_t FifoEgress::backlog() const {
    uint32_t n = 0;
    for (const auto &f : fifos_) n += f.size();
    return n;
}

void FifoEgress::discard_all(DropReason reason) {
    for (uint16_t port = 0; port < fifos_.size(); port++) {
        Fifo &f = fifos_[port];
        const uint32_t mask = uint32_t(f.slots.size() - 1);
        if (f.size()) ctr_.ports[port].drops[size_t(reason)].add(f.size());
        while (f.size()) rte_pktmbuf_free(f.slots[f.head++ & mask]);
    }
}

EgressFactory fifo_egress_factory(uint32_t capacity) {
    return [capacity](const EgressArgs &a) -> std::unique_ptr<Egress> {
        return std::make_unique<FifoEgress>(a.io, a.n_ports, a.tx_queue, a.counters, capacity,
                                            a.burst);
    };
}

}  // namespace rocesw
