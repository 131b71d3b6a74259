#include "pipeline/worker.h"

#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "pipeline/local.h"
#include "pipeline/punt.h"
#include "pkt/addr.h"
#include "pkt/bytes.h"
#include "pkt/checksum.h"
#include "pkt/mbuf_meta.h"
#include "qos/classifier.h"
#include "qos/pfc_engine.h"

namespace rocesw {

namespace {
// How many packets ahead of the one being parsed process_burst prefetches the headers of.
constexpr uint16_t kPrefetchAhead = 4;

// A MAC address as the first 6 bytes of an 8-byte word, made once per burst: the comparison
// with a (parsed, so at least 14-byte) frame's destination is one 8-byte load and a masked
// compare, and no reload of the port's address after the parser's byte stores (which may alias
// anything).
struct MacWord {
    static_assert(std::endian::native == std::endian::little);
    uint64_t w;
    explicit MacWord(const MacAddr &a) {
        std::array<uint8_t, 8> b{};
        std::copy(a.b.begin(), a.b.end(), b.begin());
        w = std::bit_cast<uint64_t>(b);
    }
    bool equals(const uint8_t *a) const {
        uint64_t x;
        std::memcpy(&x, a, 8);
        return ((x ^ w) << 16) == 0;  // bytes 6 and 7 shifted out (little-endian)
    }
};

// An Ethernet header's bytes 0..7 for the MAC address `dst_mac` of `hop` (a NextHop, an
// LbMember): the address, then 2 bytes of `hop` that the source address's store overwrites.
// One 8-byte load instead of a 4-byte and a 2-byte one.
template <class Hop>
uint64_t dst_word(const Hop &hop) {
    static_assert(std::is_standard_layout_v<Hop> && offsetof(Hop, dst_mac) + 8 <= sizeof(Hop));
    uint64_t w;
    std::memcpy(&w, reinterpret_cast<const uint8_t *>(&hop) + offsetof(Hop, dst_mac), 8);
    return w;
}

// An Ethernet header's bytes 6..13: the source address `mac`, then the EtherType.
uint64_t src_word(const MacAddr &mac, uint16_t ethertype) {
    uint32_t a4;
    uint16_t a2;
    std::memcpy(&a4, mac.b.data(), 4);
    std::memcpy(&a2, mac.b.data() + 4, 2);
    const uint16_t type = std::bit_cast<uint16_t>(std::array<uint8_t, 2>{
        uint8_t(ethertype >> 8), uint8_t(ethertype)});  // in memory order
    return std::bit_cast<uint64_t>(std::array<uint32_t, 2>{a4, uint32_t(a2) | uint32_t(type) << 16});
}

// The receive loop's test of the common mbuf: one segment, and an IPv4 checksum verdict
// without the BAD bit (BAD drops; NONE, BAD | GOOD, is checked in software: both rare). One
// masked test of the 8 bytes from nb_segs (nb_segs, port, the low half of ol_flags): nb_segs
// above 1 has a bit of 0xFFFE, 0 and 1 none.
bool one_segment_not_bad(const rte_mbuf *m) {
    static_assert(std::endian::native == std::endian::little);
    static_assert(offsetof(rte_mbuf, nb_segs) == 20 && sizeof(rte_mbuf::nb_segs) == 2 &&
                  offsetof(rte_mbuf, ol_flags) == 24 && RTE_MBUF_F_RX_IP_CKSUM_BAD < (1ull << 32));
    uint64_t w;
    std::memcpy(&w, reinterpret_cast<const uint8_t *>(m) + offsetof(rte_mbuf, nb_segs), 8);
    return (w & (0xFFFEull | RTE_MBUF_F_RX_IP_CKSUM_BAD << 32)) == 0;
}

// Where a forwarded frame's IP header is: the tag, if any, is stripped before the rewrite.
constexpr uint32_t kUntaggedL3 = 14;
}  // namespace

Worker::Worker(uint16_t id, const DataplaneContext &ctx, PortIo &io, Egress &egress,
               WorkerCounters &counters, std::vector<RxAssignment> rx, uint16_t burst)
    : id_(id),
      ctx_(ctx),
      io_(io),
      egress_(egress),
      ctr_(counters),
      rx_(std::move(rx)),
      burst_(burst > kMaxBurst ? kMaxBurst : burst),
      lb_(id, ctx.fib->groups()) {
    // Every packet of a poll's bursts at most once; a burst's packets go to at most one segment
    // per port.
    out_all_.resize(size_t(rx_.size()) * burst_);
    segs_.reserve(size_t(rx_.size()) * std::min<size_t>(burst_, kMaxPorts));
    last_.reserve(segs_.capacity());
    for (size_t p = 0; p < kMaxPorts; p++) out_end_[p] = out_[p].data();
}

uint32_t Worker::poll_once(uint64_t now_ns) {
    // Every RX burst of the poll goes through the pipeline first; its outputs reach the egress
    // after the last burst, in the same order, each port's last enqueue after
    // Egress::final_enqueue(): only other ports' enqueues and the flush follow it (cut-through).
    // The last burst's outputs stay in out_ (held_ports_); a later burst first moves them to
    // out_all_.
    rte_mbuf *pkts[kMaxBurst];
    uint32_t total = 0;
    defer_ = true;
    for (const auto &q : rx_) {
        uint16_t n = io_.rx_burst(q.port, q.queue, pkts, burst_);
        if (!n) continue;
        if (held_ports_) keep_held();
        process_burst(q.port, pkts, n, now_ns);
        total += n;
    }
    defer_ = false;
    if (!segs_.empty()) enqueue_segments(now_ns);
    if (held_ports_) enqueue_held(now_ns);
    egress_.flush(now_ns);
    ctr_.polls.inc();
    if (total) ctr_.busy_polls.inc();
    return total;
}

void Worker::keep_held() {
    for (uint32_t held = held_ports_; held; held &= held - 1) {
        const uint16_t p = uint16_t(std::countr_zero(held));
        const uint16_t n = n_out(p);
        std::copy_n(out_[p].data(), n, out_all_.data() + n_out_all_);
        n_out_all_ += n;
        segs_.push_back({p, n});
        out_end_[p] = out_[p].data();
    }
    held_ports_ = 0;
    summary_port_ = kNoSummary;
}

void Worker::enqueue_segments(uint64_t now_ns) {
    // A port's last output is the held burst's, if it has one, else its last segment's.
    const size_t n = segs_.size();
    uint32_t later = held_ports_;  // ports the held burst sends to
    last_.resize(n);
    for (size_t i = n; i-- > 0;) {
        const uint32_t bit = uint32_t(1) << segs_[i].port;
        last_[i] = !(later & bit);
        later |= bit;
    }
    uint32_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (last_[i]) egress_.final_enqueue();
        egress_.enqueue(segs_[i].port, out_all_.data() + at, segs_[i].n, now_ns);
        at += segs_[i].n;
    }
    segs_.clear();
    n_out_all_ = 0;
}

