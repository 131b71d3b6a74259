// A worker runs the whole pipeline over the RX queues it owns:
//
//   rx burst -> parse+validate (PacketMeta) -> classify (TC) -> L2 checks -> local (ARP/ND/echo)
//     -> LPM (IPv4, IPv6, bulk) -> next hop -> TTL/MTU -> rewrite -> egress enqueue -> flush
//
// Time is an argument (poll_once(now_ns)); nothing here reads a clock. Counters go to this
// worker's WorkerCounters block only. The FIB pointer is read once per burst: the caller
// (the lcore loop) reports a QSBR quiescent state between polls, which is what lets the
// control thread replace FIB copies.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "common/counters.h"
#include "common/log.h"
#include "common/punt_class.h"
#include "common/trace_event.h"
#include "config/config.h"
#include "egress/egress.h"
#include "lb/balancer.h"
#include "pkt/parser.h"
#include "port/port_io.h"
#include "qos/plan.h"
#include "route/fib.h"

struct rte_mbuf;

namespace rocesw {

class Punt;
class PfcEngine;

inline constexpr uint16_t kMaxBurst = 256;

struct PortRuntime {
    MacAddr mac;
    uint32_t mtu = 1500;        // L3 MTU, bytes
    ParseOptions parse;         // max_l3_len = mtu
    std::vector<IfAddr> addrs;  // the switch's own addresses on this port
};

// What every worker reads and nobody changes while workers run (the FIB aside).
struct DataplaneContext {
    std::vector<PortRuntime> ports;
    std::vector<IfAddr> all_addrs;  // every port's addresses: any of them answers echo
    const Fib *fib = nullptr;
    const QosPlan *qos = nullptr;  // classification maps; null: every packet stays in TC 0
    // PFC/PAUSE frames received go here (PfcEngine::receive_mac_control); null: every
    // MAC-control frame is dropped as pause_ignored.
    PfcEngine *pfc = nullptr;
    // Host interfaces (doc/control-plane.md): packets for the control plane are policed and
    // queued here for the kernel. Null: the embedded default (ARP/ND/echo answered locally,
    // TTL-expired and unresolved packets dropped).
    Punt *punt = nullptr;
};

class Worker {
  public:
    Worker(uint16_t id, const DataplaneContext &ctx, PortIo &io, Egress &egress,
           WorkerCounters &counters, std::vector<RxAssignment> rx, uint16_t burst);
    Worker(const Worker &) = delete;  // out_end_ points into out_
    Worker &operator=(const Worker &) = delete;

    // One pass over every owned RX queue, then an egress flush. Returns packets received. The
    // bursts' outputs reach the egress after the last burst, in order, each port's last
    // enqueue after Egress::final_enqueue() (cut-through).
    uint32_t poll_once(uint64_t now_ns);

    // The pipeline over one received burst (exposed for tests and the simulator).
    void process_burst(uint16_t in_port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns);

    uint16_t id() const { return id_; }
    const std::vector<RxAssignment> &rx_queues() const { return rx_; }
    Egress &egress() { return egress_; }
    // This worker's event ring for the trace (PFC frames received, LB path changes); null: none.
    void set_trace(TraceRing *ring) {
        trace_ = ring;
        lb_.set_trace(ring);  // path changes
    }
    // The load-balancing stage (ECMP groups): its counters and path-change events.
    LoadBalancer &balancer() { return lb_; }
    const LoadBalancer &balancer() const { return lb_; }

