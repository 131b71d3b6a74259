#include "route/rib.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <tuple>

#include "common/strings.h"
#include "lb/policy.h"

namespace rocesw {

const char *route_source_name(RouteSource s) {
    switch (s) {
        case RouteSource::connected:
            return "connected";
        case RouteSource::neighbour:
            return "neighbour";
        case RouteSource::static_route:
            return "static";
        case RouteSource::learned:
            return "learned";
        case RouteSource::local:
            return "local";
    }
    return "?";
}

bool Rib::PrefixLess::operator()(const IpPrefix &a, const IpPrefix &b) const {
    return std::tie(a.addr.is_v6, a.addr.v4, a.addr.v6, a.len) <
           std::tie(b.addr.is_v6, b.addr.v4, b.addr.v6, b.len);
}

bool Rib::NeighKey::operator<(const NeighKey &o) const {
    return std::tie(port, ip.is_v6, ip.v4, ip.v6) < std::tie(o.port, o.ip.is_v6, o.ip.v4, o.ip.v6);
}

bool Rib::PathRef::operator<(const PathRef &o) const {
    return std::tie(port, has_via, via.is_v6, via.v4, via.v6) <
           std::tie(o.port, o.has_via, o.via.is_v6, o.via.v4, o.via.v6);
}

bool Rib::PathSetUseLess::operator()(const PathSetUse &a, const PathSetUse &b) const {
    if (!(a.path == b.path)) return a.path < b.path;
    return std::less<const void *>{}(&*a.set, &*b.set);
}

bool Rib::PathKey::operator<(const PathKey &o) const {
    return std::tie(port, via.is_v6, via.v4, via.v6) <
           std::tie(o.port, o.via.is_v6, o.via.v4, o.via.v6);
}

std::optional<uint8_t> Rib::port_index(const std::string &name) const {
    for (size_t i = 0; i < ports_.size(); i++)
        if (ports_[i].name == name) return uint8_t(i);
    return std::nullopt;
}

static IpPrefix host_prefix(const IpAddr &a) {
    return IpPrefix{a, uint8_t(a.is_v6 ? 128 : 32)};
}

Rib::Rib(Fib &fib, std::vector<RibPort> ports)
    : fib_(fib), ports_(std::move(ports)), port_up_(ports_.size(), true) {
    static_by_port_.resize(ports_.size());
    group_of_id_.assign(kMaxEcmpGroups, nullptr);
    index_addrs();
}

bool LearnedRoute::operator==(const LearnedRoute &o) const {
    if (origin != o.origin || discard != o.discard || reject != o.reject ||
        paths.size() != o.paths.size())
        return false;
    for (size_t i = 0; i < paths.size(); i++)
        if (paths[i].port != o.paths[i].port || paths[i].via != o.paths[i].via ||
            paths[i].weight != o.paths[i].weight)
            return false;
    return true;
}

// The learned route under its path set in learned_by_paths_: what a port or neighbour change
// re-evaluates.
void Rib::index_learned(const IpPrefix &p, const LearnedRoute &r, bool add) {
    std::vector<PathRef> key;
    key.reserve(r.paths.size());
    for (const auto &path : r.paths)
        key.push_back(PathRef{path.port, bool(path.via), path.via.value_or(IpAddr{})});
    std::sort(key.begin(), key.end());
    if (add) {
        auto [set, fresh] = learned_by_paths_.try_emplace(std::move(key));
        if (fresh)
            for (const PathRef &path : set->first) path_sets_.insert(PathSetUse{path, set});
        set->second.insert(p);
        return;
    }
    auto set = learned_by_paths_.find(key);
    if (set == learned_by_paths_.end()) return;
    set->second.erase(p);
    if (!set->second.empty()) return;
    for (const PathRef &path : set->first) path_sets_.erase(PathSetUse{path, set});
    learned_by_paths_.erase(set);
}

bool Rib::set_learned(const IpPrefix &p, LearnedRoute r) {
    std::lock_guard lk(mu_);
    auto it = learned_.find(p);
    if (it != learned_.end() && it->second == r) return false;
    if (it != learned_.end()) index_learned(p, it->second, false);
    index_learned(p, r, true);
    learned_[p] = std::move(r);
    dirty(p);
    return true;
}

bool Rib::del_learned(const IpPrefix &p) {
    std::lock_guard lk(mu_);
    auto it = learned_.find(p);
    if (it == learned_.end()) return false;
    index_learned(p, it->second, false);
    learned_.erase(it);
    dirty(p);
    return true;
}

std::vector<IpPrefix> Rib::learned_prefixes() const {
    std::lock_guard lk(mu_);
    std::vector<IpPrefix> out;
    for (const auto &[p, r] : learned_) out.push_back(p);
    return out;
}

std::optional<LearnedRoute> Rib::learned(const IpPrefix &p) const {
    std::lock_guard lk(mu_);
    auto it = learned_.find(p);
    if (it == learned_.end()) return std::nullopt;
    return it->second;
}

// The connected and local prefixes of the ports' addresses, in port and address order.
void Rib::index_addrs() {
    addr_at_.clear();
    for (size_t i = 0; i < ports_.size(); i++)
        for (size_t j = 0; j < ports_[i].addrs.size(); j++) {
            const IfAddr &a = ports_[i].addrs[j];
            if (is_link_local(a.addr)) continue;  // fe80::/64 is on every port: never routed
            addr_at_[a.subnet()].push_back(AddrAt{uint8_t(i), uint16_t(j), false});
            addr_at_[host_prefix(a.addr)].push_back(AddrAt{uint8_t(i), uint16_t(j), true});
        }
}

// The prefixes of a port's addresses, and the static routes that find their port through the
// addresses (port_for).
void Rib::dirty_port_addrs(uint8_t port) {
    for (const auto &a : ports_[port].addrs) {
        dirty(a.subnet());
        dirty(host_prefix(a.addr));
    }
}

void Rib::set_port_addrs(uint8_t port, std::vector<IfAddr> addrs) {
    std::lock_guard lk(mu_);
    if (port >= ports_.size()) return;
    dirty_port_addrs(port);
    ports_[port].addrs = std::move(addrs);
    dirty_port_addrs(port);
    for (uint32_t i : static_unnamed_) dirty(static_routes_[i].prefix);
    index_addrs();
}

void Rib::set_port_up(uint8_t port, bool up) {
    std::lock_guard lk(mu_);
    if (port >= port_up_.size() || port_up_[port] == up) return;
    port_up_[port] = up;
    if (all_dirty_) return;
    // Everything that reads the port's state: its addresses, its neighbours, the learned
    // routes with a path through it, the static routes through it.
    dirty_port_addrs(port);
    for (auto it = neighbours_.lower_bound(NeighKey{port, IpAddr{}});
         it != neighbours_.end() && it->first.port == port; ++it)
        dirty(host_prefix(it->first.ip));
    for (auto it = path_sets_.lower_bound(PathRef{port, false, IpAddr{}});
         it != path_sets_.end() && it->path.port == port; ++it)
        for (const IpPrefix &p : it->set->second) dirty(p);
    for (uint32_t i : static_by_port_[port]) dirty(static_routes_[i].prefix);
    for (uint32_t i : static_unnamed_) dirty(static_routes_[i].prefix);
}

bool Rib::port_up(uint8_t port) const {
    std::lock_guard lk(mu_);
    return port < port_up_.size() && port_up_[port];
}

std::map<std::string, size_t> Rib::route_counts() const {
    std::lock_guard lk(mu_);
    std::map<std::string, size_t> out;
    for (const auto &[p, w] : wanted_) {
        if (!installed_.count(p)) continue;
        out[w.origin.empty() ? route_source_name(w.source) : w.origin]++;
    }
    return out;
}

void Rib::index_static() {
    static_order_.resize(static_routes_.size());
    for (size_t i = 0; i < static_routes_.size(); i++) static_order_[i] = uint32_t(i);
    std::stable_sort(static_order_.begin(), static_order_.end(), [&](uint32_t a, uint32_t b) {
        return PrefixLess{}(static_routes_[a].prefix, static_routes_[b].prefix);
    });
    static_by_via_.clear();
    static_unnamed_.clear();
    for (auto &v : static_by_port_) v.clear();
    for (size_t i = 0; i < static_routes_.size(); i++) {
        const RouteConfig &r = static_routes_[i];
        static_by_via_[host_prefix(r.via)].push_back(uint32_t(i));
        std::optional<uint8_t> port;
        for (size_t j = 0; j < ports_.size(); j++)
            if (ports_[j].name == r.port) port = uint8_t(j);
        if (port)
            static_by_port_[*port].push_back(uint32_t(i));
        else
            static_unnamed_.push_back(uint32_t(i));
    }
}

void Rib::set_static(const std::vector<RouteConfig> &routes,
                     const std::vector<NeighbourConfig> &neighbours) {
    std::lock_guard lk(mu_);
    static_routes_ = routes;
    index_static();
    all_dirty_ = true;  // config: recomputed in full
    dirty_.clear();
    config_neighbours_.clear();
    for (const auto &n : neighbours) {
        int port = -1;
        for (size_t i = 0; i < ports_.size(); i++)
            if (ports_[i].name == n.port) port = int(i);
        if (port < 0) {
            auto p = port_for(n.ip);
            if (!p) continue;  // the config loader rejects this; be safe anyway
            port = *p;
        }
        config_neighbours_[NeighKey{uint8_t(port), n.ip}] = n.mac;
    }
    neighbours_ = kernel_neighbours_;
    for (const auto &[k, mac] : config_neighbours_) neighbours_[k] = mac;
    neigh_ports_.clear();
    for (const auto &[k, mac] : neighbours_) neigh_ports_[host_prefix(k.ip)].insert(k.port);
}

void Rib::index_multipath() {
    multipath_order_.resize(multipath_routes_.size());
    for (size_t i = 0; i < multipath_routes_.size(); i++) multipath_order_[i] = uint32_t(i);
    std::stable_sort(multipath_order_.begin(), multipath_order_.end(), [&](uint32_t a, uint32_t b) {
        return PrefixLess{}(multipath_routes_[a].prefix, multipath_routes_[b].prefix);
    });
}

void Rib::set_multipath(const std::vector<MultipathRouteConfig> &routes) {
    std::lock_guard lk(mu_);
    for (const auto &r : multipath_routes_) dirty(r.prefix);
    multipath_routes_.clear();
    for (const auto &r : routes)
        if (!r.paths.empty()) multipath_routes_.push_back(r);
    for (const auto &r : multipath_routes_) dirty(r.prefix);
    index_multipath();
}

// What reads neighbour (port, ip): its host route, the learned routes resolved through it
// (a multipath one only when at most one of its paths is up: else it is a group, whose
// members every sync recomputes), the static routes through it.
void Rib::dirty_neighbour(uint8_t port, const IpAddr &ip) {
    if (all_dirty_) return;
    dirty(host_prefix(ip));
    const PathRef via{port, true, ip};
    for (auto it = path_sets_.lower_bound(via); it != path_sets_.end() && it->path == via; ++it) {
        const std::vector<PathRef> &paths = it->set->first;
        if (paths.size() > 1) {
            size_t live = 0;
            for (const PathRef &path : paths) live += up_locked(path.port);
            if (live > 1) continue;
        }
        for (const IpPrefix &p : it->set->second) dirty(p);
    }
    if (auto s = static_by_via_.find(host_prefix(ip)); s != static_by_via_.end())
        for (uint32_t i : s->second) dirty(static_routes_[i].prefix);
}

void Rib::add_neighbour(uint8_t port, const IpAddr &ip, const MacAddr &mac) {
    std::lock_guard lk(mu_);
    kernel_neighbours_[NeighKey{port, ip}] = mac;
    if (config_neighbours_.count(NeighKey{port, ip})) return;  // the config's stays in effect
    auto [it, fresh] = neighbours_.try_emplace(NeighKey{port, ip}, mac);
    if (!fresh && it->second == mac) return;
    const MacAddr from = it->second;
    it->second = mac;
    neigh_ports_[host_prefix(ip)].insert(port);
    // A MAC change resolves nothing anew: when the next hop itself could change, the routes
    // through the neighbour stay as they are (routes() reads an installed route's next hop
    // from its id; a recompute for another reason finds the same id).
    if (!fresh && rekey_forward(port, from, mac)) return;
    dirty_neighbour(port, ip);
}

bool Rib::rekey_forward(uint8_t port, const MacAddr &from, const MacAddr &to) {
    const auto old = nh_by_key_.find(NhKey{NextHopKind::forward, port, from, 0});
    if (old == nh_by_key_.end() || nh_by_key_.count(NhKey{NextHopKind::forward, port, to, 0}))
        return false;
    // Every route with that next hop resolved through a neighbour on the port with MAC `from`
    // (want_for, group_join's one-path fallback): none may be left but the one that changed.
    for (auto n = neighbours_.lower_bound(NeighKey{port, IpAddr{}});
         n != neighbours_.end() && n->first.port == port; ++n)
        if (n->second == from) return false;
    const NhSlot slot = old->second;
    nh_by_key_.erase(old);
    nh_at_id_[slot.id] = nh_by_key_.emplace(NhKey{NextHopKind::forward, port, to, 0}, slot).first;
    pending_nh_ops_.push_back(
        FibOp{FibOp::Type::set_nexthop, {}, slot.id, NextHop{NextHopKind::forward, port, to, 0}});
    return true;
}

void Rib::del_neighbour(uint8_t port, const IpAddr &ip) {
    std::lock_guard lk(mu_);
    kernel_neighbours_.erase(NeighKey{port, ip});
    if (config_neighbours_.count(NeighKey{port, ip})) return;  // the config's stays in effect
    if (!neighbours_.erase(NeighKey{port, ip})) return;
    auto np = neigh_ports_.find(host_prefix(ip));
    np->second.erase(port);
    if (np->second.empty()) neigh_ports_.erase(np);
    dirty_neighbour(port, ip);
}

std::optional<uint8_t> Rib::port_for(const IpAddr &ip) const {
    for (size_t i = 0; i < ports_.size(); i++)
        for (const auto &a : ports_[i].addrs)
            if (a.addr.is_v6 == ip.is_v6 && a.subnet().contains(ip)) return uint8_t(i);
    return std::nullopt;
}

std::optional<uint8_t> Rib::static_port(const RouteConfig &r) const {
    std::optional<uint8_t> port;
    for (size_t i = 0; i < ports_.size(); i++)
        if (ports_[i].name == r.port) port = uint8_t(i);
    if (!port) port = port_for(r.via);
    return port;
}

// One prefix's winner. Sources are tried from the highest (local) down; within one source the
// first entry in config, port and address order wins. A learned multipath route's group paths
// are kept in learned_mp_ (Want::multipath points there) while it is the winner.
std::optional<Rib::Want> Rib::want_for(const IpPrefix &p, const LearnedRoute *learned,
                                       const uint32_t *statics, size_t n_statics,
                                       const MultipathRouteConfig *multipath) {
    auto addrs = addr_at_.find(p);
    if (addrs != addr_at_.end())
        for (const AddrAt &a : addrs->second)
            if (a.local && up_locked(a.port))
                return Want{RouteSource::local, std::nullopt,
                            NextHop{NextHopKind::local, a.port, {}}, nullptr, {}};
    if (multipath) {
        // the group id is filled in by group_join
        const MultipathRouteConfig &r = *multipath;
        learned_mp_.erase(p);
        return Want{RouteSource::static_route, r.paths[0].via,
                    NextHop{NextHopKind::ecmp_group, 0, {}, 0}, &r, {}};
    }
    for (size_t k = 0; k < n_statics; k++) {
        const RouteConfig &r = static_routes_[statics[k]];
        auto port = static_port(r);
        if (!port || !up_locked(*port)) continue;
        NextHop nh{NextHopKind::unresolved, *port, {}};
        auto n = neighbours_.find(NeighKey{*port, r.via});
        if (n != neighbours_.end()) nh = NextHop{NextHopKind::forward, *port, n->second};
        learned_mp_.erase(p);
        return Want{RouteSource::static_route, r.via, nh, nullptr, {}};
    }
    if (learned) {
        const LearnedRoute &r = *learned;
        if (r.discard) {
            learned_mp_.erase(p);
            const NextHopKind kind = r.reject ? NextHopKind::reject : NextHopKind::discard;
            return Want{RouteSource::learned, std::nullopt, NextHop{kind, 0, {}},
                        nullptr, r.origin};
        }
        std::vector<const LearnedPath *> live;
        for (const auto &path : r.paths)
            if (up_locked(path.port) && path.port < ports_.size()) live.push_back(&path);
        if (live.size() == 1) {
            const LearnedPath &lp = *live[0];
            NextHop nh{NextHopKind::glean, lp.port, {}};  // device route: on the link
            if (lp.via) {
                nh = NextHop{NextHopKind::unresolved, lp.port, {}};
                auto n = neighbours_.find(NeighKey{lp.port, *lp.via});
                if (n != neighbours_.end()) nh = NextHop{NextHopKind::forward, lp.port, n->second};
            }
            learned_mp_.erase(p);
            return Want{RouteSource::learned, lp.via, nh, nullptr, r.origin};
        }
        // none live: every path through a port that is down, withdrawn
        if (live.size() > 1) {
            MultipathRouteConfig mp{p, {}, {}};
            for (const LearnedPath *lp : live)
                if (lp->via) mp.paths.push_back(RoutePath{*lp->via, ports_[lp->port].name, lp->weight});
            if (!mp.paths.empty()) {
                const MultipathRouteConfig &stored = learned_mp_[p] = std::move(mp);
                return Want{RouteSource::learned, stored.paths[0].via,
                            NextHop{NextHopKind::ecmp_group, 0, {}, 0}, &stored, r.origin};
            }
        }
    }
    learned_mp_.erase(p);
    if (auto n = neigh_ports_.find(p); n != neigh_ports_.end() && !is_link_local(p.addr))
        for (uint8_t port : n->second)
            if (up_locked(port))
                return Want{RouteSource::neighbour, std::nullopt,
                            NextHop{NextHopKind::forward, port,
                                    neighbours_.at(NeighKey{port, p.addr})},
                            nullptr, {}};
    if (addrs != addr_at_.end())
        for (const AddrAt &a : addrs->second)
            if (!a.local && up_locked(a.port))
                return Want{RouteSource::connected, std::nullopt,
                            NextHop{NextHopKind::glean, a.port, {}}, nullptr, {}};
    return std::nullopt;
}

uint32_t Rib::nh_acquire(const NextHop &nh, std::vector<FibOp> &ops) {
    NhKey key{nh.kind, nh.port, nh.dst_mac, nh.group};
    auto it = nh_by_key_.find(key);
    if (it != nh_by_key_.end()) {
        it->second.refs++;
        return it->second.id;
    }
    uint32_t id;
    if (!free_ids_.empty()) {
        id = free_ids_.back();
        free_ids_.pop_back();
    } else {
        id = next_id_++;
    }
    if (id >= nh_at_id_.size()) nh_at_id_.resize(size_t(id) + 1, nh_by_key_.end());
    nh_at_id_[id] = nh_by_key_.emplace(key, NhSlot{id, 1}).first;
    ops.push_back(FibOp{FibOp::Type::set_nexthop, {}, id, nh});
    return id;
}

void Rib::nh_release(uint32_t id) {
    if (id >= nh_at_id_.size() || nh_at_id_[id] == nh_by_key_.end()) return;
    auto it = nh_at_id_[id];
    if (--it->second.refs == 0) {
        // Recycled only by a later sync, so no entry is rewritten in the batch that still
        // moves routes off it.
        pending_free_.push_back(id);
        nh_by_key_.erase(it);
        nh_at_id_[id] = nh_by_key_.end();
    }
}

// Gives every wanted multipath route its group (id, slots, members, policy) and publishes the
// groups that changed, before the Fib points any route at them.
// The port a multipath route's path leaves through (named, or the via's connected subnet),
// when that port is up.
std::optional<uint8_t> Rib::live_path_port(const RoutePath &p) const {
    auto port = port_index(p.port);
    if (!port) port = port_for(p.via);
    if (!port || !port_up_[*port]) return std::nullopt;
    return port;
}

// Routes with the same path set share one group: learned routes (BGP announces many prefixes
// over the same next hops), and configured routes with the same paths and policy (a large
// table would otherwise run out of the kMaxEcmpGroups groups). The family is part of the key:
// an IPv4 and an IPv6 route never share.
std::string Rib::group_key(const IpPrefix &prefix, const Want &w) const {
    std::vector<std::string> parts;
    for (const auto &p : w.multipath->paths)
        parts.push_back(p.port + "/" + p.via.str() + "/" + std::to_string(p.weight));
    std::sort(parts.begin(), parts.end());  // the kernel's order is not stable
    std::string key = w.source == RouteSource::learned ? "paths" : "static " + w.multipath->policy;
    key += prefix.addr.is_v6 ? " v6" : " v4";
    for (const auto &s : parts) key += " " + s;
    return key;
}

// A wanted multipath route takes the group of its path set: the existing one, else a new id
// (the lowest freed one first). Dirty prefixes are joined in prefix order, so ids are handed out
// in the order a full recompute would hand them out.
void Rib::group_join(const IpPrefix &prefix, Want &w, std::optional<uint16_t> from) {
    const MultipathRouteConfig &r = *w.multipath;
    const std::string key = group_key(prefix, w);
    auto it = groups_.find(key);
    if (it == groups_.end()) {
        uint16_t id;
        if (!free_group_ids_.empty()) {
            id = free_group_ids_.back();
            free_group_ids_.pop_back();
        } else if (next_group_id_ < kMaxEcmpGroups) {
            id = next_group_id_++;
        } else {
            // Out of groups: the first path with a resolved neighbour carries it all. Retried
            // at every sync, as a group may have been freed meanwhile.
            spdlog::warn("route {}: no free ECMP group (at most {}); using one path",
                         prefix.str(), kMaxEcmpGroups);
            w.nh = NextHop{NextHopKind::unresolved, 0, {}, 0};
            for (const auto &p : r.paths) {
                auto port = live_path_port(p);
                if (!port) continue;
                auto n = neighbours_.find(NeighKey{*port, p.via});
                if (n != neighbours_.end()) {
                    w.nh = NextHop{NextHopKind::forward, *port, n->second, 0};
                    break;
                }
                if (w.nh.port == 0) w.nh.port = *port;
            }
            w.via = std::nullopt;
            w.multipath = nullptr;
            retry_.insert(prefix);
            return;
        }
        GroupState fresh{id, {}, {}, {}, {}, {}, -1, prefix, 0, 0, {}, true, {}, false};
        // A learned route whose paths changed keeps the policy set at runtime for its group
        // (`lb policy <prefix>`), else `lb policy all`'s: a BGP path change must not revert
        // an experiment's policy. Configured routes take their policy from the config.
        if (w.source == RouteSource::learned) {
            const GroupState *prev = from ? group_of_id_[*from] : nullptr;
            fresh.policy_override = prev && !prev->policy_override.empty()
                                        ? prev->policy_override
                                        : all_policy_override_;
        }
        it = groups_.emplace(key, std::move(fresh)).first;
        group_of_id_[id] = &it->second;
    }
    GroupState &gs = it->second;
    const PrefixLess less;
    if (gs.users++ == 0 || !gs.first_known) {  // the first (dense_: every route joins in order)
        gs.first = prefix;
        gs.first_known = true;
        gs.second_known = false;
    } else if (less(prefix, gs.first)) {
        gs.second = gs.first;
        gs.second_known = true;
        gs.first = prefix;
    } else if (gs.users == 2 || (gs.second_known && less(prefix, gs.second))) {
        gs.second = prefix;
        gs.second_known = true;
    }
    w.nh.group = gs.id;
}

void Rib::group_leave(const IpPrefix &prefix, uint16_t id) {
    GroupState *gs = group_of_id_[id];
    if (!gs) return;
    const PrefixLess less;
    if (--gs->users == 0) {
        gs->second_known = false;
        return;
    }
    if (less(gs->first, prefix)) {  // another than the first leaves
        if (gs->users == 1 || (gs->second_known && !less(gs->second, prefix)))
            gs->second_known = false;  // the second left (or no second is left)
        return;
    }
    if (dense_) {  // every route is recomputed in order: the first to join again is the first
        gs->first_known = false;
        gs->second_known = false;
        return;
    }
    if (gs->second_known) {  // the second is the first now; the next is not known
        gs->first = gs->second;
        gs->second_known = false;
        return;
    }
    // The first user leaves: the next one is the next wanted route pointing at the group (the
    // others all come after `prefix`, and a route that joins sets its Want after joining).
    for (auto it = wanted_.upper_bound(prefix); it != wanted_.end(); ++it)
        if (it->second.multipath && it->second.nh.kind == NextHopKind::ecmp_group &&
            it->second.nh.group == id) {
            gs->first = it->first;
            return;
        }
}

// Recomputes every group in use (slots, members, policy) from the paths of its first route and
// the ports and neighbours as they are now, and publishes the ones that changed, before the Fib
// points any route at them. At most kMaxEcmpGroups groups: cheap, so done at every sync.
size_t Rib::publish_groups_locked() {
    EcmpGroups &eg = fib_.groups();
    const uint8_t default_policy = eg.settings().default_policy;
    std::vector<std::pair<uint16_t, std::unique_ptr<EcmpGroup>>> changes;
    std::vector<GroupState *> live;
    for (auto &[key, gs] : groups_)
        if (gs.users) live.push_back(&gs);
    std::sort(live.begin(), live.end(), [](const GroupState *a, const GroupState *b) {
        return PrefixLess{}(a->first, b->first);
    });
    for (GroupState *g : live) {
        GroupState &gs = *g;
        const IpPrefix prefix = gs.first;
        const MultipathRouteConfig &r = *wanted_.at(prefix).multipath;
        gs.prefix = prefix;
        gs.routes = gs.users;
        // Slots: kept for paths still configured, freed for the others, lowest free for new ones.
        std::map<PathKey, uint32_t> paths;  // key -> weight
        for (const auto &p : r.paths) {
            auto port = live_path_port(p);
            if (!port) continue;
            paths[PathKey{*port, p.via}] = p.weight;
        }
        for (auto s = gs.slots.begin(); s != gs.slots.end();)
            s = paths.count(s->first) ? std::next(s) : gs.slots.erase(s);
        std::vector<LbMember> members;
        std::vector<bool> used(kMaxGroupMembers, false);
        for (const auto &[k, slot] : gs.slots) used[slot] = true;
        for (const auto &[k, weight] : paths) {
            if (gs.slots.count(k)) continue;
            uint32_t slot = 0;
            while (slot < kMaxGroupMembers && used[slot]) slot++;
            if (slot == kMaxGroupMembers) {
                spdlog::warn("route {}: more than {} next hops; {} left out", prefix.str(),
                             kMaxGroupMembers, k.via.str());
                continue;
            }
            used[slot] = true;
            gs.slots[k] = uint8_t(slot);
        }
        gs.weights.assign(kMaxGroupMembers, 0);
        for (const auto &[k, slot] : gs.slots) {
            if (members.size() <= slot) members.resize(slot + 1);
            LbMember &m = members[slot];
            m.key = lb_member_key(k.via, k.port);
            m.weight = paths[k];
            gs.weights[slot] = m.weight;
            m.port = k.port;
            auto n = neighbours_.find(NeighKey{k.port, k.via});
            m.alive = n != neighbours_.end();
            if (m.alive) m.dst_mac = n->second;
        }
        gs.policy = !gs.policy_override.empty() ? gs.policy_override
                    : !r.policy.empty()         ? r.policy
                                                : lb_policy_name(default_policy);
        int pid = lb_policy_id(gs.policy);
        if (pid < 0) {
            spdlog::warn("route {}: unknown load-balancing policy '{}', using hash", prefix.str(),
                         gs.policy);
            gs.policy = "hash";
            pid = 0;
        }
        if (members == gs.published && pid == gs.published_policy) continue;
        changes.emplace_back(gs.id, build_ecmp_group(gs.id, uint8_t(pid), members));
        gs.published = std::move(members);
        gs.published_policy = pid;
    }
    const size_t n = changes.size();
    if (!changes.empty()) eg.publish(std::move(changes));
    return n;
}

// Unpublishes the groups of routes that are no longer multipath. Called after the Fib commit
// (which waited out the readers of the old routes), so no worker can still reach them.
void Rib::retire_groups_locked() {
    std::vector<std::pair<uint16_t, std::unique_ptr<EcmpGroup>>> gone;
    for (auto it = groups_.begin(); it != groups_.end();) {
        if (it->second.users) {
            ++it;
            continue;
        }
        gone.emplace_back(it->second.id, nullptr);
        free_group_ids_.push_back(it->second.id);
        group_of_id_[it->second.id] = nullptr;
        it = groups_.erase(it);
    }
    if (!gone.empty()) fib_.groups().publish(std::move(gone));
}

std::vector<GroupView> Rib::groups() const {
    std::lock_guard lk(mu_);
    std::vector<GroupView> out;
    for (const auto &[key, gs] : groups_) {
        GroupView v{gs.id, gs.prefix, gs.routes, gs.policy, !gs.policy_override.empty(), {}};
        for (const auto &[k, slot] : gs.slots) {
            GroupMemberView m{slot, k.via, k.port, gs.weights[slot], false, {}};
            if (slot < gs.published.size()) {
                m.alive = gs.published[slot].alive;
                m.mac = gs.published[slot].dst_mac;
            }
            v.members.push_back(m);
        }
        std::sort(v.members.begin(), v.members.end(),
                  [](const auto &a, const auto &b) { return a.slot < b.slot; });
        out.push_back(std::move(v));
    }
    std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.id < b.id; });
    return out;
}

