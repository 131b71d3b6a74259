// Pacing of one sender (a QP at its DCQCN rate, or a host at its line rate): each packet
// reserves its wire time at the current rate; the next may leave when that time has passed.
// Kept in picoseconds so that rounding does not drift over a long run. `slack_ns` lets a sender
// that was served late (a busy-polling loop) catch up by at most that much, as a NIC's
// scheduler would, instead of losing the time for good.
#pragma once

#include <algorithm>
#include <cstdint>

namespace rocesw::roce {

inline constexpr uint32_t kWireOverheadBytes = 24;  // preamble+SFD 8, IFG 12, FCS 4

class Pacer {
  public:
    explicit Pacer(uint64_t slack_ns = 0) : slack_ps_(slack_ns * 1000) {}
    bool ready(uint64_t now_ns) const { return uint64_t(now_ns) * 1000 >= next_ps_; }
    uint64_t next_ns() const { return (next_ps_ + 999) / 1000; }
    // A frame of `wire_bytes` (FCS and preamble/IFG included) left at `now_ns`.
    void on_send(uint32_t wire_bytes, uint64_t rate_bps, uint64_t now_ns) {
        const uint64_t now_ps = now_ns * 1000;
        uint64_t start = std::max(next_ps_, now_ps > slack_ps_ ? now_ps - slack_ps_ : 0);
        last_start_ps_ = start;
        last_bytes_ = wire_bytes;
        next_ps_ = start + wire_ps(wire_bytes, rate_bps);
    }
    // The rate changed while the next frame waits (a DCQCN cut, a timer or byte-counter
    // increase): the last frame's wait is re-timed at the new rate, next = its start + its
    // wire time at `rate_bps` (as HPCC's RdmaHw::ChangeRate moves m_nextAvail for its own CC;
    // its DCQCN does not, doc/dcqcn.md "When a new rate takes effect"). Without it a QP cut to
    // a very low rate keeps the gap it reserved at that rate (1 KB at 2 Mb/s: 4.4 ms) after it
    // has recovered.
    void retime(uint64_t rate_bps) {
        if (last_bytes_) next_ps_ = last_start_ps_ + wire_ps(last_bytes_, rate_bps);
    }

  private:
    static uint64_t wire_ps(uint32_t wire_bytes, uint64_t rate_bps) {
        const unsigned __int128 ps = (unsigned __int128)wire_bytes * 8 * 1'000'000'000'000ull;
        return rate_bps ? uint64_t(ps / rate_bps) : 0;
    }
    uint64_t slack_ps_;
    uint64_t next_ps_ = 0;
    uint64_t last_start_ps_ = 0;
    uint32_t last_bytes_ = 0;
};

}  // namespace rocesw::roce
