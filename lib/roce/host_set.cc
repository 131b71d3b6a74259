#include "roce/host_set.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "pfc/frame.h"
#include "pkt/bytes.h"
#include "pkt/checksum.h"

namespace rocesw::roce {

namespace {

constexpr uint16_t kBurst = 32;
constexpr uint64_t kResolveRetryNs = 50'000'000;  // ARP/ND retry while unanswered

// A 32-bit summary of an address: the UDP source-port hash and receiver keys use it.
uint32_t fold(const IpAddr &a) {
    if (!a.is_v6) return a.v4;
    uint32_t x = 0;
    for (int i = 0; i < 16; i += 4) x ^= rd32(a.v6.data() + i);
    return x;
}

IpAddr ip_of(const ParsedRoce &p, bool src) {
    IpAddr a;
    a.is_v6 = p.is_v6;
    if (p.is_v6)
        a.v6 = src ? p.src_ip6 : p.dst_ip6;
    else
        a.v4 = src ? p.src_ip4 : p.dst_ip4;
    return a;
}

// Runs `call` on flow f's DCQCN reaction point (a CNP, its timers, the byte counter). Every
// rate change re-times the packet waiting in f's pacer (Pacer::retime): a cut, a timer or a
// byte-counter increase alike.
template <class Call>
void rate_update(Flow &f, Call &&call) {
    const uint64_t r0 = f.rp.rate_bps();
    call(f.rp);
    if (f.rp.rate_bps() != r0) f.pacer.retime(f.rp.rate_bps());
}

}  // namespace

NeighKey neigh_key(const IpAddr &a) {
    NeighKey k{};
    if (a.is_v6) return a.v6;
    k[10] = k[11] = 0xFF;
    wr32(k.data() + 12, a.v4);
    return k;
}

HostSet::HostSet(const HostRunConfig &cfg, size_t n_local, PortIo &io, rte_mempool *pool)
    : cfg_(cfg), io_(io), pool_(pool) {
    for (size_t i = 0; i < n_local; i++) {
        Host h;
        h.cfg = cfg.hosts[i];
        h.port = uint16_t(i);
        h.pause = PauseState(h.cfg.line_rate_bps, cfg.traffic.pfc_mask);
        h.line = Pacer(cfg.run.pacer_slack_ns);
        if (h.cfg.gateway && h.cfg.gateway_mac)
            h.neigh[neigh_key(*h.cfg.gateway)] = *h.cfg.gateway_mac;
        hosts_.push_back(std::move(h));
    }
    for (size_t i = 0; i < cfg.faults.size(); i++)
        if (cfg.faults[i].host < hosts_.size())
            hosts_[cfg.faults[i].host].faults.push_back(FaultState{uint32_t(i)});
    udp_rec_ = UdpRecorder(cfg.udp_flows.size());
    udp_rec_.keep_deliveries(false);
    const uint64_t t0 = cfg.run.start_delay_ns;
    for (size_t i = 0; i < cfg.udp_flows.size(); i++) {
        const UdpFlowConfig &u = cfg.udp_flows[i];
        if (u.src >= hosts_.size()) continue;
        Host &h = hosts_[u.src];
        if (h.udp.empty()) h.udp_pause = PauseState(h.cfg.line_rate_bps, 0xFF);
        const uint64_t stop = u.stop_ns == UINT64_MAX ? kUdpNever : (t0 + u.stop_ns) * 1000;
        h.udp.push_back({uint32_t(i), UdpSchedule((t0 + u.start_ns) * 1000, stop, u.frame_bytes,
                                                  u.rate_bps)});
    }
    auto specs = generate_workload(cfg.workload.spec);
    flows_.resize(specs.size());
    for (size_t i = 0; i < specs.size(); i++) init_flow(flows_[i], specs[i]);
}

void HostSet::init_flow(Flow &f, const FlowSpec &spec) {
    f.spec = spec;
    f.qpn = kQpnBase + spec.id;
    if (f.spec.src < hosts_.size()) {
        f.host = int(f.spec.src);
        Host &h = hosts_[f.spec.src];
        DcqcnParams p = cfg_.dcqcn;
        p.line_rate_bps = h.cfg.line_rate_bps;
        f.rp = DcqcnRp(p, &f.trace);
        f.qp = SendQp(cfg_.run.mtu, initial_psn(f.qpn), cfg_.run.ack_every, cfg_.run.window);
        f.pacer = Pacer(cfg_.run.pacer_slack_ns);
        f.udp_src = udp_src_port_for_qp(fold(h.cfg.ip.addr), f.qpn);
        // Pending flows stay sorted by start time (ties: by id), from next_pending on.
        const uint32_t idx = spec.id;
        auto pos = h.pending.end();
        while (pos - h.pending.begin() > ptrdiff_t(h.next_pending) &&
               flows_[*(pos - 1)].spec.start_ns > spec.start_ns)
            --pos;
        h.pending.insert(pos, idx);
        local_flows_++;
    }
}

uint32_t HostSet::add_flow(const FlowSpec &spec) {
    if (spec.src >= hosts_.size() || spec.dst >= cfg_.hosts.size() || spec.src == spec.dst)
        throw std::invalid_argument("add_flow: bad source or destination");
    if (flows_.size() >= (1u << 24) - kQpnBase) throw std::length_error("add_flow: out of QPNs");
    FlowSpec s = spec;
    s.id = uint32_t(flows_.size());
    flows_.emplace_back();  // a deque: the other flows (and their trace pointers) stay put
    init_flow(flows_.back(), s);
    return s.id;
}

void HostSet::take_completed(std::vector<uint32_t> &out) {
    out.insert(out.end(), completed_.begin(), completed_.end());
    completed_.clear();
}

void HostSet::take_received(std::vector<Received> &out) {
    out.insert(out.end(), received_.begin(), received_.end());
    received_.clear();
}

HostSet::~HostSet() {
    release();
}

void HostSet::release() {
    for (Host &h : hosts_) {
        for (auto &c : h.ctl) rte_pktmbuf_free(c.m);
        for (auto *m : h.backlog) rte_pktmbuf_free(m);
        for (auto *m : h.held) rte_pktmbuf_free(m);
        h.ctl.clear();
        h.backlog.clear();
        h.held.clear();
        h.held_bytes = 0;
    }
}

rte_mbuf *HostSet::alloc(Host &h, uint32_t len) {
    rte_mbuf *m = rte_pktmbuf_alloc(pool_);
    if (!m) {
        h.c.alloc_failures++;
        return nullptr;
    }
    if (!rte_pktmbuf_append(m, uint16_t(len))) {
        rte_pktmbuf_free(m);
        h.c.alloc_failures++;
        return nullptr;
    }
    return m;
}

L2L3 HostSet::base_l2l3(Host &h, const MacAddr &dst_mac, const IpAddr &dst) const {
    L2L3 l;
    l.src_mac = h.cfg.mac.b;
    l.dst_mac = dst_mac.b;
    l.is_v6 = dst.is_v6;
    l.src_ip4 = h.cfg.ip.addr.v4;
    l.dst_ip4 = dst.v4;
    l.src_ip6 = h.cfg.ip.addr.v6;
    l.dst_ip6 = dst.v6;
    l.ip_id = h.ip_id++;
    return l;
}

void HostSet::send_ctl(Host &h, const PacketSpec &s, uint8_t prio) {
    rte_mbuf *m = alloc(h, packet_len(s));
    if (!m) return;
    build_packet(rte_pktmbuf_mtod(m, uint8_t *), m->data_len, s);
    h.ctl.push_back({m, prio});
}

void HostSet::send_arp(Host &h, uint16_t op, const MacAddr &dst_mac, uint32_t dst_ip,
                       const MacAddr &target_mac) {
    rte_mbuf *m = alloc(h, 60);
    if (!m) return;
    uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
    std::memset(f, 0, 60);
    std::memcpy(f, dst_mac.b.data(), 6);
    std::memcpy(f + 6, h.cfg.mac.b.data(), 6);
    wr16(f + 12, kEtherTypeArp);
    uint8_t *a = f + 14;
    wr16(a, 1);
    wr16(a + 2, kEtherTypeIpv4);
    a[4] = 6;
    a[5] = 4;
    wr16(a + 6, op);
    std::memcpy(a + 8, h.cfg.mac.b.data(), 6);
    wr32(a + 14, h.cfg.ip.addr.v4);
    std::memcpy(a + 18, target_mac.b.data(), 6);
    wr32(a + 24, dst_ip);
    h.ctl.push_back({m, 7});
}

void HostSet::handle_arp(Host &h, const uint8_t *f, uint32_t len) {
    if (len < 42) return;
    const uint8_t *a = f + 14;
    if (rd16(a) != 1 || rd16(a + 2) != kEtherTypeIpv4 || a[4] != 6 || a[5] != 4) return;
    const uint16_t op = rd16(a + 6);
    MacAddr sha;
    std::memcpy(sha.b.data(), a + 8, 6);
    const uint32_t spa = rd32(a + 14), tpa = rd32(a + 24);
    if (spa && !sha.is_multicast() && !sha.is_zero()) {
        // Learn from every ARP about a neighbour in our subnet (requests and replies).
        IpAddr s;
        s.v4 = spa;
        if (h.cfg.ip.subnet().contains(s)) h.neigh[neigh_key(s)] = sha;
    }
    if (op == 1 && tpa == h.cfg.ip.addr.v4) {
        h.c.arp_requests_rx++;
        send_arp(h, 2, sha, spa, sha);
        h.c.arp_replies_tx++;
    }
}

bool HostSet::next_hop_mac(const Host &h, const IpAddr &dst, MacAddr *mac, IpAddr *nh) const {
    *nh = dst;
    if (!h.cfg.ip.subnet().contains(dst) && h.cfg.gateway) *nh = *h.cfg.gateway;
    auto it = h.neigh.find(neigh_key(*nh));
    if (it == h.neigh.end()) return false;
    *mac = it->second;
    return true;
}

void HostSet::send_nd(Host &h, uint8_t type, const MacAddr &dst_mac, const IpAddr &dst_ip,
                      const IpAddr &target) {
    constexpr uint32_t kIcmpLen = 32;  // header 4, reserved/flags 4, target 16, one option 8
    rte_mbuf *m = alloc(h, 14 + 40 + kIcmpLen);
    if (!m) return;
    uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
    std::memset(f, 0, 14 + 40 + kIcmpLen);
    std::memcpy(f, dst_mac.b.data(), 6);
    std::memcpy(f + 6, h.cfg.mac.b.data(), 6);
    wr16(f + 12, kEtherTypeIpv6);
    uint8_t *ip = f + 14;
    wr32(ip, 6u << 28);
    wr16(ip + 4, kIcmpLen);
    ip[6] = kProtoIcmpv6;
    ip[7] = 255;  // RFC 4861: hop limit 255, so receivers know it is on-link
    std::memcpy(ip + 8, h.cfg.ip.addr.v6.data(), 16);
    std::memcpy(ip + 24, dst_ip.v6.data(), 16);
    uint8_t *icmp = ip + 40;
    icmp[0] = type;
    if (type == 136) icmp[4] = 0x60;  // solicited, override
    std::memcpy(icmp + 8, target.v6.data(), 16);
    icmp[24] = type == 135 ? 1 : 2;  // source / target link-layer address option
    icmp[25] = 1;
    std::memcpy(icmp + 26, h.cfg.mac.b.data(), 6);
    wr16(icmp + 2, icmp6_checksum(ip, icmp, kIcmpLen));
    h.ctl.push_back({m, 7});
}

void HostSet::handle_nd(Host &h, const uint8_t *f, uint32_t len) {
    if (len < 14 + 40 + 24 || !h.cfg.ip.addr.is_v6) return;
    const uint8_t *ip = f + 14;
    const uint32_t plen = rd16(ip + 4);
    if (ip[6] != kProtoIcmpv6 || ip[7] != 255 || plen < 24 || 14 + 40 + plen > len) return;
    const uint8_t *icmp = ip + 40;
    const uint8_t type = icmp[0];
    if ((type != 135 && type != 136) || icmp[1] != 0) return;
    if (icmp6_checksum(ip, icmp, plen) != 0) return;  // a valid sum folds to 0 with the field in
    IpAddr target, src;
    target.is_v6 = src.is_v6 = true;
    std::memcpy(target.v6.data(), icmp + 8, 16);
    std::memcpy(src.v6.data(), ip + 8, 16);
    MacAddr lla;
    bool have_lla = false;
    for (uint32_t o = 24; o + 8 <= plen && icmp[o + 1]; o += 8u * icmp[o + 1]) {
        if (icmp[o] == (type == 135 ? 1 : 2) && icmp[o + 1] == 1) {
            std::memcpy(lla.b.data(), icmp + o + 2, 6);
            have_lla = true;
        }
    }
    if (type == 136) {
        if (!have_lla) std::memcpy(lla.b.data(), f + 6, 6);
        if (h.cfg.ip.subnet().contains(target)) h.neigh[neigh_key(target)] = lla;
        return;
    }
    if (src.v6 == std::array<uint8_t, 16>{}) return;  // duplicate address detection: not ours
    if (have_lla && h.cfg.ip.subnet().contains(src)) h.neigh[neigh_key(src)] = lla;
    if (target.v6 != h.cfg.ip.addr.v6) return;
    h.c.arp_requests_rx++;
    MacAddr to;
    std::memcpy(to.b.data(), f + 6, 6);
    send_nd(h, 136, to, src, h.cfg.ip.addr);
    h.c.arp_replies_tx++;
}

void HostSet::solicit(Host &h, const IpAddr &nh) {
    h.c.arp_requests_tx++;
    if (!nh.is_v6) {
        MacAddr bcast;
        bcast.b.fill(0xFF);
        send_arp(h, 1, bcast, nh.v4, MacAddr{});
        return;
    }
    // Solicited-node multicast ff02::1:ffXX:XXXX and its MAC 33:33:ff:XX:XX:XX.
    IpAddr sn;
    sn.is_v6 = true;
    sn.v6 = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, nh.v6[13], nh.v6[14], nh.v6[15]};
    MacAddr mc;
    mc.b = {0x33, 0x33, 0xff, nh.v6[13], nh.v6[14], nh.v6[15]};
    send_nd(h, 135, mc, sn, nh);
}

