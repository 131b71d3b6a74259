#include "lb/balancer.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <bit>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "lb/flow_hash.h"
#include "pkt/mbuf_meta.h"

namespace rocesw {

LoadBalancer::LoadBalancer(uint16_t worker, const EcmpGroups &groups)
    : groups_(groups), flowlets_(groups.settings().flowlet_entries) {
    for (size_t id = 0; id < lb_policy_count(); id++) {
        policies_.push_back(make_lb_policy(uint8_t(id), worker));
        granularity_.push_back(policies_.back()->granularity());
    }
    if (policies_.size() > uint8_t(LbPolicyId::flowlet))
        letflow_ = dynamic_cast<FlowletPolicy *>(policies_[uint8_t(LbPolicyId::flowlet)].get());
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
    // Only the ports with bytes or an EWMA: the others stay at exactly 0.
    for (uint32_t ports = util_ports_; ports; ports &= ports - 1) {
        const uint32_t p = uint32_t(__builtin_ctz(ports));
        double inst = double(util_bytes_[p]) * 1000.0 / double(dt);
        util_[p] = (util_[p] + (inst - util_[p]) / 8.0) * idle_decay;
        util_bytes_[p] = 0;
        if (util_[p] == 0.0) util_ports_ &= ~(1u << p);
    }
    util_last_ns_ = now_ns;
}

// Packet i leaves by member `slot` of `g`: the output, and the member's packets and bytes in
// the tally of the group being emitted to (fold_tally adds them to the member counters and, as
// the bytes of the member's port, to burst_bytes_ when another group's packet comes, and the
// end of resolve_burst to util_bytes_: the policies of this burst read util_bytes_ as it was
// before the burst).
// `flowlet` (0 or 1): the packet starts a flowlet on the member.
inline void LoadBalancer::emit(uint32_t i, const EcmpGroup &g, uint8_t slot, uint32_t len,
                               const LbMember **out, uint64_t flowlet) {
    if (&g != tally_g_) [[unlikely]]
        fold_tally(&g);
    emit_tallied(i, g, slot, len, out, flowlet);
}

inline void LoadBalancer::tally(uint8_t slot, uint32_t len, uint64_t flowlet) {
    tally_[slot] += (flowlet << kTallyFlowletShift) + (uint64_t(1) << kTallyPacketShift) + len;
}

inline void LoadBalancer::emit_tallied(uint32_t i, const EcmpGroup &g, uint8_t slot,
                                       uint32_t len, const LbMember **out, uint64_t flowlet) {
    out[i] = &g.members[slot];
    tally(slot, len, flowlet);
}

inline uint32_t LoadBalancer::fold_tally_into(const EcmpGroup *next, uint64_t *port_bytes) {
    uint32_t ports = 0;
    if (const EcmpGroup *g = tally_g_) {
        // The group's fields, the counters' base and the port mask in locals: the counters'
        // atomic stores would otherwise reload them for every slot.
        const uint32_t n_slots = g->n_slots;  // emitted slots are below n_slots
        const LbMember *const members = g->members.data();
        LbMemberCounters *const mcs = &ctr_.member(g->id, 0);
        uint64_t *const tally = tally_.data();
        for (uint32_t s = 0; s < n_slots; s++) {
            const uint64_t t = tally[s];
            if (!t) continue;
            tally[s] = 0;
            const uint64_t bytes = t & ((uint64_t(1) << kTallyPacketShift) - 1);
            const uint64_t packets =
                t >> kTallyPacketShift & ((uint64_t(1) << (kTallyFlowletShift - kTallyPacketShift)) - 1);
            LbMemberCounters &mc = mcs[s];
            mc.packets.add(packets);
            mc.bytes.add(bytes);
            if (const uint64_t fl = t >> kTallyFlowletShift) mc.flowlets.add(fl);
            const uint8_t port = members[s].port;
            port_bytes[port] += bytes;
            ports |= 1u << port;
        }
    }
    tally_g_ = next;
    return ports;
}

void LoadBalancer::fold_tally(const EcmpGroup *next) {
    burst_ports_ |= fold_tally_into(next, burst_bytes_.data());
}

// The end of the run of ids equal to ids[begin]: four ids per compare where SSE2 is there.
static inline uint32_t run_end(const uint32_t *ids, uint32_t begin, uint32_t n) {
    const uint32_t id = ids[begin];
    uint32_t end = begin + 1;
#if defined(__SSE2__)
    const __m128i v = _mm_set1_epi32(int(id));
    for (; end + 4 <= n; end += 4) {
        const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i *>(ids + end));
        const __m128 eq = _mm_castsi128_ps(_mm_cmpeq_epi32(w, v));
        const uint32_t ne = ~uint32_t(_mm_movemask_ps(eq)) & 0xF;  // bit k: ids[end + k] != id
        if (ne) return end + uint32_t(__builtin_ctz(ne));
    }
#endif
    while (end < n && ids[end] == id) end++;
    return end;
}

