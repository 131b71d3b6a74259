// Load balancing's commands and metric families (doc/load-balancing.md, "Counters and traces";
// doc/observability.md):
//   lb         read-only  settings, ECMP groups and members, policy counters, flowlet table
//   lb_policy  mutating   "lb policy <prefix|group id|all> <policy>": switches a policy
//   lb_events  mutating   "lb events [max]": drains the workers' path-change rings
//   rocesw_lb_member_packets_total{group,member}, rocesw_lb_path_changes_total{policy},
//   rocesw_lb_flowlets_carried_total
// Counters are summed over the workers' balancers with relaxed loads.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "lb/balancer.h"
#include "lb/ecmp_group.h"
#include "lb/group_view.h"
#include "views/registry.h"

namespace rocesw {

struct LbViewSources {
    const EcmpGroups *groups = nullptr;                 // the settings
    std::function<std::vector<GroupView>()> list_groups;  // the RIB's groups (Rib::groups)
    // Switches a policy (Rib::set_policy): an empty string on success, else the error.
    std::function<std::string(const std::string &target, const std::string &policy)> set_policy;
    std::vector<LoadBalancer *> balancers;  // one per worker
    std::vector<std::string> port_names;    // by port index
};

// Everything `src` refers to must outlive every call and scrape.
void register_lb_views(ViewRegistry &r, LbViewSources src);

}  // namespace rocesw
