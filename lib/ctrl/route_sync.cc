#include "ctrl/route_sync.h"

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <tuple>

namespace rocesw {

namespace {
auto addr_key(const IpAddr &a) { return std::tie(a.is_v6, a.v4, a.v6); }
}  // namespace

bool RouteSync::NeighKey::operator<(const NeighKey &o) const {
    return std::tie(port, ip.is_v6, ip.v4, ip.v6) < std::tie(o.port, o.ip.is_v6, o.ip.v4, o.ip.v6);
}
bool RouteSync::AddrLess::operator()(const IfAddr &a, const IfAddr &b) const {
    return std::tuple_cat(addr_key(a.addr), std::tie(a.len)) <
           std::tuple_cat(addr_key(b.addr), std::tie(b.len));
}
bool RouteSync::PrefixLess::operator()(const IpPrefix &a, const IpPrefix &b) const {
    return std::tuple_cat(addr_key(a.addr), std::tie(a.len)) <
           std::tuple_cat(addr_key(b.addr), std::tie(b.len));
}

RouteSync::RouteSync(Rib &rib, size_t n_ports,
                     std::function<std::optional<uint16_t>(int)> port_of_ifindex)
    : rib_(rib),
      port_of_(std::move(port_of_ifindex)),
      addrs_(n_ports),
      admin_up_(n_ports, 1),
      seen_addrs_(n_ports) {}

bool RouteSync::apply(const nl::Message &m) {
    stats_.messages++;
    bool changed = std::visit(
        [this](const auto &msg) -> bool {
            using T = std::decay_t<decltype(msg)>;
            if constexpr (std::is_same_v<T, nl::LinkMsg>) return on_link(msg);
            if constexpr (std::is_same_v<T, nl::AddrMsg>) return on_addr(msg);
            if constexpr (std::is_same_v<T, nl::NeighMsg>) return on_neigh(msg);
            if constexpr (std::is_same_v<T, nl::RouteMsg>) return on_route(msg);
            if constexpr (std::is_same_v<T, nl::NexthopMsg>) return on_nexthop(msg);
            return false;
        },
        m);
    if (changed) stats_.changes++;
    return changed;
}

bool RouteSync::on_link(const nl::LinkMsg &m) {
    auto port = port_of_(m.ifindex);
    if (!port) {
        stats_.ignored++;
        return false;
    }
    // Set down, the kernel deletes the interface's IPv4 routes and nexthop objects (and their
    // routes) without a message; set up, it has routes through it again: a re-dump either way.
    // A carrier change alone (a pulled cable, the peer's link) deletes nothing: no re-dump.
    const bool admin = m.op == nl::Op::add && m.admin_up;
    if (*port < admin_up_.size() && admin_up_[*port] != admin) {
        admin_up_[*port] = admin;
        if (!resyncing_) resync_requested_ = true;
    }
    // Down administratively, or no carrier (the data port's link is down): no route through it.
    const bool up = admin && m.oper_up;
    if (rib_.port_up(uint8_t(*port)) == up) return false;
    rib_.set_port_up(uint8_t(*port), up);
    stats_.link_changes++;
    // Where a prefix has several kernel routes, the one in use may have lost its last port
    // that is up (a pulled cable: the kernel keeps its routes, flagged linkdown), or a better
    // one may have its port back: choose again now, not at the end of the re-dump.
    for (const IpPrefix &dst : multi_) reselect(dst);
    spdlog::info("host interface {} is {}: routes through port {} {}", m.name,
                 up ? "up" : "down", *port, up ? "restored" : "withdrawn");
    return true;
}

bool RouteSync::on_addr(const nl::AddrMsg &m) {
    auto port = port_of_(m.ifindex);
    if (!port || *port >= addrs_.size()) {
        stats_.ignored++;
        return false;
    }
    auto &set = addrs_[*port];
    if (resyncing_ && m.op == nl::Op::add) seen_addrs_[*port].insert(m.addr);
    bool changed = m.op == nl::Op::add ? set.insert(m.addr).second : set.erase(m.addr) > 0;
    if (!changed) return false;
    rib_.set_port_addrs(uint8_t(*port), std::vector<IfAddr>(set.begin(), set.end()));
    stats_.addr_changes++;
    return true;
}

bool RouteSync::on_neigh(const nl::NeighMsg &m) {
    auto port = port_of_(m.ifindex);
    // The kernel keeps NOARP entries for multicast groups (ff02::16, solicited-node groups):
    // not next hops, never routes.
    const bool mcast = m.ip.is_v6 ? m.ip.v6[0] == 0xFF : (m.ip.v4 >> 28) == 0xE;
    if (!port || mcast || (m.mac && m.mac->is_multicast())) {
        stats_.ignored++;
        return false;
    }
    NeighKey k{*port, m.ip};
    resolving_.erase(k);  // the kernel answered (either way)
    if (m.usable()) {
        if (resyncing_) seen_neighbours_.insert(k);
        neighbours_.insert(k);
        rib_.add_neighbour(uint8_t(*port), m.ip, *m.mac);  // a changed MAC replaces the old one
        stats_.neighbours_added++;
        return true;
    }
    if (!neighbours_.erase(k)) return false;  // never usable: nothing to remove
    rib_.del_neighbour(uint8_t(*port), m.ip);
    stats_.neighbours_removed++;
    return true;
}

bool RouteSync::RouteKey::operator<(const RouteKey &o) const {
    return std::tuple_cat(addr_key(dst.addr), std::tie(dst.len, priority)) <
           std::tuple_cat(addr_key(o.dst.addr), std::tie(o.dst.len, o.priority));
}

bool RouteSync::on_route(const nl::RouteMsg &m) {
    // The main table's unicast routes, and those that discard (blackhole, unreachable,
    // prohibit: the kernel drops, so the switch must not route by a shorter prefix, which in a
    // fabric may send the packet back where it came from); `kernel` routes are the connected
    // prefixes the addresses already give.
    const bool discard =
        m.type == RTN_BLACKHOLE || m.type == RTN_UNREACHABLE || m.type == RTN_PROHIBIT;
    if (m.table != RT_TABLE_MAIN || (m.type != RTN_UNICAST && !discard) ||
        m.protocol == RTPROT_KERNEL) {
        stats_.ignored++;
        return false;
    }
    if (m.tos) {
        // The FIB routes by destination only: a route for some TOS values is not the prefix's
        // route for every packet (nor the same route as the prefix's route of its metric).
        // Not followed, nor its deletion.
        stats_.unsupported++;
        if (m.op == nl::Op::add && !warned_tos_) {
            spdlog::warn("route {} tos {:#x}: the switch routes by destination only; routes for a "
                         "TOS are not followed",
                         m.dst.str(), m.tos);
            warned_tos_ = true;
        }
        return false;
    }
    const RouteKey k{m.dst, m.priority};
    if (m.op == nl::Op::del) return erase(k);
    if (discard) return upsert(k, m.protocol, 0, {}, true, m.type != RTN_BLACKHOLE);
    return upsert(k, m.protocol, m.nh_id, m.nexthops);
}

LearnedRoute RouteSync::to_route(uint8_t protocol, const std::vector<nl::NextHopMsg> &nhs) {
    LearnedRoute r;
    r.origin = nl::rt_protocol_name(protocol);
    for (const auto &nh : nhs) {
        auto port = port_of_(nh.ifindex);
        if (!port) continue;  // through another interface of the namespace: not ours
        if (nhs.size() > 1 && !nh.gateway) {
            stats_.unsupported++;  // a multipath member without a gateway
            continue;
        }
        r.paths.push_back(LearnedPath{uint8_t(*port), nh.gateway, nh.weight ? nh.weight : 1});
        if (nh.gateway) {
            NeighKey k{*port, *nh.gateway};
            if (!neighbours_.count(k) && resolving_.insert(k).second) {
                resolves_.push_back(ResolveRequest{nh.ifindex, *nh.gateway});
                stats_.resolve_requests++;
            }
        }
    }
    return r;
}

bool RouteSync::upsert(const RouteKey &k, uint8_t protocol, uint32_t nh_id,
                       const std::vector<nl::NextHopMsg> &nhs, bool discard, bool reject) {
    std::optional<LearnedRoute> plain;
    if (discard) {
        plain = LearnedRoute{nl::rt_protocol_name(protocol), {}, true, reject};
    } else if (!nh_id) {
        plain = to_route(protocol, nhs);
        if (plain->paths.empty()) {
            // Nothing through our ports (any more): not a route of the switch.
            stats_.ignored++;
            return erase(k);
        }
    }
    if (resyncing_) seen_routes_.insert(k);
    Cands &cs = routes_[k.dst];
    auto it = std::find_if(cs.begin(), cs.end(),
                           [&](const Cand &c) { return c.priority >= k.priority; });
    if (it == cs.end() || it->priority != k.priority) {
        it = cs.insert(it, Cand{k.priority, 0, 0, false});
        n_cands_++;
        if (cs.size() == 2) multi_.insert(k.dst);
    } else if (it->nh_id && it->nh_id != nh_id) {
        auto users = nh_users_.find(it->nh_id);
        if (users != nh_users_.end()) {
            users->second.erase(k);
            if (users->second.empty()) nh_users_.erase(users);
        }
    }
    it->nh_id = nh_id;
    it->protocol = protocol;
    stored_.erase(k);
    if (plain) {
        stored_.emplace(k, std::move(*plain));  // reselect moves it to the RIB if it wins
    } else {
        nh_users_[nh_id].insert(k);
        if (!nh_objects_.count(nh_id)) {
            // An object we have not seen (a kernel whose objects cannot be dumped): the next
            // hops the kernel adds to the route in nexthop_compat_mode, if any.
            if (nhs.empty()) {
                stats_.unsupported++;
                if (!warned_nh_id_)
                    spdlog::warn("route {} names kernel nexthop object {}, which the switch has "
                                 "not seen: not installed",
                                 k.dst.str(), nh_id);
                warned_nh_id_ = true;
            } else {
                stored_.emplace(k, to_route(protocol, nhs));
            }
        }
    }
    return reselect(k.dst);
}

bool RouteSync::erase(const RouteKey &k) {
    auto e = routes_.find(k.dst);
    if (e == routes_.end()) return false;
    Cands &cs = e->second;
    auto it = std::find_if(cs.begin(), cs.end(),
                           [&](const Cand &c) { return c.priority == k.priority; });
    if (it == cs.end()) return false;
    if (it->nh_id) {
        auto users = nh_users_.find(it->nh_id);
        if (users != nh_users_.end()) {
            users->second.erase(k);
            if (users->second.empty()) nh_users_.erase(users);
        }
    }
    stored_.erase(k);
    const bool was_installed = it->installed;
    cs.erase(it);
    n_cands_--;
    if (cs.size() == 1) multi_.erase(k.dst);
    if (!was_installed) {
        if (cs.empty()) routes_.erase(e);
        return false;
    }
    installed_--;
    // The route the switch used is gone: the next one the kernel prefers takes its place.
    const IpPrefix dst = k.dst;
    if (reselect(dst)) return true;
    rib_.del_learned(dst);
    stats_.routes_removed++;
    return true;
}

bool RouteSync::live(const LearnedRoute &r) const {
    if (r.discard) return true;  // it applies whatever the ports
    for (const LearnedPath &p : r.paths)
        if (rib_.port_up(p.port)) return true;
    return false;
}

bool RouteSync::reselect(const IpPrefix &dst) {
    auto e = routes_.find(dst);
    if (e == routes_.end()) return false;
    Cands &cs = e->second;
    Cand *cur = nullptr, *want = nullptr;
    LearnedRoute want_route;
    for (Cand &c : cs)
        if (c.installed) cur = &c;
    // The lowest metric with a path through our ports that are up; when every one's ports are
    // down, the lowest with a path through our ports (it serves again when its port comes
    // back, with no message from the kernel). Ports count only when there is a choice.
    const bool choice = cs.size() > 1;
    LearnedRoute first_route;
    Cand *first = nullptr;
    for (Cand &c : cs) {
        const RouteKey k{dst, c.priority};
        if (!c.nh_id) {
            if (!choice) {
                want = &c;  // tracked only with a path through our ports
                break;
            }
            // Its paths: in stored_ when not installed or just replaced, else in the RIB.
            std::optional<LearnedRoute> in_rib;
            const LearnedRoute *r = nullptr;
            if (auto f = stored_.find(k); f != stored_.end()) {
                r = &f->second;
            } else if (c.installed) {
                in_rib = rib_.learned(dst);
                if (in_rib) r = &*in_rib;
            }
            if (r && live(*r)) {
                want = &c;
                break;
            }
            if (!first) first = &c;
            continue;
        }
        LearnedRoute route;
        if (auto o = nh_objects_.find(c.nh_id);
            o != nh_objects_.end() && !o->second.is_group() && o->second.blackhole)
            route = LearnedRoute{nl::rt_protocol_name(c.protocol), {}, true};  // a blackhole object
        else if (auto nhs = object_nexthops(c.nh_id))
            route = to_route(c.protocol, *nhs);
        else if (auto f = stored_.find(k); f != stored_.end())
            route = f->second;  // compat next hops while the object is unknown
        if (route.paths.empty() && !route.discard) continue;
        if (!choice || live(route)) {
            want = &c;
            want_route = std::move(route);
            break;
        }
        if (!first) {
            first = &c;
            first_route = std::move(route);
        }
    }
    if (!want && first) {
        want = first;
        want_route = std::move(first_route);
    }
    bool changed = false;
    if (!want) {
        if (cur) {
            cur->installed = false;
            installed_--;
            rib_.del_learned(dst);
            stats_.routes_removed++;
            changed = true;
        }
        if (cs.empty()) routes_.erase(e);
        return changed;
    }
    if (cur && cur != want && !cur->nh_id) {
        // The route in use steps back: its paths wait in stored_ until it is preferred again
        // (unless it was just replaced: then its new paths are there already).
        const RouteKey ck{dst, cur->priority};
        if (!stored_.count(ck))
            if (auto r = rib_.learned(dst)) stored_.emplace(ck, std::move(*r));
    }
    if (cur != want) {
        if (cur)
            cur->installed = false;
        else
            installed_++;
        want->installed = true;
        changed = true;  // another of the kernel's routes for dst
    }
    if (!want->nh_id) {
        auto s = stored_.find(RouteKey{dst, want->priority});
        if (s == stored_.end()) return changed;  // installed already, unchanged
        want_route = std::move(s->second);
        stored_.erase(s);
    }
    if (rib_.set_learned(dst, std::move(want_route))) {
        stats_.routes_added++;
        changed = true;
    }
    return changed;
}

std::optional<std::vector<nl::NextHopMsg>> RouteSync::object_nexthops(uint32_t id) const {
    auto it = nh_objects_.find(id);
    if (it == nh_objects_.end()) return std::nullopt;
    const auto one = [](const nl::NexthopMsg &o, uint32_t weight) {
        nl::NextHopMsg h;
        h.ifindex = o.ifindex;
        h.gateway = o.gateway;
        h.weight = weight;
        h.onlink = o.onlink;
        h.flags = o.flags;
        return h;
    };
    std::vector<nl::NextHopMsg> out;
    const nl::NexthopMsg &o = it->second;
    if (!o.is_group()) {
        if (!o.blackhole) out.push_back(one(o, 1));
        return out;
    }
    // The kernel allows no group inside a group; a member we have not seen is left out.
    for (const auto &mb : o.group) {
        auto m = nh_objects_.find(mb.id);
        if (m != nh_objects_.end() && !m->second.is_group() && !m->second.blackhole)
            out.push_back(one(m->second, mb.weight));
    }
    return out;
}

bool RouteSync::refresh_users(uint32_t id) {
    std::set<uint32_t> ids{id};
    if (auto g = nh_groups_of_.find(id); g != nh_groups_of_.end())
        ids.insert(g->second.begin(), g->second.end());
    std::set<IpPrefix, PrefixLess> dsts;
    for (uint32_t obj : ids)
        if (auto users = nh_users_.find(obj); users != nh_users_.end())
            for (const RouteKey &k : users->second) dsts.insert(k.dst);
    bool changed = false;
    for (const IpPrefix &dst : dsts) changed |= reselect(dst);
    return changed;
}

bool RouteSync::on_nexthop(const nl::NexthopMsg &m) {
    stats_.nexthop_changes++;
    // A group replaced or deleted no longer holds its old members (a replace adds the new ones
    // below).
    if (auto old = nh_objects_.find(m.id); old != nh_objects_.end())
        for (const auto &mb : old->second.group) {
            auto g = nh_groups_of_.find(mb.id);
            if (g == nh_groups_of_.end()) continue;
            g->second.erase(m.id);
            if (g->second.empty()) nh_groups_of_.erase(g);
        }
    if (m.op == nl::Op::add) {
        nh_objects_[m.id] = m;
        for (const auto &mb : m.group) nh_groups_of_[mb.id].insert(m.id);
        return refresh_users(m.id);
    }
    // Deleted: the kernel drops it from its groups (deleting a group left empty) and deletes
    // the routes naming it, not always with a notification of its own.
    nh_objects_.erase(m.id);
    bool changed = false;
    if (auto g = nh_groups_of_.find(m.id); g != nh_groups_of_.end()) {
        const std::set<uint32_t> groups = std::move(g->second);
        nh_groups_of_.erase(g);
        for (uint32_t gid : groups) {
            auto grp = nh_objects_.find(gid);
            if (grp == nh_objects_.end()) continue;
            nl::NexthopMsg updated = grp->second;
            std::erase_if(updated.group, [&](const auto &mb) { return mb.id == m.id; });
            if (!updated.group.empty()) {
                grp->second = std::move(updated);
                changed |= refresh_users(gid);
            } else {
                nl::NexthopMsg del = grp->second;
                del.op = nl::Op::del;
                changed |= on_nexthop(del);
            }
        }
    }
    if (auto users = nh_users_.find(m.id); users != nh_users_.end()) {
        const std::set<RouteKey> keys = std::move(users->second);
        nh_users_.erase(users);
        for (const RouteKey &k : keys) changed |= erase(k);
    }
    return changed;
}

void RouteSync::begin_resync() {
    resyncing_ = true;
    // The dump brings every object, then every route naming one, again.
    nh_objects_.clear();
    nh_groups_of_.clear();
    nh_users_.clear();
    seen_neighbours_.clear();
    seen_routes_.clear();
    for (auto &s : seen_addrs_) s.clear();
    stats_.resyncs++;
}

bool RouteSync::end_resync() {
    resyncing_ = false;
    bool changed = false;
    // Kernel routes the dump did not mention are gone (the next of a prefix takes over).
    std::vector<RouteKey> gone;
    for (const auto &[dst, cs] : routes_)
        for (const Cand &c : cs)
            if (!seen_routes_.count(RouteKey{dst, c.priority})) gone.push_back({dst, c.priority});
    for (const RouteKey &k : gone) changed |= erase(k);
    for (auto it = neighbours_.begin(); it != neighbours_.end();) {
        if (seen_neighbours_.count(*it)) {
            ++it;
            continue;
        }
        rib_.del_neighbour(uint8_t(it->port), it->ip);
        stats_.neighbours_removed++;
        it = neighbours_.erase(it);
        changed = true;
    }
    for (size_t p = 0; p < addrs_.size(); p++) {
        auto same = [](const IfAddr &a, const IfAddr &b) { return a.addr == b.addr && a.len == b.len; };
        if (std::equal(addrs_[p].begin(), addrs_[p].end(), seen_addrs_[p].begin(),
                       seen_addrs_[p].end(), same))
            continue;
        addrs_[p] = seen_addrs_[p];
        rib_.set_port_addrs(uint8_t(p), std::vector<IfAddr>(addrs_[p].begin(), addrs_[p].end()));
        stats_.addr_changes++;
        changed = true;
    }
    return changed;
}

}  // namespace rocesw
