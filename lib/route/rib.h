// The control-side routing information base. It holds what the switch knows (its own
// addresses, connected subnets, neighbours, static and learned routes), resolves
// each route to a next hop, and programs the data-plane Fib with the difference between what
// it wants and what is installed. Next hops are shared: routes that resolve to the same
// (kind, port, MAC) share one id (a neighbour's MAC change moves its routes to the new MAC's
// id: one route update each).
//
// Threading: mutated by the control thread only; the read-only views may be called from any
// thread (rte_telemetry's) and take the same mutex. Workers never touch the Rib.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "lb/group_view.h"  // GroupView, GroupMemberView
#include "route/fib.h"

namespace rocesw {

// Ordered by precedence: for one prefix, the highest source wins (local > static > learned >
// neighbour > connected).
enum class RouteSource : uint8_t { connected, neighbour, learned, static_route, local };
const char *route_source_name(RouteSource s);

struct RibPort {
    std::string name;
    MacAddr mac;
    std::vector<IfAddr> addrs;  // IPv4 and IPv6
};

// A route the kernel of the switch's namespace has (BGP via BIRD/FRR, `ip route`, ...), as
// the control plane's netlink sync hands it over (doc/control-plane.md).
struct LearnedPath {
    uint8_t port = 0;
    std::optional<IpAddr> via;  // none: a device route (the destination is on the link)
    uint32_t weight = 1;
};
struct LearnedRoute {
    std::string origin;  // the kernel's protocol name: "bird", "bgp", "static", "boot", ...
    std::vector<LearnedPath> paths;  // 1: single path; more: an ECMP group
    // A route that discards (the kernel's blackhole, unreachable, prohibit): no paths, and
    // packets to it are dropped (route_discard) rather than routed by a shorter prefix.
    bool discard = false;
    // With discard: the kernel answers its packets with ICMP unreachable (unreachable,
    // prohibit), so the switch punts them where it has host interfaces; blackhole does not.
    bool reject = false;
    bool operator==(const LearnedRoute &o) const;
};

struct RouteView {
    IpPrefix prefix;
    RouteSource source;
    std::string origin;  // learned routes: the kernel protocol
    std::optional<IpAddr> via;
    NextHop nh;
    uint32_t nexthop_id;
    bool installed;  // false when the FIB refused it (full)
};

struct NeighbourView {
    IpAddr ip;
    MacAddr mac;
    uint8_t port;
    bool learned;  // the kernel's (add_neighbour); false: the config's
    // The config's entry whose address the kernel has with another MAC: the kernel's (not used;
    // a misconfigured neighbour or a host that changed its NIC).
    std::optional<MacAddr> kernel_mac;
};

class Rib {
  public:
    Rib(Fib &fib, std::vector<RibPort> ports);

    // Replaces the static routes and neighbours (from the config). Control thread.
    void set_static(const std::vector<RouteConfig> &routes,
                    const std::vector<NeighbourConfig> &neighbours);
    // Replaces the multipath (ECMP) routes. Control thread.
    void set_multipath(const std::vector<MultipathRouteConfig> &routes);
    // The kernel's neighbours (netlink sync, the simulator's links). A configured neighbour of
    // the same port and address stays in effect: these change only the kernel's entry, which
    // takes effect when the config has none.
    void add_neighbour(uint8_t port, const IpAddr &ip, const MacAddr &mac);
    void del_neighbour(uint8_t port, const IpAddr &ip);

    // --- Learned state (netlink sync, control thread); applied at the next sync(). ---
    // Adds or replaces a learned route; false when nothing changed.
    bool set_learned(const IpPrefix &p, LearnedRoute r);
    bool del_learned(const IpPrefix &p);
    std::vector<IpPrefix> learned_prefixes() const;
    std::optional<LearnedRoute> learned(const IpPrefix &p) const;
    // Replaces a port's own addresses (connected and local routes). IPv6 link-local addresses
    // are kept for the record but never routed.
    void set_port_addrs(uint8_t port, std::vector<IfAddr> addrs);
    // A port that is down (administratively, or its link) carries no route: connected,
    // neighbour, static, learned routes and ECMP members through it are withdrawn.
    void set_port_up(uint8_t port, bool up);
    bool port_up(uint8_t port) const;

    // Installed routes per source ("connected", "local", "neighbour", "static", and each
    // learned origin: "bird", "bgp", ...).
    std::map<std::string, size_t> route_counts() const;

    // Brings the Fib level with the RIB. Returns the number of routes the Fib refused.
    // Incremental (doc/control-plane.md, "Incremental sync"): only the prefixes a mutator
    // marked since the last sync are recomputed, plus those the Fib refused or that run out of
    // ECMP groups (retried every sync, as a full recompute would).
    size_t sync();
    // Marks every prefix for the next sync: a full recompute through the same per-prefix rule.
    // The reference the incremental sync is tested against (rib_incremental_test.cc); set_static does it.
    void mark_all_dirty();
    // What the last sync did: prefixes recomputed, Fib ops committed, ECMP groups published.
    struct SyncStats {
        size_t evaluated = 0, ops = 0, groups_published = 0;
    };
    SyncStats last_sync() const;