void HostSet::handle_roce(Host &h, const uint8_t *f, uint32_t len, uint64_t now) {
    ParsedRoce p;
    auto r = parse_packet(f, len, cfg_.run.verify_icrc, &p);
    if (r == ParseResult::not_roce) {
        h.c.rx_not_roce++;
        return;
    }
    if (r == ParseResult::truncated) {
        h.c.rx_truncated++;
        return;
    }
    if (r == ParseResult::bad_icrc) {
        h.c.rx_bad_icrc++;
        return;
    }
    if (p.is_v6 != h.cfg.ip.addr.is_v6 ||
        (p.is_v6 ? p.dst_ip6 != h.cfg.ip.addr.v6 : p.dst_ip4 != h.cfg.ip.addr.v4)) {
        h.c.rx_not_for_us++;
        return;
    }
    h.c.rx_roce++;
    MacAddr peer_mac;
    peer_mac.b = p.src_mac;  // answer through whoever sent it (the switch or the peer)
    const uint8_t op = p.bth.opcode;
    if (is_write(op)) {
        const IpAddr src = ip_of(p, true);
        const uint64_t key = uint64_t(fold(src)) << 24 | p.bth.dest_qp;
        auto it = h.recv.find(key);
        if (it == h.recv.end()) {
            RecvEntry e{RecvQp(initial_psn(p.bth.dest_qp)), {}, src, p.bth.dest_qp};
            it = h.recv.emplace(key, e).first;
        }
        RecvEntry &e = it->second;
        if (p.ecn == Ecn::ce && cfg_.dcqcn_enabled && e.np.on_ce(now, cfg_.dcqcn.cnp_interval_ns)) {
            L2L3 l = base_l2l3(h, peer_mac, src);
            l.dscp = cfg_.traffic.cnp_dscp;
            l.ecn = Ecn::not_ect;
            l.udp_src = udp_src_port_for_qp(fold(h.cfg.ip.addr), p.bth.dest_qp);
            send_ctl(h, cnp_spec(l, p.bth.dest_qp), cfg_.traffic.cnp_priority);
            h.c.cnps_tx++;
        } else if (p.ecn == Ecn::ce && !cfg_.dcqcn_enabled) {
            e.np.ce_packets++;
        }
        RecvAction a = e.qp.on_data(op, p.bth.psn, p.bth.ack_req, p.payload_len);
        if (a.message_done && p.bth.dest_qp >= kQpnBase && p.bth.dest_qp - kQpnBase < flows_.size())
            received_.push_back({p.bth.dest_qp - kQpnBase, now});
        if (a.reply) {
            // Flow i uses QP kQpnBase + i at both ends, and every process knows every flow:
            // a flow with its own class gets its ACK/NAKs in that class.
            const uint32_t fi = p.bth.dest_qp - kQpnBase;
            const FlowClass *fc = p.bth.dest_qp >= kQpnBase && fi < flows_.size() &&
                                          flows_[fi].spec.cls
                                      ? &*flows_[fi].spec.cls
                                      : nullptr;
            L2L3 l = base_l2l3(h, peer_mac, src);
            l.dscp = fc ? fc->ack_dscp : cfg_.traffic.ack_dscp;
            l.ecn = Ecn::not_ect;
            l.udp_src = udp_src_port_for_qp(fold(h.cfg.ip.addr), p.bth.dest_qp);
            send_ctl(h, ack_spec(l, p.bth.dest_qp, a.psn, a.syndrome, a.msn),
                     fc ? fc->ack_priority : cfg_.traffic.ack_prio());
        }
        return;
    }
    // ACK/NAK and CNP address our sender QP.
    const uint32_t idx = p.bth.dest_qp - kQpnBase;
    if (p.bth.dest_qp < kQpnBase || idx >= flows_.size() ||
        flows_[idx].host != int(&h - hosts_.data())) {
        h.c.rx_unknown_qp++;
        return;
    }
    Flow &fl = flows_[idx];
    if (op == uint8_t(Opcode::cnp)) {
        h.c.cnps_rx++;
        fl.cnps_rx++;
        if (cfg_.dcqcn_enabled && !fl.done)
            rate_update(fl, [now](DcqcnRp &rp) { rp.on_cnp(now); });
        return;
    }
    if (op == uint8_t(Opcode::ack)) {
        if ((p.aeth.syndrome & 0xE0) == 0x60)
            h.c.naks_rx++;
        else
            h.c.acks_rx++;
        if (fl.started && !fl.done && fl.qp.on_ack(p.aeth.syndrome, p.bth.psn, now)) {
            fl.done = true;
            fl.finish_ns = now;
            if (cfg_.run.sample_ns)
                fl.bytes.push_back({now, fl.qp.sent_bytes(), fl.qp.acked_bytes()});
            done_flows_++;
            last_done_ns_ = now;
            completed_.push_back(idx);
        }
    }
}