// Each held port's one enqueue is its last (Egress::enqueue_last: final_enqueue() and the
// enqueue in one call), in port order.
[[gnu::always_inline]] inline void Worker::enqueue_held(uint64_t now_ns) {
    const uint16_t sum_port = summary_port_;
    for (uint32_t held = held_ports_; held; held &= held - 1) {
        const uint16_t p = uint16_t(std::countr_zero(held));
        rte_mbuf **const pkts = out_[p].data();
        const uint16_t n = uint16_t(out_end_[p] - pkts);
        out_end_[p] = pkts;
        egress_.enqueue_last(p, pkts, n, now_ns, p == sum_port ? &summary_ : nullptr);
    }
    held_ports_ = 0;
    summary_port_ = kNoSummary;
}

void Worker::drop(rte_mbuf *m, uint16_t port, DropReason r) {
    ctr_.ports[port].drops[size_t(r)].inc();
    if (spdlog::should_log(spdlog::level::debug) && drop_log_.allow(now_ns_)) {
        const PacketMeta *meta = meta_of(m);
        spdlog::debug("worker {} port {}: drop {} (len {}, l3 {}, proto {}, ttl {}{})", id_, port,
                      drop_reason_name(r), m->pkt_len, int(meta->l3), meta->ip_proto, meta->ttl,
                      drop_log_.suppressed() ? ", some drops not logged" : "");
    }
    dropped_[n_dropped_++] = m;
}

void Worker::local(rte_mbuf *m, uint16_t in_port) {
    const PortRuntime &p = ctx_.ports[in_port];
    PacketMeta *meta = meta_of(m);
    uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
    uint32_t len = rte_pktmbuf_data_len(m);
    uint32_t cap = len + rte_pktmbuf_tailroom(m);
    uint32_t reply = meta->l3 == L3Type::arp ? local_arp(f, len, *meta, p.mac, p.addrs)
                                             : local_ip(f, len, cap, *meta, p.mac, ctx_.all_addrs);
    if (reply == 0) {
        if (meta->l3 == L3Type::arp) {
            // ARP not asking for us (replies, gratuitous ARP): consumed, not an error.
            ctr_.ports[in_port].local_packets.inc();
            dropped_[n_dropped_++] = m;
        } else {
            drop(m, in_port, DropReason::local_unhandled);
        }
        return;
    }
    if (reply > len)
        rte_pktmbuf_append(m, uint16_t(reply - len));
    else if (reply < len)
        rte_pktmbuf_trim(m, uint16_t(len - reply));
    ctr_.ports[in_port].local_packets.inc();
    ctr_.ports[in_port].local_replies.inc();
    n_replies_++;  // in out_[in_port] with the forwarded packets: flush_outputs tells them apart
    if (ctx_.qos) classify_switch_originated(*meta, *ctx_.qos);  // network-control class
    meta->out_port = uint8_t(in_port);
    *out_end_[in_port]++ = m;
}