  private:
    // Drops, punts and local delivery are off the fast path: kept out of line so that
    // forward_to() inlines into the burst loop.
    [[gnu::cold, gnu::noinline]] void drop(rte_mbuf *m, uint16_t port, DropReason r);
    // The output port of a run of forwarded packets, with what their rewrite needs from it, held
    // in locals for the run (one port per burst is the common case): out_end_[port] is `end`
    // until close_run().
    struct OutRun {
        // A byte, as NextHop's and LbMember's ports: compared with them in memory, no widening.
        static constexpr uint8_t kNone = 0xFF;
        static_assert(kMaxPorts <= kNone);
        uint8_t port = kNone;
        uint32_t mtu = 0;
        // Bytes 6..13 of a frame forwarded to the port: its MAC (the new source), then the
        // packet's EtherType (IPv4, IPv6), the frame being untagged once forwarded.
        uint64_t src_v4 = 0, src_v6 = 0;
        rte_mbuf **end = nullptr;
        // forward_to's TTL, VLAN and MTU tests cannot fire for this burst's packets to the port:
        // no packet of the burst is tagged or has a TTL (hop limit) below 2, and the port's MTU
        // is at least the ingress port's parse bound (max_l3_len, which every parsed packet's
        // l3_len is within). Set by open_run.
        bool plain = false;
    };
    // `run` now goes to `port` (the previous port's end written back).
    [[gnu::always_inline]] inline void open_run(OutRun &run, uint8_t port);
    // out_end_ up to date: before anything else appends to out_ (local replies).
    void close_run(OutRun &run) {
        if (run.port != OutRun::kNone) out_end_[run.port] = run.end;
        run.port = OutRun::kNone;
    }
    // A packet to run's port, to the next hop whose MAC is the first 6 bytes of `dst` (in memory
    // order): TTL, MTU, rewrite, out_. kL3: the packet's family, L3Type::ipv4 or ipv6 (every
    // caller knows it: no per-packet test). kPlain: run.plain holds (no TTL, VLAN or MTU test).
    template <L3Type kL3, bool kPlain>
    [[gnu::always_inline]] inline void forward_to(rte_mbuf *m, uint16_t in_port, OutRun &run,
                                                  uint64_t dst);
    // One address family's routed packets (`nh_of(i)`: packet i's next-hop id; nh_of(n) must
    // differ from every id, the last run's end mark): each run of packets to one next hop
    // forwarded with its rewrite in registers, the others dispatched.
    template <L3Type kL3, class NhOf>
    [[gnu::always_inline]] inline void route(rte_mbuf *const *pkts, size_t n, NhOf nh_of,
                                             uint16_t in_port, const NextHop *nexthops);
    // A next hop of another kind than forward or ecmp_group: local, no route, unresolved.
    [[gnu::cold, gnu::noinline]] void route_other(rte_mbuf *m, uint16_t in_port, const NextHop &nh);
    // forward_to's TTL expired or MTU exceeded (TTL first): punted or dropped.
    [[gnu::cold, gnu::noinline]] void ttl_or_mtu(rte_mbuf *m, uint16_t in_port);
    // A tagged packet to forward: the tag trimmed off (forward_to then writes the whole Ethernet
    // header); returns the frame's new start.
    [[gnu::noinline]] uint8_t *strip_vlan(rte_mbuf *m, PacketMeta *meta);
    // The packets given to the balancer (route: a run of one ECMP next hop at a time, to
    // LoadBalancer::add): their members, then forward_members per address family.
    void forward_groups(uint16_t in_port, uint64_t now_ns);
    // pkts[i, n), all of address family kL3, to their members members[i, n): the route stage's
    // rewrite, with the run's port in registers while the members' ports stay the same. Per
    // packet, not in runs of one member: members chosen per flow make runs of one or two
    // packets, and a compare of members would be a branch on the flow.
    // kMaybeNull: a member may be null (no member alive: punted or dropped as no_neighbour).
    template <L3Type kL3, bool kMaybeNull>
    [[gnu::always_inline]] inline void forward_members(rte_mbuf *const *pkts,
                                                       const LbMember *const *members,
                                                       uint32_t i, uint32_t n, uint16_t in_port);
    // forward_members when every member is on `port` (the balancer's burst_ports() has that
    // one bit, and none is null): the run opened once, no compare of each member's port.
    template <L3Type kL3>
    [[gnu::always_inline]] inline void forward_members_to(rte_mbuf *const *pkts,
                                                          const LbMember *const *members,
                                                          uint32_t i, uint32_t n,
                                                          uint16_t in_port, uint8_t port);
    // forward_members' loop for runs whose plain is kPlain: returns n, or the first packet
    // whose new run is not (that run open). kOnePort: every member is on run's port (no
    // compare; forward_members_to).
    template <L3Type kL3, bool kPlain, bool kMaybeNull, bool kOnePort = false>
    [[gnu::always_inline]] inline uint32_t forward_members_as(rte_mbuf *const *pkts,
                                                              const LbMember *const *members,
                                                              uint32_t i, uint32_t n,
                                                              uint16_t in_port, OutRun &run);
    void local(rte_mbuf *m, uint16_t in_port);
    // To the host interface of `in_port` (ctx_.punt must be set): policed, queued or dropped.
    [[gnu::noinline]] void punt(rte_mbuf *m, uint16_t in_port, PuntClass c);
    // A packet for the switch itself: punted when there are host interfaces, else local().
    void to_control(rte_mbuf *m, uint16_t in_port);
    void mac_control(rte_mbuf *m, uint16_t in_port, const uint8_t *f, uint64_t now_ns);
    // The burst's outputs counted, then enqueued, or held (defer_: held_ports_); a port held
    // with summary_n_ packets got the whole burst: its packets get the BurstSummary
    // (summary_port_).
    [[gnu::noinline]] void flush_outputs(uint16_t in_port, uint64_t now_ns);
    [[gnu::noinline]] void flush_outputs_now(uint16_t in_port, uint64_t now_ns);  // not defer_
    [[gnu::always_inline]] inline void outputs_done(uint16_t in_port, uint32_t forwarded);
    // process_burst, for a burst of n packets (`bytes` in all) from in_port that all took the
    // port's fast path, none dropped, punted or answered locally, before flush_outputs holds
    // them (defer_): the burst's summary_ (its TC when the port's fast-path TC table has one,
    // else BurstSummary::kSeveralTcs) and summary_n_ = n (flush_outputs then finds the port
    // that got all n, if one did).
    [[gnu::noinline]] void hold_summary(uint16_t in_port, uint16_t n, uint64_t bytes);
    // hold_summary when in_port's TC is not known yet for this plan (its only call, so that
    // hold_summary itself saves no register).
    [[gnu::noinline]] void hold_summary_first(uint16_t in_port, uint16_t n, uint64_t bytes);
    // The TC every DSCP of in_port's fast-path table maps to (summary_tcs_, worked out once
    // per port and plan), or -1.
    int summary_tc(uint16_t in_port);
    // summary_ and summary_n_ for a burst of n from in_port whose TC is tc (summary_tc's).
    void set_summary(uint16_t in_port, uint16_t n, uint64_t bytes, int tc);
    void keep_held();                        // poll_once: out_ to out_all_, before a burst
    // poll_once, after the poll's bursts: out_all_'s segments (enqueue_segments, when there
    // are any), then out_ (enqueue_held, when a port holds some).
    [[gnu::noinline]] void enqueue_segments(uint64_t now_ns);
    [[gnu::always_inline]] inline void enqueue_held(uint64_t now_ns);