void HostSet::on_rx(size_t host, rte_mbuf **pkts, uint16_t n, uint64_t now) {
    Host &h = hosts_[host];
    for (uint16_t i = 0; i < n; i++) {
        const uint8_t *f = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
        const uint32_t len = pkts[i]->data_len;
        h.c.rx_frames++;
        if (len >= 14) {
            const uint16_t et = rd16(f + 12);
            if (et == kEtherTypeArp) {
                handle_arp(h, f, len);
            } else if (et == kEtherTypeMacControl) {
                h.c.mac_control_rx++;
                MacControlFrame mc;
                if (parse_mac_control(f, len, &mc) == MacControlError::none) {
                    h.pause.on_frame(mc, now, &h.pause_trace);
                    if (!h.udp.empty()) h.udp_pause.on_frame(mc, now);
                } else
                    h.c.mac_control_bad++;
            } else if (et == kEtherTypeIpv6 && len >= 14 + 40 && f[14 + 6] == kProtoIcmpv6) {
                handle_nd(h, f, len);
            } else if (UdpFlowStamp st;
                       !cfg_.udp_flows.empty() && parse_udp_flow_frame(f, len, &st)) {
                h.c.udp_rx++;
                udp_rec_.on_delivery(st.flow, st.seq, st.sent_ps, now * 1000);
            } else {
                handle_roce(h, f, len, now);
            }
        }
        rte_pktmbuf_free(pkts[i]);
    }
}

