// Latency measurement at the port boundary (doc/observability.md, "Latency"): a PortIo that
// wraps the real one. Switched on by `telemetry.latency: true`; when off, the switch does not
// insert it, so the fast path pays nothing.
//
//   rx_burst: one clock read per burst, written into every received mbuf (an mbuf dynfield,
//             "rocesw_dynfield_rx_tsc", 8 bytes) together with a dynflag that says "stamped".
//   tx_burst: one clock read per burst, just before the device's tx_burst; for every packet the
//             device takes that carries the flag, (tx - rx) ticks go into this worker's
//             histogram of the packet's class (PacketMeta::tc). Frames the switch makes itself
//             (PFC, frames from the host interfaces) come from rte_pktmbuf_alloc, which clears
//             the flag, so they are not counted; packets dropped never reach tx_burst.
//
// One instance per worker: the worker's RX and its egress (the owner of the ports it
// transmits on) both go through it, and only that worker writes its LatencyHist. The clock is
// an argument like every other time in lib/ (ARCHITECTURE.md, invariant 1): rte_rdtsc() by
// default, any tick source in tests.
#pragma once

#include <cstdint>

#include "common/latency_hist.h"
#include "port/port_io.h"

struct rte_mbuf;

namespace rocesw {

class LatencyPortIo final : public PortIo {
  public:
    using Clock = uint64_t (*)(void *ctx);
    // Registers the dynfield and dynflag (idempotent; EAL must be initialised). Throws
    // std::runtime_error when DPDK has no room left for them.
    LatencyPortIo(PortIo &inner, LatencyHist &hist, Clock clock = nullptr, void *clock_ctx = nullptr);

    uint16_t rx_burst(uint16_t port, uint16_t queue, rte_mbuf **pkts, uint16_t n) override;
    uint16_t tx_burst(uint16_t port, uint16_t queue, rte_mbuf **pkts, uint16_t n) override;

    // The RX stamp of a packet, or -1 (all ones) when it carries none (for tests).
    uint64_t stamp_of(const rte_mbuf *m) const;

  private:
    static constexpr uint16_t kMaxTxBurst = 256;  // per device call; longer bursts are split
    uint64_t now() const;
    PortIo &inner_;
    LatencyHist &hist_;
    Clock clock_;
    void *clock_ctx_;
    int offset_;     // of the stamp in the mbuf
    uint64_t flag_;  // ol_flags bit: "stamped at RX"
};

}  // namespace rocesw
