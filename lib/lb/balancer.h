// The load-balancing stage of one worker: for the packets of a burst whose route is an ECMP
// group, picks the member each one leaves by.
//
//   flow hash (lb/flow_hash.h) -> the group's policy granularity:
//     flow:    the resilient bucket table
//     flowlet: the flowlet table; a hit within flowlet_gap_us keeps the stored member, a new
//              flow or a gap asks the policy; a full table bucket falls back to the bucket table
//     packet:  the policy, every packet
//   -> one choose() call per policy per burst -> members, counters, path-change events
//
// Reads: the EcmpGroups (RCU; the caller passes quiescent points between bursts), the packets'
// PacketMeta. Writes: its own flowlet table, counters and event ring. Time is an argument.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/counters.h"
#include "common/event_ring.h"
#include "common/trace_event.h"  // TraceRing: path changes for the event trace
#include "lb/ecmp_group.h"
#include "lb/flowlet_table.h"
#include "lb/flowlet_policy.h"
#include "lb/policy.h"
#include "pkt/meta.h"  // L3Type: add()'s family

struct rte_mbuf;

namespace rocesw {

inline constexpr uint16_t kLbMaxBurst = 256;

struct LbMemberCounters {
    Counter packets, bytes;
    Counter flowlets;  // flowlets started on this member (flowlet-granularity policies)
};

struct LbPolicyCounters {
    Counter packets;       // packets of groups using this policy
    Counter decisions;     // policy choices made (new flows, flowlets, sprayed packets)
    Counter path_changes;  // a flow's new flowlet took a different member than the last one
    Counter fallbacks;     // flowlet table full, or the policy returned a dead slot: hashed
    Counter aged;          // flowlet entries reclaimed after flowlet_age_us idle (evictions)
};

// One worker's load-balancing counters. Single writer (the worker), any reader.
struct LbWorkerCounters {
    std::unique_ptr<LbMemberCounters[]> members{
        new LbMemberCounters[kMaxEcmpGroups * kMaxGroupMembers]()};  // [group][slot]
    std::array<LbPolicyCounters, kMaxLbPolicies> policies{};
    Counter no_member;          // group with no alive member: dropped (no_neighbour)
    Counter flowlet_occupancy;  // gauge: valid flowlet entries
    Counter events_dropped;     // path-change events lost to a full ring
    // Flowlets that went on on their member when their flow's route moved to another group
    // (a learned route's path set changed): not decisions.
    Counter flowlets_carried;

    LbMemberCounters &member(uint32_t group, uint32_t slot) {
        return members[group * kMaxGroupMembers + slot];
    }
    const LbMemberCounters &member(uint32_t group, uint32_t slot) const {
        return members[group * kMaxGroupMembers + slot];
    }
};

// A path change, for researchers: which flow moved from which member to which, and when.
struct PathEvent {
    uint64_t time_ns;
    uint64_t flow_hash;
    uint32_t src_ip4, dst_ip4;  // 0 for IPv6 flows (flow_hash identifies them)
    uint16_t src_port, dst_port;
    uint16_t group;
    uint8_t old_slot, new_slot;
};

// The worker's path-change ring, drained by `rocectl lb events` (the control thread).
using PathEventRing = EventRing<PathEvent, 4096>;

class LoadBalancer {
  public:
    // Builds this worker's policy instances and a flowlet table of settings().flowlet_entries.
    LoadBalancer(uint16_t worker, const EcmpGroups &groups);

    // Resolves n <= kLbMaxBurst packets routed to ECMP groups: out[i] is the member packet i
    // leaves by, or null when its group has no alive member (counted in no_member). The same
    // as add() for each run of equal group ids, then resolve_burst().
    void resolve(rte_mbuf *const *pkts, const uint32_t *group_ids, uint16_t n, uint64_t now_ns,
                 const LbMember **out);

    // The burst interface (the worker's route stage): add() appends n packets routed to group
    // `group_id` to the burst (at most kLbMaxBurst in all) and does pass 1 for them at once
    // (flow hashes, flowlet prefetches; flow-granularity members); resolve_burst() decides the
    // rest. burst_packets()[k] then leaves by burst_members()[k] (null: no alive member,
    // counted in no_member; burst_all_members(): none is null), until clear_burst().
    // `family` L3Type::ipv4: every packet is IPv4 (the route stage's IPv4 list), so that the
    // flow hash does not test each packet's (the same values); anything else: any family.
    void add(rte_mbuf *const *pkts, uint32_t n, uint32_t group_id,
             L3Type family = L3Type::none);
    void resolve_burst(uint64_t now_ns);
    uint16_t burst_size() const { return n_; }
    rte_mbuf *const *burst_packets() const { return pkts_.data(); }
    const LbMember *const *burst_members() const { return out_.data(); }
    bool burst_all_members() const { return !burst_no_member_; }
    // The ports of the resolved burst's members (bit p: port p), from its member tallies:
    // one bit when every packet with a member leaves by one port.
    uint32_t burst_ports() const { return out_ports_; }
    void clear_burst() {
        n_ = 0;
        burst_no_member_ = false;
    }