std::string Rib::set_policy(const std::string &target, const std::string &policy) {
    if (lb_policy_id(policy) < 0) {
        return "unknown policy '" + policy + "' (" + join(lb_policy_names()) + ")";
    }
    {
        std::lock_guard lk(mu_);
        auto prefix = parse_prefix(target);
        size_t hit = 0;
        // A prefix names the group its route uses (shared by learned routes with the same paths).
        std::optional<uint16_t> prefix_group;
        if (prefix)
            if (auto w = wanted_.find(*prefix);
                w != wanted_.end() && w->second.nh.kind == NextHopKind::ecmp_group)
                prefix_group = w->second.nh.group;
        for (auto &[key, gs] : groups_) {
            bool match = target == "all" || (prefix_group && *prefix_group == gs.id) ||
                         target == std::to_string(gs.id);
            if (!match) continue;
            gs.policy_override = policy;
            hit++;
        }
        if (target == "all") all_policy_override_ = policy;  // and every learned group to come
        else if (!hit) return "no multipath route or group '" + target + "'";
    }
    sync();
    return "";
}

void Rib::mark_all_dirty() {
    std::lock_guard lk(mu_);
    all_dirty_ = true;
    dirty_.clear();
}

Rib::SyncStats Rib::last_sync() const {
    std::lock_guard lk(mu_);
    return last_;
}

