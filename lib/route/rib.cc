#include "route/rib.h"

#include <spdlog/spdlog.h>

#include <algorithm>
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
    : fib_(fib), ports_(std::move(ports)), port_up_(ports_.size(), true) {}

bool LearnedRoute::operator==(const LearnedRoute &o) const {
    if (origin != o.origin || paths.size() != o.paths.size()) return false;
    for (size_t i = 0; i < paths.size(); i++)
        if (paths[i].port != o.paths[i].port || paths[i].via != o.paths[i].via ||
            paths[i].weight != o.paths[i].weight)
            return false;
    return true;
}

bool Rib::set_learned(const IpPrefix &p, LearnedRoute r) {
    std::lock_guard lk(mu_);
    auto it = learned_.find(p);
    if (it != learned_.end() && it->second == r) return false;
    learned_[p] = std::move(r);
    return true;
}

bool Rib::del_learned(const IpPrefix &p) {
    std::lock_guard lk(mu_);
    return learned_.erase(p) > 0;
}

std::vector<IpPrefix> Rib::learned_prefixes() const {
    std::lock_guard lk(mu_);
    std::vector<IpPrefix> out;
    for (const auto &[p, r] : learned_) out.push_back(p);
    return out;
}

void Rib::set_port_addrs(uint8_t port, std::vector<IfAddr> addrs) {
    std::lock_guard lk(mu_);
    if (port < ports_.size()) ports_[port].addrs = std::move(addrs);
}