// flowlet_tag(hash_[k]) as a load of the hash's high half alone (where the loop keeps no other
// use of the hash in a register).
inline uint32_t LoadBalancer::tag_at(size_t k) const {
    static_assert(std::endian::native == std::endian::little);
    uint32_t t;
    std::memcpy(&t, reinterpret_cast<const char *>(&hash_[k]) + 4, 4);
    return t;
}

// Pass 1 for one run of packets of one group id (the group loaded and the policy's packet
// counter added once per run), appended to the burst (pkts_): the flow hash, and for
// flow-granularity groups (`hash`) the member itself. Runs of flowlet- and packet-granularity
// groups go to runs_ (a run right after one of the same group extends it) with their hashes in
// hash_, and their flowlet buckets in bucket_, prefetched.
template <FlowHashFn kFn, bool kSymmetric, bool kDestQp, bool kIpv4>
void LoadBalancer::hash_run(rte_mbuf *const *src, uint32_t n, uint32_t group_id, uint64_t seed) {
    const size_t begin = n_, end = begin + n;
    n_ = uint16_t(end);
    // The burst arrays indexed by burst position i, the source by i - begin: one index.
    rte_mbuf **const pkts = pkts_.data();
    const LbMember **const out = out_.data();
    const auto hash_of = [&](rte_mbuf *m) {
        const PacketMeta *meta = meta_of(m);
        if constexpr (kIpv4) {
            return flow_hash_ipv4_t<kFn, kSymmetric, kDestQp>(*meta, seed);
        } else {
            const auto l3 = [m, meta] {
                return rte_pktmbuf_mtod(m, const uint8_t *) + meta->l3_offset;
            };
            return flow_hash_t<kFn, kSymmetric, kDestQp>(*meta, l3, seed);
        }
    };
    const EcmpGroup *g = groups_.group(group_id);
    if (!g || g->n_alive == 0) [[unlikely]] {
        for (size_t i = begin; i < end; i++) {
            pkts[i] = src[i - begin];
            out[i] = nullptr;
        }
        ctr_.no_member.add(n);
        burst_no_member_ = true;
        return;
    }
    const size_t n_pol = policies_.size();
    const uint8_t pol = g->policy < n_pol ? g->policy : 0;
    ctr_.policies[pol].packets.add(n);
    const LbGranularity gran = granularity_[pol];
    if (gran == LbGranularity::flow) {
        if (g != tally_g_) fold_tally(g);
        for (size_t i = begin; i < end; i++) {
            rte_mbuf *const m = src[i - begin];
            pkts[i] = m;
            emit_tallied(uint32_t(i), *g, g->bucket_member(hash_of(m)), m->pkt_len, out, 0);
        }
        return;
    }
    uint64_t *const hash = hash_.data();
    const bool flowlet = gran == LbGranularity::flowlet;
    if (flowlet) {
        FlowletBucket **const bucket = bucket_.data();
        const FlowletBuckets fb = flowlets_.buckets();
        // One induction variable for the four arrays: j runs from -n up to 0, each array
        // addressed from its run's end (the loop's test is the increment's own flag).
        rte_mbuf *const *const src_end = src + n;
        rte_mbuf **const pkts_end = pkts + end;
        uint64_t *const hash_end = hash + end;
        FlowletBucket **const bucket_end = bucket + end;
        for (ptrdiff_t j = -ptrdiff_t(n); j != 0; j++) {
            rte_mbuf *const m = src_end[j];
            pkts_end[j] = m;
            const uint64_t h = hash_of(m);
            hash_end[j] = h;
            FlowletBucket *const b = &fb.bucket(h);
            bucket_end[j] = b;
            __builtin_prefetch(b, 1);
        }
    } else {
        for (size_t i = begin; i < end; i++) {
            rte_mbuf *const m = src[i - begin];
            pkts[i] = m;
            hash[i] = hash_of(m);
        }
    }
    if (nr_ && runs_[nr_ - 1].g == g && runs_[nr_ - 1].end == begin)
        runs_[nr_ - 1].end = uint16_t(end);
    else
        runs_[nr_++] = Run{g, uint16_t(begin), uint16_t(end), pol, flowlet};
}

