#include "sim/topo_gen.h"

#include <stdexcept>
#include <string>

namespace rocesw::sim {

namespace {
void require(bool ok, const char *msg) {
    if (!ok) throw std::invalid_argument(msg);
}
std::string n(const char *p, uint32_t i) {
    return p + std::to_string(i);
}
}  // namespace

Topology make_star(const StarSpec &s) {
    require(s.hosts >= 1, "star: hosts must be >= 1");
    require(s.host_rate_bps > 0, "star: host rate must be > 0");
    Topology t;
    for (uint32_t i = 0; i < s.hosts; ++i) t.add_node(NodeKind::host, n("host", i));
    uint32_t sw = t.add_node(NodeKind::switch_node, "switch0");
    for (uint32_t i = 0; i < s.hosts; ++i) t.add_link(i, sw, s.host_rate_bps, s.delay_ps);
    return t;
}

Topology make_leaf_spine(const LeafSpineSpec &s) {
    require(s.leaves >= 1 && s.spines >= 1 && s.hosts_per_leaf >= 1,
            "leaf-spine: leaves, spines and hosts per leaf must be >= 1");
    require(s.oversub_num >= 1 && s.oversub_den >= 1, "leaf-spine: bad oversubscription ratio");
    require(s.host_rate_bps > 0, "leaf-spine: host rate must be > 0");
    // Uplink capacity per leaf = hosts * rate * den / num, per spine: / spines.
    const unsigned __int128 cap_num =
        (unsigned __int128)s.hosts_per_leaf * s.host_rate_bps * s.oversub_den;
    const unsigned __int128 cap_den = (unsigned __int128)s.oversub_num * s.spines;
    uint64_t link_rate = 0;
    uint32_t parallel = 1;
    if (s.uplink_rate_bps == 0) {
        require(cap_num % cap_den == 0,
                "leaf-spine: uplink rate per spine is not a whole number of bit/s");
        link_rate = uint64_t(cap_num / cap_den);
        require(link_rate > 0, "leaf-spine: uplink rate is zero");
    } else {
        const unsigned __int128 den = cap_den * s.uplink_rate_bps;
        require(cap_num % den == 0 && cap_num / den >= 1,
                "leaf-spine: uplink capacity per spine is not a whole number (>= 1) of links "
                "at uplink_rate");
        require(cap_num / den <= 1024, "leaf-spine: more than 1024 parallel links per spine");
        link_rate = s.uplink_rate_bps;
        parallel = uint32_t(cap_num / den);
    }
    Topology t;
    const uint32_t hosts = s.leaves * s.hosts_per_leaf;
    for (uint32_t i = 0; i < hosts; ++i) t.add_node(NodeKind::host, n("host", i));
    const uint32_t leaf0 = hosts, spine0 = hosts + s.leaves;
    for (uint32_t l = 0; l < s.leaves; ++l) t.add_node(NodeKind::switch_node, n("leaf", l));
    for (uint32_t p = 0; p < s.spines; ++p) t.add_node(NodeKind::switch_node, n("spine", p));
    for (uint32_t l = 0; l < s.leaves; ++l)
        for (uint32_t h = 0; h < s.hosts_per_leaf; ++h)
            t.add_link(l * s.hosts_per_leaf + h, leaf0 + l, s.host_rate_bps, s.delay_ps);
    for (uint32_t l = 0; l < s.leaves; ++l)
        for (uint32_t p = 0; p < s.spines; ++p)
            for (uint32_t k = 0; k < parallel; ++k)
                t.add_link(leaf0 + l, spine0 + p, link_rate, s.delay_ps);
    return t;
}

Topology make_fat_tree(const FatTreeSpec &s) {
    require(s.k >= 2 && s.k % 2 == 0, "fat-tree: k must be even and >= 2");
    require(s.k <= 128, "fat-tree: k above 128");
    require(s.host_rate_bps > 0 && s.fabric_rate_bps > 0, "fat-tree: rates must be > 0");
    const uint32_t k = s.k, h = k / 2;
    const uint32_t hosts = k * k * k / 4;
    Topology t;
    for (uint32_t i = 0; i < hosts; ++i) t.add_node(NodeKind::host, n("host", i));
    const uint32_t edge0 = hosts, agg0 = edge0 + k * h, core0 = agg0 + k * h;
    for (uint32_t p = 0; p < k; ++p)
        for (uint32_t e = 0; e < h; ++e)
            t.add_node(NodeKind::switch_node,
                       "pod" + std::to_string(p) + "-edge" + std::to_string(e));
    for (uint32_t p = 0; p < k; ++p)
        for (uint32_t a = 0; a < h; ++a)
            t.add_node(NodeKind::switch_node,
                       "pod" + std::to_string(p) + "-agg" + std::to_string(a));
    for (uint32_t c = 0; c < h * h; ++c) t.add_node(NodeKind::switch_node, n("core", c));
    for (uint32_t p = 0; p < k; ++p)
        for (uint32_t e = 0; e < h; ++e)
            for (uint32_t i = 0; i < h; ++i)
                t.add_link((p * h + e) * h + i, edge0 + p * h + e, s.host_rate_bps, s.delay_ps);
    for (uint32_t p = 0; p < k; ++p)
        for (uint32_t e = 0; e < h; ++e)
            for (uint32_t a = 0; a < h; ++a)
                t.add_link(edge0 + p * h + e, agg0 + p * h + a, s.fabric_rate_bps, s.delay_ps);
    for (uint32_t p = 0; p < k; ++p)
        for (uint32_t a = 0; a < h; ++a)
            for (uint32_t c = 0; c < h; ++c)
                t.add_link(agg0 + p * h + a, core0 + a * h + c, s.fabric_rate_bps, s.delay_ps);
    return t;
}

Topology make_three_tier(const ThreeTierSpec &s) {
    require(s.pods >= 1 && s.tors_per_pod >= 1 && s.aggs_per_pod >= 1 && s.hosts_per_tor >= 1 &&
                s.cores_per_agg >= 1,
            "three-tier: pods, ToRs, aggregation switches, hosts and cores must be >= 1");
    require(s.host_rate_bps > 0 && s.fabric_rate_bps > 0, "three-tier: rates must be > 0");
    require(uint64_t(s.pods) * s.tors_per_pod * s.hosts_per_tor <= 65536,
            "three-tier: more than 65536 hosts");
    const uint32_t tors = s.pods * s.tors_per_pod, aggs = s.pods * s.aggs_per_pod;
    const uint32_t hosts = tors * s.hosts_per_tor;
    const uint32_t tor0 = hosts, agg0 = tor0 + tors, core0 = agg0 + aggs;
    Topology t;
    for (uint32_t i = 0; i < hosts; ++i) t.add_node(NodeKind::host, n("host", i));
    for (uint32_t i = 0; i < tors; ++i)
        t.add_node(NodeKind::switch_node, "pod" + std::to_string(i / s.tors_per_pod) + "-tor" +
                                              std::to_string(i % s.tors_per_pod));
    for (uint32_t i = 0; i < aggs; ++i)
        t.add_node(NodeKind::switch_node, "pod" + std::to_string(i / s.aggs_per_pod) + "-agg" +
                                              std::to_string(i % s.aggs_per_pod));
    for (uint32_t c = 0; c < s.aggs_per_pod * s.cores_per_agg; ++c)
        t.add_node(NodeKind::switch_node, n("core", c));
    for (uint32_t i = 0; i < hosts; ++i)
        t.add_link(i, tor0 + i / s.hosts_per_tor, s.host_rate_bps, s.delay_ps);
    for (uint32_t i = 0; i < tors; ++i)
        for (uint32_t a = 0; a < s.aggs_per_pod; ++a)
            t.add_link(tor0 + i, agg0 + (i / s.tors_per_pod) * s.aggs_per_pod + a,
                       s.fabric_rate_bps, s.delay_ps);
    for (uint32_t i = 0; i < aggs; ++i)
        for (uint32_t c = 0; c < s.cores_per_agg; ++c)
            t.add_link(agg0 + i, core0 + (i % s.aggs_per_pod) * s.cores_per_agg + c,
                       s.fabric_rate_bps, s.delay_ps);
    return t;
}

Topology make_rail_optimized(const RailSpec &s) {
    require(s.groups >= 1 && s.servers_per_group >= 1 && s.rails >= 1,
            "rail-optimized: groups, servers per group and rails must be >= 1");
    require(s.spines >= 1 || (s.groups == 1 && s.rails == 1),
            "rail-optimized: spines must be >= 1 unless there is one group and one rail");
    require(s.host_rate_bps > 0 && s.fabric_rate_bps > 0, "rail-optimized: rates must be > 0");
    Topology t;
    const uint32_t hosts = s.groups * s.servers_per_group * s.rails;
    for (uint32_t i = 0; i < hosts; ++i) {
        uint32_t server = i / s.rails, rail = i % s.rails;
        t.add_node(NodeKind::host,
                   "server" + std::to_string(server) + "-nic" + std::to_string(rail));
    }
    const uint32_t rail0 = hosts, spine0 = hosts + s.groups * s.rails;
    for (uint32_t g = 0; g < s.groups; ++g)
        for (uint32_t r = 0; r < s.rails; ++r)
            t.add_node(NodeKind::switch_node,
                       "group" + std::to_string(g) + "-rail" + std::to_string(r));
    for (uint32_t p = 0; p < s.spines; ++p) t.add_node(NodeKind::switch_node, n("spine", p));
    for (uint32_t i = 0; i < hosts; ++i) {
        uint32_t g = i / (s.servers_per_group * s.rails), r = i % s.rails;
        t.add_link(i, rail0 + g * s.rails + r, s.host_rate_bps, s.delay_ps);
    }
    for (uint32_t rs = 0; rs < s.groups * s.rails; ++rs)
        for (uint32_t p = 0; p < s.spines; ++p)
            t.add_link(rail0 + rs, spine0 + p, s.fabric_rate_bps, s.delay_ps);
    return t;
}

}  // namespace rocesw::sim