void Worker::punt(rte_mbuf *m, uint16_t in_port, PuntClass c) {
    DropReason why;
    if (!ctx_.punt->offer(id_, c, m, now_ns_, &why)) return drop(m, in_port, why);
    ctr_.ports[in_port].punted.inc();
}

void Worker::to_control(rte_mbuf *m, uint16_t in_port) {
    if (!ctx_.punt) return local(m, in_port);
    const PacketMeta *meta = meta_of(m);
    if (meta->l3 == L3Type::arp) return punt(m, in_port, PuntClass::arp);
    punt(m, in_port,
         punt_class_local(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), *meta));
}

void Worker::mac_control(rte_mbuf *m, uint16_t in_port, const uint8_t *f, uint64_t now_ns) {
    if (!ctx_.pfc) return drop(m, in_port, DropReason::pause_ignored);
    switch (ctx_.pfc->receive_mac_control(in_port, f, rte_pktmbuf_data_len(m), now_ns, trace_)) {
        case PfcEngine::MacControlResult::consumed:
            ctr_.ports[in_port].local_packets.inc();
            dropped_[n_dropped_++] = m;  // freed with the burst's drops, not counted as one
            return;
        case PfcEngine::MacControlResult::ignored:
            return drop(m, in_port, DropReason::pause_ignored);
        case PfcEngine::MacControlResult::malformed:
            return drop(m, in_port, DropReason::mac_control_malformed);
    }
}

void Worker::route_other(rte_mbuf *m, uint16_t in_port, const NextHop &nh) {
    if (nh.kind == NextHopKind::local) return to_control(m, in_port);
    if (nh.kind == NextHopKind::drop_no_route) return drop(m, in_port, DropReason::no_route);
    if (nh.kind == NextHopKind::discard) return drop(m, in_port, DropReason::route_discard);
    // An unreachable or prohibit route: with host interfaces the kernel, which holds the same
    // route, answers with ICMP (host unreachable, administratively prohibited).
    if (nh.kind == NextHopKind::reject) {
        if (ctx_.punt) return punt(m, in_port, PuntClass::unreachable);
        return drop(m, in_port, DropReason::route_discard);
    }
    // TTL first, as for a resolved next hop: with host interfaces the kernel answers with ICMP
    // time exceeded.
    if (meta_of(m)->ttl <= 1) {
        if (ctx_.punt) return punt(m, in_port, PuntClass::ttl);
        return drop(m, in_port, DropReason::ttl_expired);
    }
    // Unresolved next hop: the kernel forwards the packet and resolves the neighbour on the way;
    // netlink then brings the MAC to the FIB.
    if (ctx_.punt && (nh.kind == NextHopKind::glean || nh.kind == NextHopKind::unresolved))
        return punt(m, in_port, PuntClass::glean);
    drop(m, in_port, DropReason::no_neighbour);
}

void Worker::ttl_or_mtu(rte_mbuf *m, uint16_t in_port) {
    // With host interfaces the kernel, which routes the packet to the egress port's host
    // interface (the port's MTU), answers as a router does: an expired TTL first (ICMP time
    // exceeded), then a packet above the MTU: ICMP fragmentation needed (IPv4 with DF) or
    // packet too big (IPv6), so path MTU discovery works through the switch; IPv4 without DF
    // it fragments, and the fragments leave by the egress port's host interface.
    const bool expired = meta_of(m)->ttl <= 1;
    if (ctx_.punt) return punt(m, in_port, expired ? PuntClass::ttl : PuntClass::mtu);
    drop(m, in_port, expired ? DropReason::ttl_expired : DropReason::mtu_exceeded);
}

uint8_t *Worker::strip_vlan(rte_mbuf *m, PacketMeta *meta) {
    // Routed ports are untagged: the tag's 4 bytes are trimmed off the front. The MAC addresses
    // are not moved over it: forward_to, the only caller, writes all 14 bytes of the new
    // Ethernet header (both MACs and the EtherType) right after. (The move was a 12-byte
    // memmove call: ~3 cycles a tagged packet, BM_WorkerPollPassTagged.)
    uint8_t *f = reinterpret_cast<uint8_t *>(rte_pktmbuf_adj(m, 4));
    meta->l3_offset -= 4;
    if (meta->flags & kFlagL4) meta->l4_offset -= 4;
    meta->flags &= uint16_t(~kFlagVlan);
    return f;
}

inline void Worker::open_run(OutRun &run, uint8_t port) {
    close_run(run);
    const PortRuntime &out = ctx_.ports[port];
    run.port = port;
    run.mtu = out.mtu;
    run.src_v4 = src_word(out.mac, kEtherTypeIpv4);
    run.src_v6 = src_word(out.mac, kEtherTypeIpv6);
    run.end = out_end_[port];
    run.plain = out.mtu >= plain_mtu_;
}

