// The data-plane metric families: ports, drops, egress queues, buffer pools, priority groups
// and workers, read from the per-worker counters and TrafficManager without locks. roceswd
// registers them (app/roceswd/metrics.cc); pipeline tests register them over their own
// counters and compare a scrape with the counters (test/pipeline/prom_metrics_test.cc).
#pragma once

#include <string>
#include <vector>

#include "common/counters.h"
#include "qos/qos_egress.h"
#include "telemetry/metrics.h"

namespace rocesw {

struct DataplaneMetricSources {
    std::vector<std::string> port_names;      // by port index
    const WorkerCounters *workers = nullptr;  // n_workers blocks
    size_t n_workers = 0;
    const TrafficManager *qos = nullptr;
};

// Registers every family listed under "Ports", "Egress queues", "Priority groups" and
// "Workers" in doc/observability.md. The sources must outlive every scrape of `m`.
void register_dataplane_metrics(MetricRegistry &m, const DataplaneMetricSources &src);

}  // namespace rocesw