void LoadBalancer::add(rte_mbuf *const *pkts, uint32_t n, uint32_t group_id, L3Type family) {
    if (!n_) burst_s_ = &groups_.settings();
    const LbSettings &s = *burst_s_;
    with_flow_hash({s.seed, s.symmetric, s.hash_dest_qp, s.hash_function},
                   [&]<FlowHashFn kFn, bool kS, bool kQ>() {
                       if (family == L3Type::ipv4)
                           hash_run<kFn, kS, kQ, true>(pkts, n, group_id, s.seed);
                       else
                           hash_run<kFn, kS, kQ, false>(pkts, n, group_id, s.seed);
                   });
}

// Flowlet entry e is another group's: e's flow has moved to g (its route's path set changed, so
// the route took another group). In the middle of a flowlet (no gap since its last packet) the
// flowlet goes on on its next hop when that is alive in g, the only one with e's fingerprint:
// e becomes g's entry for it, and its slot is returned. kNoMember otherwise (a new flowlet).
[[gnu::noinline, gnu::cold]] static uint8_t carry_over(const EcmpGroup &g, FlowletEntry &e,
                                                      uint32_t now_us, uint32_t gap_us) {
    if (e.slot == kFlowletPending || now_us - e.last_us > gap_us) return kNoMember;
    uint8_t found = kNoMember;
    for (uint32_t j = 0; j < g.n_alive; j++) {
        const uint8_t s = g.alive[j];
        if (g.members[s].fp != e.member) continue;
        if (found != kNoMember) return kNoMember;  // two members alike: no telling which
        found = s;
    }
    if (found != kNoMember) {
        e.group = g.id;
        e.slot = found;
        e.last_us = now_us;
    }
    return found;
}

// The built-in flowlet policy's LetFlow runs go to pass2_letflow here, not in the caller's hit
// loop, whose values stay in registers without the test.
uint32_t LoadBalancer::pass2_miss(rte_mbuf *const *pkts, uint32_t i, uint32_t end, Pass2 &st,
                                  const LbMember **out) {
    if (st.pol == uint8_t(LbPolicyId::flowlet) && letflow_ && !st.s->chooser_least_loaded) {
        const bool record = trace_ || st.s->trace_path_changes;
        if (st.g->buckets_alive)
            return record ? pass2_letflow<false, true>(i, end, st)
                          : pass2_letflow<false, false>(i, end, st);
        return record ? pass2_letflow<true, true>(i, end, st)
                      : pass2_letflow<true, false>(i, end, st);
    }
    return pass2_rest(pkts, i, end, st, out);
}