template <L3Type kL3, bool kPlain>
inline void Worker::forward_to(rte_mbuf *m, uint16_t in_port, OutRun &run, uint64_t dst) {
    PacketMeta *meta = meta_of(m);
    // A plain run's packets have a TTL above 1 (plain_mtu_).
    if (!kPlain && (meta->ttl <= 1 || meta->l3_len > run.mtu)) [[unlikely]]
        return ttl_or_mtu(m, in_port);
    uint8_t *f = !kPlain && meta->flags & kFlagVlan ? strip_vlan(m, meta)
                                                    : rte_pktmbuf_mtod(m, uint8_t *);
    uint8_t *ip = f + kUntaggedL3;
    static_assert(kL3 == L3Type::ipv4 || kL3 == L3Type::ipv6);
    constexpr bool v4 = kL3 == L3Type::ipv4;
    meta->out_port = run.port;
    // The MACs in two 8-byte stores, in this order: the second overwrites the first's 2 extra
    // bytes with the source's first 2 (and rewrites the EtherType as it is).
    std::memcpy(f, &dst, 8);
    if constexpr (v4) {
        std::memcpy(f + 6, &run.src_v4, 8);
        ipv4_decrement_ttl(ip);  // the TTL is above 1 here
    } else {
        std::memcpy(f + 6, &run.src_v6, 8);
        ip[7]--;  // hop limit (above 1)
    }
    *run.end++ = m;
}

template <L3Type kL3, class NhOf>
inline void Worker::route(rte_mbuf *const *pkts, size_t n, NhOf nh_of, uint16_t in_port,
                          const NextHop *nexthops) {
    OutRun run;
    // size_t: the index is an address offset as it is (no zero-extension per packet). Each
    // loop below takes the packets of one run, to one next hop, and ends at the next packet
    // whose next hop differs (nh_of(n) is no id): no scan of the run before it.
    for (size_t i = 0; i < n;) {
        const uint32_t id = nh_of(i);
        const NextHop &nh = nexthops[id];
        if (nh.kind == NextHopKind::forward) [[likely]] {
            if (nh.port != run.port) open_run(run, nh.port);
            const uint64_t dst = dst_word(nh);
            if (run.plain)
                do forward_to<kL3, true>(pkts[i], in_port, run, dst);
                while (nh_of(++i) == id);
            else
                do forward_to<kL3, false>(pkts[i], in_port, run, dst);
                while (nh_of(++i) == id);
        } else if (nh.kind == NextHopKind::ecmp_group) {
            // The run to the balancer at once: its pass 1 appends the packets to its burst.
            close_run(run);  // nothing live across the call
            const size_t begin = i;
            while (nh_of(++i) == id) {}
            lb_.add(pkts + begin, uint32_t(i - begin), nh.group, kL3);
        } else {
            close_run(run);  // route_other may deliver locally, to out_[in_port]
            do route_other(pkts[i], in_port, nh);
            while (nh_of(++i) == id);
        }
    }
    close_run(run);
    if constexpr (kL3 == L3Type::ipv4) n_lb4_ = lb_.burst_size();
}