    // Next-hop ids and ECMP group ids: how many are in use, and how many distinct ids were
    // ever handed out. Freed ids are reused before new ones, so route churn brings both back
    // where they were (rib_test.cc, LearnedRouteChurnReturnsIdsGroupsAndFibObjects).
    struct IdUsage {
        size_t nexthops = 0, nexthop_ids = 0, groups = 0, group_ids = 0;
        bool operator==(const IdUsage &) const = default;
    };
    IdUsage id_usage() const;

    std::vector<RouteView> routes() const;
    std::vector<NeighbourView> neighbours() const;
    size_t route_count(bool v6) const;
    const std::vector<RibPort> &ports() const { return ports_; }

    // ECMP groups of the multipath routes, by id.
    std::vector<GroupView> groups() const;
    // Switches the load-balancing policy of one multipath route (`target` is its prefix or its
    // group id) or of every group ("all") at runtime, then syncs. Traffic keeps flowing: the
    // group is republished with the new policy. An empty error string means success.
    std::string set_policy(const std::string &target, const std::string &policy);

    // The port whose connected subnet holds `ip`, if any.
    std::optional<uint8_t> port_for(const IpAddr &ip) const;

  private:
    struct Want {
        RouteSource source;
        std::optional<IpAddr> via;
        NextHop nh;
        const MultipathRouteConfig *multipath = nullptr;  // nh is this route's group
        std::string origin;                               // learned: the kernel protocol
    };
    struct PrefixLess {
        bool operator()(const IpPrefix &a, const IpPrefix &b) const;
    };
    // An ECMP group per path set (group_key: routes with the same paths share it). A path
    // keeps its slot while it is configured; the group id lives as long as a route uses it.
    struct PathKey {
        uint8_t port;
        IpAddr via;
        bool operator<(const PathKey &o) const;
    };
    struct GroupState {
        uint16_t id;
        std::map<PathKey, uint8_t> slots;
        std::vector<uint32_t> weights;  // by slot
        std::string policy_override;
        std::string policy;  // effective
        std::vector<LbMember> published;
        int published_policy = -1;
        IpPrefix prefix;  // the first route using it
        size_t routes = 0;
        size_t users = 0;  // the wanted routes pointing at it now
        IpPrefix first;    // the first of them (prefix order)
        bool first_known = true;  // false: the next route to join is the first
        // The second of them, when second_known (users >= 2): the first when the first leaves,
        // so that a flapping first route costs no scan of the routes up to the next user.
        IpPrefix second;
        bool second_known = false;
    };
    struct NhKey {
        NextHopKind kind;
        uint8_t port;
        MacAddr mac;
        uint16_t group;
        auto operator<=>(const NhKey &o) const {
            if (kind != o.kind) return kind <=> o.kind;
            if (port != o.port) return port <=> o.port;
            if (group != o.group) return group <=> o.group;
            return mac.b <=> o.mac.b;
        }
        bool operator==(const NhKey &) const = default;
    };
    struct NhSlot {
        uint32_t id;
        uint32_t refs;
    };
    struct NeighKey {
        uint8_t port;
        IpAddr ip;
        bool operator<(const NeighKey &o) const;
    };

    // The single rule deciding one prefix's winner (local > static > learned > neighbour >
    // connected; among one source, the first in config/port/address order).
    // The caller hands over the prefix's entries in the big tables (it has them at hand): its
    // learned route, its static routes (indices, config order), its first multipath route.
    std::optional<Want> want_for(const IpPrefix &p, const LearnedRoute *learned,
                                 const uint32_t *statics, size_t n_statics,
                                 const MultipathRouteConfig *multipath);
    std::optional<uint8_t> static_port(const RouteConfig &r) const;
    bool up_locked(uint8_t port) const { return port < port_up_.size() && port_up_[port]; }
    void dirty(const IpPrefix &p) {
        if (!all_dirty_) dirty_.push_back(p);
    }
    void dirty_port_addrs(uint8_t port);
    void dirty_neighbour(uint8_t port, const IpAddr &ip);
    void index_learned(const IpPrefix &p, const LearnedRoute &r, bool add);
    void index_addrs();
    void index_static();
    void index_multipath();
    // Gives a wanted multipath route its group (or the one-path fallback when none is left).
    // `from`: the group the route leaves in the same sync, whose runtime policy a learned
    // route takes to a group created for it.
    void group_join(const IpPrefix &p, Want &w, std::optional<uint16_t> from);
    void group_leave(const IpPrefix &p, uint16_t id);
    size_t publish_groups_locked();
    uint32_t nh_acquire(const NextHop &nh, std::vector<FibOp> &ops);
    void nh_release(uint32_t id);
    // A neighbour on `port` changed its MAC `from` -> `to`: when no other neighbour there has
    // `from` and no next hop forwards to `to` there yet, the next hop (forward, port, from)
    // becomes (forward, port, to) under its id (a set_nexthop in pending_nh_ops_) and this
    // returns true: the routes through it keep their id, and no sync recomputes or rewrites
    // them (their Wants keep the old MAC, which routes() does not show). Else false.
    bool rekey_forward(uint8_t port, const MacAddr &from, const MacAddr &to);

