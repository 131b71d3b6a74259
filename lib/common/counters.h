// Per-worker counters. Each worker owns its block and is the only writer; readers (the
// control thread, telemetry) sum over workers. A counter is bumped with a relaxed load and
// store, not a locked read-modify-write: there is one writer, and readers only need a value
// that is not torn, which an aligned 64-bit access guarantees on every target we build for.
#pragma once

#include <array>
#include <cstdint>

#include "common/drop_reason.h"

namespace rocesw {

inline constexpr size_t kMaxPorts = 32;
inline constexpr size_t kMaxWorkers = 16;
inline constexpr size_t kCacheLine = 64;

struct Counter {
    uint64_t v = 0;
    void add(uint64_t n) { __atomic_store_n(&v, v + n, __ATOMIC_RELAXED); }
    void inc() { add(1); }
    uint64_t load() const { return __atomic_load_n(&v, __ATOMIC_RELAXED); }
};

// Counters of one port as seen by one worker. Drops are charged to the ingress port, except
// the egress-stage reasons (drop_at_egress) which are charged to the egress port. Which
// counter is which term of the accounting identity: doc/accounting.md.
struct alignas(kCacheLine) PortCounters {
    Counter rx_packets, rx_bytes;
    Counter tx_packets, tx_bytes;
    Counter local_packets;  // answered or consumed by the switch itself (ARP, ND, echo, PFC)
    Counter local_replies;  // of local_packets: answered, the reply sent to the egress stage
    Counter punted;         // handed to the port's host interface (doc/control-plane.md)
    Counter forwarded;      // received here, routed and handed to the egress stage
    Counter forwarded_out;  // routed to this port and handed to its egress stage
    std::array<Counter, kDropReasonCount> drops;
};

struct alignas(kCacheLine) WorkerCounters {
    std::array<PortCounters, kMaxPorts> ports;
    Counter polls, busy_polls, idle_sleeps;
    // Scheduling stalls of the worker's loop while it had work (the previous poll moved packets
    // or left a backlog, so the next one was due at once): the longest gap between two polls
    // and how many exceeded 100 us and 1 ms. On a shared machine these show when the switch
    // fell behind (a lab run marks itself distorted, doc/rocelab.md). Zero in virtual time.
    Counter poll_gap_max_ns, poll_gaps_100us, poll_gaps_1ms;
    void on_poll_gap(uint64_t gap_ns) {
        if (gap_ns > poll_gap_max_ns.load()) poll_gap_max_ns.add(gap_ns - poll_gap_max_ns.load());
        if (gap_ns > 100'000) poll_gaps_100us.inc();
        if (gap_ns > 1'000'000) poll_gaps_1ms.inc();
    }
};

// A plain snapshot, summed over workers, for readers.
struct PortTotals {
    uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0, local_packets = 0;
    uint64_t local_replies = 0, punted = 0, forwarded = 0, forwarded_out = 0;
    std::array<uint64_t, kDropReasonCount> drops{};
    uint64_t drops_total() const {
        uint64_t s = 0;
        for (auto d : drops) s += d;
        return s;
    }
};

inline PortTotals sum_port(const WorkerCounters *workers, size_t n_workers, size_t port) {
    PortTotals t;
    for (size_t w = 0; w < n_workers; w++) {
        const PortCounters &c = workers[w].ports[port];
        t.rx_packets += c.rx_packets.load();
        t.rx_bytes += c.rx_bytes.load();
        t.tx_packets += c.tx_packets.load();
        t.tx_bytes += c.tx_bytes.load();
        t.local_packets += c.local_packets.load();
        t.local_replies += c.local_replies.load();
        t.punted += c.punted.load();
        t.forwarded += c.forwarded.load();
        t.forwarded_out += c.forwarded_out.load();
        for (size_t r = 0; r < kDropReasonCount; r++) t.drops[r] += c.drops[r].load();
    }
    return t;
}

}  // namespace rocesw