void Worker::process_burst(uint16_t in_port, rte_mbuf **pkts, uint16_t n, uint64_t now_ns) {
    now_ns_ = now_ns;
    const PortRuntime &port = ctx_.ports[in_port];
    PortCounters &pc = ctr_.ports[in_port];
    const FibTables *fib = ctx_.fib->reader();
    const NextHop *nexthops = fib->nexthops;

    // IPv4 and IPv6 packets to route, looked up in bulk.
    rte_mbuf *v4[kMaxBurst], *v6[kMaxBurst];
    uint32_t v4_dst[kMaxBurst];
    // One more next-hop slot each: the list's end mark (kNoNhId) for route()'s run scan.
    uint64_t v4_nh[kMaxBurst + 1];
    uint8_t v6_dst[kMaxBurst][16];
    uint32_t v6_nh[kMaxBurst + 1];
    // Not uint16_t: no 16-bit loads and stores per packet; pointer-sized: an index as it is.
    size_t n4 = 0, n6 = 0;
    uint64_t bytes = 0;
    // The port's options for this burst, in locals (the parser's stores to the record could
    // alias the port's for all the compiler knows): the parser writes in_port and rx_ns_lo with
    // the rest of the record.
    ParseOptions burst_opt = port.parse;
    burst_opt.in_port = uint8_t(in_port);
    burst_opt.rx_ns_lo = uint32_t(now_ns);
    const MacWord port_mac(port.mac);
    // The fast path for this port: frames to its MAC only (so no MAC compare after it), the
    // record's bytes 32..47 in one store (the private area has room: kMbufPrivSize).
    static_assert(kMbufPrivSize >= sizeof(PacketMeta) + 4);
    const PortFastPath fast_path(burst_opt, port.mac.b.data());
    const PortQos *const cls = ctx_.qos ? &ctx_.qos->ports[in_port].cls : nullptr;
    // The fast path's classification (classify_tc_untagged_ip) as one table of the DSCP for the
    // burst: the port's DSCP map with DSCP trust; the default TC in every slot without; TC 0,
    // what the parser stored, without a QoS plan. No per-packet test of cls or its trust, and
    // on the stack: no register for its address either.
    alignas(16) std::array<uint8_t, kNumDscp> fast_tc;
    untagged_ip_tc_table(cls, fast_tc);
    // Every parsed packet's l3_len is within max_l3_len (frame_too_long otherwise); only the
    // general parser takes tagged frames and TTLs (hop limits) of 0 and 1, and puts plain_mtu_
    // above any MTU when it does (a member store on that path, no register for the loop).
    plain_mtu_ = burst_opt.max_l3_len;

    // A parsed packet: classified, L2 checks, then local delivery or a routing list (v4[c4] or
    // v6[c6], the count advanced). `fast`: std::true_type after the port's fast path, whose
    // packets are untagged IPv4 to the port's MAC: that copy leaves out the tests this decides.
    auto accept = [&](rte_mbuf *m, PacketMeta *meta, const uint8_t *f, size_t &c4, size_t &c6,
                      auto fast) __attribute__((always_inline)) {
        constexpr bool kFast = decltype(fast)::value;
        if constexpr (!kFast) {
            if (meta->l3 == L3Type::mac_control) {
                // PFC / PAUSE: acted on here, never forwarded, whatever the destination MAC.
                return mac_control(m, in_port, f, now_ns);
            }
            if (meta->l3 == L3Type::lldp)  // only parsed as such when there is a punt path
                return punt(m, in_port, PuntClass::lldp);
        }
        // Before any rewrite: PCP trust needs the tag that forwarding strips.
        if constexpr (kFast)
            meta->tc = fast_tc[meta->dscp];  // classify_tc_untagged_ip
        else if (cls)
            meta->tc = classify_tc(*meta, *cls);
        const bool l2_group = !kFast && (meta->flags & (kFlagDstBcast | kFlagDstMcast));
        // The port's fast path took only frames to the port's MAC.
        if (!kFast && !l2_group && !port_mac.equals(f))
            return drop(m, in_port, DropReason::dst_mac_mismatch);
        if (!kFast && meta->l3 == L3Type::arp) return to_control(m, in_port);
        if (kFast || meta->l3 == L3Type::ipv4) {
            // Limited/directed broadcast is not routed; 224/4 multicast neither (240/4 is: one
            // compare for the common destination). The port's fast path leaves every
            // destination from 224.0.0.0 to the general parser.
            const uint32_t dst = meta->dst_ip4;
            if (!kFast &&
                (l2_group || (dst >= 0xE0000000u && ((dst >> 28) == 0xE || dst == 0xFFFFFFFFu))))
                return drop(m, in_port, DropReason::l3_multicast);
            v4[c4] = m;
            v4_dst[c4++] = dst;
            return;
        }
        const uint8_t *dst = f + meta->l3_offset + 24;
        if (dst[0] == 0xFF) {
            if (ctx_.punt ? is_neighbour_discovery(f, rte_pktmbuf_data_len(m), *meta)
                          : is_neighbour_solicitation(f, *meta))
                return to_control(m, in_port);
            return drop(m, in_port, DropReason::l3_multicast);
        }
        if (ctx_.punt && !l2_group && is_link_local_v6(dst)) {
            // fe80::/10 is never routed: with host interfaces it is the kernel's (ND,
            // BGP over link-local); otherwise the FIB decides (no route).
            return to_control(m, in_port);
        }
        if (l2_group) return drop(m, in_port, DropReason::l3_multicast);
        v6[c6] = m;
        std::memcpy(v6_dst[c6++], dst, 16);
    };
    // A packet the receive loop leaves (receive), out of line, so that the loop keeps no
    // register across it for what only this needs (the worker, the port's options, cls, the
    // MAC) and has no call. An mbuf of more than one segment or with a BAD or NONE verdict:
    // linearized or dropped as the mbuf says, then the port's fast path with accept's fast copy
    // (its own PortFastPath: the loop's is then no object whose address a call takes, so the
    // record's stores cannot alias it), its bytes added to rare_bytes (in memory: no register of
    // the loop's). Then, and for any other packet (its bytes counted by the loop), the general
    // parser and accept. Returns 1 when the packet went to v4[c4], else 0. n6 by reference: only
    // this path appends to v6, and n6 then stays in memory, no register of the loop's. accept by
    // value: the loop's own closure stays private to the loop (no reloads of what it captures).
    // general_seen_: set when a packet takes the general parser (no BurstSummary then);
    // flush_outputs clears it.
    uint64_t rare_bytes = 0;
    auto other = [&, accept](rte_mbuf *m, size_t c4) __attribute__((noinline)) -> unsigned {
        PacketMeta *meta = meta_of(m);
        const uint64_t ip_csum = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
        // The fast path's: no software check after the NIC's GOOD verdict.
        const bool verify =
            burst_opt.verify_ipv4_checksum && ip_csum != RTE_MBUF_F_RX_IP_CKSUM_GOOD;
        if (!one_segment_not_bad(m)) {
            rare_bytes += m->pkt_len;
            if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0) {
                drop(m, in_port, DropReason::frame_too_long);
                return 0;
            }
            if (ip_csum == RTE_MBUF_F_RX_IP_CKSUM_BAD) {
                drop(m, in_port, DropReason::ipv4_checksum_bad);
                return 0;
            }
            const PortFastPath fast(burst_opt, port.mac.b.data());
            if (fast.parse(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), verify,
                           meta)) {
                accept(m, meta, rte_pktmbuf_mtod(m, const uint8_t *), c4, n6, std::true_type{});
                return 1;
            }
        }
        const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
        general_seen_ = true;
        ParseOptions general = burst_opt;
        general.verify_ipv4_checksum = verify;
        if (auto r = parse_frame_general(f, rte_pktmbuf_data_len(m), general, meta)) {
            drop(m, in_port, *r);
            return 0;
        }
        // A tagged packet (before any strip) or a TTL / hop limit the forward must refuse: the
        // burst's runs test both (the port's fast path takes neither).
        if ((meta->flags & kFlagVlan) || meta->ttl <= 1) plain_mtu_ = UINT64_MAX;
        const size_t k4 = c4;
        accept(m, meta, f, c4, n6, std::false_type{});
        return unsigned(c4 - k4);
    };

    // Received first: every other term of the accounting identity is counted after it
    // (doc/accounting.md), so a concurrent reader sees a burst in flight, never a deficit.
    pc.rx_packets.add(n);
    for (uint16_t i = 0; i < kPrefetchAhead && i < n; i++)
        rte_prefetch0(rte_pktmbuf_mtod(pkts[i], const void *));
    // One received packet on the common path: one segment, a checksum verdict of GOOD or none
    // (mlx5 and most PMDs set it; GOOD skips the software check), the port's fast path, then
    // accept's fast copy. Returns false for any other packet, left to other (its bytes counted
    // when it has one segment): no call here. kVerify: the port checks IPv4 header checksums (a
    // constant of the loop's copy, not a per-packet test of the burst's option).
    auto receive = [&](rte_mbuf *m, auto verify_port) __attribute__((always_inline)) -> bool {
        constexpr bool kVerify = decltype(verify_port)::value;
        if (!one_segment_not_bad(m)) [[unlikely]]
            return false;
        const uint32_t len = rte_pktmbuf_data_len(m);
        bytes += len;  // one segment: data_len is the packet's length
        PacketMeta *meta = meta_of(m);
        const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
        // The verdict's low byte: one test of memory.
        static_assert(RTE_MBUF_F_RX_IP_CKSUM_GOOD < 0x100);
        const bool verify = kVerify && !(uint8_t(m->ol_flags) & RTE_MBUF_F_RX_IP_CKSUM_GOOD);
        if (!fast_path.parse(f, len, verify, meta)) [[unlikely]]
            return false;
        accept(m, meta, f, n4, n6, std::true_type{});
        return true;
    };
    // The packets with one kPrefetchAhead later, [pkts, ahead_end), prefetch the headers of
    // that one while this one is parsed; the last kPrefetchAhead (or fewer) have none. Pointers,
    // not an index: the array's base is then no register of its own in the loop. A packet that
    // receive leaves to other leaves the loops for the call and re-enters them at the next
    // packet, in the burst's order: the loops hold no call, so what the fast path keeps in
    // registers stays there across packets.
    // The prefetch guesses the headers at RTE_PKTMBUF_HEADROOM, where PMDs receive frames: no
    // load of that packet's data_off (a wrong guess costs the prefetch only).
    rte_mbuf *const *const ahead_end = pkts + (n > kPrefetchAhead ? n - kPrefetchAhead : 0);
    rte_mbuf *const *const end = pkts + n;
    auto receive_all = [&](auto verify_port) __attribute__((always_inline)) {
        rte_mbuf *const *p = pkts;
        for (;;) {
            for (; p < ahead_end; p++) {
                rte_prefetch0(static_cast<const uint8_t *>(p[kPrefetchAhead]->buf_addr) +
                              RTE_PKTMBUF_HEADROOM);
                if (!receive(*p, verify_port)) [[unlikely]]
                    goto leave;
            }
            for (; p < end; p++)
                if (!receive(*p, verify_port)) [[unlikely]]
                    goto leave;
            return;
        leave:
            n4 += other(*p++, n4);
        }
    };
    if (burst_opt.verify_ipv4_checksum)
        receive_all(std::true_type{});
    else
        receive_all(std::false_type{});
    pc.rx_bytes.add(bytes + rare_bytes);

    if (n4) {
        fib_lookup4_bulk(fib, v4_dst, v4_nh, n4);
        v4_nh[n4] = kNoNhId;
        // A miss reads next hop kNoRouteNh, whose kind is drop_no_route.
        route<L3Type::ipv4>(v4, n4, [&](size_t i) { return uint32_t(v4_nh[i]); }, in_port,
                            nexthops);
    }
    if (n6) {
        // A miss reads the "::/0" slot (kNoRouteNh, drop_no_route, when there is none).
        fib_lookup6_bulk(fib, v6_dst, v6_nh, n6);
        v6_nh[n6] = kNoNhId;
        route<L3Type::ipv6>(v6, n6, [&](size_t i) { return v6_nh[i]; }, in_port, nexthops);
    }
    if (lb_.burst_size()) forward_groups(in_port, now_ns);
    // With no packet through the general parser, every packet took the port's fast path
    // (untagged IPv4 from in_port, at least PortFastPath::kMinFrame bytes, its tc from
    // fast_tc); when fast_tc has one TC they all have it, else the summary says kSeveralTcs.
    // With none dropped, punted or answered, a port that got n packets got all of them: held,
    // they go to the egress with that summary (enqueue_held).
    // flush_outputs then finds the port that got n, if one did.
    if (defer_ && !general_seen_ && !n_dropped_ && !n_replies_)
        hold_summary(in_port, n, bytes + rare_bytes);
    flush_outputs(in_port, now_ns);
}

