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
//
// One prefix may have several kernel routes of different metrics (RTA_PRIORITY): a BGP route
// and a floating static behind it, say. The switch installs the one the kernel prefers, the
// lowest metric among those with a path through its ports; when that one goes, the next takes
// its place, as in the kernel (doc/control-plane.md, "Routes of one prefix"). Unlike the
// kernel (whose routes through a port without carrier stay in use, flagged linkdown), a route
// whose ports are all down steps back for one with a port up.
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

#include <boost/container/small_vector.hpp>

#include "ctrl/netlink_msg.h"
#include "route/rib.h"

namespace rocesw {

struct RouteSyncStats {
    uint64_t messages = 0;      // messages seen
    uint64_t changes = 0;       // that changed the RIB
    uint64_t ignored = 0;       // other interfaces, tables, route types; `kernel` routes
    uint64_t unsupported = 0;   // multipath device routes; routes naming an unknown nexthop
                                // object; routes for a TOS
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
    // True once after a host interface was set down or up (IFF_UP): the kernel drops IPv4
    // routes and nexthop objects through an interface set down without telling (no
    // RTM_DELROUTE), so the caller re-dumps. A carrier change alone deletes nothing and asks
    // for none. (A route of higher metric through another port has taken over at the link
    // message already.)
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
    // Prefixes with a learned route in the RIB.
    size_t learned_routes() const { return installed_; }
    // Kernel routes followed (every metric of every prefix, the installed ones included).
    size_t kernel_routes() const { return n_cands_; }

  private:
    bool on_link(const nl::LinkMsg &m);
    bool on_addr(const nl::AddrMsg &m);
    bool on_neigh(const nl::NeighMsg &m);
    bool on_route(const nl::RouteMsg &m);
    bool on_nexthop(const nl::NexthopMsg &m);
    // A kernel route (prefix, metric) and what it says: its protocol, its object (0: none),
    // its next hops when it names no object, or the compat next hops of an unknown object.
    struct RouteKey {
        IpPrefix dst;
        uint32_t priority;
        bool operator<(const RouteKey &o) const;
    };
    // `discard`: a blackhole, unreachable or prohibit route (no next hops; drops); `reject`:
    // unreachable or prohibit (the kernel answers with ICMP unreachable).
    bool upsert(const RouteKey &k, uint8_t protocol, uint32_t nh_id,
                const std::vector<nl::NextHopMsg> &nhs, bool discard = false,
                bool reject = false);
    bool erase(const RouteKey &k);  // the kernel route is gone
    // Installs the prefix's preferred route (or withdraws it); true when the RIB changed.
    bool reselect(const IpPrefix &dst);
    bool live(const LearnedRoute &r) const;  // a path through a port that is up
    // The paths through our ports of next hops `nhs` (resolve requests for the gateways).
    LearnedRoute to_route(uint8_t protocol, const std::vector<nl::NextHopMsg> &nhs);
    // The next hops of object `id` (a group's members with their weights; none for a
    // blackhole), or nullopt when the object is unknown.
    std::optional<std::vector<nl::NextHopMsg>> object_nexthops(uint32_t id) const;
    // Routes naming object `id` or a group holding it, resolved again.
    bool refresh_users(uint32_t id);
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
    std::vector<uint8_t> admin_up_;                  // per port: IFF_UP, as the kernel last said
    std::set<NeighKey> neighbours_;                  // learned from the kernel
    std::set<NeighKey> resolving_;                   // asked for, no kernel answer yet
    std::vector<ResolveRequest> resolves_;           // for take_resolves
    // Each prefix's kernel routes, by metric: those with a path through our ports, and every
    // route naming a nexthop object (an object replaced onto our ports brings them in). At
    // most one is installed in the RIB (`installed`); an installed route's paths are the
    // RIB's, an object route's its object's, and any other's are in stored_. Almost every
    // prefix has one route, kept inline.
    struct Cand {
        uint32_t priority = 0;
        uint32_t nh_id = 0;
        uint8_t protocol = 0;
        bool installed = false;
    };
    using Cands = boost::container::small_vector<Cand, 1>;
    std::map<IpPrefix, Cands, PrefixLess> routes_;
    // The paths of routes without an object that are not installed, and the compat next hops
    // of routes naming an object not seen (used while it is unknown).
    std::map<RouteKey, LearnedRoute> stored_;
    // The prefixes with more than one kernel route: those a link change may move to another.
    std::set<IpPrefix, PrefixLess> multi_;
    size_t installed_ = 0, n_cands_ = 0;
    bool resyncing_ = false;
    std::set<NeighKey> seen_neighbours_;
    std::set<RouteKey> seen_routes_;
    std::vector<std::set<IfAddr, AddrLess>> seen_addrs_;
    // Nexthop objects by id; the groups holding each object; the routes naming each object.
    // Rebuilt by each dump (begin_resync clears them).
    std::map<uint32_t, nl::NexthopMsg> nh_objects_;
    std::map<uint32_t, std::set<uint32_t>> nh_groups_of_;
    std::map<uint32_t, std::set<RouteKey>> nh_users_;
    RouteSyncStats stats_;
    bool warned_nh_id_ = false;
    bool warned_tos_ = false;
    bool resync_requested_ = false;
};

}  // namespace rocesw