size_t Rib::sync() {
    std::lock_guard lk(mu_);
    // The prefixes to recompute, in prefix order: what changed since the last sync (or every
    // prefix any source names, and every wanted one), plus the retries.
    const PrefixLess less;
    auto same = [&](const IpPrefix &a, const IpPrefix &b) { return !less(a, b) && !less(b, a); };
    // A full recompute walks the big maps (learned_, wanted_, installed_) with cursors, as it
    // visits most of their entries in order; an incremental one looks each prefix up.
    const bool dense = all_dirty_;
    dense_ = dense;
    std::vector<IpPrefix> todo;
    if (all_dirty_) {
        // Each source's prefixes are sorted already: merged, not sorted.
        auto merge_in = [&](const auto &map) {
            std::vector<IpPrefix> keys, out;
            keys.reserve(map.size());
            for (const auto &kv : map) keys.push_back(kv.first);
            out.reserve(todo.size() + keys.size());
            std::merge(todo.begin(), todo.end(), keys.begin(), keys.end(), std::back_inserter(out),
                       less);
            todo = std::move(out);
        };
        merge_in(wanted_);
        merge_in(learned_);
        merge_in(addr_at_);
        merge_in(neigh_ports_);
        auto merge_order = [&](const std::vector<uint32_t> &order, const auto &routes) {
            std::vector<IpPrefix> keys, out;
            keys.reserve(order.size());
            for (uint32_t i : order) keys.push_back(routes[i].prefix);
            out.reserve(todo.size() + keys.size());
            std::merge(todo.begin(), todo.end(), keys.begin(), keys.end(), std::back_inserter(out),
                       less);
            todo = std::move(out);
        };
        merge_order(static_order_, static_routes_);
        merge_order(multipath_order_, multipath_routes_);
        std::vector<IpPrefix> retry(retry_.begin(), retry_.end()), out;
        std::merge(todo.begin(), todo.end(), retry.begin(), retry.end(), std::back_inserter(out),
                   less);
        todo = std::move(out);
    } else {
        todo = std::move(dirty_);
        todo.insert(todo.end(), retry_.begin(), retry_.end());
        std::sort(todo.begin(), todo.end(), less);
    }
    todo.erase(std::unique(todo.begin(), todo.end(), same), todo.end());
    dirty_ = {};
    all_dirty_ = false;
    retry_.clear();
    // `it` at the first entry of `map` not before `p`.
    auto seek = [&](auto &map, auto &it, const IpPrefix &p) {
        if (!dense) {
            it = map.lower_bound(p);
            return;
        }
        while (it != map.end() && less(it->first, p)) ++it;
    };

    // [begin, end) of `order`'s entries for `p` (indices into `routes`), from `cur` on.
    auto range = [&](const std::vector<uint32_t> &order, const auto &routes, size_t &cur,
                     const IpPrefix &p) {
        auto before = [&](uint32_t i) { return less(routes[i].prefix, p); };
        if (dense) {
            while (cur < order.size() && before(order[cur])) cur++;
        } else {
            cur = size_t(std::partition_point(order.begin(), order.end(), before) - order.begin());
        }
        size_t end = cur;
        while (end < order.size() && !less(p, routes[order[end]].prefix)) end++;
        return end;
    };

    // Winners, and the groups of the multipath ones.
    auto lcur = learned_.begin();
    auto old = wanted_.begin();
    size_t scur = 0, mcur = 0;
    for (const IpPrefix &p : todo) {
        seek(learned_, lcur, p);
        const bool learned = lcur != learned_.end() && !less(p, lcur->first);
        const size_t send = range(static_order_, static_routes_, scur, p);
        const size_t mend = range(multipath_order_, multipath_routes_, mcur, p);
        std::optional<Want> w =
            want_for(p, learned ? &lcur->second : nullptr, static_order_.data() + scur, send - scur,
                     mend > mcur ? &multipath_routes_[multipath_order_[mcur]] : nullptr);
        seek(wanted_, old, p);
        const bool had = old != wanted_.end() && !less(p, old->first);
        std::optional<uint16_t> left;
        if (had && old->second.multipath) {
            left = old->second.nh.group;
            group_leave(p, *left);
        }
        if (w && w->multipath) group_join(p, *w, left);
        if (w && had) {
            old->second = std::move(*w);
        } else if (w) {
            old = wanted_.emplace_hint(old, p, std::move(*w));
        } else if (had) {
            old = wanted_.erase(old);
        }
    }
    last_ = SyncStats{todo.size(), 0, publish_groups_locked()};

    // The next hops rekey_forward changed first: the routes below may keep pointing at them.
    // Then the deletions, then the additions: a full FIB frees its tbl8 groups before the routes
    // it refused (retry_) are added again in this commit. Workers see the batch at once (the
    // Fib publishes a copy), so the order within it is not visible to them.
    std::vector<FibOp> ops = std::move(pending_nh_ops_);
    pending_nh_ops_.clear();
    std::vector<uint32_t> released;
    std::vector<FibOp> adds;
    std::vector<const IpPrefix *> gone;  // recomputed, no longer wanted
    auto w = wanted_.begin();
    auto it = installed_.begin();
    for (const IpPrefix &p : todo) {
        seek(wanted_, w, p);
        if (w == wanted_.end() || less(p, w->first)) {
            gone.push_back(&p);
            continue;
        }
        uint32_t id = nh_acquire(w->second.nh, ops);
        seek(installed_, it, p);
        if (it != installed_.end() && !less(p, it->first) && it->second == id) {
            nh_release(id);  // unchanged: drop the extra reference just taken
            continue;
        }
        adds.push_back(FibOp{FibOp::Type::add_route, p, id, {}});
    }
    it = installed_.begin();
    for (const IpPrefix *p : gone) {
        seek(installed_, it, *p);
        if (it != installed_.end() && !less(*p, it->first))
            ops.push_back(FibOp{FibOp::Type::del_route, *p, it->second, {}});
    }
    ops.insert(ops.end(), adds.begin(), adds.end());

    auto ok = fib_.commit(ops);
    last_.ops = ops.size();

    size_t refused = 0;
    it = installed_.begin();
    for (size_t i = 0; i < ops.size(); i++) {
        const FibOp &op = ops[i];
        // Each run of deletions or additions is in prefix order: seek from the start of each.
        if (i == 0 || ops[i - 1].type != op.type) it = installed_.begin();
        if (op.type == FibOp::Type::add_route) {
            seek(installed_, it, op.prefix);
            const bool had = it != installed_.end() && !less(op.prefix, it->first);
            if (ok[i]) {
                if (had) {
                    released.push_back(it->second);
                    it->second = op.nexthop;
                } else {
                    it = installed_.emplace_hint(it, op.prefix, op.nexthop);
                }
            } else {
                refused++;
                released.push_back(op.nexthop);
                retry_.insert(op.prefix);  // the next sync tries again
                spdlog::warn("route {} not installed: FIB full", op.prefix.str());
            }
        } else if (op.type == FibOp::Type::del_route) {
            seek(installed_, it, op.prefix);
            it = installed_.erase(it);
            released.push_back(op.nexthop);
        }
    }
    for (uint32_t id : released) nh_release(id);
    free_ids_.insert(free_ids_.end(), pending_free_.begin(), pending_free_.end());
    pending_free_.clear();
    retire_groups_locked();
    return refused;
}

