// QoS's commands and metric families (doc/qos.md, doc/observability.md):
//   queues            read-only  the 8 egress queues per port ([port...])
//   clear_watermarks  mutating   "clear watermarks [port...]": restart queue and PG watermarks
//   the queue, pool and PG families of qos/qos_metrics.h
// PFC and ECN have their own (qos/pfc_views.h).
#pragma once

#include <string>
#include <vector>

#include "qos/qos_egress.h"
#include "views/registry.h"

namespace rocesw {

// `qos` must outlive every call and scrape.
void register_qos_views(ViewRegistry &r, const std::vector<std::string> &port_names,
                        TrafficManager &qos);

}  // namespace rocesw
