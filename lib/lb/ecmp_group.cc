#include "lb/ecmp_group.h"

#include <rte_rcu_qsbr.h>

#include <cmath>

#include "lb/flow_hash.h"
#include "lb/policy.h"
#include "lb/qsbr.h"

namespace rocesw {

uint64_t lb_member_key(const IpAddr &via) {
    if (!via.is_v6) return lb_mix64(0x1b873593ull << 32 | via.v4);
    uint64_t a = 0, b = 0;
    for (int i = 0; i < 8; i++) {
        a = a << 8 | via.v6[i];
        b = b << 8 | via.v6[8 + i];
    }
    return lb_mix64(a ^ lb_mix64(b));
}

uint64_t lb_member_key(const IpAddr &via, uint8_t port) {
    const uint64_t key = lb_member_key(via);
    return lb_gateway_link_local(via) ? lb_mix64(key ^ (uint64_t(port) + 1) * 0x9E3779B97F4A7C15ull)
                                      : key;
}

// Weighted rendezvous: member m wins bucket b with the highest -w / ln(u), u uniform in (0,1)
// drawn from hash(key, b). With equal weights this is plain highest-random-weight; with weights
// each member wins a share of buckets proportional to its weight.
static double hrw_score(uint64_t key, uint32_t bucket, uint32_t weight) {
    uint64_t h = lb_mix64(key ^ lb_mix64(uint64_t(bucket) + 0x632be59bd9b4e019ull));
    double u = (double(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);  // (0,1)
    return -double(weight) / std::log(u);
}

std::unique_ptr<EcmpGroup> build_ecmp_group(uint16_t id, uint8_t policy,
                                            const std::vector<LbMember> &slots) {
    auto g = std::make_unique<EcmpGroup>();
    g->id = id;
    g->policy = policy;
    g->n_slots = uint8_t(std::min<size_t>(slots.size(), kMaxGroupMembers));
    g->n_alive = 0;
    g->alive.fill(kNoMember);
    for (uint8_t s = 0; s < g->n_slots; s++) {
        g->members[s] = slots[s];
        g->members[s].fp = lb_member_fp(slots[s].key, slots[s].port);
        if (slots[s].alive && slots[s].weight > 0) g->alive[g->n_alive++] = s;
    }
    for (uint32_t b = 0; b < kEcmpBuckets; b++) {
        uint8_t best = kNoMember;
        double best_score = -1;
        for (uint8_t k = 0; k < g->n_alive; k++) {
            const LbMember &m = g->members[g->alive[k]];
            double sc = hrw_score(m.key, b, m.weight);
            // Ties (practically never) go to the smaller key, not to the slot order.
            if (sc > best_score || (sc == best_score && m.key < g->members[best].key)) {
                best_score = sc;
                best = g->alive[k];
            }
        }
        g->buckets[b] = best;
    }
    g->buckets_alive = ecmp_buckets_alive(*g);
    return g;
}

bool ecmp_buckets_alive(const EcmpGroup &g) {
    for (uint32_t b = 0; b < kEcmpBuckets; b++)
        if (g.buckets[b] >= g.n_slots || !g.members[g.buckets[b]].alive) return false;
    return true;
}

EcmpGroups::EcmpGroups(rte_rcu_qsbr *qsbr) : qsbr_(qsbr), settings_(new LbSettings()) {}

EcmpGroups::~EcmpGroups() {
    for (auto &g : groups_) delete g.load();
    delete settings_.load();
}

void EcmpGroups::synchronize() {
    if (qsbr_) qsbr_synchronize(qsbr_);
}

void EcmpGroups::publish(std::vector<std::pair<uint16_t, std::unique_ptr<EcmpGroup>>> changes) {
    std::vector<const EcmpGroup *> old;
    for (auto &[id, g] : changes) {
        if (id >= kMaxEcmpGroups) continue;
        old.push_back(groups_[id].exchange(g.release(), std::memory_order_acq_rel));
    }
    synchronize();
    for (auto *g : old) delete g;
}

void EcmpGroups::set_settings(const LbSettings &s) {
    const LbSettings *old = settings_.exchange(new LbSettings(s), std::memory_order_acq_rel);
    synchronize();
    delete old;
}

LbSettings lb_settings_from(const LbConfig &c) {
    LbSettings s;
    s.hash_function = c.hash_function;
    s.seed = c.seed;
    s.symmetric = c.symmetric;
    s.hash_dest_qp = c.hash_dest_qp;
    s.flowlet_gap_us = c.flowlet_gap_us;
    s.flowlet_age_us = c.flowlet_age_us;
    s.flowlet_entries = c.flowlet_entries;
    s.chooser_least_loaded = c.flowlet_chooser == "least_loaded";
    s.util_horizon_us = c.util_horizon_us;
    s.trace_path_changes = c.trace_path_changes;
    int id = lb_policy_id(c.default_policy);
    s.default_policy = uint8_t(id < 0 ? 0 : id);
    return s;
}

}  // namespace rocesw
