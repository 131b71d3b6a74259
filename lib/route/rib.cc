#include "route/rib.h"

#include <spdlog/spdlog.h>

#include <tuple>

namespace rocesw {

const char *route_source_name(RouteSource s) {
    switch (s) {
        case RouteSource::connected:
            return "connected";
        case RouteSource::neighbour:
            return "neighbour";
        case RouteSource::static_route:
            return "static";
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

static IpPrefix host_prefix(const IpAddr &a) {
    return IpPrefix{a, uint8_t(a.is_v6 ? 128 : 32)};
}

Rib::Rib(Fib &fib, std::vector<RibPort> ports) : fib_(fib), ports_(std::move(ports)) {}

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
    for (size_t i = 0; i < ports_.size(); i++) {
        for (const auto &a : ports_[i].addrs) {
            uint8_t port = uint8_t(i);
            offer(a.subnet(), Want{RouteSource::connected, std::nullopt,
                                   NextHop{NextHopKind::glean, port, {}}});
            offer(host_prefix(a.addr),
                  Want{RouteSource::local, std::nullopt, NextHop{NextHopKind::local, port, {}}});
        }
    }
    for (const auto &[k, mac] : neighbours_)
        offer(host_prefix(k.ip), Want{RouteSource::neighbour, std::nullopt,
                                      NextHop{NextHopKind::forward, k.port, mac}});
    for (const auto &r : static_routes_) {
        std::optional<uint8_t> port;
        for (size_t i = 0; i < ports_.size(); i++)
            if (ports_[i].name == r.port) port = uint8_t(i);
        if (!port) port = port_for(r.via);
        if (!port) continue;
        NextHop nh{NextHopKind::unresolved, *port, {}};
        auto n = neighbours_.find(NeighKey{*port, r.via});
        if (n != neighbours_.end()) nh = NextHop{NextHopKind::forward, *port, n->second};
        offer(r.prefix, Want{RouteSource::static_route, r.via, nh});
    }
    return want;
}

uint32_t Rib::nh_acquire(const NextHop &nh, std::vector<FibOp> &ops) {
    NhKey key{nh.kind, nh.port, nh.dst_mac};
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

size_t Rib::sync() {
    std::lock_guard lk(mu_);
    auto want = desired_locked();
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
    wanted_ = std::move(want);
    return refused;
}

std::vector<RouteView> Rib::routes() const {
    std::lock_guard lk(mu_);
    std::vector<RouteView> out;
    for (const auto &[p, w] : wanted_) {
        auto it = installed_.find(p);
        out.push_back(RouteView{p, w.source, w.via, w.nh, it == installed_.end() ? 0 : it->second,
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

size_t Rib::route_count(bool v6) const {
    std::lock_guard lk(mu_);
    size_t n = 0;
    for (const auto &[p, id] : installed_) n += p.addr.is_v6 == v6;
    return n;
}

}  // namespace rocesw
