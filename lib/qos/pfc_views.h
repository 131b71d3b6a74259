// PFC's and ECN's commands and metric families, next to the PfcEngine (doc/pfc.md,
// doc/observability.md "PFC and load balancing"):
//   pfc  read-only  per port the mode, per priority pauses received/sent and for how long, per
//                   lossless PG its buffer, threshold and headroom, per lossless queue the
//                   watchdog ([port...]); a formatting of TrafficManager::pfc_snapshot
//   ecn  read-only  per (port, queue) with a WRED/ECN profile: the curves, CE marks, WRED
//                   drops ([port...])
//   rocesw_pfc_*, rocesw_pg_headroom_used_bytes, rocesw_mac_control_malformed_total
// Lock-free: relaxed loads of single-writer counters; pause clocks read with `now_ns`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "qos/qos_egress.h"
#include "views/registry.h"

namespace rocesw {

struct PfcViewSources {
    std::vector<std::string> port_names;  // by port index
    std::vector<std::string> pfc_modes;   // per port: how MAC-control frames reach us
    const TrafficManager *qos = nullptr;
    std::function<uint64_t()> now_ns;     // the clock the workers pass down as "now"
};

// `src.qos` must outlive every call and scrape.
void register_pfc_views(ViewRegistry &r, PfcViewSources src);

}  // namespace rocesw
