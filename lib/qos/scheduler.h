// The egress scheduler of one port: strict priority over DWRR.
//
//  - Strict queues go first, the highest-numbered first (queue 7 before queue 6).
//  - What they leave is shared by the DWRR queues in proportion to their weights, in bytes:
//    deficit round robin (Shreedhar & Varghese) with quantum = weight x quantum_bytes. A queue
//    that runs empty forfeits its deficit; a paused queue keeps it and is skipped.
//
// The caller passes the eligible set (non-empty and not paused) and a way to read a queue's
// head frame length; pick() returns the queue to send from and charge() books the frame.
// No allocation, no virtual calls; a pick is a few bit operations unless a DWRR round turns.
#pragma once

#include <array>
#include <cstdint>

#include "qos/plan.h"

namespace rocesw {

class DwrrScheduler {
  public:
    DwrrScheduler() = default;
    DwrrScheduler(const std::array<QueuePlan, kNumQueues> &queues, uint32_t quantum_bytes) {
        for (unsigned q = 0; q < kNumQueues; q++) {
            if (queues[q].sched == SchedType::strict)
                strict_ = uint8_t(strict_ | 1u << q);
            else
                dwrr_ = uint8_t(dwrr_ | 1u << q);
            quantum_[q] = int64_t(queues[q].weight) * quantum_bytes;
        }
    }

    // Returns the queue to serve next, or -1 when nothing is eligible. `head_len(q)` is the
    // frame length at the head of queue q (only asked for eligible DWRR queues).
    template <typename HeadLen>
    int pick(uint8_t eligible, HeadLen &&head_len) {
        if (uint8_t s = eligible & strict_) return 31 - __builtin_clz(s);
        uint8_t d = eligible & dwrr_;
        if (!d) return -1;
        for (;;) {
            if ((d >> cur_ & 1) && deficit_[cur_] >= int64_t(head_len(int(cur_)))) return int(cur_);
            // The current queue's turn is over: on to the next eligible one, which gets its
            // quantum. Bounded: every lap adds at least one quantum to each eligible queue.
            unsigned rest = unsigned(d) & ~((2u << cur_) - 1);  // eligible queues after cur_
            cur_ = unsigned(rest ? __builtin_ctz(rest) : __builtin_ctz(d));
            deficit_[cur_] += quantum_[cur_];
        }
    }
    void charge(int q, uint32_t len) {
        if (dwrr_ >> q & 1) deficit_[size_t(q)] -= len;
    }
    // The queue ran empty: it forfeits what it had left (classic DRR).
    void emptied(int q) { deficit_[size_t(q)] = 0; }
    // The state pick(), charge() and emptied() leave when q, holding frames of non-zero length
    // after being empty, was the only eligible queue and sent all of them: a DWRR queue gets
    // the turn (cur_) and forfeits what is left; a strict queue changes nothing.
    void served_alone(int q) {
        if (!(dwrr_ >> q & 1)) return;
        cur_ = unsigned(q);
        deficit_[size_t(q)] = 0;
    }

    // The order in which pick() and emptied() serve the queues of `eligible` when each holds
    // frames of non-zero length, `bytes(q)` in all, and is emptied on its first visit - when
    // that order follows from the masks and the turn alone: every eligible DWRR queue's
    // deficit is 0 and its quantum covers its bytes. Then pick() takes the strict queues from
    // the highest, then the DWRR queues cyclically from the one after the turn (the turn's own
    // queue, its deficit short of any frame, comes last), each on the quantum it gets when its
    // turn comes; its run empties it and it forfeits the rest. Writes the order to order[] and
    // returns its length, or 0 when it does not follow from the masks (the caller picks).
    // A strict queue's deficit is never changed from 0 (only DWRR queues are charged or given
    // a quantum), so emptied() on one changes nothing; served_in_order() leaves the state.
    template <typename Bytes>
    unsigned order_of(uint8_t eligible, Bytes &&bytes, uint8_t *order) const {
        const unsigned d = eligible & dwrr_;
        for (unsigned left = d; left; left &= left - 1) {
            const unsigned q = unsigned(__builtin_ctz(left));
            if (deficit_[q] != 0 || quantum_[q] < int64_t(bytes(q))) return 0;
        }
        unsigned n = 0;
        for (unsigned s = eligible & strict_; s;) {
            const unsigned q = 31u - unsigned(__builtin_clz(s));
            order[n++] = uint8_t(q);
            s &= ~(1u << q);
        }
        const unsigned after = d & ~((2u << cur_) - 1);  // the DWRR queues after the turn
        for (unsigned left = after; left; left &= left - 1) order[n++] = uint8_t(__builtin_ctz(left));
        for (unsigned left = d & ~after; left; left &= left - 1)
            order[n++] = uint8_t(__builtin_ctz(left));
        return n;
    }
    // The state pick() and emptied() leave after serving order_of()'s order (of `eligible`,
    // n queues): the turn at the last DWRR queue (the order's last), every deficit still 0.
    void served_in_order(uint8_t eligible, const uint8_t *order, unsigned n) {
        if (eligible & dwrr_) cur_ = order[n - 1];
    }

    // A queue's deficit, for a caller that charges a run of frames from one queue at once
    // (QosEgress::service): deficit(q), then set_deficit(q, d - the run's bytes).
    int64_t deficit(int q) const { return deficit_[size_t(q)]; }
    void set_deficit(int q, int64_t d) { deficit_[size_t(q)] = d; }
    // The round-robin position, for a caller that tries picks it may have to undo
    // (QosEgress::cut_through_mixed): turn() and deficit(q) before, set_turn() and set_deficit()
    // to restore them.
    unsigned turn() const { return cur_; }
    void set_turn(unsigned t) { cur_ = t; }

    uint8_t strict_mask() const { return strict_; }
    uint8_t dwrr_mask() const { return dwrr_; }

  private:
    uint8_t strict_ = 0, dwrr_ = 0;
    unsigned cur_ = 0;  // not uint8_t: a char-typed store may alias anything
    std::array<int64_t, kNumQueues> quantum_{};
    std::array<int64_t, kNumQueues> deficit_{};
};

}  // namespace rocesw