// Pass 2 from packet i of the run st.g, which is not a flowlet hit, on until the next flowlet
// hit (left to the caller's loop) or the run's end; returns where it stopped. A packet whose
// entry is pending (an earlier packet of this burst asked for its flowlet) joins that request
// (joins_); any other packet is a request to the run's policy. The burst's counts in locals:
// stores to the request arrays could otherwise alias them. Not for LetFlow runs (pass2_miss).
uint32_t LoadBalancer::pass2_rest(rte_mbuf *const *pkts, uint32_t i, uint32_t end, Pass2 &st,
                                  const LbMember **out) {
    static_assert(kMaxLbPolicies <= 32 && kMaxPorts <= 32 && kLbMaxBurst <= 256);
    const EcmpGroup *const g = st.g;
    const uint16_t gid = g->id;
    const uint8_t pol = st.pol;
    const uint32_t now_us = st.now_us;
    const bool flowlet = st.flowlet;
    const uint64_t alive_slots = st.alive_slots;
    const uint32_t gap_us = st.s->flowlet_gap_us;
    const uint16_t r0 = st.pol_mask & (1u << pol) ? n_reqs_[pol] : 0;
    uint16_t r = r0, nj = st.nj;
    uint64_t aged = st.aged;
    uint32_t carried = 0;
    PathRequest *const reqs = reqs_[pol].data();
    FlowletEntry **const req_entry = req_entry_[pol].data();
    uint16_t *const req_pkt = req_pkt_[pol].data();
    for (const uint32_t i0 = i; i < end; i++) {
        const uint64_t h = hash_[i];
        uint8_t current = kNoMember;
        FlowletEntry *e = nullptr;
        if (flowlet) {
            e = bucket_[i]->find(flowlet_tag(h));
            if (e && e->group == gid) {
                const uint8_t slot = e->slot;
                if (slot == kFlowletPending) {  // chosen for an earlier packet of this burst
                    e->last_us = now_us;
                    joins_[nj++] = Join{uint16_t(i), e->pending};
                    continue;
                }
                // A hit (its slot is alive, no gap): back to the caller's loop. Packet i0 is
                // not one (the caller's loop stopped there).
                if ((alive_slots >> slot & 1) && now_us - e->last_us <= gap_us && i != i0) break;
                current = slot;  // a gap, or its member died: a new flowlet
            } else if (!e) {
                e = flowlets_.insert(h, now_us, st.s->flowlet_age_us, aged);
                if (!e) {
                    ctr_.policies[pol].fallbacks.inc();
                    emit_tallied(i, *g, g->bucket_member(h), pkts[i]->pkt_len, out, 0);
                    continue;
                }
            } else if (const uint8_t s = carry_over(*g, *e, now_us, gap_us); s != kNoMember) {
                carried++;  // its route moved to this group: the flowlet goes on
                emit_tallied(i, *g, s, pkts[i]->pkt_len, out, 0);
                continue;
            }
            // Another group's entry with this tag is taken over.
            *e = FlowletEntry{flowlet_tag(h), now_us, gid, kFlowletPending, 1,
                              uint16_t(pol << 8 | r), 0};
        }
        rte_mbuf *const m = pkts[i];
        reqs[r] = PathRequest{g, h, m->pkt_len, meta_of(m)->tc, current, 0};
        req_entry[r] = e;
        req_pkt[r] = uint16_t(i);
        r++;
    }
    if (r != r0) {
        st.pol_mask |= 1u << pol;
        n_reqs_[pol] = r;
    }
    if (carried) [[unlikely]]
        ctr_.flowlets_carried.add(carried);
    st.nj = nj;
    st.aged = aged;
    return i;
}