std::vector<RouteView> Rib::routes() const {
    std::lock_guard lk(mu_);
    std::vector<RouteView> out;
    for (const auto &[p, w] : wanted_) {
        auto it = installed_.find(p);
        NextHop nh = w.nh;
        // An installed forward's MAC is its id's (rekey_forward changes it without the Want);
        // not when the route's last add was refused and another next hop is still installed.
        if (it != installed_.end() && nh.kind == NextHopKind::forward) {
            const NhKey &k = nh_at_id_[it->second]->first;
            if (k.kind == NextHopKind::forward && k.port == nh.port) nh.dst_mac = k.mac;
        }
        out.push_back(RouteView{p, w.source, w.origin, w.via, nh,
                                it == installed_.end() ? 0 : it->second,
                                it != installed_.end()});
    }
    return out;
}

std::vector<NeighbourView> Rib::neighbours() const {
    std::lock_guard lk(mu_);
    std::vector<NeighbourView> out;
    for (const auto &[k, mac] : neighbours_) {
        NeighbourView v{k.ip, mac, k.port, config_neighbours_.count(k) == 0, std::nullopt};
        if (auto kn = kernel_neighbours_.find(k);
            !v.learned && kn != kernel_neighbours_.end() && !(kn->second == mac))
            v.kernel_mac = kn->second;
        out.push_back(v);
    }
    return out;
}

Rib::IdUsage Rib::id_usage() const {
    std::lock_guard lk(mu_);
    return IdUsage{nh_by_key_.size(), next_id_ - 1u, groups_.size(), next_group_id_};
}

size_t Rib::route_count(bool v6) const {
    std::lock_guard lk(mu_);
    size_t n = 0;
    for (const auto &[p, id] : installed_) n += p.addr.is_v6 == v6;
    return n;
}

}  // namespace rocesw