void Worker::hold_summary(uint16_t in_port, uint16_t n, uint64_t bytes) {
    const int tc = summary_tcs_[in_port];
    if (tc == kTcUnknown || summary_plan_ != ctx_.qos) [[unlikely]]
        return hold_summary_first(in_port, n, bytes);  // not known yet for this plan
    set_summary(in_port, n, bytes, tc);
}

void Worker::hold_summary_first(uint16_t in_port, uint16_t n, uint64_t bytes) {
    set_summary(in_port, n, bytes, summary_tc(in_port));
}

inline void Worker::set_summary(uint16_t in_port, uint16_t n, uint64_t bytes, int tc) {
    // tc -1: the port's DSCP map has several TCs.
    summary_ = {bytes, PortFastPath::kMinFrame, uint8_t(in_port),
                tc < 0 ? BurstSummary::kSeveralTcs : uint8_t(tc)};
    summary_n_ = n;
}

inline int Worker::summary_tc(uint16_t in_port) {
    if (summary_plan_ != ctx_.qos) {  // a plan's maps are fixed: its ports' TCs are found once
        summary_plan_ = ctx_.qos;
        summary_tcs_.fill(kTcUnknown);
    }
    int8_t &tc = summary_tcs_[in_port];
    if (tc == kTcUnknown) {
        alignas(16) std::array<uint8_t, kNumDscp> fast_tc;  // process_burst's
        untagged_ip_tc_table(ctx_.qos ? &ctx_.qos->ports[in_port].cls : nullptr, fast_tc);
        tc = int8_t(uniform_tc(fast_tc));
    }
    return tc;
}