// pass2_rest for a run of the built-in flowlet policy with its LetFlow chooser: each new flowlet
// draws its member here, in packet order as the requests would give them to choose(), and its
// entry is written with the member (not pending): a later packet of the flow in this burst is a
// hit, as a join to the request would be. Checked like decide() (a slot that is not alive falls
// back to the hash bucket; only with kCheckDead: a group whose buckets all name alive slots
// gives none), counted and traced in the same order (the flowlet policy's are the first
// decide() makes: the hash policy is never asked). A pending entry (another policy's request
// for this group id, which was republished with another policy during the burst) joins it as in
// pass2_rest. Packet i is not a hit (the caller's loop stopped there); each later packet is
// tested for a hit as in the caller's loop, which a hit goes back to. (Passing packet i's entry
// on from the caller's loop instead of finding it again cost its hits one instruction each.)
template <bool kCheckDead, bool kRecord>
uint32_t LoadBalancer::pass2_letflow(uint32_t i, uint32_t end, Pass2 &st) {
    // The burst's arrays through `this` (pkts_, out_: resolve_burst's pkts and out), as hash_
    // and bucket_: no register of their own in the loop.
    rte_mbuf *const *const pkts = pkts_.data();
    const LbMember **const out = out_.data();
    const EcmpGroup *const g = st.g;
    const uint16_t gid = g->id;
    const uint32_t now_us = st.now_us;
    const uint64_t alive_slots = st.alive_slots;
    const uint32_t gap_us = st.s->flowlet_gap_us;
    uint16_t nj = st.nj;
    uint64_t aged = st.aged;
    // Each packet from i0 on is a join, a full bucket or a decision: decisions are counted
    // after the loop (one register less in it).
    const uint32_t i0 = i;
    const uint16_t nj0 = nj;
    uint32_t changes = 0, full = 0, dead = 0, carried = 0;
    LbRng rng = letflow_->rng();
    // The decision for packet k, not a hit, whose entry e is the flow's (this group's):
    // `current` is the member its last flowlet took (kNoMember: a new entry).
    const auto decide_flowlet = [&](size_t k, FlowletEntry *e, uint8_t current)
                                    __attribute__((always_inline)) {
        uint8_t choice = FlowletPolicy::random_choice(*g, rng);
        if (kCheckDead && (choice >= kMaxGroupMembers || !(alive_slots >> choice & 1)))
            [[unlikely]] {
            choice = g->bucket_member(hash_[k]);
            dead++;
        }
        // The entry's tag, group and valid flag are the flow's already.
        e->last_us = now_us;
        e->slot = choice;
        // Without kCheckDead the choice is an alive slot below n_slots: run_member_ (this
        // run's) holds its member, one load instead of the address arithmetic.
        const LbMember *const m = kCheckDead ? &g->members[choice] : run_member_[choice];
        out[k] = m;
        e->member = m->fp;
        tally(choice, pkts[k]->pkt_len, 1);
        // Without kCheckDead the choice is an alive slot, never kNoMember: a new entry's
        // kNoMember differs from it, and new_entry took that change back in advance.
        if ((!kCheckDead || current != kNoMember) && current != choice) {
            changes++;
            if constexpr (kRecord)
                if (kCheckDead || current != kNoMember)
                    record_path_change(st.now_ns, *g, current, choice, hash_[k], pkts[k],
                                       st.s->trace_path_changes);
        }
    };
    // Packet k of a flow this group has no entry for (e: find()'s result, null or another
    // group's entry, which is taken over).
    const auto new_entry = [&](size_t k, FlowletEntry *e) __attribute__((always_inline)) {
        if (!e) {
            const uint64_t h = hash_[k];
            e = flowlets_.insert(h, now_us, st.s->flowlet_age_us, aged);
            if (!e) [[unlikely]] {
                full++;
                emit_tallied(k, *g, g->bucket_member(h), pkts[k]->pkt_len, out, 0);
                return;
            }
        } else if (const uint8_t s = carry_over(*g, *e, now_us, gap_us); s != kNoMember)
            [[unlikely]] {
            out[k] = &g->members[s];  // its route moved to this group: the flowlet goes on
            tally(s, pkts[k]->pkt_len, 0);
            carried++;
            return;
        }
        e->group = gid;
        if constexpr (!kCheckDead) changes--;  // decide_flowlet counts kNoMember as a change
        decide_flowlet(k, e, kNoMember);
    };
    // Packet k, not a hit, whose entry e is this group's with slot `slot`.
    const auto old_entry = [&](size_t k, FlowletEntry *e, uint8_t slot)
                               __attribute__((always_inline)) {
        if (slot == kFlowletPending) [[unlikely]] {
            e->last_us = now_us;
            joins_[nj++] = Join{uint16_t(k), e->pending};
            return;
        }
        decide_flowlet(k, e, slot);  // a gap, or its member died: a new flowlet
    };
    {
        FlowletEntry *e = bucket_[i]->find(flowlet_tag(hash_[i]));
        if (e && e->group == gid)
            old_entry(i, e, e->slot);
        else
            new_entry(i, e);
    }
    // A 64-bit index: one induction variable for the arrays.
    size_t k = size_t(i) + 1;
    for (const size_t end64 = end; k < end64; k++) {
        FlowletEntry *e = bucket_[k]->find(tag_at(k));
        if (e && e->group == gid) [[likely]] {
            // The hit loop's test (resolve_burst) with the gap first: a new flowlet after a gap (every packet
            // at low rates) skips the slot's alive test and old_entry's pending test (a
            // pending entry is this burst's: its last_us is now_us, never a gap).
            const uint8_t slot = e->slot;
            // Unlikely here: a hit leaves the loop, and a dead slot or a pending entry is rare;
            // the new flowlet's path below is the loop's own (no jump back).
            if (now_us - e->last_us <= gap_us) [[unlikely]] {
                // An entry's slot is below kMaxGroupMembers or kFlowletPending, whose bit in
                // the 64-bit shift (count modulo 64) is never set: no range test.
                static_assert(kMaxGroupMembers <= 32 &&
                              kFlowletPending % 64 >= kMaxGroupMembers);
                if (alive_slots >> (slot & 63) & 1) break;  // a hit
                old_entry(k, e, slot);
            } else {
                decide_flowlet(k, e, slot);
            }
        } else {
            new_entry(k, e);
        }
    }
    i = uint32_t(k);
    letflow_->rng() = rng;
    LbPolicyCounters &pc = ctr_.policies[uint8_t(LbPolicyId::flowlet)];
    const uint32_t decisions = i - i0 - uint32_t(nj - nj0) - full - carried;
    const uint32_t fallbacks = full + dead;
    if (decisions) pc.decisions.add(decisions);
    if (carried) [[unlikely]]
        ctr_.flowlets_carried.add(carried);
    if (changes) pc.path_changes.add(changes);
    if (fallbacks) pc.fallbacks.add(fallbacks);
    st.nj = nj;
    st.aged = aged;
    return i;
}

