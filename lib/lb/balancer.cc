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
        double inst = double(util_bytes_[p]) * 1000.0 / double(dt);
        util_[p] = (util_[p] + (inst - util_[p]) / 8.0) * idle_decay;
        util_bytes_[p] = 0;
    }
    util_last_ns_ = now_ns;
}

void LoadBalancer::resolve(rte_mbuf *const *pkts, const uint32_t *group_ids, uint16_t n,
                           uint64_t now_ns, const LbMember **out) {
    const LbSettings &s = groups_.settings();
    const FlowHashParams hp{s.seed, s.symmetric, s.hash_dest_qp};
    const uint32_t now_us = uint32_t(now_ns / 1000);
    const size_t n_pol = policies_.size();
    update_util(now_ns);
    n_reqs_.fill(0);
    uint64_t aged = 0;

    // Pass 1: group, flow hash, and a prefetch of the flowlet bucket, for the whole burst.
    for (uint16_t i = 0; i < n; i++) {
        const EcmpGroup *g = groups_.group(group_ids[i]);
        grp_[i] = g;
        if (!g || g->n_alive == 0) continue;
        const PacketMeta *meta = meta_of(pkts[i]);
        const uint8_t *l3 = rte_pktmbuf_mtod(pkts[i], const uint8_t *) + meta->l3_offset;
        hash_[i] = flow_hash(*meta, l3, hp);
        const uint8_t pol = g->policy < n_pol ? g->policy : 0;
        if (granularity_[pol] == LbGranularity::flowlet) flowlets_.prefetch(hash_[i]);
    }
    // Pass 2: decisions.
    for (uint16_t i = 0; i < n; i++) {
        const EcmpGroup *g = grp_[i];
        if (!g || g->n_alive == 0) {
            slot_[i] = kNoMember;
            continue;
        }
        const uint64_t h = hash_[i];
        const uint8_t pol = g->policy < n_pol ? g->policy : 0;
        ctr_.policies[pol].packets.inc();
        uint8_t current = kNoMember;
        FlowletEntry *e = nullptr;
        switch (granularity_[pol]) {
            case LbGranularity::flow:
                slot_[i] = g->bucket_member(h);
                continue;
            case LbGranularity::packet:
                break;
            case LbGranularity::flowlet: {
                bool fresh = false;
                e = flowlets_.find_or_insert(h, now_us, s.flowlet_age_us, fresh, aged);
                if (!e) {
                    slot_[i] = g->bucket_member(h);
                    ctr_.policies[pol].fallbacks.inc();
                    continue;
                }
                if (!fresh && e->group == g->id) {
                    if (e->slot == kFlowletPending) {  // chosen for an earlier packet of this burst
                        e->last_us = now_us;
                        slot_[i] = kFlowletPending;
                        req_of_[i] = e->pending;
                        continue;
                    }
                    const bool alive = e->slot < g->n_slots && g->members[e->slot].alive;
                    if (alive && now_us - e->last_us <= s.flowlet_gap_us) {
                        e->last_us = now_us;
                        slot_[i] = e->slot;
                        continue;
                    }
                    current = e->slot;
                }
                break;
            }
        }
        // A decision for the policy.
        uint16_t r = n_reqs_[pol]++;
        reqs_[pol][r] = PathRequest{g, h, pkts[i]->pkt_len, meta_of(pkts[i])->tc, current, 0};
        req_entry_[pol][r] = e;
        req_pkt_[pol][r] = i;
        slot_[i] = kFlowletPending;
        req_of_[i] = uint16_t(pol << 8 | r);
        if (e) {
            e->group = g->id;
            e->slot = kFlowletPending;
            e->pending = req_of_[i];
            e->last_us = now_us;
        }
    }

    const LbView view{now_ns, &s, groups_.load_signal(), util_.data(), util_bytes_.data()};
    for (size_t pol = 0; pol < n_pol; pol++) {
        const uint16_t nr = n_reqs_[pol];
        if (!nr) continue;
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
    // Aged entries are charged to the flowlet policy: the table is shared by flowlet-granularity
    // policies and reclaiming is not any one policy's doing.
    if (aged) ctr_.policies[uint8_t(LbPolicyId::flowlet)].aged.add(aged);
    __atomic_store_n(&ctr_.flowlet_occupancy.v, uint64_t(flowlets_.used()), __ATOMIC_RELAXED);

    for (uint16_t i = 0; i < n; i++) {
        const EcmpGroup *g = grp_[i];
        uint8_t slot = slot_[i];
        if (slot == kNoMember) {
            out[i] = nullptr;
            ctr_.no_member.inc();
            continue;
        }
        if (slot == kFlowletPending) slot = reqs_[req_of_[i] >> 8][req_of_[i] & 0xFF].choice;
        const LbMember &m = g->members[slot];
        out[i] = &m;
        LbMemberCounters &mc = ctr_.member(g->id, slot);
        mc.packets.inc();
        mc.bytes.add(pkts[i]->pkt_len);
        util_bytes_[m.port] += pkts[i]->pkt_len;
    }
}

}  // namespace rocesw
