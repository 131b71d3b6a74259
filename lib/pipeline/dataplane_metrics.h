// The data-plane metric families of ports, drops and workers, read from the per-worker
// counters without locks. The egress-queue, buffer-pool and priority-group families belong to
// qos (qos/qos_metrics.h). register_pipeline_views (pipeline/pipeline_views.h) registers these
// for roceswd; pipeline tests register them over their own counters and compare a scrape with
// the counters (test/pipeline/prom_metrics_test.cc).
#pragma once

#include <string>
#include <vector>

#include "common/counters.h"
#include "metrics/metrics.h"

namespace rocesw {

struct DataplaneMetricSources {
    std::vector<std::string> port_names;      // by port index
    const WorkerCounters *workers = nullptr;  // n_workers blocks
    size_t n_workers = 0;
};

// Registers every family listed under "Ports" and "Workers" in doc/observability.md. The
// sources must outlive every scrape of `m`.
void register_dataplane_metrics(MetricRegistry &m, const DataplaneMetricSources &src);

}  // namespace rocesw
