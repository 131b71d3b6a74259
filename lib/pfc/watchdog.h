// PFC watchdog for one (port, lossless queue), SONiC pfcwd semantics, driven by the port's
// scheduler owner with the time as an argument. Pure state machine: no I/O, no clock.
//
//   normal -> stormed: the queue has been non-empty with nothing dequeued for at least
//     detection_ns, and paused by PFC for at least 99% of that time (the known fix for false
//     positives: a queue that is only sometimes paused and starved for another reason is not a
//     storm).
//   stormed -> normal: no pause frame for the queue's priorities for restoration_ns (counted
//     from the later of the storm's start and the last pause frame).
#pragma once

#include <cstdint>

namespace rocesw {

class PfcWatchdog {
  public:
    enum class Event : uint8_t { none, storm, restore };

    PfcWatchdog() = default;
    PfcWatchdog(uint64_t detection_ns, uint64_t restoration_ns)
        : detect_(detection_ns), restore_(restoration_ns) {}

    bool stormed() const { return stormed_; }

    // One evaluation at `now`. `paused`: the queue is paused by PFC right now (the received
    // deadlines, before the watchdog's own override); `nonempty`: it holds packets;
    // `progressed`: it dequeued something since the previous evaluation; `last_pause_rx`: when
    // the last pause frame (time > 0) for its priorities arrived.
    Event update(uint64_t now, bool paused, bool nonempty, bool progressed,
                 uint64_t last_pause_rx) {
        if (stormed_) {
            uint64_t from = last_pause_rx > storm_at_ ? last_pause_rx : storm_at_;
            if (now >= from + restore_) {
                stormed_ = false;
                candidate_ = false;
                return Event::restore;
            }
            return Event::none;
        }
        if (!nonempty || progressed) {
            candidate_ = false;
            return Event::none;
        }
        if (!candidate_) {
            if (!paused) return Event::none;
            candidate_ = true;
            start_ = last_ = now;
            paused_ns_ = 0;
            return Event::none;
        }
        if (paused) paused_ns_ += now - last_;
        last_ = now;
        const uint64_t elapsed = now - start_;
        if (elapsed >= detect_ && paused_ns_ * 100 >= elapsed * 99) {
            stormed_ = true;
            storm_at_ = now;
            return Event::storm;
        }
        return Event::none;
    }

    // When update() could next change state if nothing else happens (the queue stays paused
    // and stuck, no pause frame arrives): the restoration time while stormed, the detection
    // time (at least detection_ns, and 99 % of it paused) while a candidate; 0: none.
    uint64_t deadline(uint64_t last_pause_rx) const {
        if (stormed_) return (last_pause_rx > storm_at_ ? last_pause_rx : storm_at_) + restore_;
        if (!candidate_) return 0;
        // Paused from last_ on: (p + x) x 100 >= (e + x) x 99  <=>  x >= 99 e - 100 p.
        const uint64_t e = last_ - start_, need = 99 * e, have = 100 * paused_ns_;
        const uint64_t at = last_ + (need > have ? need - have : 0);
        return at > start_ + detect_ ? at : start_ + detect_;
    }

  private:
    uint64_t detect_ = 0, restore_ = 0;
    bool stormed_ = false, candidate_ = false;
    uint64_t start_ = 0, last_ = 0, paused_ns_ = 0, storm_at_ = 0;
};

}  // namespace rocesw
