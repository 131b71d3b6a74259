// Events for the event trace: what the data-path hooks (PFC, QoS, LB) record and the
// control thread writes (telemetry/trace.h, TraceWriter: the CSV file and its format).
//
// A worker records an event by pushing it into its own TraceRing (common/event_ring.h):
// push() never blocks and never allocates; when the ring is full the event is counted as
// lost, not waited for. The control thread drains every ring each loop iteration and writes
// the events; nothing on the data path touches the file. See doc/observability.md, "Trace
// hooks".
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "common/event_ring.h"

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

inline std::string_view trace_kind_name(TraceKind k) {
    constexpr std::array<std::string_view, size_t(TraceKind::count)> names = {
#define X(name) #name,
        ROCESW_TRACE_KINDS(X)
#undef X
    };
    return size_t(k) < names.size() ? names[size_t(k)] : "?";
}

struct TraceEvent {
    uint64_t time_ns = 0;
    uint64_t value = 0;
    uint16_t port = 0;  // port index
    uint16_t id = 0;    // queue, priority, PG or member
    TraceKind kind = TraceKind::queue_bytes;
};

// One worker's event ring: the worker pushes, the control thread drains.
using TraceRing = EventRing<TraceEvent, 4096>;

}  // namespace rocesw