void LoadBalancer::record_path_change(uint64_t now_ns, const EcmpGroup &g, uint8_t old_slot,
                                      uint8_t new_slot, uint64_t flow_hash, rte_mbuf *m,
                                      bool event) {
    if (trace_) {
        const uint8_t port = g.members[new_slot].port;
        trace_->push({now_ns, port, port, new_slot, TraceKind::lb_path_change});
    }
    if (event) {
        const PacketMeta *pm = meta_of(m);
        const bool v4 = pm->l3 == L3Type::ipv4;
        PathEvent ev{now_ns,
                     flow_hash,
                     v4 ? pm->src_ip4 : 0,
                     v4 ? pm->dst_ip4 : 0,
                     pm->src_port,
                     pm->dst_port,
                     g.id,
                     old_slot,
                     new_slot};
        if (!events_.push(ev)) ctr_.events_dropped.inc();
    }
}

void LoadBalancer::resolve(rte_mbuf *const *pkts, const uint32_t *group_ids, uint16_t n,
                           uint64_t now_ns, const LbMember **out) {
    for (uint32_t begin = 0, end; begin < n; begin = end) {
        end = run_end(group_ids, begin, n);
        add(pkts + begin, end - begin, group_ids[begin]);
    }
    resolve_burst(now_ns);
    std::copy_n(out_.data(), n, out);
    clear_burst();
}