    const LbWorkerCounters &counters() const { return ctr_; }
    PathEventRing &events() { return events_; }
    // The worker's event-trace ring: every path change is also pushed there (null: not).
    void set_trace(TraceRing *ring) { trace_ = ring; }
    uint32_t flowlet_capacity() const { return flowlets_.capacity(); }
    const FlowletTable &flowlets() const { return flowlets_; }  // tests compare tables

  private:
    void update_util(uint64_t now_ns);
    uint32_t tag_at(size_t k) const;  // flowlet_tag(hash_[k])
    // Pass 1 of add (flow hash parameters fixed at compile time; kIpv4: add()'s family).
    template <FlowHashFn kFn, bool kSymmetric, bool kDestQp, bool kIpv4>
    void hash_run(rte_mbuf *const *src, uint32_t n, uint32_t group_id, uint64_t seed);
    // Pass 2's state: the burst's, and the current run's (one group's consecutive packets).
    struct Pass2 {
        uint32_t pol_mask;  // policies with requests
        uint16_t nj;        // joins_'s length
        uint32_t now_us;
        uint64_t aged;  // flowlet entries reclaimed
        const EcmpGroup *g;  // the run's group, its policy, granularity and alive slots
        uint8_t pol;
        bool flowlet;
        uint64_t alive_slots;  // bit s: slot s is below n_slots and alive
        uint64_t now_ns;
        const LbSettings *s;  // the burst's settings (flowlet gap and age, chooser, tracing)
        size_t end;           // the run's end, and the flowlet gap (for the hit loop)
        uint32_t gap_us;
    };
    [[gnu::noinline]] uint32_t pass2_rest(rte_mbuf *const *pkts, uint32_t i, uint32_t end,
                                          Pass2 &st, const LbMember **out);
    // Pass 2 from packet i of a flowlet run that is not a hit: pass2_letflow for a run of the
    // built-in flowlet policy with the LetFlow chooser, else pass2_rest. Only the test, each
    // call a tail call: no frame of its own, and pass2_rest's saved registers are not paid for
    // LetFlow runs.
    [[gnu::noinline]] uint32_t pass2_miss(rte_mbuf *const *pkts, uint32_t i, uint32_t end,
                                          Pass2 &st, const LbMember **out);
    // pass2_rest for a run of the built-in flowlet policy with the LetFlow chooser (pass2_miss
    // calls it): the choice made in the loop, no request (the generic choose() is not called).
    // kCheckDead: the group's buckets may name a dead slot (not EcmpGroup::buckets_alive);
    // kRecord: path changes are traced or recorded (trace_ or LbSettings::trace_path_changes).
    template <bool kCheckDead, bool kRecord>
    // Its packets and outputs are pkts_ and out_ (resolve_burst's).
    [[gnu::noinline]] uint32_t pass2_letflow(uint32_t i, uint32_t end, Pass2 &st);
    // A path change's trace event and PathEvent (counted by the caller).
    [[gnu::noinline]] void record_path_change(uint64_t now_ns, const EcmpGroup &g, uint8_t old_slot,
                                              uint8_t new_slot, uint64_t flow_hash, rte_mbuf *m,
                                              bool event);
    // Packet i leaves by member `slot` of `g`, tallied (with `flowlet`, 0 or 1, flowlets
    // started): emit() when g may not be tally_g_, emit_tallied() in a loop over a run of g
    // after fold_tally(g).
    void emit(uint32_t i, const EcmpGroup &g, uint8_t slot, uint32_t len, const LbMember **out,
              uint64_t flowlet);
    void emit_tallied(uint32_t i, const EcmpGroup &g, uint8_t slot, uint32_t len,
                      const LbMember **out, uint64_t flowlet);
    // One packet of `len` bytes on `slot` of the tallied group (`flowlet`: 0 or 1).
    void tally(uint8_t slot, uint32_t len, uint64_t flowlet);
    // Adds the tally to the member counters and its bytes to `port_bytes` by member port,
    // then tallies for `next`; returns the ports it added bytes to.
    uint32_t fold_tally_into(const EcmpGroup *next, uint64_t *port_bytes);
    // fold_tally_into burst_bytes_ and burst_ports_ (a later policy call of the burst reads
    // util_bytes_ as it was before the burst).
    [[gnu::noinline]] void fold_tally(const EcmpGroup *next);
    // The policy calls for the requests of the policies in `pol_mask`, and their packets' output.
    void decide(rte_mbuf *const *pkts, uint32_t pol_mask, uint64_t now_ns, const LbSettings &s,
                const LbMember **out);