void Rib::set_port_up(uint8_t port, bool up) {
    std::lock_guard lk(mu_);
    if (port < port_up_.size()) port_up_[port] = up;
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

void Rib::set_static(const std::vector<RouteConfig> &routes,
                     const std::vector<NeighbourConfig> &neighbours) {
    std::lock_guard lk(mu_);
    static_routes_ = routes;
    neighbours_.clear();
    for (const auto &n : neighbours) {
        int port = -1;
        for (size_t i = 0; i < ports_.size(); i++)
            if (ports_[i].name == n.port) port = int(i);
        if (port < 0) {
            auto p = port_for(n.ip);
            if (!p) continue;  // the config loader rejects this; be safe anyway
            port = *p;
        }
        neighbours_[NeighKey{uint8_t(port), n.ip}] = n.mac;
    }
}

void Rib::set_multipath(const std::vector<MultipathRouteConfig> &routes) {
    std::lock_guard lk(mu_);
    multipath_routes_.clear();
    for (const auto &r : routes)
        if (!r.paths.empty()) multipath_routes_.push_back(r);
}

void Rib::add_neighbour(uint8_t port, const IpAddr &ip, const MacAddr &mac) {
    std::lock_guard lk(mu_);
    neighbours_[NeighKey{port, ip}] = mac;
}

void Rib::del_neighbour(uint8_t port, const IpAddr &ip) {
    std::lock_guard lk(mu_);
    neighbours_.erase(NeighKey{port, ip});
}

std::optional<uint8_t> Rib::port_for(const IpAddr &ip) const {
    for (size_t i = 0; i < ports_.size(); i++)
        for (const auto &a : ports_[i].addrs)
            if (a.addr.is_v6 == ip.is_v6 && a.subnet().contains(ip)) return uint8_t(i);
    return std::nullopt;
}

std::map<IpPrefix, Rib::Want, Rib::PrefixLess> Rib::desired_locked() const {
    std::map<IpPrefix, Want, PrefixLess> want;
    auto offer = [&](const IpPrefix &p, Want w) {
        auto it = want.find(p);
        if (it == want.end() || it->second.source < w.source) want[p] = w;
    };
    auto up = [&](uint8_t port) { return port < port_up_.size() && port_up_[port]; };
    for (size_t i = 0; i < ports_.size(); i++) {
        if (!up(uint8_t(i))) continue;
        for (const auto &a : ports_[i].addrs) {
            if (is_link_local(a.addr)) continue;  // fe80::/64 is on every port: never routed
            uint8_t port = uint8_t(i);
            offer(a.subnet(), Want{RouteSource::connected, std::nullopt,
                                   NextHop{NextHopKind::glean, port, {}}, nullptr, {}});
            offer(host_prefix(a.addr),
                  Want{RouteSource::local, std::nullopt, NextHop{NextHopKind::local, port, {}}, nullptr, {}});
        }
    }
    for (const auto &[k, mac] : neighbours_)
        if (up(k.port) && !is_link_local(k.ip))
            offer(host_prefix(k.ip), Want{RouteSource::neighbour, std::nullopt,
                                          NextHop{NextHopKind::forward, k.port, mac}, nullptr, {}});
    for (const auto &r : multipath_routes_)  // the group id is filled in by update_groups_locked
        offer(r.prefix, Want{RouteSource::static_route, r.paths[0].via,
                             NextHop{NextHopKind::ecmp_group, 0, {}, 0}, &r, {}});
    learned_mp_.clear();
    for (const auto &[prefix, r] : learned_) {
        std::vector<const LearnedPath *> live;
        for (const auto &p : r.paths)
            if (up(p.port) && p.port < ports_.size()) live.push_back(&p);
        if (live.empty()) continue;  // every path through a port that is down: withdrawn
        if (live.size() == 1) {
            const LearnedPath &p = *live[0];
            NextHop nh{NextHopKind::glean, p.port, {}};  // device route: on the link
            if (p.via) {
                nh = NextHop{NextHopKind::unresolved, p.port, {}};
                auto n = neighbours_.find(NeighKey{p.port, *p.via});
                if (n != neighbours_.end()) nh = NextHop{NextHopKind::forward, p.port, n->second};
            }
            offer(prefix, Want{RouteSource::learned, p.via, nh, nullptr, r.origin});
            continue;
        }
        MultipathRouteConfig mp{prefix, {}, {}};
        for (const LearnedPath *p : live)
            if (p->via) mp.paths.push_back(RoutePath{*p->via, ports_[p->port].name, p->weight});
        if (mp.paths.empty()) continue;
        const MultipathRouteConfig &stored = learned_mp_[prefix] = std::move(mp);
        offer(prefix, Want{RouteSource::learned, stored.paths[0].via,
                           NextHop{NextHopKind::ecmp_group, 0, {}, 0}, &stored, r.origin});
    }
    for (const auto &r : static_routes_) {
        std::optional<uint8_t> port;
        for (size_t i = 0; i < ports_.size(); i++)
            if (ports_[i].name == r.port) port = uint8_t(i);
        if (!port) port = port_for(r.via);
        if (!port || !up(*port)) continue;
        NextHop nh{NextHopKind::unresolved, *port, {}};
        auto n = neighbours_.find(NeighKey{*port, r.via});
        if (n != neighbours_.end()) nh = NextHop{NextHopKind::forward, *port, n->second};
        offer(r.prefix, Want{RouteSource::static_route, r.via, nh, nullptr, {}});
    }
    return want;
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
    nh_by_key_[key] = NhSlot{id, 1};
    ops.push_back(FibOp{FibOp::Type::set_nexthop, {}, id, nh});
    return id;
}

void Rib::nh_release(uint32_t id) {
    for (auto it = nh_by_key_.begin(); it != nh_by_key_.end(); ++it) {
        if (it->second.id != id) continue;
        if (--it->second.refs == 0) {
            // Recycled only by a later sync, so no entry is rewritten in the batch that
            // still moves routes off it.
            pending_free_.push_back(id);
            nh_by_key_.erase(it);
        }
        return;
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

void Rib::update_groups_locked(std::map<IpPrefix, Want, PrefixLess> &want) {
    EcmpGroups &eg = fib_.groups();
    const uint8_t default_policy = eg.settings().default_policy;
    std::vector<std::pair<uint16_t, std::unique_ptr<EcmpGroup>>> changes;
    live_groups_.clear();
    for (auto &[prefix, w] : want) {
        if (!w.multipath) continue;
        const MultipathRouteConfig &r = *w.multipath;
        const std::string key = group_key(prefix, w);
        auto it = groups_.find(key);
        if (it != groups_.end() && live_groups_.count(key)) {  // shared: set up already
            w.nh.group = it->second.id;
            it->second.routes++;
            continue;
        }
        if (it == groups_.end()) {
            uint16_t id;
            if (!free_group_ids_.empty()) {
                id = free_group_ids_.back();
                free_group_ids_.pop_back();
            } else if (next_group_id_ < kMaxEcmpGroups) {
                id = next_group_id_++;
            } else {
                // Out of groups: the first path with a resolved neighbour carries it all.
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
                continue;
            }
            GroupState fresh{id, {}, {}, {}, {}, {}, -1, prefix, 0};
            it = groups_.emplace(key, std::move(fresh)).first;
        }
        live_groups_.insert(key);
        GroupState &gs = it->second;
        gs.prefix = prefix;
        gs.routes = 1;
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
            m.key = lb_member_key(k.via);
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
        w.nh.group = gs.id;
        if (members == gs.published && pid == gs.published_policy) continue;
        changes.emplace_back(gs.id, build_ecmp_group(gs.id, uint8_t(pid), members));
        gs.published = std::move(members);
        gs.published_policy = pid;
    }
    if (!changes.empty()) eg.publish(std::move(changes));
}

// Unpublishes the groups of routes that are no longer multipath. Called after the Fib commit
// (which waited out the readers of the old routes), so no worker can still reach them.
void Rib::retire_groups_locked() {
    std::vector<std::pair<uint16_t, std::unique_ptr<EcmpGroup>>> gone;
    for (auto it = groups_.begin(); it != groups_.end();) {
        if (live_groups_.count(it->first)) {
            ++it;
            continue;
        }
        gone.emplace_back(it->second.id, nullptr);
        free_group_ids_.push_back(it->second.id);
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
        if (!hit) return "no multipath route or group '" + target + "'";
    }
    sync();
    return "";
}

size_t Rib::sync() {
    std::lock_guard lk(mu_);
    auto want = desired_locked();
    update_groups_locked(want);
    std::vector<FibOp> ops;
    std::vector<std::pair<IpPrefix, uint32_t>> adds;  // op index order
    std::vector<uint32_t> released;
    for (const auto &[p, w] : want) {
        uint32_t id = nh_acquire(w.nh, ops);
        auto it = installed_.find(p);
        if (it != installed_.end() && it->second == id) {
            nh_release(id);  // unchanged: drop the extra reference just taken
            continue;
        }
        ops.push_back(FibOp{FibOp::Type::add_route, p, id, {}});
        adds.emplace_back(p, id);
    }
    for (const auto &[p, id] : installed_)
        if (!want.count(p)) ops.push_back(FibOp{FibOp::Type::del_route, p, id, {}});

    auto ok = fib_.commit(ops);

    size_t refused = 0;
    for (size_t i = 0; i < ops.size(); i++) {
        const FibOp &op = ops[i];
        if (op.type == FibOp::Type::add_route) {
            auto it = installed_.find(op.prefix);
            if (ok[i]) {
                if (it != installed_.end()) released.push_back(it->second);
                installed_[op.prefix] = op.nexthop;
            } else {
                refused++;
                released.push_back(op.nexthop);
                spdlog::warn("route {} not installed: FIB full", op.prefix.str());
            }
        } else if (op.type == FibOp::Type::del_route) {
            installed_.erase(op.prefix);
            released.push_back(op.nexthop);
        }
    }
    for (uint32_t id : released) nh_release(id);
    free_ids_.insert(free_ids_.end(), pending_free_.begin(), pending_free_.end());
    pending_free_.clear();
    retire_groups_locked();
    wanted_ = std::move(want);
    return refused;
}

std::vector<RouteView> Rib::routes() const {
    std::lock_guard lk(mu_);
    std::vector<RouteView> out;
    for (const auto &[p, w] : wanted_) {
        auto it = installed_.find(p);
        out.push_back(RouteView{p, w.source, w.origin, w.via, w.nh,
                                it == installed_.end() ? 0 : it->second,
                                it != installed_.end()});
    }
    return out;
}

std::vector<NeighbourView> Rib::neighbours() const {
    std::lock_guard lk(mu_);
    std::vector<NeighbourView> out;
    for (const auto &[k, mac] : neighbours_) out.push_back(NeighbourView{k.ip, mac, k.port});
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