uint32_t HostSet::flush_ctl(Host &h, uint64_t now) {
    if (h.ctl.empty()) return 0;
    rte_mbuf *out[kBurst];
    uint8_t prio[kBurst];
    uint16_t n = 0;
    size_t keep = 0;
    for (size_t i = 0; i < h.ctl.size(); i++) {
        if (n < kBurst && !h.pause.paused(h.ctl[i].prio, now)) {
            prio[n] = h.ctl[i].prio;
            out[n++] = h.ctl[i].m;
        } else {
            h.ctl[keep++] = h.ctl[i];
        }
    }
    h.ctl.resize(keep);
    uint16_t sent = io_.tx_burst(h.port, 0, out, n);
    for (uint16_t i = 0; i < sent; i++) {
        h.line.on_send(std::max<uint32_t>(out[i]->data_len, 60) + kWireOverheadBytes,
                       h.cfg.line_rate_bps, now);
        h.c.tx_frames++;
    }
    // What the device refused goes back to the front, in order, in its class (a pause that
    // arrives before the retry holds it).
    if (sent < n) {
        h.c.tx_retries++;
        std::vector<Host::Ctl> rest;
        for (uint16_t i = sent; i < n; i++) rest.push_back({out[i], prio[i]});
        h.ctl.insert(h.ctl.begin(), rest.begin(), rest.end());
    }
    return sent;
}