static_assert(kMaxEcmpGroups <= kFlowletNoGroup);  // no group's id is kFlowletNoGroup

void LoadBalancer::resolve_burst(uint64_t now_ns) {
    if (!n_) burst_s_ = &groups_.settings();
    const LbSettings &s = *burst_s_;
    const uint32_t now_us = uint32_t(now_ns / 1000);
    update_util(now_ns);
    rte_mbuf *const *const pkts = pkts_.data();
    const LbMember **const out = out_.data();
    const uint16_t nr = nr_;
    nr_ = 0;

    // Pass 2, the runs of flowlet- and packet-granularity groups, in order: the flowlet table,
    // and a request to the policy for each decision; packets of a flow whose request is already
    // made go to joins_. A flowlet hit (the steady state) is handled here; the rest
    // (new flows and flowlets, pending entries, packet granularity, a full bucket) by
    // pass2_miss (pass2_letflow, pass2_rest) and pass2_rest, out of line so that the hit loop
    // keeps its values in registers.
    // The run's values also in locals: those may change st, so the compiler would reload
    // it from memory after every store of the hit loop.
    Pass2 st{};
    st.now_us = now_us;
    st.now_ns = now_ns;
    st.s = &s;
    const uint32_t gap_us = s.flowlet_gap_us;
    const uint64_t *const hash = hash_.data();
    FlowletBucket *const *const bucket = bucket_.data();
    for (uint16_t r = 0; r < nr; r++) {
        const Run run = runs_[r];
        const EcmpGroup *g = run.g;
        if (g != tally_g_) {
            if (tally_g_)
                fold_tally(g);
            else
                tally_g_ = g;  // nothing to fold (a burst's first group): no call
        }
        st.g = g;
        st.pol = run.pol;
        st.flowlet = run.flowlet;
        if (!run.flowlet) {
            pass2_rest(pkts, run.begin, run.end, st, out);
            continue;
        }
        // run_member_[slot]: the member of an alive slot, else null (a dead slot, one at or
        // above n_slots, kFlowletPending): the hit loop's alive test is that load's.
        uint64_t alive_slots = 0;
        const uint32_t n_slots = g->n_slots;
        for (uint32_t sl = 0; sl < n_slots; sl++) {
            const bool alive = g->members[sl].alive;
            alive_slots |= uint64_t(alive) << sl;
            run_member_[sl] = alive ? &g->members[sl] : nullptr;
        }
        for (uint32_t sl = n_slots; sl < run_members_set_; sl++) run_member_[sl] = nullptr;
        run_members_set_ = n_slots;
        st.alive_slots = alive_slots;
        st.end = run.end;
        st.gap_us = gap_us;
        for (size_t i = run.begin; i < st.end;) {
            // The hits, in a loop of their own without the call: its values stay in registers
            // (loaded from st after each call: none is kept across it).
            const uint16_t gid = st.g->id;
            const size_t end = st.end;
            const uint32_t now = st.now_us, gap = st.gap_us;
            for (; i < end; i++) {
                // A hit: the first entry with the flow's tag is this group's (so valid and
                // find()'s result: an invalid entry's group is kFlowletNoGroup, no group's
                // id), its slot alive (its member in run_member_), no gap since its last
                // packet; the flowlet goes on on its member. Anything else: pass2_miss, whose
                // callees find the entry with find().
                FlowletEntry *e = bucket[i]->find_tag(flowlet_tag(hash[i]));
                if (!e || e->group != gid) [[unlikely]]
                    break;
                const uint8_t slot = e->slot;
                const LbMember *const m = run_member_[slot];
                if (!m || now - e->last_us > gap) [[unlikely]]
                    break;
                e->last_us = now;
                out[i] = m;
                tally(slot, pkts[i]->pkt_len, 0);
            }
            if (i < end) i = pass2_miss(pkts, uint32_t(i), uint32_t(end), st, out);
        }
    }
    const uint32_t pol_mask = st.pol_mask;
    const uint16_t nj = st.nj;
    const uint64_t aged = st.aged;

    // The policies' decisions, their packets emitted; then the packets that joined a request.
    if (pol_mask) decide(pkts, pol_mask, now_ns, s, out);
    // Aged entries are charged to the flowlet policy: the table is shared by flowlet-granularity
    // policies and reclaiming is not any one policy's doing.
    if (aged) ctr_.policies[uint8_t(LbPolicyId::flowlet)].aged.add(aged);
    __atomic_store_n(&ctr_.flowlet_occupancy.v, uint64_t(flowlets_.used()), __ATOMIC_RELAXED);
    for (uint16_t k = 0; k < nj; k++) {
        const Join j = joins_[k];
        const PathRequest &q = reqs_[j.req >> 8][j.req & 0xFF];
        emit(j.pkt, *q.group, q.choice, pkts[j.pkt]->pkt_len, out, 0);
    }
    // This burst's bytes join the utilization now that the policies have read it: the last
    // tally's straight (inline: no call for the one fold of a burst of one group), then those
    // of the tallies folded before.
    const uint32_t last_ports = fold_tally_into(nullptr, util_bytes_.data());
    for (uint32_t ports = burst_ports_; ports; ports &= ports - 1) {
        const uint32_t p = uint32_t(__builtin_ctz(ports));
        util_bytes_[p] += burst_bytes_[p];
        burst_bytes_[p] = 0;
    }
    // Every member's tally is folded: the ports of all of them.
    out_ports_ = burst_ports_ | last_ports;
    util_ports_ |= out_ports_;
    burst_ports_ = 0;  // pass 1 of the next burst may fold a tally (add())
}

