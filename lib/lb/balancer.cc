#include "lb/balancer.h"

#include <rte_mbuf.h>

#include "lb/flow_hash.h"
#include "pkt/mbuf_meta.h"

namespace rocesw {

LoadBalancer::LoadBalancer(uint16_t worker, const EcmpGroups &groups)
    : groups_(groups), flowlets_(groups.settings().flowlet_entries) {
    for (size_t id = 0; id < lb_policy_count(); id++) {
        policies_.push_back(make_lb_policy(uint8_t(id), worker));
        granularity_.push_back(policies_.back()->granularity());
    }
}

void LoadBalancer::update_util(uint64_t now_ns) {
    constexpr uint64_t kIntervalNs = 10'000;
    if (util_last_ns_ == 0) util_last_ns_ = now_ns;
    uint64_t dt = now_ns - util_last_ns_;
    if (dt < kIntervalNs) return;
    // EWMA with a 1/8 gain per interval; an idle stretch of k intervals decays it k times.
    uint64_t k = dt / kIntervalNs;
    double idle_decay = 1.0;
    for (uint64_t i = 1; i < k && i < 64; i++) idle_decay *= 7.0 / 8.0;
    for (size_t p = 0; p < kMaxPorts; p++) {
        // A port with no bytes and no EWMA stays at exactly 0: skip its division.
        if (util_bytes_[p] == 0 && util_[p] == 0.0) continue;
        double inst = double(util_bytes_[p]) * 1000.0 / double(dt);
        util_[p] = (util_[p] + (inst - util_[p]) / 8.0) * idle_decay;
        util_bytes_[p] = 0;
    }
    util_last_ns_ = now_ns;
}

// Packet i leaves by member `slot` of `g`: the output, and the member's packets and bytes in
// the tally of the group being emitted to (fold_tally adds them to the member counters and, as
// the bytes of the member's port, to burst_bytes_ when another group's packet comes and at the
// end of resolve: the policies of this burst read util_bytes_ as it was before the burst).
inline void LoadBalancer::emit(uint16_t i, const EcmpGroup &g, uint8_t slot, uint32_t len,
                               const LbMember **out) {
    out[i] = &g.members[slot];
    if (&g != tally_g_) [[unlikely]]
        fold_tally(&g);
    tally_pkts_[slot]++;
    tally_bytes_[slot] += len;
    tally_slots_ |= 1u << slot;
}

void LoadBalancer::fold_tally(const EcmpGroup *next) {
    static_assert(kMaxGroupMembers <= 32);
    for (uint32_t slots = tally_slots_; slots; slots &= slots - 1) {
        const uint32_t s = uint32_t(__builtin_ctz(slots));
        LbMemberCounters &mc = ctr_.member(tally_g_->id, s);
        mc.packets.add(tally_pkts_[s]);
        mc.bytes.add(tally_bytes_[s]);
        const uint8_t port = tally_g_->members[s].port;
        burst_bytes_[port] += tally_bytes_[s];
        burst_ports_ |= 1u << port;
        tally_pkts_[s] = 0;
        tally_bytes_[s] = 0;
    }
    tally_slots_ = 0;
    tally_g_ = next;
}

// Pass 1 over the burst: group (loaded once per run of packets with the same id), flow hash,
// and for flow-granularity groups (`hash`) the member itself. Packets that need the flowlet
// table or a policy go to todo_, in order, their flowlet bucket prefetched. Policy packet
// counters are added once per run.
template <FlowHashFn kFn, bool kSymmetric, bool kDestQp>
uint16_t LoadBalancer::hash_burst(rte_mbuf *const *pkts, const uint32_t *group_ids, uint16_t n,
                                  uint64_t seed, const LbMember **out) {
    const size_t n_pol = policies_.size();
    uint32_t last_id = ~0u;
    const EcmpGroup *g = nullptr;
    uint8_t pol = 0;
    LbGranularity gran = LbGranularity::flow;
    uint32_t run = 0;  // packets of `pol` not yet added to its counter
    uint32_t no_member = 0;
    uint16_t nt = 0;
    for (uint16_t i = 0; i < n; i++) {
        if (group_ids[i] != last_id) [[unlikely]] {
            if (run) ctr_.policies[pol].packets.add(run);
            run = 0;
            last_id = group_ids[i];
            g = groups_.group(last_id);
            if (g && g->n_alive == 0) g = nullptr;
            if (g) {
                pol = g->policy < n_pol ? g->policy : 0;
                gran = granularity_[pol];
            }
        }
        if (!g) [[unlikely]] {
            out[i] = nullptr;
            no_member++;
            continue;
        }
        run++;
        rte_mbuf *const m = pkts[i];
        const PacketMeta *meta = meta_of(m);
        const uint8_t *l3 = rte_pktmbuf_mtod(m, const uint8_t *) + meta->l3_offset;
        const uint64_t h = flow_hash_t<kFn, kSymmetric, kDestQp>(*meta, l3, seed);
        if (gran == LbGranularity::flow) {
            emit(i, *g, g->bucket_member(h), m->pkt_len, out);
            continue;
        }
        if (gran == LbGranularity::flowlet) flowlets_.prefetch(h);
        grp_[i] = g;
        hash_[i] = h;
        todo_[nt++] = i;
    }
    if (run) ctr_.policies[pol].packets.add(run);
    if (no_member) ctr_.no_member.add(no_member);
    return nt;
}

void LoadBalancer::resolve(rte_mbuf *const *pkts, const uint32_t *group_ids, uint16_t n,
                           uint64_t now_ns, const LbMember **out) {
    const LbSettings &s = groups_.settings();
    const uint32_t now_us = uint32_t(now_ns / 1000);
    const size_t n_pol = policies_.size();
    update_util(now_ns);
    uint64_t aged = 0;
    burst_ports_ = 0;

    // Pass 1: group, flow hash, bucket members, flowlet prefetches, for the whole burst.
    const uint16_t nt =
        with_flow_hash({s.seed, s.symmetric, s.hash_dest_qp, s.hash_function},
                       [&]<FlowHashFn kFn, bool kS, bool kQ>() {
                           return hash_burst<kFn, kS, kQ>(pkts, group_ids, n, s.seed, out);
                       });

    // Pass 2, packets of flowlet- and packet-granularity groups, in order: the flowlet table,
    // and a request to the policy for each decision. Packets whose member the policies still
    // have to choose go to pend_.
    static_assert(kMaxLbPolicies <= 32 && kMaxPorts <= 32);
    uint32_t pol_mask = 0;  // policies with requests
    uint16_t np = 0;
    const uint32_t gap_us = s.flowlet_gap_us, age_us = s.flowlet_age_us;
    const EcmpGroup *last_g = nullptr;  // the policy and its granularity, per run of one group
    uint8_t pol = 0;
    bool flowlet = false;
    for (uint16_t t = 0; t < nt; t++) {
        const uint16_t i = todo_[t];
        const EcmpGroup *g = grp_[i];
        const uint64_t h = hash_[i];
        if (g != last_g) [[unlikely]] {
            last_g = g;
            pol = g->policy < n_pol ? g->policy : 0;
            flowlet = granularity_[pol] == LbGranularity::flowlet;
        }
        uint8_t current = kNoMember;
        FlowletEntry *e = nullptr;
        if (flowlet) {
            bool fresh = false;
            e = flowlets_.find_or_insert(h, now_us, age_us, fresh, aged);
            if (!e) {
                ctr_.policies[pol].fallbacks.inc();
                emit(i, *g, g->bucket_member(h), pkts[i]->pkt_len, out);
                continue;
            }
            if (!fresh && e->group == g->id) {
                if (e->slot == kFlowletPending) {  // chosen for an earlier packet of this burst
                    e->last_us = now_us;
                    req_of_[i] = e->pending;
                    pend_[np++] = i;
                    continue;
                }
                const bool alive = e->slot < g->n_slots && g->members[e->slot].alive;
                if (alive && now_us - e->last_us <= gap_us) [[likely]] {
                    e->last_us = now_us;
                    emit(i, *g, e->slot, pkts[i]->pkt_len, out);
                    continue;
                }
                current = e->slot;
            }
        }
        // A decision for the policy.
        if (!(pol_mask & (1u << pol))) {
            pol_mask |= 1u << pol;
            n_reqs_[pol] = 0;
        }
        const uint16_t r = n_reqs_[pol]++;
        reqs_[pol][r] = PathRequest{g, h, pkts[i]->pkt_len, meta_of(pkts[i])->tc, current, 0};
        req_entry_[pol][r] = e;
        req_pkt_[pol][r] = i;
        req_of_[i] = uint16_t(pol << 8 | r);
        pend_[np++] = i;
        if (e) {
            e->group = g->id;
            e->slot = kFlowletPending;
            e->pending = req_of_[i];
            e->last_us = now_us;
        }
    }

    if (pol_mask) decide(pkts, pol_mask, now_ns, s);
    // Aged entries are charged to the flowlet policy: the table is shared by flowlet-granularity
    // policies and reclaiming is not any one policy's doing.
    if (aged) ctr_.policies[uint8_t(LbPolicyId::flowlet)].aged.add(aged);
    __atomic_store_n(&ctr_.flowlet_occupancy.v, uint64_t(flowlets_.used()), __ATOMIC_RELAXED);

    // Pass 3: the packets the policies decided.
    for (uint16_t k = 0; k < np; k++) {
        const uint16_t i = pend_[k];
        const PathRequest &q = reqs_[req_of_[i] >> 8][req_of_[i] & 0xFF];
        emit(i, *grp_[i], q.choice, pkts[i]->pkt_len, out);
    }
    fold_tally(nullptr);
    // This burst's bytes join the utilization now that the policies have read it.
    for (uint32_t ports = burst_ports_; ports; ports &= ports - 1) {
        const uint32_t p = uint32_t(__builtin_ctz(ports));
        util_bytes_[p] += burst_bytes_[p];
        burst_bytes_[p] = 0;
    }
}

// The policies' choices for this burst's requests (one choose() call per policy with
// requests), checked, stored in the flowlet entries, counted and traced.
void LoadBalancer::decide(rte_mbuf *const *pkts, uint32_t pol_mask, uint64_t now_ns,
                          const LbSettings &s) {
    const LbView view{now_ns, &s, groups_.load_signal(), util_.data(), util_bytes_.data()};
    for (uint32_t mask = pol_mask; mask; mask &= mask - 1) {
        const uint32_t pol = uint32_t(__builtin_ctz(mask));
        const uint16_t nr = n_reqs_[pol];
        LbPolicyCounters &pc = ctr_.policies[pol];
        policies_[pol]->choose(std::span<PathRequest>(reqs_[pol].data(), nr), view);
        pc.decisions.add(nr);
        for (uint16_t r = 0; r < nr; r++) {
            PathRequest &q = reqs_[pol][r];
            const EcmpGroup &g = *q.group;
            if (q.choice >= g.n_slots || !g.members[q.choice].alive) {
                q.choice = g.bucket_member(q.flow_hash);
                pc.fallbacks.inc();
            }
            if (FlowletEntry *e = req_entry_[pol][r]) {
                e->slot = q.choice;
                ctr_.member(g.id, q.choice).flowlets.inc();
            }
            if (q.current != kNoMember && q.current != q.choice) {
                pc.path_changes.inc();
                if (trace_) {
                    const uint8_t port = g.members[q.choice].port;
                    trace_->push({now_ns, port, port, q.choice, TraceKind::lb_path_change});
                }
                if (s.trace_path_changes) {
                    const PacketMeta *m = meta_of(pkts[req_pkt_[pol][r]]);
                    const bool v4 = m->l3 == L3Type::ipv4;
                    PathEvent ev{now_ns,
                                 q.flow_hash,
                                 v4 ? m->src_ip4 : 0,
                                 v4 ? m->dst_ip4 : 0,
                                 m->src_port,
                                 m->dst_port,
                                 g.id,
                                 q.current,
                                 q.choice};
                    if (!events_.push(ev)) ctr_.events_dropped.inc();
                }
            }
        }
    }
}

}  // namespace rocesw
