// The simulator's clock: a priority queue of timestamped events, popped in (time, sequence)
// order. The sequence is the insertion order, so two events due at the same picosecond run in
// the order they were scheduled, on every machine and with every standard library: no event
// ordering depends on pointer values or on the heap's internal layout.
//
// An event is a 32-byte POD, not a callback: the engine switches on `kind` and finds its
// object from (node, port, arg). No allocation per event beyond the heap's amortised growth.
//
// The heap is 4-ary (a parent's four children share a cache line pair), O(log n) push and pop.
// Cancellation: `cancel(id)` records the id and the event is skipped when it reaches the top
// (lazy deletion). Objects that reschedule often (a port's next-send timer) should rather keep
// a generation number and put it in `arg`, ignoring stale events when they pop: no set lookup.
//
// Time is in picoseconds (2^64 ps = 213 days): serialisation at 400G is 20 ps per byte, so
// back-to-back frame boundaries stay exact. `ns()` gives the pipeline's nanosecond view.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <unordered_set>
#include <vector>

namespace rocesw::sim {

using TimePs = uint64_t;

constexpr TimePs kPsPerNs = 1000;
constexpr TimePs kPsPerUs = 1000 * kPsPerNs;
constexpr TimePs kPsPerMs = 1000 * kPsPerUs;
constexpr TimePs kPsPerS = 1000 * kPsPerMs;

// Nanoseconds that have fully elapsed at `t` (what a pipeline's `now_ns` argument is).
constexpr uint64_t ns(TimePs t) {
    return t / kPsPerNs;
}
constexpr TimePs from_ns(uint64_t t_ns) {
    return t_ns * kPsPerNs;
}

struct Event {
    TimePs time = 0;   // ps
    uint64_t seq = 0;  // insertion order: the tie-break, and the event's id for cancel()
    uint64_t arg = 0;  // engine-defined: a frame handle, a generation, a flow id, a pointer
    uint32_t node = 0;
    uint16_t port = 0;
    uint8_t kind = 0;   // engine-defined enum
    uint8_t flags = 0;  // engine-defined
};
static_assert(sizeof(Event) == 32, "an event is half a cache line");

class EventQueue {
  public:
    // What cancel() needs: (time, seq) tells whether the event has already been popped.
    struct Id {
        TimePs time = 0;
        uint64_t seq = 0;
    };

    // Schedules an event; returns its id. Throws std::logic_error for a time before the last
    // popped event (a causality bug in the caller, never a run-time condition).
    Id schedule(TimePs time, uint8_t kind, uint32_t node = 0, uint16_t port = 0, uint64_t arg = 0,
                uint8_t flags = 0) {
        if (time < now_) [[unlikely]]
            throw std::logic_error("EventQueue: event scheduled in the past");
        Event e{time, next_seq_++, arg, node, port, kind, flags};
        heap_.push_back(e);
        sift_up(heap_.size() - 1);
        ++scheduled_;
        return Id{e.time, e.seq};
    }

    // Marks a pending event cancelled; it is dropped when it reaches the top. Returns false if
    // the id was never issued or the event has already been popped or cancelled. Events leave
    // in (time, seq) order, so an id at or before the last removed key is no longer pending.
    bool cancel(Id id) {
        if (id.seq >= next_seq_) return false;
        if (removed_any_ && !after_last_removed(id)) return false;
        return cancelled_.insert(id.seq).second;
    }

    // True when no live event remains (cancelled ones at the top are discarded first).
    bool empty() {
        skip_cancelled();
        return heap_.empty();
    }

    // The next live event. Precondition: !empty().
    const Event &top() {
        skip_cancelled();
        return heap_.front();
    }

    // Removes and returns the next live event and advances now() to its time.
    // Precondition: !empty().
    Event pop() {
        skip_cancelled();
        Event e = heap_.front();
        remove_top();
        now_ = e.time;
        ++popped_;
        return e;
    }

    TimePs now() const { return now_; }
    // Events in the heap, cancelled ones included until they surface.
    size_t size() const { return heap_.size(); }
    uint64_t scheduled() const { return scheduled_; }
    uint64_t popped() const { return popped_; }
    uint64_t cancelled_pending() const { return cancelled_.size(); }
    void reserve(size_t n) { heap_.reserve(n); }

  private:
    static bool before(const Event &a, const Event &b) {
        return a.time != b.time ? a.time < b.time : a.seq < b.seq;
    }
    bool after_last_removed(Id id) const {
        return id.time != last_removed_.time ? id.time > last_removed_.time
                                             : id.seq > last_removed_.seq;
    }

    void skip_cancelled() {
        while (!cancelled_.empty() && !heap_.empty()) [[unlikely]] {
                auto it = cancelled_.find(heap_.front().seq);
                if (it == cancelled_.end()) return;
                cancelled_.erase(it);
                remove_top();
            }
    }

    void remove_top() {
        last_removed_ = Id{heap_.front().time, heap_.front().seq};
        removed_any_ = true;
        heap_.front() = heap_.back();
        heap_.pop_back();
        if (!heap_.empty()) sift_down(0);
    }

    void sift_up(size_t i) {
        Event e = heap_[i];
        while (i > 0) {
            size_t p = (i - 1) / 4;
            if (!before(e, heap_[p])) break;
            heap_[i] = heap_[p];
            i = p;
        }
        heap_[i] = e;
    }

    void sift_down(size_t i) {
        const size_t n = heap_.size();
        Event e = heap_[i];
        for (;;) {
            size_t c = 4 * i + 1;
            if (c >= n) break;
            size_t best = c;
            size_t end = c + 4 < n ? c + 4 : n;
            for (size_t j = c + 1; j < end; ++j)
                if (before(heap_[j], heap_[best])) best = j;
            if (!before(heap_[best], e)) break;
            heap_[i] = heap_[best];
            i = best;
        }
        heap_[i] = e;
    }

    std::vector<Event> heap_;
    std::unordered_set<uint64_t> cancelled_;  // seqs of pending cancelled events
    Id last_removed_{};
    bool removed_any_ = false;
    TimePs now_ = 0;
    uint64_t next_seq_ = 0;
    uint64_t scheduled_ = 0, popped_ = 0;
};

}  // namespace rocesw::sim