void HostSet::start_flows(Host &h, uint64_t now) {
    const uint64_t t0 = cfg_.run.start_delay_ns;
    while (h.next_pending < h.pending.size()) {
        Flow &f = flows_[h.pending[h.next_pending]];
        if (now < t0 + f.spec.start_ns) break;
        f.started = true;
        f.start_ns = t0 + f.spec.start_ns;
        f.qp.post_write(f.spec.size_bytes);
        f.trace.push_back(
            {now, h.cfg.line_rate_bps, h.cfg.line_rate_bps, f.rp.alpha(), RpEvent::start});
        if (cfg_.run.sample_ns) f.bytes.push_back({f.start_ns, 0, 0});
        h.active.push_back(h.pending[h.next_pending]);
        h.next_pending++;
    }
}

// A data packet of flow `f` to `mac`, its pacers and DCQCN byte counter charged at `now`.
rte_mbuf *HostSet::build_data(Host &h, Flow &f, const MacAddr &mac, uint64_t now) {
    rte_mbuf *m = rte_pktmbuf_alloc(pool_);
    if (!m) {
        h.c.alloc_failures++;
        return nullptr;
    }
    Segment seg = f.qp.next_segment(now);
    PacketSpec s;
    s.l = base_l2l3(h, mac, cfg_.hosts[f.spec.dst].ip.addr);
    s.l.dscp = f.spec.cls ? f.spec.cls->data_dscp : cfg_.traffic.data_dscp;
    s.l.ecn = cfg_.traffic.data_ecn;
    s.l.udp_src = f.udp_src;
    s.bth.opcode = seg.opcode;
    s.bth.dest_qp = f.qpn;
    s.bth.psn = seg.psn;
    s.bth.ack_req = seg.ack_req;
    s.reth = {0x10000000ull, f.qpn, uint32_t(f.spec.size_bytes)};
    s.payload_len = seg.len;
    const uint32_t len = packet_len(s);
    rte_pktmbuf_append(m, uint16_t(len));  // the pool's data room holds an MTU frame
    build_packet(rte_pktmbuf_mtod(m, uint8_t *), len, s);
    const uint32_t wire = std::max<uint32_t>(len, 60) + kWireOverheadBytes;
    const uint64_t rate = cfg_.dcqcn_enabled ? f.rp.rate_bps() : h.cfg.line_rate_bps;
    f.pacer.on_send(wire, rate, now);
    h.line.on_send(wire, h.cfg.line_rate_bps, now);
    // The byte counter may raise the rate: the next packet waits the new rate's gap.
    if (cfg_.dcqcn_enabled)
        rate_update(f, [wire, now](DcqcnRp &rp) { rp.on_bytes_sent(wire, now); });
    f.packets_tx++;
    h.c.tx_data++;
    h.c.tx_bytes += len;
    return m;
}

