// Applies what netlink says about the switch's namespace to the Rib (doc/control-plane.md):
// the kernel is the source of truth for the host interfaces' addresses, neighbours, link state
// and the routes through them; everything else in the namespace is ignored (and counted).
//
// Pure logic over typed messages (nl::parse gives them): no socket, no clock, no thread. The
// caller batches: apply() every message available, then Rib::sync() once. After a socket
// overrun the caller re-dumps between begin_resync() and end_resync(), which removes whatever
// the dump no longer mentions (mark and sweep), so the RIB and the kernel reconcile.
//
// Kernel nexthop objects (FRR's zebra installs its routes through them by default): a route
// naming one (RTA_NH_ID) takes its next hops from the object, or from a group's members with
// their weights. Replacing an object moves every route that names it, or a group holding it;
// deleting one withdraws the routes that name it (the kernel deletes them, and with
// net.ipv4.nexthop_compat_mode 0 says nothing) and drops it from its groups. The caller
// dumps objects before routes.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ctrl/netlink_msg.h"
#include "route/rib.h"

namespace rocesw {

struct RouteSyncStats {
    uint64_t messages = 0;      // messages seen
    uint64_t changes = 0;       // that changed the RIB
    uint64_t ignored = 0;       // other interfaces, tables, route types; `kernel` routes
    uint64_t unsupported = 0;   // multipath device routes; routes naming an unknown nexthop object
    uint64_t nexthop_changes = 0;  // kernel nexthop objects added, replaced or deleted
    uint64_t resyncs = 0;       // full re-dumps after a socket overrun
    uint64_t routes_added = 0, routes_removed = 0;
    uint64_t neighbours_added = 0, neighbours_removed = 0;
    uint64_t addr_changes = 0, link_changes = 0;
    uint64_t resolve_requests = 0;  // next hops handed to the caller to resolve (take_resolves)
};

// A learned route's next hop the kernel has no usable neighbour entry for: the caller asks the
// kernel to resolve it (NetlinkSocket::resolve_neighbour).
struct ResolveRequest {
    int32_t ifindex = 0;
    IpAddr ip;
};

class RouteSync {
  public:
    // `port_of_ifindex`: the data port whose host interface has this ifindex, if any.
    RouteSync(Rib &rib, size_t n_ports, std::function<std::optional<uint16_t>(int)> port_of_ifindex);

    // Returns true when the RIB changed (a sync is due).
    bool apply(const nl::Message &m);

    void begin_resync();
    bool end_resync();  // true when the sweep removed something
    // True once after a host interface came back up: the kernel drops IPv4 routes through an
    // interface set down without telling (no RTM_DELROUTE), so the caller re-dumps.
    bool take_resync_request() {
        bool r = resync_requested_;
        resync_requested_ = false;
        return r;
    }

    // The next hops of learned routes that had no usable neighbour when the route arrived,
    // each once until the kernel reports it (usable, failed or deleted: a later route update
    // asks again). Nothing else resolves a next hop that no traffic through the kernel uses,
    // such as the IPv6 link-local next hop a BGP session over global addresses announces: the
    // workers would find the ECMP members dead and drop. Taken (and cleared) by the caller.
    std::vector<ResolveRequest> take_resolves() { return std::exchange(resolves_, {}); }

    const RouteSyncStats &stats() const { return stats_; }
    // The kernel protocol names seen in learned routes, with their current route counts.
    size_t learned_routes() const { return learned_.size(); }

  private:
    bool on_link(const nl::LinkMsg &m);
    bool on_addr(const nl::AddrMsg &m);
    bool on_neigh(const nl::NeighMsg &m);
    bool on_route(const nl::RouteMsg &m);
    bool on_nexthop(const nl::NexthopMsg &m);
    // The learned route for `dst` from next hops `nhs` (none: withdrawn).
    bool set_route(const IpPrefix &dst, uint8_t protocol, const std::vector<nl::NextHopMsg> &nhs);
    bool withdraw(const IpPrefix &dst);
    // The next hops of object `id` (a group's members with their weights; none for a
    // blackhole), or nullopt when the object is unknown.
    std::optional<std::vector<nl::NextHopMsg>> object_nexthops(uint32_t id) const;
    // Routes naming object `id` or a group holding it, resolved again.
    bool refresh_users(uint32_t id);
    void forget_nh_route(const IpPrefix &dst);
    struct NeighKey {
        uint16_t port;
        IpAddr ip;
        bool operator<(const NeighKey &o) const;
    };
    struct AddrLess {
        bool operator()(const IfAddr &a, const IfAddr &b) const;
    };
    struct PrefixLess {
        bool operator()(const IpPrefix &a, const IpPrefix &b) const;
    };

    Rib &rib_;
    std::function<std::optional<uint16_t>(int)> port_of_;
    std::vector<std::set<IfAddr, AddrLess>> addrs_;  // per port, as the kernel has them
    std::set<NeighKey> neighbours_;                  // learned from the kernel
    std::set<NeighKey> resolving_;                   // asked for, no kernel answer yet
    std::vector<ResolveRequest> resolves_;           // for take_resolves
    std::set<IpPrefix, PrefixLess> learned_;         // routes given to the RIB
    bool resyncing_ = false;
    std::set<NeighKey> seen_neighbours_;
    std::set<IpPrefix, PrefixLess> seen_routes_;
    std::vector<std::set<IfAddr, AddrLess>> seen_addrs_;
    // Nexthop objects by id; the groups holding each object; the routes naming each object
    // (main table, unicast, any interface: an object replaced onto our ports brings them in),
    // and each such route's object and protocol. Rebuilt by each dump (begin_resync clears
    // them).
    struct NhRoute {
        uint32_t id;
        uint8_t protocol;
    };
    std::map<uint32_t, nl::NexthopMsg> nh_objects_;
    std::map<uint32_t, std::set<uint32_t>> nh_groups_of_;
    std::map<uint32_t, std::set<IpPrefix, PrefixLess>> nh_users_;
    std::map<IpPrefix, NhRoute, PrefixLess> nh_routes_;
    RouteSyncStats stats_;
    bool warned_nh_id_ = false;
    bool resync_requested_ = false;
};

}  // namespace rocesw
