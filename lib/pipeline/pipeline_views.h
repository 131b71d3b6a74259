// The pipeline's commands and metric families (doc/observability.md):
//   drops    read-only  drop counters by port and reason ('all' includes zeros)
//   workers  read-only  workers, their RX queues and poll counters
//   the ports, drops and workers families of pipeline/dataplane_metrics.h
// Per-worker counters summed without locks (single writer each).
#pragma once

#include <string>
#include <vector>

#include "common/counters.h"
#include "pipeline/worker.h"
#include "views/registry.h"

namespace rocesw {

struct PipelineViewSources {
    std::vector<std::string> port_names;    // by port index
    const WorkerCounters *counters = nullptr;  // one block per worker
    std::vector<const Worker *> workers;       // by worker id
    std::vector<unsigned> lcores;              // per worker: the EAL lcore it runs on
};

// Everything `src` points to must outlive every call and scrape.
void register_pipeline_views(ViewRegistry &r, PipelineViewSources src);

}  // namespace rocesw
