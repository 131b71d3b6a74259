// The punt path's data-plane half (doc/control-plane.md): control-plane policing per punt class
// and one queue per worker to the hostif thread, which writes the frames to the ingress port's
// kernel host interface.
//
// Policing is a GCRA per class ("theoretical arrival time" in one atomic, advanced by CAS), with
// time as an argument: exact rates whichever worker receives the packets. It is the only state
// workers share and write, and only on the punt path, which never carries more than the policed
// rates. The queues are Boost.Lockfree spsc_queues: worker w is the only producer of queue w, the
// hostif thread the only consumer; a full queue is a counted drop (punt_queue_full), never a wait.
#pragma once

#include <atomic>
#include <boost/lockfree/spsc_queue.hpp>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/counters.h"
#include "common/punt_class.h"
#include "config/config.h"
#include "pkt/meta.h"

struct rte_mbuf;

namespace rocesw {

// Generic cell rate algorithm: admits `pps` packets per second on average with bursts of
// `burst` packets. pps 0 admits nothing.
class GcraPolicer {
  public:
    void configure(uint32_t pps, uint32_t burst) {
        interval_ns_ = pps ? 1'000'000'000ull / pps : 0;
        tolerance_ns_ = pps ? uint64_t(burst ? burst - 1 : 0) * interval_ns_ : 0;
        enabled_ = pps != 0;
    }
    bool admit(uint64_t now_ns) {
        if (!enabled_) return false;
        uint64_t tat = tat_.load(std::memory_order_relaxed);
        for (;;) {
            const uint64_t base = tat > now_ns ? tat : now_ns;
            if (base - now_ns > tolerance_ns_) return false;
            if (tat_.compare_exchange_weak(tat, base + interval_ns_, std::memory_order_relaxed))
                return true;
        }
    }
    uint64_t interval_ns() const { return interval_ns_; }

  private:
    alignas(kCacheLine) std::atomic<uint64_t> tat_{0};
    uint64_t interval_ns_ = 0, tolerance_ns_ = 0;
    bool enabled_ = false;
};

struct PuntClassStats {
    std::atomic<uint64_t> punted{0};      // handed to the hostif thread
    std::atomic<uint64_t> policed{0};     // over the class's rate
    std::atomic<uint64_t> queue_full{0};  // the worker's queue was full
};

class Punt {
  public:
    Punt(const ControlPlaneConfig &cfg, uint16_t n_workers);
    ~Punt();  // frees what is still queued
    Punt(const Punt &) = delete;
    Punt &operator=(const Punt &) = delete;

    // --- Worker `worker` (its queue's only producer). ---
    // Polices and queues `m` (ingress port in its PacketMeta). False: not taken, the caller
    // drops it with `*why` (punt_policed or punt_queue_full).
    bool offer(uint16_t worker, PuntClass c, rte_mbuf *m, uint64_t now_ns, DropReason *why);

    // --- The hostif thread (every queue's only consumer). ---
    size_t take(uint16_t worker, rte_mbuf **out, size_t max);
    uint16_t workers() const { return uint16_t(queues_.size()); }

    // --- Readers: any thread. ---
    const PuntClassStats &stats(PuntClass c) const { return stats_[size_t(c)]; }
    uint32_t pps(PuntClass c) const { return pps_[size_t(c)]; }
    uint32_t burst(PuntClass c) const { return burst_[size_t(c)]; }
    uint32_t queue_capacity() const { return queue_cap_; }

  private:
    using Queue = boost::lockfree::spsc_queue<rte_mbuf *>;
    std::array<GcraPolicer, kPuntClassCount> policers_;
    std::array<PuntClassStats, kPuntClassCount> stats_;
    std::array<uint32_t, kPuntClassCount> pps_{}, burst_{};
    uint32_t queue_cap_;
    std::vector<std::unique_ptr<Queue>> queues_;
};

// Which class a packet to one of the switch's addresses (or IPv6 link-local) belongs to, from
// its metadata and, for ICMPv6, its type. `f` is the frame.
PuntClass punt_class_local(const uint8_t *f, uint32_t len, const PacketMeta &m);
// True for ICMPv6 neighbour discovery (133-137: RS, RA, NS, NA, redirect) with hop limit 255.
bool is_neighbour_discovery(const uint8_t *f, uint32_t len, const PacketMeta &m);

}  // namespace rocesw