template <L3Type kL3, bool kMaybeNull>
inline void Worker::forward_members(rte_mbuf *const *pkts, const LbMember *const *members,
                                    uint32_t i, uint32_t n, uint16_t in_port) {
    OutRun run;
    // Each loop returns where a new run's plain differs from its own: the other one takes the
    // packet on, in the run just opened.
    while (i < n)
        i = run.plain
                ? forward_members_as<kL3, true, kMaybeNull>(pkts, members, i, n, in_port, run)
                : forward_members_as<kL3, false, kMaybeNull>(pkts, members, i, n, in_port, run);
    close_run(run);
}

template <L3Type kL3>
inline void Worker::forward_members_to(rte_mbuf *const *pkts, const LbMember *const *members,
                                       uint32_t i, uint32_t n, uint16_t in_port, uint8_t port) {
    if (i == n) return;
    OutRun run;
    open_run(run, port);
    if (run.plain)
        forward_members_as<kL3, true, false, true>(pkts, members, i, n, in_port, run);
    else
        forward_members_as<kL3, false, false, true>(pkts, members, i, n, in_port, run);
    close_run(run);
}

template <L3Type kL3, bool kPlain, bool kMaybeNull, bool kOnePort>
inline uint32_t Worker::forward_members_as(rte_mbuf *const *pkts,
                                           const LbMember *const *members, uint32_t i,
                                           uint32_t n, uint16_t in_port, OutRun &run) {
    for (; i < n; i++) {
        const LbMember *m = members[i];
        // No member alive: the kernel resolves one with a host interface.
        if (kMaybeNull && !m) [[unlikely]] {
            if (ctx_.punt)
                punt(pkts[i], in_port, PuntClass::glean);
            else
                drop(pkts[i], in_port, DropReason::no_neighbour);
            continue;
        }
        if (!kOnePort && m->port != run.port) [[unlikely]] {
            open_run(run, m->port);
            if (run.plain != kPlain) return i;
        }
        forward_to<kL3, kPlain>(pkts[i], in_port, run, dst_word(*m));
    }
    return n;
}

