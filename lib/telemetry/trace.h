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
// The events (TraceKind, TraceEvent) and the per-worker TraceRing are in common/trace_event.h,
// below the stages that record them.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "common/trace_event.h"

namespace rocesw {

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
    // A write or flush that failed (disk full, I/O error) closes the file: tracing stops, the
    // rings are still drained (and their events discarded), error() says what happened
    // ("writing <path>: No space left on device"); empty while none failed.
    const std::string &error() const { return error_; }

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
    void fail(int err);

    std::FILE *f_ = nullptr;
    std::string path_, error_;
    uint64_t written_ = 0;
};

}  // namespace rocesw
