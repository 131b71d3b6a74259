// Two clocks on a port, both driven by the caller's time (ns), both in exact integer
// arithmetic: credit is counted in bit-nanoseconds-per-second units, so elapsed_ns x rate_bps
// adds exactly what the link carries and nothing drifts over a long run.
//
//  TokenBucket: the port shaper. Refills at the port's rate up to `depth` bytes; a packet may
//    leave while the credit is positive and costs its wire bytes (frame + overhead), so the
//    credit may dip below zero by at most one packet. Long-run rate = the port's rate exactly.
//  TxRingModel: an estimate of the wire bytes still in the device's TX ring. What tx_burst
//    accepted is added; the device is assumed to drain at the port's rate. Posting stops at
//    `cap` bytes, so packets wait in our queues (where ECN and PFC act) rather than in the ring
//    (where nothing can recall them).
#pragma once

#include <algorithm>
#include <cstdint>

namespace rocesw {

inline constexpr int64_t kCreditPerByte = 8'000'000'000;  // 8 bits x 1e9 ns/s

class TokenBucket {
  public:
    TokenBucket() = default;
    // rate_bps 0: unlimited (ready() is always true).
    TokenBucket(uint64_t rate_bps, uint64_t depth_bytes)
        : rate_(rate_bps), cap_(int64_t(depth_bytes) * kCreditPerByte), credit_(cap_),
          depth_(depth_bytes) {}

    // Unlimited (rate 0): nothing to do, and the clock is never read (ready() always holds).
    void refill(uint64_t now_ns) {
        if (rate_ == 0) return;
        if (!started_) {
            started_ = true;
            last_ = now_ns;
            return;
        }
        if (now_ns <= last_) return;
        uint64_t dt = now_ns - last_;
        last_ = now_ns;
        if (credit_ == cap_) return;  // full: the sum below would give cap again
        // credit + dt x rate, at most cap; no division (dt x rate > room is the same test as
        // dt >= room / rate + 1), and a product that overflows is more than any room.
        const uint64_t room = uint64_t(cap_ - credit_);
        uint64_t add;
        credit_ = __builtin_mul_overflow(dt, rate_, &add) || add > room ? cap_
                                                                         : credit_ + int64_t(add);
    }
    bool ready() const { return rate_ == 0 || credit_ > 0; }
    // Whether refill() can change nothing but the clock: unlimited, or the credit at the depth.
    bool full() const { return rate_ == 0 || credit_ == cap_; }
    // Whether ready() would still hold after consume(wire_bytes).
    bool ready_after(uint64_t wire_bytes) const {
        return rate_ == 0 || credit_ > int64_t(wire_bytes) * kCreditPerByte;
    }
    void consume(uint64_t wire_bytes) {
        if (rate_) credit_ -= int64_t(wire_bytes) * kCreditPerByte;
    }
    // For a run of frames charged at once: ready() holds after consume(s) exactly while s is
    // below this (UINT64_MAX: unlimited; 0: not ready now).
    uint64_t ready_below() const {
        if (rate_ == 0) return UINT64_MAX;
        if (credit_ == cap_) return depth_;  // full (a refill's usual result): no division
        return credit_ > 0 ? uint64_t((credit_ + kCreditPerByte - 1) / kCreditPerByte) : 0;
    }
    void refund(uint32_t wire_bytes) {
        if (rate_) credit_ = std::min(cap_, credit_ + int64_t(wire_bytes) * kCreditPerByte);
    }
    int64_t credit_bytes() const { return credit_ / kCreditPerByte; }
    uint64_t rate_bps() const { return rate_; }
    // The first ns at which ready() holds, refilling from the last refill (UINT64_MAX: never).
    uint64_t ready_at_ns() const {
        if (ready()) return last_;
        return last_ + uint64_t(-credit_) / rate_ + 1;  // credit + dt x rate > 0
    }

  private:
    uint64_t rate_ = 0;
    int64_t cap_ = 0;
    int64_t credit_ = 0;
    uint64_t last_ = 0;
    bool started_ = false;
    uint64_t depth_ = 0;  // cap_ in bytes
};

class TxRingModel {
  public:
    TxRingModel() = default;
    // cap_bytes 0: no cap.
    TxRingModel(uint64_t rate_bps, uint64_t cap_bytes)
        : rate_(rate_bps), cap_(int64_t(cap_bytes) * kCreditPerByte),
          cap_bytes_(int64_t(cap_bytes)) {}

    void drain(uint64_t now_ns) {
        if (!started_) {
            started_ = true;
            last_ = now_ns;
            return;
        }
        if (now_ns <= last_) return;
        uint64_t dt = now_ns - last_;
        last_ = now_ns;
        if (rate_ == 0 || inflight_ == 0) return;  // an empty ring stays empty
        uint64_t sub;  // as in TokenBucket::refill: no division
        inflight_ = __builtin_mul_overflow(dt, rate_, &sub) || sub > uint64_t(inflight_)
                        ? 0
                        : inflight_ - int64_t(sub);
    }
    // An empty ring takes any one frame, however large, so nothing can wait forever.
    bool fits(uint32_t wire_bytes) const {
        return cap_ == 0 || inflight_ == 0 ||
               inflight_ + int64_t(wire_bytes) * kCreditPerByte <= cap_;
    }
    void add(uint64_t wire_bytes) { inflight_ += int64_t(wire_bytes) * kCreditPerByte; }
    // For a run of frames added at once: with s bytes added, fits(w) holds exactly when
    // s + w <= room() or the ring is empty (s == 0 and empty()); -1: nothing fits.
    int64_t room() const {
        if (cap_ == 0) return INT64_MAX;
        if (inflight_ == 0) return cap_bytes_;  // empty (the usual case): no division
        return inflight_ <= cap_ ? (cap_ - inflight_) / kCreditPerByte : -1;
    }
    bool empty() const { return inflight_ == 0; }
    bool capped() const { return cap_ != 0; }
    void remove(uint32_t wire_bytes) {
        inflight_ = std::max<int64_t>(0, inflight_ - int64_t(wire_bytes) * kCreditPerByte);
    }
    // The first ns at which fits(wire_bytes) holds, draining from the last drain.
    uint64_t fits_at_ns(uint32_t wire_bytes) const {
        if (fits(wire_bytes)) return last_;
        if (rate_ == 0) return UINT64_MAX;
        const auto ceil_div = [](uint64_t a, uint64_t b) { return (a + b - 1) / b; };
        const uint64_t empty = ceil_div(uint64_t(inflight_), rate_);  // an empty ring takes any
        const uint64_t room =
            ceil_div(uint64_t(inflight_ + int64_t(wire_bytes) * kCreditPerByte - cap_), rate_);
        return last_ + std::min(empty, room);
    }
    // Bytes still in the ring, rounded up.
    uint64_t inflight_bytes() const {
        if (inflight_ == 0) return 0;  // the common case, without the division
        return uint64_t((inflight_ + kCreditPerByte - 1) / kCreditPerByte);
    }

  private:
    uint64_t rate_ = 0;
    int64_t cap_ = 0;
    int64_t inflight_ = 0;
    uint64_t last_ = 0;
    bool started_ = false;
    int64_t cap_bytes_ = 0;  // cap_ in bytes
};

}  // namespace rocesw