    Fib &fib_;
    std::vector<RibPort> ports_;
    mutable std::mutex mu_;
    std::vector<RouteConfig> static_routes_;
    std::vector<MultipathRouteConfig> multipath_routes_;
    // Neighbours in effect: the config's, and the kernel's where the config has none (a
    // configured neighbour wins, as a permanent entry does in Linux). The kernel's are kept
    // apart so that a configured one survives the kernel's delete of the same address.
    std::map<NeighKey, MacAddr> neighbours_;
    std::map<NeighKey, MacAddr> config_neighbours_;
    std::map<NeighKey, MacAddr> kernel_neighbours_;
    std::map<IpPrefix, Want, PrefixLess> wanted_;         // last computed
    std::map<IpPrefix, uint32_t, PrefixLess> installed_;  // prefix -> nexthop id in the Fib
    std::map<NhKey, NhSlot> nh_by_key_;
    // By next-hop id: its entry in nh_by_key_ (end() when the id is free), so releasing a
    // route's next hop is no scan of every next hop.
    std::vector<std::map<NhKey, NhSlot>::iterator> nh_at_id_;
    std::vector<uint32_t> free_ids_, pending_free_;
    std::vector<FibOp> pending_nh_ops_;  // rekey_forward's, committed first by the next sync
    // By group key: a configured multipath route has its own group ("route <prefix>"); learned
    // routes with the same next hops share one ("paths <port/via/weight>..."), as BGP gives
    // thousands of prefixes the same few next hops.
    std::map<std::string, GroupState> groups_;
    // `lb policy all`'s policy: every group created later for a learned route takes it.
    std::string all_policy_override_;
    std::map<IpPrefix, LearnedRoute, PrefixLess> learned_;
    // Learned multipath routes as groups over the ports that are up, while they win their
    // prefix (Want::multipath points into it); kept by want_for.
    std::map<IpPrefix, MultipathRouteConfig, PrefixLess> learned_mp_;
    // --- Incremental sync. ---
    std::vector<IpPrefix> dirty_;  // marked by the mutators since the last sync
    bool all_dirty_ = true;        // everything (construction, set_static, mark_all_dirty)
    std::set<IpPrefix, PrefixLess> retry_;  // refused by the Fib or out of ECMP groups
    SyncStats last_{};
    bool dense_ = false;  // this sync recomputes every prefix
    // Where each source has an entry for a prefix, so want_for reads no whole table.
    struct AddrAt {
        uint8_t port;
        uint16_t addr;  // index in ports_[port].addrs
        bool local;     // the host prefix of the address (else its subnet)
    };
    std::map<IpPrefix, std::vector<AddrAt>, PrefixLess> addr_at_;      // port, address order
    std::map<IpPrefix, std::set<uint8_t>, PrefixLess> neigh_ports_;     // host prefix -> ports
    // Indices into static_routes_ and multipath_routes_, by prefix then config order.
    std::vector<uint32_t> static_order_, multipath_order_;
    // Who reads what: the learned routes with a path through (port, via) (via unset: device
    // route), the static routes through a named port, those without one (resolved through the
    // addresses), and the static routes by gateway.
    // Learned routes are indexed by path set (BGP gives many prefixes the same few next hops):
    // one node per prefix, whatever its number of paths, and each path names its sets.
    struct PathRef {
        uint8_t port;
        bool has_via;
        IpAddr via;
        bool operator<(const PathRef &o) const;
        bool operator==(const PathRef &o) const = default;
    };
    // A route's paths, sorted (duplicates kept) -> the learned prefixes with exactly them.
    using PathSets = std::map<std::vector<PathRef>, std::set<IpPrefix, PrefixLess>>;
    PathSets learned_by_paths_;
    struct PathSetUse {
        PathRef path;
        PathSets::iterator set;
    };
    struct PathSetUseLess {
        using is_transparent = void;
        bool operator()(const PathSetUse &a, const PathSetUse &b) const;
        bool operator()(const PathSetUse &a, const PathRef &b) const { return a.path < b; }
        bool operator()(const PathRef &a, const PathSetUse &b) const { return a < b.path; }
    };
    std::set<PathSetUse, PathSetUseLess> path_sets_;  // (path, a set with it)
    std::vector<std::vector<uint32_t>> static_by_port_;  // indices into static_routes_
    std::vector<uint32_t> static_unnamed_;
    std::map<IpPrefix, std::vector<uint32_t>, PrefixLess> static_by_via_;  // via host prefix
    std::vector<GroupState *> group_of_id_;  // by group id
    std::vector<bool> port_up_;
    std::vector<uint16_t> free_group_ids_;
    uint16_t next_group_id_ = 0;
    std::optional<uint8_t> port_index(const std::string &name) const;
    void retire_groups_locked();
    std::string group_key(const IpPrefix &prefix, const Want &w) const;
    std::optional<uint8_t> live_path_port(const RoutePath &p) const;
    uint32_t next_id_ = 1;  // id 0 is never used
};

}  // namespace rocesw
