// The QoS metric families: egress queues (depth, watermarks, enqueued/dequeued, ECN marks,
// drops by reason), the device TX ring estimate, buffer pools and priority groups (ingress
// accounting), read from TrafficManager snapshots without locks. Listed under "Egress queues" and
// "Priority groups" in doc/observability.md.
#pragma once

#include <string>
#include <vector>

#include "metrics/metrics.h"
#include "qos/qos_egress.h"

namespace rocesw {

// `port_names` by port index. `qos` must outlive every scrape of `m`.
void register_qos_metrics(MetricRegistry &m, const std::vector<std::string> &port_names,
                          const TrafficManager &qos);

}  // namespace rocesw
