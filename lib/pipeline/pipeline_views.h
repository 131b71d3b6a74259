// The pipeline's commands and metric families (doc/observability.md):
//   drops    read-only  drop counters by port and reason ('all' includes zeros)
//   workers     read-only  workers, their RX queues and poll counters
//   accounting  read-only  the accounting identity per port and total (pipeline/accounting.h)
//   the ports, drops and workers families of pipeline/dataplane_metrics.h and the accounting
//   families (register_accounting_metrics)
// Per-worker counters summed without locks (single writer each).
#pragma once

#include <string>
#include <vector>

#include "common/counters.h"
#include "egress/egress.h"
#include "pipeline/worker.h"
#include "views/registry.h"

namespace rocesw {

class TrafficManager;

struct PipelineViewSources {
    std::vector<std::string> port_names;    // by port index
    const WorkerCounters *counters = nullptr;  // one block per worker
    std::vector<const Worker *> workers;       // by worker id
    std::vector<unsigned> lcores;              // per worker: the EAL lcore it runs on
    std::vector<const Egress *> egress;        // per worker (the accounting's queued term)
    const TrafficManager *tm = nullptr;        // PFC frames, injected frames; null: none
};

// Everything `src` points to must outlive every call and scrape.
void register_pipeline_views(ViewRegistry &r, PipelineViewSources src);

}  // namespace rocesw
