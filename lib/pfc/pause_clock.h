// PauseClock: one (port, priority) pause — when it ends and how long pauses have lasted in
// total. Used for pauses received (honoring) and for pauses the switch causes (generation).
// One writer; readers on any thread load the three fields relaxed (a reader racing a writer
// may see a total that is off by the last event, never torn values).
#pragma once

#include <atomic>
#include <cstdint>

namespace rocesw {

class PauseClock {
  public:
    // An event at `now`: paused for `t_ns` from now on (0 ends the pause). A new event
    // replaces the deadline: it extends, shortens or ends the pause.
    void set(uint64_t now, uint64_t t_ns) {
        const uint64_t u = until_.load(std::memory_order_relaxed);
        const uint64_t s = since_.load(std::memory_order_relaxed);
        const uint64_t end = u < now ? u : now;
        if (end > s) accum_.store(accum_.load(std::memory_order_relaxed) + (end - s),
                                  std::memory_order_relaxed);
        since_.store(now, std::memory_order_relaxed);
        until_.store(now + t_ns, std::memory_order_relaxed);
    }
    bool active(uint64_t now) const { return now < until_.load(std::memory_order_relaxed); }
    uint64_t until() const { return until_.load(std::memory_order_relaxed); }
    // Total paused time up to `now`, ns.
    uint64_t total_ns(uint64_t now) const {
        const uint64_t u = until_.load(std::memory_order_relaxed);
        const uint64_t s = since_.load(std::memory_order_relaxed);
        const uint64_t end = u < now ? u : now;
        return accum_.load(std::memory_order_relaxed) + (end > s ? end - s : 0);
    }

  private:
    std::atomic<uint64_t> until_{0}, since_{0}, accum_{0};
};

}  // namespace rocesw