// Retires finished flows, runs the QP and DCQCN timers, retries what the device refused, then
// sends data round robin over the flows. Returns the frames handed to the device.
uint32_t HostSet::send_data(Host &h, uint64_t now) {
    size_t keep = 0;
    for (size_t i = 0; i < h.active.size(); i++) {
        Flow &f = flows_[h.active[i]];
        if (f.done) continue;
        if (cfg_.dcqcn_enabled) rate_update(f, [now](DcqcnRp &rp) { rp.advance(now); });
        f.qp.on_timer(now, cfg_.run.rto_ns);
        h.active[keep++] = h.active[i];
    }
    h.active.resize(keep);
    if (!h.backlog.empty()) {
        uint16_t sent = io_.tx_burst(h.port, 0, h.backlog.data(), uint16_t(h.backlog.size()));
        h.backlog.erase(h.backlog.begin(), h.backlog.begin() + sent);
        if (!h.backlog.empty()) return 0;
    }
    if (h.active.empty()) return 0;
    rte_mbuf *out[kBurst];
    uint16_t n = 0;
    size_t tried = 0;
    while (n < kBurst && h.line.ready(now) && tried < h.active.size()) {
        if (h.rr >= h.active.size()) h.rr = 0;
        Flow &f = flows_[h.active[h.rr]];
        h.rr++;
        MacAddr mac;
        IpAddr nh;
        if (!f.qp.has_segment() || !f.pacer.ready(now) || h.pause.paused(data_priority(f), now) ||
            !next_hop_mac(h, cfg_.hosts[f.spec.dst].ip.addr, &mac, &nh)) {
            tried++;
            continue;
        }
        tried = 0;
        rte_mbuf *m = build_data(h, f, mac, now);
        if (!m) break;
        out[n++] = m;
    }
    if (!n) return 0;
    uint16_t sent = io_.tx_burst(h.port, 0, out, n);
    h.c.tx_frames += n;
    if (sent < n) {
        h.c.tx_retries++;
        h.backlog.insert(h.backlog.end(), out + sent, out + n);
    }
    return n;
}

// UDP flows: the packets their schedules have made due, oldest first, while the line pacer
// allows and their priority is not paused; a packet the pool cannot hold is counted
// (alloc_failed) and skipped, as rocesim's UdpHost does.
uint32_t HostSet::send_udp(Host &h, uint64_t now) {
    if (h.udp.empty() || !h.backlog.empty()) return 0;
    const uint64_t now_ps = now * 1000;
    rte_mbuf *out[kBurst];
    uint16_t n = 0;
    while (n < kBurst && h.line.ready(now)) {
        Host::Udp *best = nullptr;
        for (Host::Udp &u : h.udp) {
            const uint64_t t = u.sched.due_ps();
            if (t > now_ps || h.udp_pause.paused(cfg_.udp_flows[u.flow].priority, now)) continue;
            if (!best || t < best->sched.due_ps()) best = &u;
        }
        if (!best) break;
        const UdpFlowConfig &c = cfg_.udp_flows[best->flow];
        MacAddr mac;
        IpAddr nh;
        if (!next_hop_mac(h, cfg_.hosts[c.dst].ip.addr, &mac, &nh)) break;
        const uint32_t len = udp_flow_frame_len(c.frame_bytes);
        rte_mbuf *m = alloc(h, len);
        if (m) {
            UdpFlowAddr a;
            a.dst_mac = mac;
            a.src_mac = h.cfg.mac;
            a.src_ip = h.cfg.ip.addr.v4;
            a.dst_ip = cfg_.hosts[c.dst].ip.addr.v4;
            a.dscp = c.dscp;
            a.ecn = c.ecn;
            a.sport = c.sport;
            a.dport = c.dport;
            build_udp_flow_frame(rte_pktmbuf_mtod(m, uint8_t *), len, a,
                                 {best->flow, best->sched.seq(), best->sched.due_ps()});
            h.line.on_send(std::max<uint32_t>(len, 60) + kWireOverheadBytes, h.cfg.line_rate_bps,
                           now);
            udp_rec_.on_sent(best->flow);
            h.c.udp_tx++;
            out[n++] = m;
        } else {
            udp_rec_.stats()[best->flow].alloc_failed++;
        }
        best->sched.advance();
        if (best->sched.due_ps() == kUdpNever) last_udp_ns_ = now;
        if (!m) break;
    }
    if (!n) return 0;
    const uint16_t sent = io_.tx_burst(h.port, 0, out, n);
    h.c.tx_frames += n;
    if (sent < n) {
        h.c.tx_retries++;
        h.backlog.insert(h.backlog.end(), out + sent, out + n);
    }
    return n;
}

bool HostSet::udp_pending() const {
    for (const Host &h : hosts_)
        for (const Host::Udp &u : h.udp)
            if (u.sched.due_ps() != kUdpNever) return true;
    return false;
}

// One byte-timeline point per started, unfinished local flow every sample_ns (late loop
// iterations skip missed points rather than invent them).
void HostSet::sample_bytes(uint64_t now) {
    if (!cfg_.run.sample_ns || now < next_sample_ns_) return;
    next_sample_ns_ = now + cfg_.run.sample_ns - (now - next_sample_ns_) % cfg_.run.sample_ns;
    for (const Host &h : hosts_)
        for (uint32_t fi : h.active) {
            Flow &f = flows_[fi];
            if (!f.done) f.bytes.push_back({now, f.qp.sent_bytes(), f.qp.acked_bytes()});
        }
}

