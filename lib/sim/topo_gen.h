// Topology generators: the fabrics researchers compare designs on, as the same Topology the
// HPCC parser builds. Numbering follows HPCC's files: hosts first (0..H-1), then switches by
// layer (leaf/edge, then spine/aggregation, then core), so host i is node i everywhere.
// Every link of a generated fabric has the same propagation delay `delay_ps`.
#pragma once

#include <cstdint>

#include "sim/topology.h"

namespace rocesw::sim {

// N hosts on one switch (node N).
struct StarSpec {
    uint32_t hosts = 2;
    uint64_t host_rate_bps = 100'000'000'000;
    TimePs delay_ps = 1 * kPsPerUs;
};
Topology make_star(const StarSpec &s);

// Two tiers: `leaves` leaf switches with `hosts_per_leaf` hosts each; every leaf connects to
// every spine. Oversubscription = host capacity of a leaf / its uplink capacity, given as
// oversub_num : oversub_den (3:1 -> 3, 1). The uplink capacity per leaf,
// hosts_per_leaf * host_rate * den / num, is split over the spines either
//  - by rate (uplink_rate_bps == 0): one link per (leaf, spine) at capacity / spines, which
//    must be a whole number of bit/s; or
//  - by count (uplink_rate_bps > 0): capacity / (spines * uplink_rate) parallel links per
//    (leaf, spine), which must be a whole number >= 1.
// Nodes: hosts 0..L*H-1 (leaf-major), leaves, then spines.
struct LeafSpineSpec {
    uint32_t leaves = 2;
    uint32_t spines = 2;
    uint32_t hosts_per_leaf = 2;
    uint64_t host_rate_bps = 100'000'000'000;
    uint32_t oversub_num = 1, oversub_den = 1;
    uint64_t uplink_rate_bps = 0;
    TimePs delay_ps = 1 * kPsPerUs;
};
Topology make_leaf_spine(const LeafSpineSpec &s);

// The k-ary fat-tree (Al-Fares et al.): k pods of k/2 edge and k/2 aggregation switches,
// (k/2)^2 cores; k/2 hosts per edge switch: k^3/4 hosts, 5k^2/4 switches, 3k^3/4 links.
// Edge e of pod p links to every aggregation switch of pod p; aggregation switch j of every
// pod links to cores j*k/2 .. j*k/2 + k/2 - 1. Nodes: hosts (pod-major, edge-major), edges
// (pod-major), aggregation switches (pod-major), cores. k even, >= 2.
struct FatTreeSpec {
    uint32_t k = 4;
    uint64_t host_rate_bps = 100'000'000'000;
    uint64_t fabric_rate_bps = 100'000'000'000;  // edge-agg and agg-core links
    TimePs delay_ps = 1 * kPsPerUs;
};
Topology make_fat_tree(const FatTreeSpec &s);

// Three tiers in HPCC's shape (its ns-3 `mix/fat.txt`): `pods` pods of `tors_per_pod` ToRs
// with `hosts_per_tor` hosts each and `aggs_per_pod` aggregation switches; every ToR links to
// every aggregation switch of its pod; aggregation switch j of every pod links to the j-th
// group of `cores_per_agg` cores (aggs_per_pod * cores_per_agg cores in all). Nodes: hosts
// (ToR-major), ToRs, aggregation switches (pod-major), cores; links in that order too: host
// links, then per ToR its uplinks, then per aggregation switch its core links. The defaults
// are HPCC's file: 320 hosts, 20 ToRs, 20 aggregation switches, 16 cores (56 switches), 480
// links, hosts at 100 Gb/s, the fabric at 400 Gb/s, 1 us; to_hpcc() writes that file's links
// line for line. Hosts per ToR x host rate = 1,600 Gb/s down, 4 x 400 Gb/s up: 1:1.
struct ThreeTierSpec {
    uint32_t pods = 5;
    uint32_t tors_per_pod = 4;
    uint32_t aggs_per_pod = 4;
    uint32_t hosts_per_tor = 16;
    uint32_t cores_per_agg = 4;
    uint64_t host_rate_bps = 100'000'000'000;
    uint64_t fabric_rate_bps = 400'000'000'000;  // ToR-agg and agg-core links
    TimePs delay_ps = 1 * kPsPerUs;
};
Topology make_three_tier(const ThreeTierSpec &s);

// Rail-optimized (the GPU cluster layout of NVIDIA's DGX SuperPOD and others). Model:
//  - `groups` scalable units of `servers_per_group` servers; each server has `rails` NICs
//    (one per GPU). Each NIC is a host node of its own (its own address): a GPU endpoint.
//    Traffic between GPUs of the same server (NVLink) is not modelled.
//  - NIC r of every server in group g attaches to rail switch (g, r): a rail switch joins the
//    same-rank GPUs of a group, one hop apart.
//  - Every rail switch links to every spine (`spines` >= 1, none when groups == 1 and
//    spines == 0): traffic across rails or groups goes rail switch -> spine -> rail switch.
// Host id of NIC r of server s in group g: (g * servers_per_group + s) * rails + r, so a
// server's NICs are consecutive. Switches: rail switches (group-major), then spines.
struct RailSpec {
    uint32_t groups = 1;
    uint32_t servers_per_group = 4;
    uint32_t rails = 8;
    uint32_t spines = 2;
    uint64_t host_rate_bps = 400'000'000'000;
    uint64_t fabric_rate_bps = 400'000'000'000;
    TimePs delay_ps = 1 * kPsPerUs;
};
Topology make_rail_optimized(const RailSpec &s);

}  // namespace rocesw::sim
