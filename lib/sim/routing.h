// Shortest-path ECMP from a Topology: for every node and every destination host, the set of
// egress ports that lie on a shortest path (in hops), as HPCC's ns-3 computes its routes
// (third.cc CalculateRoute): a BFS from each destination host over links that are up, where
// hosts are never transit nodes. Next hops are listed by ascending port, so the order is the
// same on every run and machine.
//
// Addresses follow HPCC: host node i is 0x0b000001 + (i / 256) * 0x10000 + (i % 256) * 0x100
// (11.0.x.1 for i < 256); each destination is one /32 route.
//
// Link down/up: set_link_up() then recompute(); changed_nodes() lists the nodes whose routes
// differ from the previous computation, so the engine reinstalls only those (after its
// convergence delay). A destination a node can no longer reach has no route (withdrawn).
//
// Memory: 10 bytes per (node, destination host) plus 8 per next hop; a k=16 fat-tree (1,344
// nodes, 1,024 hosts) takes ~14 MB of entries and some tens of MB of next hops, twice that
// while recompute() builds the new table next to the old one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "roce/results.h"  // PathLink
#include "sim/topology.h"

namespace rocesw::sim {

constexpr uint32_t host_address(uint32_t node) {
    return 0x0b000001u + (node / 256) * 0x00010000u + (node % 256) * 0x00000100u;
}
// The node id of an HPCC host address (HPCC's ip_to_node_id).
constexpr uint32_t address_node(uint32_t addr) {
    return (addr >> 8) & 0xffffu;
}

struct NextHop {
    uint16_t port = 0;
    uint32_t neighbour = 0;
    bool operator==(const NextHop &) const = default;
};

struct Route {
    uint32_t dst_host = 0;
    uint32_t prefix = 0;  // host_address(dst_host)
    uint8_t prefix_len = 32;
    std::vector<NextHop> next_hops;  // ascending port
};

// What HPCC's fct.txt needs about the path between two hosts: summed propagation delay, the
// summed one-packet transmission time, and the bottleneck rate, along the BFS tree (the first
// shortest path in port order). On fabrics where all shortest paths have equal delays and
// rates (every generated one, HPCC's fat.txt) this is what HPCC computes.
struct PathInfo {
    bool reachable = false;
    uint32_t hops = 0;      // links
    uint64_t delay_ns = 0;  // sum of link delays (ns, each link's delay rounded down)
    uint64_t tx_ns = 0;     // sum over links of floor(payload * 8e9 / rate)
    uint64_t bottleneck_bps = 0;
    std::vector<roce::PathLink> links;  // each link's rate and delay, source to destination
};

class EcmpRouting {
  public:
    explicit EcmpRouting(const Topology &t);

    void set_link_up(uint32_t link, bool up) { link_up_.at(link) = up; }
    bool link_up(uint32_t link) const { return link_up_.at(link); }
    // Recomputes every destination; fills changed_nodes().
    void recompute();
    const std::vector<uint32_t> &changed_nodes() const { return changed_; }

    // Next hops at `node` toward host `dst` (empty: unreachable, or node == dst).
    std::span<const NextHop> next_hops(uint32_t node, uint32_t dst) const;
    // Hops from node to dst (0 for dst itself, UINT32_MAX if unreachable).
    uint32_t distance(uint32_t node, uint32_t dst) const;
    // The routes a node installs: one /32 per reachable destination host, ascending host id.
    std::vector<Route> routes(uint32_t node) const;
    // Path properties from host src to host dst, with `payload_bytes` per packet for tx_ns.
    PathInfo path(uint32_t src, uint32_t dst, uint32_t payload_bytes = 1000) const;

    const Topology &topology() const { return topo_; }

  private:
    size_t slot(uint32_t node, uint32_t dst_index) const {
        return size_t(dst_index) * topo_.node_count() + node;
    }
    void compute(std::vector<uint32_t> &dist, std::vector<uint32_t> &off,
                 std::vector<uint16_t> &cnt, std::vector<NextHop> &hops) const;

    const Topology &topo_;
    std::vector<uint32_t> host_ids_;    // destination index -> host id
    std::vector<uint32_t> host_index_;  // node -> destination index (UINT32_MAX: switch)
    std::vector<bool> link_up_;
    // Per (destination, node): distance, offset into hops_, count.
    std::vector<uint32_t> dist_, off_;
    std::vector<uint16_t> cnt_;
    std::vector<NextHop> hops_;
    std::vector<uint32_t> changed_;
};

}  // namespace rocesw::sim
