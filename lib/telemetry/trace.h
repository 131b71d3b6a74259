// Event trace: timestamped samples and events, written by the control thread to a CSV file.
//
//   time_ns,event,port,id,value
//   1200000000,queue_bytes,p1,3,45056
//
// time_ns is the switch clock (TSC-derived ns since start, the "now" workers get); `id` is the
// queue, priority, PG or LB member the event is about; `value` its number. Events (TraceKind):
//
//   queue_bytes, queue_packets   depth of (port, queue) at a sample        (control thread)
//   ecn_marked, queue_drops      cumulative counters of (port, queue)       (control thread)
//   pfc_xoff_sent, pfc_xon_sent, pfc_xoff_received, pfc_xon_received
//                                (port, priority); value = pause quanta     (hook: PFC)
//   watchdog_storm, watchdog_restore   (port, priority)                     (hook: PFC)
//   ecn_mark_sample              (port, queue), one marked packet in N      (hook: QoS)
//   lb_path_change               (port = new egress port, id = member)      (hook: LB)
//
// Hooks. A worker records an event by pushing it into its own TraceRing, a bounded lock-free
// single-producer/single-consumer queue (Boost.Lockfree spsc_queue): push() never blocks and
// never allocates; when the ring is full the event is counted as lost, not waited for. The
// control thread drains every ring each loop iteration and writes the events; nothing on the
// data path touches the file. See doc/observability.md, "Trace hooks".
#pragma once

#include <boost/lockfree/spsc_queue.hpp>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/counters.h"

namespace rocesw {

#define ROCESW_TRACE_KINDS(X) \
    X(queue_bytes)            \
    X(queue_packets)          \
    X(ecn_marked)             \
    X(queue_drops)            \
    X(pfc_xoff_sent)          \
    X(pfc_xon_sent)           \
    X(pfc_xoff_received)      \
    X(pfc_xon_received)       \
    X(watchdog_storm)         \
    X(watchdog_restore)       \
    X(ecn_mark_sample)        \
    X(lb_path_change)

enum class TraceKind : uint8_t {
#define X(name) name,
    ROCESW_TRACE_KINDS(X)
#undef X
        count
};

std::string_view trace_kind_name(TraceKind k);

struct TraceEvent {
    uint64_t time_ns = 0;
    uint64_t value = 0;
    uint16_t port = 0;  // port index
    uint16_t id = 0;    // queue, priority, PG or member
    TraceKind kind = TraceKind::queue_bytes;
};

// One worker's event ring. push() is the worker's side (one producer), drain the control's.
class alignas(kCacheLine) TraceRing {
  public:
    static constexpr size_t kCapacity = 4096;
    bool push(const TraceEvent &e) {
        if (q_.push(e)) return true;
        lost_.inc();
        return false;
    }
    uint64_t lost() const { return lost_.load(); }
    // Events waiting (the consumer's view: the control thread, or a test).
    size_t pending() const { return q_.read_available(); }

  private:
    friend class TraceWriter;
    boost::lockfree::spsc_queue<TraceEvent, boost::lockfree::capacity<kCapacity>> q_;
    Counter lost_;
};

class TraceWriter {
  public:
    // `ports`: port names by index, for the CSV; one ring per worker.
    TraceWriter(std::vector<std::string> ports, size_t n_workers);
    ~TraceWriter();
    TraceWriter(const TraceWriter &) = delete;
    TraceWriter &operator=(const TraceWriter &) = delete;

    // Creates (truncates) the file and writes the header. False with *err on failure.
    bool open(const std::string &path, std::string *err);
    void close();
    bool is_open() const { return f_ != nullptr; }

    // Worker w's ring (w < n_workers): hand it to the worker once, at start-up.
    TraceRing &ring(size_t w) { return *rings_[w]; }

    // Control thread only.
    void write(const TraceEvent &e);
    size_t drain();  // writes every event waiting in the rings; returns how many
    void flush();

    uint64_t written() const { return written_; }
    uint64_t lost() const;  // events the rings refused, over all workers

  private:
    std::vector<std::string> ports_;
    std::vector<std::unique_ptr<TraceRing>> rings_;
    std::FILE *f_ = nullptr;
    uint64_t written_ = 0;
};

}  // namespace rocesw