    const EcmpGroups &groups_;
    std::vector<std::unique_ptr<LbPolicy>> policies_;
    std::vector<LbGranularity> granularity_;
    FlowletPolicy *letflow_ = nullptr;  // the built-in flowlet policy (id flowlet)
    FlowletTable flowlets_;
    LbWorkerCounters ctr_;
    PathEventRing events_;
    TraceRing *trace_ = nullptr;

    // The burst: its packets (add()'s, in order) and their members, its settings (read at its
    // first add()), whether a packet has no member, runs_'s length.
    std::array<rte_mbuf *, kLbMaxBurst> pkts_{};
    std::array<const LbMember *, kLbMaxBurst> out_{};
    uint16_t n_ = 0;
    uint16_t nr_ = 0;
    bool burst_no_member_ = false;
    const LbSettings *burst_s_ = nullptr;

    // Per burst scratch.
    std::array<std::array<PathRequest, kLbMaxBurst>, kMaxLbPolicies> reqs_{};
    std::array<std::array<FlowletEntry *, kLbMaxBurst>, kMaxLbPolicies> req_entry_{};
    std::array<std::array<uint16_t, kLbMaxBurst>, kMaxLbPolicies> req_pkt_{};
    std::array<uint16_t, kMaxLbPolicies> n_reqs_{};  // valid for the policies with requests
    // A run of consecutive packets of one flowlet- or packet-granularity group: pass 1 hashes
    // it, pass 2 takes its packets to the flowlet table or the policy.
    struct Run {
        const EcmpGroup *g;
        uint16_t begin, end;  // packets [begin, end)
        uint8_t pol;
        bool flowlet;
    };
    std::array<Run, kLbMaxBurst> runs_{};
    std::array<uint64_t, kLbMaxBurst> hash_{};  // flow hash of the packets in runs_
    std::array<FlowletBucket *, kLbMaxBurst> bucket_{};  // their flowlet bucket (flowlet runs)
    // A packet of a flowlet an earlier packet of the burst asked for: it takes that request's
    // choice (no decision of its own).
    struct Join {
        uint16_t pkt;
        uint16_t req;  // policy << 8 | request index
    };
    std::array<Join, kLbMaxBurst> joins_{};
    std::array<uint64_t, kMaxPorts> burst_bytes_{};  // this burst's bytes per port, until folded
    uint32_t burst_ports_ = 0;                       // ports with burst_bytes_
    uint32_t out_ports_ = 0;                         // burst_ports(): the last burst's ports
    // emit(): flowlets, packets and bytes per member slot of group tally_g_ not yet in the
    // counters, as flowlets << kTallyFlowletShift | packets << kTallyPacketShift | bytes (one
    // add per packet; a burst has at most 256 packets of at most 64 KiB: 256 < 2^16, 2^24 < 2^32).
    static constexpr uint32_t kTallyPacketShift = 32, kTallyFlowletShift = 48;
    const EcmpGroup *tally_g_ = nullptr;
    std::array<uint64_t, kMaxGroupMembers> tally_{};
    // The members' addresses of pass 2's current flowlet run's group by slot (set with the
    // run's alive slots): null for a dead slot and any slot at or above its n_slots (an entry's
    // slot is a byte: kFlowletPending included), so that the hit loop's load of the member is
    // its alive test. Slots [0, run_members_set_) may be non-null.
    std::array<const LbMember *, 256> run_member_{};
    uint32_t run_members_set_ = 0;

    // Utilization: bytes this worker sent per port, folded into an EWMA every >= 10 us.
    std::array<double, kMaxPorts> util_{};  // bytes per microsecond
    std::array<uint64_t, kMaxPorts> util_bytes_{};
    uint32_t util_ports_ = 0;  // ports whose util_ or util_bytes_ may be non-zero
    uint64_t util_last_ns_ = 0;
};

}  // namespace rocesw