// The policies' choices for this burst's requests (one choose() call per policy with
// requests), checked, stored in the flowlet entries, emitted, counted and traced.
void LoadBalancer::decide(rte_mbuf *const *pkts, uint32_t pol_mask, uint64_t now_ns,
                          const LbSettings &s, const LbMember **out) {
    const LbView view{now_ns, &s, groups_.load_signal(), util_.data(), util_bytes_.data()};
    for (uint32_t mask = pol_mask; mask; mask &= mask - 1) {
        const uint32_t pol = uint32_t(__builtin_ctz(mask));
        const uint16_t nr = n_reqs_[pol];
        LbPolicyCounters &pc = ctr_.policies[pol];
        PathRequest *const reqs = reqs_[pol].data();
        policies_[pol]->choose(std::span<PathRequest>(reqs, nr), view);
        pc.decisions.add(nr);
        for (uint16_t r = 0; r < nr; r++) {
            PathRequest &q = reqs[r];
            const EcmpGroup &g = *q.group;
            if (q.choice >= g.n_slots || !g.members[q.choice].alive) [[unlikely]] {
                q.choice = g.bucket_member(q.flow_hash);
                pc.fallbacks.inc();
            }
            // The entry gets the choice unless a later packet of the burst took it over for
            // another group (its request, or pass2_letflow's choice, is the entry's): the
            // last packet's group and member, as one packet at a time.
            FlowletEntry *const e = req_entry_[pol][r];
            if (e && e->slot == kFlowletPending && e->pending == uint16_t(pol << 8 | r)) {
                e->slot = q.choice;
                e->member = g.members[q.choice].fp;
            }
            emit(req_pkt_[pol][r], g, q.choice, q.bytes, out, e != nullptr);
            if (q.current != kNoMember && q.current != q.choice) {
                pc.path_changes.inc();
                if (trace_ || s.trace_path_changes)
                    record_path_change(now_ns, g, q.current, q.choice, q.flow_hash,
                                       pkts[req_pkt_[pol][r]], s.trace_path_changes);
            }
        }
    }
}

}  // namespace rocesw
