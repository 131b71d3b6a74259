// A bounded lock-free ring for events a worker records and the control thread reads: one
// producer (the worker), one consumer (the control thread, or a test). push() never blocks
// and never allocates; when the ring is full the event is refused and counted in lost().
// Used for the event trace (TraceRing, common/trace_event.h) and the load balancer's path
// changes (PathEventRing, lb/balancer.h).
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/counters.h"

namespace rocesw {

template <typename T, size_t Capacity>
class alignas(kCacheLine) EventRing {
    static_assert(std::has_single_bit(Capacity), "capacity must be a power of two");

  public:
    static constexpr size_t kCapacity = Capacity;

    // Producer side. False (and counted in lost()) when the ring is full.
    bool push(const T &e) {
        const uint64_t h = head_.load(std::memory_order_relaxed);
        if (h - tail_.load(std::memory_order_acquire) == kCapacity) {
            lost_.inc();
            return false;
        }
        ring_[h & (kCapacity - 1)] = e;
        head_.store(h + 1, std::memory_order_release);
        return true;
    }

    // Consumer side: calls f(event) for up to `max` waiting events, oldest first; returns how
    // many.
    template <typename F>
    size_t consume(F &&f, size_t max = kCapacity) {
        uint64_t t = tail_.load(std::memory_order_relaxed);
        const uint64_t h = head_.load(std::memory_order_acquire);
        size_t n = 0;
        for (; t != h && n < max; t++, n++) f(ring_[t & (kCapacity - 1)]);
        tail_.store(t, std::memory_order_release);
        return n;
    }
    // Appends up to `max` events to `out`; returns how many.
    size_t drain(std::vector<T> &out, size_t max = kCapacity) {
        return consume([&out](const T &e) { out.push_back(e); }, max);
    }

    // Events waiting (the consumer's view).
    size_t pending() const {
        return size_t(head_.load(std::memory_order_acquire) -
                      tail_.load(std::memory_order_relaxed));
    }
    // Events refused because the ring was full.
    uint64_t lost() const { return lost_.load(); }

  private:
    alignas(kCacheLine) std::atomic<uint64_t> head_{0};
    Counter lost_;  // written by the producer only
    alignas(kCacheLine) std::atomic<uint64_t> tail_{0};
    std::unique_ptr<T[]> ring_{new T[kCapacity]};
};

}  // namespace rocesw
