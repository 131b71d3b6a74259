#include "sim/routing.h"

#include <limits>
#include <stdexcept>

namespace rocesw::sim {

namespace {
constexpr uint32_t kUnreachable = std::numeric_limits<uint32_t>::max();
}

EcmpRouting::EcmpRouting(const Topology &t)
    : topo_(t),
      host_ids_(t.hosts()),
      host_index_(t.node_count(), kUnreachable),
      link_up_(t.link_count(), true) {
    for (uint32_t i = 0; i < host_ids_.size(); ++i) host_index_[host_ids_[i]] = i;
    recompute();
    changed_.clear();
}

void EcmpRouting::compute(std::vector<uint32_t> &dist, std::vector<uint32_t> &off,
                          std::vector<uint16_t> &cnt, std::vector<NextHop> &hops) const {
    const uint32_t n = topo_.node_count();
    const size_t slots = size_t(n) * host_ids_.size();
    dist.assign(slots, kUnreachable);
    off.assign(slots, 0);
    cnt.assign(slots, 0);
    hops.clear();
    std::vector<uint32_t> queue;
    queue.reserve(n);
    for (uint32_t di = 0; di < host_ids_.size(); ++di) {
        const uint32_t dst = host_ids_[di];
        uint32_t *d = &dist[size_t(di) * n];
        // BFS from the destination; hosts other than dst get a distance but are not expanded
        // (a path never crosses a host).
        queue.clear();
        queue.push_back(dst);
        d[dst] = 0;
        for (size_t qi = 0; qi < queue.size(); ++qi) {
            const uint32_t u = queue[qi];
            for (const PortRef &p : topo_.ports(u)) {
                if (!link_up_[p.link] || d[p.peer] != kUnreachable) continue;
                d[p.peer] = d[u] + 1;
                if (topo_.is_switch(p.peer)) queue.push_back(p.peer);
            }
        }
        // Next hops: ports toward a neighbour one hop closer that is dst or a switch.
        for (uint32_t u = 0; u < n; ++u) {
            const size_t s = slot(u, di);
            off[s] = uint32_t(hops.size());
            if (u == dst || d[u] == kUnreachable) continue;
            const auto &ports = topo_.ports(u);
            for (uint16_t pi = 0; pi < ports.size(); ++pi) {
                const PortRef &p = ports[pi];
                if (!link_up_[p.link] || d[p.peer] == kUnreachable) continue;
                if (d[p.peer] + 1 != d[u]) continue;
                if (p.peer != dst && !topo_.is_switch(p.peer)) continue;
                hops.push_back({pi, p.peer});
                ++cnt[s];
            }
            if (hops.size() > std::numeric_limits<uint32_t>::max())
                throw std::length_error("EcmpRouting: too many next hops");
        }
    }
}

void EcmpRouting::recompute() {
    std::vector<uint32_t> dist, off;
    std::vector<uint16_t> cnt;
    std::vector<NextHop> hops;
    compute(dist, off, cnt, hops);
    changed_.clear();
    const uint32_t n = topo_.node_count();
    if (!dist_.empty()) {
        for (uint32_t u = 0; u < n; ++u) {
            bool differ = false;
            for (uint32_t di = 0; di < host_ids_.size() && !differ; ++di) {
                const size_t s = slot(u, di);
                if (cnt[s] != cnt_[s]) {
                    differ = true;
                    break;
                }
                for (uint16_t k = 0; k < cnt[s]; ++k)
                    if (!(hops[off[s] + k] == hops_[off_[s] + k])) {
                        differ = true;
                        break;
                    }
            }
            if (differ) changed_.push_back(u);
        }
    }
    dist_ = std::move(dist);
    off_ = std::move(off);
    cnt_ = std::move(cnt);
    hops_ = std::move(hops);
}

std::span<const NextHop> EcmpRouting::next_hops(uint32_t node, uint32_t dst) const {
    const uint32_t di = host_index_.at(dst);
    if (di == kUnreachable) throw std::invalid_argument("EcmpRouting: destination is not a host");
    const size_t s = slot(node, di);
    return {hops_.data() + off_[s], cnt_[s]};
}

uint32_t EcmpRouting::distance(uint32_t node, uint32_t dst) const {
    const uint32_t di = host_index_.at(dst);
    if (di == kUnreachable) throw std::invalid_argument("EcmpRouting: destination is not a host");
    return dist_[slot(node, di)];
}

std::vector<Route> EcmpRouting::routes(uint32_t node) const {
    std::vector<Route> out;
    for (uint32_t di = 0; di < host_ids_.size(); ++di) {
        const size_t s = slot(node, di);
        if (cnt_[s] == 0) continue;
        Route r;
        r.dst_host = host_ids_[di];
        r.prefix = host_address(r.dst_host);
        r.next_hops.assign(hops_.begin() + off_[s], hops_.begin() + off_[s] + cnt_[s]);
        out.push_back(std::move(r));
    }
    return out;
}

PathInfo EcmpRouting::path(uint32_t src, uint32_t dst, uint32_t payload_bytes) const {
    PathInfo pi;
    if (src == dst || distance(src, dst) == kUnreachable) return pi;
    pi.reachable = true;
    pi.bottleneck_bps = std::numeric_limits<uint64_t>::max();
    uint32_t u = src;
    while (u != dst) {
        const NextHop h = next_hops(u, dst).front();
        const TopoLink &l = topo_.link(topo_.ports(u)[h.port].link);
        pi.delay_ns += l.delay_ps / kPsPerNs;
        pi.tx_ns += uint64_t(payload_bytes) * 8000000000ull / l.rate_bps;
        if (l.rate_bps < pi.bottleneck_bps) pi.bottleneck_bps = l.rate_bps;
        pi.links.push_back({l.rate_bps, l.delay_ps});
        ++pi.hops;
        u = h.neighbour;
    }
    return pi;
}

}  // namespace rocesw::sim