// Resolve the next hops the started flows need (every 50 ms until answered).
void HostSet::resolve_next_hops(Host &h, uint64_t now) {
    if ((h.active.empty() && h.udp.empty()) || now < h.next_arp_ns) return;
    h.next_arp_ns = now + kResolveRetryNs;
    std::vector<NeighKey> asked;
    std::vector<uint32_t> dsts;
    for (uint32_t fi : h.active) dsts.push_back(flows_[fi].spec.dst);
    for (const Host::Udp &u : h.udp)
        if (u.sched.due_ps() != kUdpNever) dsts.push_back(cfg_.udp_flows[u.flow].dst);
    for (uint32_t dst : dsts) {
        MacAddr mac;
        IpAddr nh;
        if (next_hop_mac(h, cfg_.hosts[dst].ip.addr, &mac, &nh)) continue;
        if (std::find(asked.begin(), asked.end(), neigh_key(nh)) != asked.end()) continue;
        asked.push_back(neigh_key(nh));
        solicit(h, nh);
    }
}

// A PFC frame from the host's NIC (faults): straight to the device, never paused, never
// queued (a refused frame is retried at the next poll by the caller). Returns whether it left.
bool HostSet::send_pfc(Host &h, uint8_t priority, uint16_t quanta, uint64_t now) {
    rte_mbuf *m = alloc(h, kMacControlFrameLen);
    if (!m) return false;
    std::array<uint16_t, kNumPriorities> q{};
    q[priority & 7] = quanta;
    build_pfc_frame(rte_pktmbuf_mtod(m, uint8_t *), h.cfg.mac.b, uint8_t(1u << (priority & 7)), q);
    if (io_.tx_burst(h.port, 0, &m, 1) != 1) {
        rte_pktmbuf_free(m);
        return false;
    }
    h.line.on_send(kMacControlFrameLen + kWireOverheadBytes, h.cfg.line_rate_bps, now);
    h.c.tx_frames++;
    (quanta ? h.c.pfc_xoff_tx : h.c.pfc_xon_tx)++;
    h.pfc_sent.push_back(PauseEvent{now, uint8_t(priority & 7), quanta,
                                    now + pause_quanta_to_ns(quanta, h.cfg.line_rate_bps)});
    return true;
}

// The host's faults at `now` (HostFault): storm frames, the slow receiver's start, refreshes
// and end (the held frames are taken, then XON).
void HostSet::run_faults(Host &h, uint64_t now) {
    const uint64_t t0 = cfg_.run.start_delay_ns;
    for (FaultState &fs : h.faults) {
        if (fs.done) continue;
        const HostFault &f = cfg_.faults[fs.index];
        if (now < t0 + f.at_ns) continue;
        const bool over = now >= t0 + f.until_ns;
        if (f.kind == HostFault::pfc_storm) {
            run_storm(h, fs, f, now);
            continue;
        }
        if (!fs.on && !over) {
            fs.on = true;
            h.slow = &f;
        }
        if (over) {
            if (h.slow == &f) h.slow = nullptr;
            std::vector<rte_mbuf *> held;
            held.swap(h.held);
            h.held_bytes = 0;
            const size_t hi = size_t(&h - hosts_.data());
            for (size_t i = 0; i < held.size(); i += kBurst)
                on_rx(hi, held.data() + i, uint16_t(std::min<size_t>(kBurst, held.size() - i)), now);
            if (h.rx_xoff && send_pfc(h, f.priority, 0, now)) h.rx_xoff = false;
            fs.done = !h.rx_xoff;
        } else if (h.rx_xoff && now >= fs.next_ns && send_pfc(h, f.priority, 0xFFFF, now)) {
            fs.next_ns = now + f.interval_ns;
        }
    }
}

// A PFC storm keeps its schedule (a frame at at + k * interval, while before until), as a broken
// NIC sends at line rate whatever its host does: a poll that comes late sends the frames the
// schedule owes, at most max_catch_up of them (the newest); the older ones are skipped and
// counted. Once over, the owed frames before until, then one XON. A frame the device refused
// stays owed for the next poll.
void HostSet::run_storm(Host &h, FaultState &fs, const HostFault &f, uint64_t now) {
    const uint64_t start = cfg_.run.start_delay_ns + f.at_ns;
    const uint64_t end = cfg_.run.start_delay_ns + f.until_ns;
    if (!fs.on) {
        fs.on = true;
        fs.next_ns = start;
    }
    const uint64_t last = std::min(now, end - 1);  // the latest slot due now
    if (fs.next_ns <= last) {
        const uint64_t owed = (last - fs.next_ns) / f.interval_ns + 1;
        if (owed > f.max_catch_up) {
            const uint64_t skip = owed - f.max_catch_up;
            h.c.storm_frames_skipped += skip;
            fs.next_ns += skip * f.interval_ns;
        }
        while (fs.next_ns <= last && send_pfc(h, f.priority, 0xFFFF, now)) {
            h.c.storm_frames++;
            fs.next_ns += f.interval_ns;
        }
        if (fs.next_ns <= last) return;  // refused: the rest at the next poll
    }
    if (now >= end && send_pfc(h, f.priority, 0, now)) {
        h.c.storm_frames++;
        fs.done = true;
    }
}