    uint16_t id_;
    const DataplaneContext &ctx_;
    PortIo &io_;
    Egress &egress_;
    WorkerCounters &ctr_;
    std::vector<RxAssignment> rx_;
    uint16_t burst_;

    // Scratch for one burst, owned by this worker.
    std::array<rte_mbuf *, kMaxBurst> dropped_{};
    uint16_t n_dropped_ = 0;
    uint64_t now_ns_ = 0;
    RateLimitedLog drop_log_{1'000'000'000ull, 10};  // at debug level, 10 drops a second
    std::array<std::array<rte_mbuf *, kMaxBurst>, kMaxPorts> out_{};
    // out_[p]'s end: the next packet for port p goes to *out_end_[p]++ (one load and one store
    // per packet, no index arithmetic).
    std::array<rte_mbuf **, kMaxPorts> out_end_{};
    uint16_t n_out(uint16_t p) const { return uint16_t(out_end_[p] - out_[p].data()); }
    uint16_t n_replies_ = 0;  // local replies among out_[in port] in this burst
    // The smallest output MTU for which this burst's forwards skip the TTL, VLAN and MTU tests
    // (OutRun::plain): the ingress port's max_l3_len, or above any MTU (UINT64_MAX) when a packet
    // of the burst is tagged or has a TTL (hop limit) below 2.
    uint64_t plain_mtu_ = UINT64_MAX;

    // poll_once: the outputs of the poll's bursts before the last, in order, as segments (one
    // burst's packets for one port) of out_all_. The last burst's stay in out_ (held_ports_,
    // bit p: out_[p] holds some): flush_outputs leaves them there while defer_.
    struct Segment {
        uint16_t port;
        uint16_t n;
    };
    bool defer_ = false;
    static_assert(kMaxPorts <= 32);
    uint32_t held_ports_ = 0;
    // The held burst's summary: out_[summary_port_] is all of that burst, as summary_ says
    // (enqueue_held gives it to Egress::enqueue_last); kNoSummary: none.
    static constexpr uint16_t kNoSummary = 0xFFFF;
    uint16_t summary_port_ = kNoSummary;
    BurstSummary summary_;
    uint16_t summary_n_ = 0;  // hold_summary's n for flush_outputs (0: none)
    // process_burst: a packet of the burst took the general parser (flush_outputs clears it).
    bool general_seen_ = false;
    // Per ingress port: the TC every DSCP of its fast-path table (untagged_ip_tc_table, plan
    // summary_plan_) maps to (uniform_tc), -1 when they differ (the summary's kSeveralTcs),
    // kTcUnknown not looked at yet.
    static constexpr int8_t kTcUnknown = -2;
    const QosPlan *summary_plan_ = nullptr;
    std::array<int8_t, kMaxPorts> summary_tcs_ = [] {
        std::array<int8_t, kMaxPorts> a;
        a.fill(kTcUnknown);
        return a;
    }();
    std::vector<rte_mbuf *> out_all_;
    uint32_t n_out_all_ = 0;
    std::vector<Segment> segs_;
    std::vector<uint8_t> last_;  // enqueue_segments: segment i is its port's last

    // Packets routed to ECMP groups in this burst (its burst_packets()), resolved together by
    // the balancer.
    LoadBalancer lb_;
    // The balancer's packets [0, n_lb4_) are IPv4, the rest IPv6: route<ipv4> runs before
    // route<ipv6> and sets it at its end (it stays 0 in a burst without routed IPv4).
    uint16_t n_lb4_ = 0;
    TraceRing *trace_ = nullptr;
};

}  // namespace rocesw