// ECMP: one balancer call for the burst's multipath packets, then the ordinary forward, IPv4
// then IPv6 (the order route() gave them to the balancer).
void Worker::forward_groups(uint16_t in_port, uint64_t now_ns) {
    static_assert(kMaxBurst <= kLbMaxBurst);
    lb_.resolve_burst(now_ns);
    // Locals: the rewrite's byte stores may alias the balancer's fields.
    const uint32_t n = lb_.burst_size(), n4 = n_lb4_;
    rte_mbuf *const *const pkts = lb_.burst_packets();
    const LbMember *const *const members = lb_.burst_members();
    // Without a null member (the balancer's word for the burst), loops without the test; with
    // every member on one port (a group's members on one port: rsw-full), without the port's.
    const uint32_t ports = lb_.burst_ports();
    if (lb_.burst_all_members() && std::has_single_bit(ports)) [[likely]] {
        const uint8_t port = uint8_t(std::countr_zero(ports));
        forward_members_to<L3Type::ipv4>(pkts, members, 0, n4, in_port, port);
        forward_members_to<L3Type::ipv6>(pkts, members, n4, n, in_port, port);
    } else if (lb_.burst_all_members()) {
        forward_members<L3Type::ipv4, false>(pkts, members, 0, n4, in_port);
        forward_members<L3Type::ipv6, false>(pkts, members, n4, n, in_port);
    } else {
        forward_members<L3Type::ipv4, true>(pkts, members, 0, n4, in_port);
        forward_members<L3Type::ipv6, true>(pkts, members, n4, n, in_port);
    }
    lb_.clear_burst();
    n_lb4_ = 0;
}

// Every packet in out_ was forwarded, except the burst's n_replies_ local replies, which are
// all in out_[in_port]: forwarded and forwarded_out are counted here, per burst, before the
// egress stage sees the packets (and may drop them, on the egress port).
void Worker::flush_outputs(uint16_t in_port, uint64_t now_ns) {
    if (!defer_) [[unlikely]] {
        flush_outputs_now(in_port, now_ns);
        return;
    }
    // Held for poll_once (enqueue_held). The state in locals until the end: the counter stores
    // may alias it.
    const size_t n_ports = ctx_.ports.size();
    PortCounters *const pcs = ctr_.ports.data();
    const uint32_t replies = n_replies_;
    const uint32_t sum_n = summary_n_;
    uint32_t forwarded = 0, held = held_ports_;
    uint16_t sum_port = summary_port_;
    for (size_t p = 0; p < n_ports; p++) {
        rte_mbuf **const begin = out_[p].data();
        if (out_end_[p] == begin) continue;
        const uint32_t n = uint32_t(out_end_[p] - begin);  // at most kMaxBurst
        const uint32_t fwd = n - (p == in_port ? replies : 0u);
        if (fwd) pcs[p].forwarded_out.add(fwd);
        forwarded += fwd;
        held |= uint32_t(1) << p;
        // The port that got the whole burst (at most one does): held with its summary.
        if (n == sum_n) sum_port = uint16_t(p);
    }
    held_ports_ = held;
    summary_port_ = sum_port;
    outputs_done(in_port, forwarded);
}

// flush_outputs outside poll_once (process_burst called alone): each port's outputs enqueued
// at once.
void Worker::flush_outputs_now(uint16_t in_port, uint64_t now_ns) {
    uint32_t forwarded = 0;
    const size_t n_ports = ctx_.ports.size();  // read once: the stores below may alias it
    for (uint16_t p = 0; p < n_ports; p++) {
        const uint16_t n = n_out(p);
        if (!n) continue;
        const uint32_t fwd = n - (p == in_port ? n_replies_ : 0u);
        if (fwd) ctr_.ports[p].forwarded_out.add(fwd);
        forwarded += fwd;
        egress_.enqueue(p, out_[p].data(), n, now_ns);
        out_end_[p] = out_[p].data();
    }
    outputs_done(in_port, forwarded);
}

// flush_outputs' end: the ingress port's forwarded count, the burst's state cleared, its drops
// freed.
[[gnu::always_inline]] inline void Worker::outputs_done(uint16_t in_port, uint32_t forwarded) {
    if (forwarded) ctr_.ports[in_port].forwarded.add(forwarded);
    n_replies_ = 0;
    summary_n_ = 0;
    general_seen_ = false;
    if (const uint16_t k = n_dropped_) {
        n_dropped_ = 0;
        rte_pktmbuf_free_bulk(dropped_.data(), k);
    }
}

}  // namespace rocesw