// A slow receiver's frames wait in its RX buffer; at xoff_bytes its NIC pauses the peer.
void HostSet::hold(Host &h, rte_mbuf **pkts, uint16_t n, uint64_t now) {
    for (uint16_t i = 0; i < n; i++) {
        h.held.push_back(pkts[i]);
        h.held_bytes += pkts[i]->pkt_len;
    }
    h.c.held_frames += n;
    h.c.held_max_bytes = std::max(h.c.held_max_bytes, h.held_bytes);
    if (!h.rx_xoff && h.held_bytes >= h.slow->xoff_bytes &&
        send_pfc(h, h.slow->priority, 0xFFFF, now)) {
        h.rx_xoff = true;
        for (FaultState &fs : h.faults)
            if (&cfg_.faults[fs.index] == h.slow) fs.next_ns = now + h.slow->interval_ns;
    }
}

uint32_t HostSet::poll_one(Host &h, uint64_t now) {
    const uint64_t rx0 = h.c.rx_frames, tx0 = h.c.tx_frames;
    if (!h.faults.empty()) run_faults(h, now);
    rte_mbuf *pkts[kBurst];
    const uint16_t n = io_.rx_burst(h.port, 0, pkts, kBurst);
    if (n && h.slow)
        hold(h, pkts, n, now);
    else if (n)
        on_rx(size_t(&h - hosts_.data()), pkts, n, now);
    start_flows(h, now);
    resolve_next_hops(h, now);
    flush_ctl(h, now);
    send_udp(h, now);
    send_data(h, now);
    return uint32_t(h.c.rx_frames - rx0 + h.c.tx_frames - tx0);
}

uint32_t HostSet::poll(uint64_t now_ns) {
    last_poll_ns_ = now_ns;
    uint32_t moved = 0;
    for (Host &h : hosts_) moved += poll_one(h, now_ns);
    sample_bytes(now_ns);
    return moved;
}

uint32_t HostSet::poll_host(size_t host, uint64_t now_ns) {
    last_poll_ns_ = now_ns;
    const uint32_t moved = poll_one(hosts_.at(host), now_ns);
    sample_bytes(now_ns);
    return moved;
}

uint64_t HostSet::next_event_ns(size_t host) const {
    return host_next_event(hosts_.at(host));
}

bool HostSet::active() const {
    for (const Host &h : hosts_)
        if (!h.active.empty()) return true;
    return false;
}

// Local work is RoCE flows and UDP flows (whose senders are always local): a run of UDP flows
// alone ends too, once they have stopped. A process with neither (receivers) runs on.
bool HostSet::finished(uint64_t now_ns) const {
    return cfg_.run.exit_when_done && (local_flows_ || !cfg_.udp_flows.empty()) &&
           done_flows_ == local_flows_ &&
           now_ns >= std::max(last_done_ns_, last_udp_ns_) + cfg_.run.linger_ns && !udp_pending();
}

uint64_t HostSet::host_next_event(const Host &h) const {
    const uint64_t now = last_poll_ns_;
    uint64_t t = kNeverNs;
    if (!h.backlog.empty()) return now;  // the device refused frames: retry
    if (h.next_pending < h.pending.size())
        t = std::min(t, cfg_.run.start_delay_ns + flows_[h.pending[h.next_pending]].spec.start_ns);
    for (const Host::Ctl &c : h.ctl) t = std::min(t, std::max(now, h.pause.paused_until(c.prio)));
    bool unresolved = false, sampling = false;
    for (uint32_t fi : h.active) {
        const Flow &f = flows_[fi];
        if (f.done) {
            t = std::min(t, now);  // retired at the next poll
            continue;
        }
        sampling = true;
        t = std::min(t, f.rp.next_event_ns());
        const uint64_t rto = f.qp.timeout_at_ns(cfg_.run.rto_ns);
        t = std::min(t, rto);
        if (!f.qp.has_segment()) continue;
        MacAddr mac;
        IpAddr nh;
        if (!next_hop_mac(h, cfg_.hosts[f.spec.dst].ip.addr, &mac, &nh)) {
            unresolved = true;
            continue;
        }
        const uint64_t data_at =
            std::max(h.line.next_ns(), h.pause.paused_until(data_priority(f)));
        t = std::min(t, std::max(data_at, f.pacer.next_ns()));
    }
    for (const Host::Udp &u : h.udp) {
        const uint64_t due = u.sched.due_ps();
        if (due == kUdpNever) continue;
        MacAddr mac;
        IpAddr nh;
        if (!next_hop_mac(h, cfg_.hosts[cfg_.udp_flows[u.flow].dst].ip.addr, &mac, &nh)) {
            unresolved = true;
            continue;
        }
        t = std::min(t, std::max({(due + 999) / 1000, h.line.next_ns(),
                                  h.udp_pause.paused_until(cfg_.udp_flows[u.flow].priority)}));
    }
    if (unresolved) t = std::min(t, h.next_arp_ns);
    if (sampling && cfg_.run.sample_ns) t = std::min(t, next_sample_ns_);
    return t;
}

uint64_t HostSet::next_event_ns() const {
    uint64_t t = kNeverNs;
    for (const Host &h : hosts_) t = std::min(t, host_next_event(h));
    return t;
}

}  // namespace rocesw::roce
