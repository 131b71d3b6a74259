// Routing's commands and metric families (doc/control-plane.md, doc/observability.md):
//   routes      read-only  IPv4/IPv6 routes, their next hops, counts by family and source
//   neighbours  read-only  neighbour (ARP/ND) entries
//   rocesw_routes{family}, rocesw_neighbours
// Read through the Rib's own lock.
#pragma once

#include <string>
#include <vector>

#include "route/rib.h"
#include "views/registry.h"

namespace rocesw {

// `rib` must outlive every call and scrape.
void register_route_views(ViewRegistry &r, const std::vector<std::string> &port_names,
                          const Rib &rib);

}  // namespace rocesw
