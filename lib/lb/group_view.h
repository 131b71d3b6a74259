// An ECMP group as the control side describes it (Rib::groups()): the route prefix, the policy
// and the members with their next hops. Defined here, below the RIB, so that lb's views can
// format it (lb/lb_views.h) without depending on lib/route.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pkt/addr.h"

namespace rocesw {

struct GroupMemberView {
    uint8_t slot;
    IpAddr via;
    uint8_t port;
    uint32_t weight;
    bool alive;
    MacAddr mac;
};

struct GroupView {
    uint16_t id;
    IpPrefix prefix;  // the first route using the group (learned routes share groups)
    size_t routes = 1;  // routes using it
    std::string policy;
    bool policy_overridden;                // set at runtime (set_policy), not from the config
    std::vector<GroupMemberView> members;  // by slot
};

}  // namespace rocesw
