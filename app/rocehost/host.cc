#include "host.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_pause.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "pfc/frame.h"
#include "pkt/bytes.h"
#include "pkt/checksum.h"

namespace rocesw::rocehost {

namespace {

constexpr uint16_t kBurst = 32;

// A 32-bit summary of an address: the UDP source-port hash and receiver keys use it.
uint32_t fold(const IpAddr &a) {
    if (!a.is_v6) return a.v4;
    uint32_t x = 0;
    for (int i = 0; i < 16; i += 4) x ^= rd32(a.v6.data() + i);
    return x;
}

IpAddr ip_of(const roce::ParsedRoce &p, bool src) {
    IpAddr a;
    a.is_v6 = p.is_v6;
    if (p.is_v6)
        a.v6 = src ? p.src_ip6 : p.dst_ip6;
    else
        a.v4 = src ? p.src_ip4 : p.dst_ip4;
    return a;
}

}  // namespace

NeighKey neigh_key(const IpAddr &a) {
    NeighKey k{};
    if (a.is_v6) return a.v6;
    k[10] = k[11] = 0xFF;
    wr32(k.data() + 12, a.v4);
    return k;
}

Emulator::Emulator(const HostRunConfig &cfg, const std::vector<uint16_t> &port_ids,
                   rte_mempool *pool, uint64_t tsc_hz)
    : cfg_(cfg), pool_(pool) {
    ns_per_tsc_ = 1e9 / double(tsc_hz);
    for (size_t i = 0; i < port_ids.size(); i++) {
        Host h;
        h.cfg = cfg.hosts[i];
        h.port_id = port_ids[i];
        h.pause = roce::PauseState(h.cfg.line_rate_bps, cfg.traffic.pfc_mask);
        h.line = roce::Pacer(cfg.run.pacer_slack_ns);
        if (h.cfg.gateway && h.cfg.gateway_mac)
            h.neigh[neigh_key(*h.cfg.gateway)] = *h.cfg.gateway_mac;
        hosts_.push_back(std::move(h));
    }
    auto specs = roce::generate_workload(cfg.workload.spec);
    flows_.resize(specs.size());
    for (size_t i = 0; i < specs.size(); i++) {
        Flow &f = flows_[i];
        f.spec = specs[i];
        f.qpn = kQpnBase + specs[i].id;
        if (f.spec.src < hosts_.size()) {
            f.host = int(f.spec.src);
            Host &h = hosts_[f.spec.src];
            roce::DcqcnParams p = cfg.dcqcn;
            p.line_rate_bps = h.cfg.line_rate_bps;
            f.rp = roce::DcqcnRp(p, &f.trace);
            f.qp = roce::SendQp(cfg.run.mtu, roce::initial_psn(f.qpn), cfg.run.ack_every,
                                cfg.run.window);
            f.pacer = roce::Pacer(cfg.run.pacer_slack_ns);
            f.udp_src = roce::udp_src_port_for_qp(fold(h.cfg.ip.addr), f.qpn);
            h.pending.push_back(uint32_t(i));
            local_flows_++;
        }
    }
}

uint64_t Emulator::now_ns() const {
    return uint64_t(double(rte_rdtsc() - tsc0_) * ns_per_tsc_);
}

rte_mbuf *Emulator::alloc(Host &h, uint32_t len) {
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

roce::L2L3 Emulator::base_l2l3(Host &h, const MacAddr &dst_mac, const IpAddr &dst) const {
    roce::L2L3 l;
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

void Emulator::send_ctl(Host &h, const roce::PacketSpec &s, uint8_t prio) {
    rte_mbuf *m = alloc(h, roce::packet_len(s));
    if (!m) return;
    roce::build_packet(rte_pktmbuf_mtod(m, uint8_t *), m->data_len, s);
    h.ctl.push_back({m, prio});
}

void Emulator::send_arp(Host &h, uint16_t op, const MacAddr &dst_mac, uint32_t dst_ip,
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

void Emulator::handle_arp(Host &h, const uint8_t *f, uint32_t len) {
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

bool Emulator::next_hop_mac(Host &h, const IpAddr &dst, MacAddr *mac, IpAddr *nh) {
    *nh = dst;
    if (!h.cfg.ip.subnet().contains(dst) && h.cfg.gateway) *nh = *h.cfg.gateway;
    auto it = h.neigh.find(neigh_key(*nh));
    if (it == h.neigh.end()) return false;
    *mac = it->second;
    return true;
}

void Emulator::send_nd(Host &h, uint8_t type, const MacAddr &dst_mac, const IpAddr &dst_ip,
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

void Emulator::handle_nd(Host &h, const uint8_t *f, uint32_t len) {
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

void Emulator::solicit(Host &h, const IpAddr &nh) {
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

void Emulator::handle_roce(Host &h, const uint8_t *f, uint32_t len, uint64_t now) {
    roce::ParsedRoce p;
    auto r = roce::parse_packet(f, len, cfg_.run.verify_icrc, &p);
    if (r == roce::ParseResult::not_roce) {
        h.c.rx_not_roce++;
        return;
    }
    if (r == roce::ParseResult::truncated) {
        h.c.rx_truncated++;
        return;
    }
    if (r == roce::ParseResult::bad_icrc) {
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
    if (roce::is_write(op)) {
        const IpAddr src = ip_of(p, true);
        const uint64_t key = uint64_t(fold(src)) << 24 | p.bth.dest_qp;
        auto it = h.recv.find(key);
        if (it == h.recv.end()) {
            RecvEntry e{roce::RecvQp(roce::initial_psn(p.bth.dest_qp)), {}, src, p.bth.dest_qp};
            it = h.recv.emplace(key, e).first;
        }
        RecvEntry &e = it->second;
        if (p.ecn == roce::Ecn::ce && cfg_.dcqcn_enabled &&
            e.np.on_ce(now, cfg_.dcqcn.cnp_interval_ns)) {
            roce::L2L3 l = base_l2l3(h, peer_mac, src);
            l.dscp = cfg_.traffic.cnp_dscp;
            l.ecn = roce::Ecn::not_ect;
            l.udp_src = roce::udp_src_port_for_qp(fold(h.cfg.ip.addr), p.bth.dest_qp);
            send_ctl(h, roce::cnp_spec(l, p.bth.dest_qp), cfg_.traffic.cnp_priority);
            h.c.cnps_tx++;
        } else if (p.ecn == roce::Ecn::ce && !cfg_.dcqcn_enabled) {
            e.np.ce_packets++;
        }
        roce::RecvAction a = e.qp.on_data(op, p.bth.psn, p.bth.ack_req, p.payload_len);
        if (a.reply) {
            roce::L2L3 l = base_l2l3(h, peer_mac, src);
            l.dscp = cfg_.traffic.ack_dscp;
            l.ecn = roce::Ecn::not_ect;
            l.udp_src = roce::udp_src_port_for_qp(fold(h.cfg.ip.addr), p.bth.dest_qp);
            send_ctl(h, roce::ack_spec(l, p.bth.dest_qp, a.psn, a.syndrome, a.msn),
                     cfg_.traffic.data_priority);
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
    if (op == uint8_t(roce::Opcode::cnp)) {
        h.c.cnps_rx++;
        fl.cnps_rx++;
        if (cfg_.dcqcn_enabled && !fl.done) fl.rp.on_cnp(now);
        return;
    }
    if (op == uint8_t(roce::Opcode::ack)) {
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
        }
    }
}

void Emulator::poll_rx(Host &h, uint64_t now) {
    rte_mbuf *pkts[kBurst];
    uint16_t n = rte_eth_rx_burst(h.port_id, 0, pkts, kBurst);
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
                if (parse_mac_control(f, len, &mc) == MacControlError::none)
                    h.pause.on_frame(mc, now, &h.pause_trace);
                else
                    h.c.mac_control_bad++;
            } else if (et == kEtherTypeIpv6 && len >= 14 + 40 && f[14 + 6] == kProtoIcmpv6) {
                handle_nd(h, f, len);
            } else {
                handle_roce(h, f, len, now);
            }
        }
        rte_pktmbuf_free(pkts[i]);
    }
}

void Emulator::flush_ctl(Host &h, uint64_t now) {
    if (h.ctl.empty()) return;
    rte_mbuf *out[kBurst];
    uint16_t n = 0;
    size_t keep = 0;
    for (size_t i = 0; i < h.ctl.size(); i++) {
        if (n < kBurst && !h.pause.paused(h.ctl[i].prio, now))
            out[n++] = h.ctl[i].m;
        else
            h.ctl[keep++] = h.ctl[i];
    }
    h.ctl.resize(keep);
    uint16_t sent = rte_eth_tx_burst(h.port_id, 0, out, n);
    for (uint16_t i = 0; i < sent; i++) {
        h.line.on_send(std::max<uint32_t>(out[i]->data_len, 60) + roce::kWireOverheadBytes,
                       h.cfg.line_rate_bps, now);
        h.c.tx_frames++;
    }
    // What the device refused goes back to the front, in order.
    if (sent < n) {
        h.c.tx_retries++;
        std::vector<Host::Ctl> rest;
        for (uint16_t i = sent; i < n; i++) rest.push_back({out[i], 0});
        h.ctl.insert(h.ctl.begin(), rest.begin(), rest.end());
    }
}

void Emulator::start_flows(Host &h, uint64_t now) {
    const uint64_t t0 = cfg_.run.start_delay_ns;
    while (h.next_pending < h.pending.size()) {
        Flow &f = flows_[h.pending[h.next_pending]];
        if (now < t0 + f.spec.start_ns) break;
        f.started = true;
        f.start_ns = t0 + f.spec.start_ns;
        f.qp.post_write(f.spec.size_bytes);
        f.qp.note_progress(now);
        f.trace.push_back(
            {now, h.cfg.line_rate_bps, h.cfg.line_rate_bps, f.rp.alpha(), roce::RpEvent::start});
        if (cfg_.run.sample_ns) f.bytes.push_back({f.start_ns, 0, 0});
        h.active.push_back(h.pending[h.next_pending]);
        h.next_pending++;
    }
}

void Emulator::send_data(Host &h, uint64_t now) {
    // Retire finished flows and run the QP timers.
    size_t keep = 0;
    for (size_t i = 0; i < h.active.size(); i++) {
        Flow &f = flows_[h.active[i]];
        if (f.done) continue;
        f.rp.advance(now);
        f.qp.on_timer(now, cfg_.run.rto_ns);
        h.active[keep++] = h.active[i];
    }
    h.active.resize(keep);
    if (!h.backlog.empty()) {
        uint16_t sent =
            rte_eth_tx_burst(h.port_id, 0, h.backlog.data(), uint16_t(h.backlog.size()));
        h.backlog.erase(h.backlog.begin(), h.backlog.begin() + sent);
        if (!h.backlog.empty()) return;
    }
    if (h.active.empty() || h.pause.paused(cfg_.traffic.data_priority, now)) return;
    rte_mbuf *out[kBurst];
    uint16_t n = 0;
    size_t tried = 0;
    while (n < kBurst && h.line.ready(now) && tried < h.active.size()) {
        if (h.rr >= h.active.size()) h.rr = 0;
        Flow &f = flows_[h.active[h.rr]];
        h.rr++;
        MacAddr mac;
        IpAddr nh;
        if (!f.qp.has_segment() || !f.pacer.ready(now) ||
            !next_hop_mac(h, cfg_.hosts[f.spec.dst].ip.addr, &mac, &nh)) {
            tried++;
            continue;
        }
        tried = 0;
        rte_mbuf *m = rte_pktmbuf_alloc(pool_);
        if (!m) {
            h.c.alloc_failures++;
            break;
        }
        roce::Segment seg = f.qp.next_segment();
        roce::PacketSpec s;
        s.l = base_l2l3(h, mac, cfg_.hosts[f.spec.dst].ip.addr);
        s.l.dscp = cfg_.traffic.data_dscp;
        s.l.ecn = cfg_.traffic.data_ecn;
        s.l.udp_src = f.udp_src;
        s.bth.opcode = seg.opcode;
        s.bth.dest_qp = f.qpn;
        s.bth.psn = seg.psn;
        s.bth.ack_req = seg.ack_req;
        s.reth = {0x10000000ull, f.qpn, uint32_t(f.spec.size_bytes)};
        s.payload_len = seg.len;
        const uint32_t len = roce::packet_len(s);
        rte_pktmbuf_append(m, uint16_t(len));  // the pool's data room holds an MTU frame
        roce::build_packet(rte_pktmbuf_mtod(m, uint8_t *), len, s);
        const uint32_t wire = std::max<uint32_t>(len, 60) + roce::kWireOverheadBytes;
        const uint64_t rate = cfg_.dcqcn_enabled ? f.rp.rate_bps() : h.cfg.line_rate_bps;
        f.pacer.on_send(wire, rate, now);
        h.line.on_send(wire, h.cfg.line_rate_bps, now);
        if (cfg_.dcqcn_enabled) f.rp.on_bytes_sent(wire, now);
        f.packets_tx++;
        h.c.tx_data++;
        h.c.tx_bytes += len;
        out[n++] = m;
    }
    if (!n) return;
    uint16_t sent = rte_eth_tx_burst(h.port_id, 0, out, n);
    h.c.tx_frames += n;
    if (sent < n) {
        h.c.tx_retries++;
        h.backlog.insert(h.backlog.end(), out + sent, out + n);
    }
}

// One byte-timeline point per started, unfinished local flow every sample_ns (late loop
// iterations skip missed points rather than invent them).
void Emulator::sample_bytes(uint64_t now) {
    if (!cfg_.run.sample_ns || now < next_sample_ns_) return;
    next_sample_ns_ = now + cfg_.run.sample_ns - (now - next_sample_ns_) % cfg_.run.sample_ns;
    for (const Host &h : hosts_)
        for (uint32_t fi : h.active) {
            Flow &f = flows_[fi];
            if (!f.done) f.bytes.push_back({now, f.qp.sent_bytes(), f.qp.acked_bytes()});
        }
}

uint64_t Emulator::run(const std::atomic<bool> &stop) {
    tsc0_ = rte_rdtsc();
    uint64_t idle_loops = 0;
    uint64_t now = 0, prev = 0;
    bool was_active = false;
    for (;;) {
        now = now_ns();
        if (was_active) {
            const uint64_t gap = now - prev;
            gap_max_ns_ = std::max(gap_max_ns_, gap);
            gaps_100us_ += gap > 100'000;
            gaps_1ms_ += gap > 1'000'000;
        }
        prev = now;
        if (stop.load(std::memory_order_relaxed) || now >= cfg_.run.duration_ns) break;
        if (cfg_.run.exit_when_done && local_flows_ && done_flows_ == local_flows_ &&
            now >= last_done_ns_ + cfg_.run.linger_ns)
            break;
        bool busy = false;
        for (Host &h : hosts_) {
            const uint64_t rx0 = h.c.rx_frames, tx0 = h.c.tx_frames;
            poll_rx(h, now);
            start_flows(h, now);
            // Resolve next hops the started flows need (every 50 ms until answered).
            if (!h.active.empty() && now >= h.next_arp_ns) {
                h.next_arp_ns = now + 50'000'000;
                std::vector<NeighKey> asked;
                for (uint32_t fi : h.active) {
                    MacAddr mac;
                    IpAddr nh;
                    if (next_hop_mac(h, cfg_.hosts[flows_[fi].spec.dst].ip.addr, &mac, &nh))
                        continue;
                    if (std::find(asked.begin(), asked.end(), neigh_key(nh)) != asked.end())
                        continue;
                    asked.push_back(neigh_key(nh));
                    solicit(h, nh);
                }
            }
            flush_ctl(h, now);
            send_data(h, now);
            busy |= h.c.rx_frames != rx0 || h.c.tx_frames != tx0 || !h.active.empty();
        }
        sample_bytes(now);
        was_active = false;
        for (const Host &h : hosts_) was_active |= !h.active.empty();
        if (busy) {
            idle_loops = 0;
        } else if (++idle_loops > 1000 && cfg_.run.idle_sleep_us) {
            usleep(useconds_t(cfg_.run.idle_sleep_us));
        }
    }
    // Free what is still queued.
    for (Host &h : hosts_) {
        for (auto &c : h.ctl) rte_pktmbuf_free(c.m);
        for (auto *m : h.backlog) rte_pktmbuf_free(m);
        h.ctl.clear();
        h.backlog.clear();
    }
    return now;
}

bool Emulator::write_results(const std::string &dir, uint64_t run_ns) const {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    auto open = [&](const char *name, std::ofstream &o) {
        o.open(dir + "/" + name);
        if (!o) spdlog::error("{}/{}: cannot write", dir, name);
        return bool(o);
    };
    std::vector<roce::FlowResult> results;
    std::ofstream f;
    if (!open("flows.csv", f)) return false;
    f << "flow,src,dst,size_bytes,start_ns,finish_ns,fct_ns,ideal_ns,slowdown,completed,"
         "packets_tx,retransmitted,naks,timeouts,cnps_rx\n";
    for (const Flow &fl : flows_) {
        if (fl.host < 0) continue;
        const Host &h = hosts_[size_t(fl.host)];
        roce::FlowResult r;
        r.id = fl.spec.id;
        r.src = cfg_.hosts[fl.spec.src].name;
        r.dst = cfg_.hosts[fl.spec.dst].name;
        r.size_bytes = fl.spec.size_bytes;
        r.start_ns = fl.start_ns;
        r.finish_ns = fl.finish_ns;
        r.completed = fl.done;
        r.ideal_ns = roce::ideal_fct_ns(fl.spec.size_bytes, cfg_.run.mtu, h.cfg.line_rate_bps,
                                        cfg_.run.base_rtt_ns, h.cfg.ip.addr.is_v6);
        r.retransmitted = fl.qp.retransmitted();
        char sd[32];
        std::snprintf(sd, sizeof(sd), "%.4f", r.slowdown());
        f << r.id << ',' << r.src << ',' << r.dst << ',' << r.size_bytes << ',' << r.start_ns << ','
          << r.finish_ns << ',' << r.fct_ns() << ',' << r.ideal_ns << ',' << sd << ','
          << (r.completed ? 1 : 0) << ',' << fl.packets_tx << ',' << r.retransmitted << ','
          << fl.qp.naks() << ',' << fl.qp.timeouts() << ',' << fl.cnps_rx << '\n';
        results.push_back(r);
    }
    std::ofstream q;
    if (!open("qp_rates.csv", q)) return false;
    q << "flow,qpn,t_ns,rc_bps,rt_bps,alpha,event\n";
    for (const Flow &fl : flows_)
        for (const auto &c : fl.trace)
            q << fl.spec.id << ',' << fl.qpn << ',' << c.t_ns << ',' << c.rc_bps << ',' << c.rt_bps
              << ',' << c.alpha << ',' << roce::rp_event_name(c.event) << '\n';
    std::ofstream fb;
    if (!open("flow_bytes.csv", fb)) return false;
    fb << "flow,t_ns,sent_bytes,acked_bytes\n";
    for (const Flow &fl : flows_)
        for (const auto &b : fl.bytes)
            fb << fl.spec.id << ',' << b.t_ns << ',' << b.sent_bytes << ',' << b.acked_bytes
               << '\n';
    std::ofstream rc;
    if (!open("receivers.csv", rc)) return false;
    rc << "host,src_ip,qpn,packets,bytes,messages,psn_gaps,missing_packets,"
          "discarded_out_of_order,duplicates,ce_packets,ce_fraction,cnps_sent,acks_sent,naks_"
          "sent\n";
    nlohmann::json js;
    uint64_t gaps = 0, missing = 0, ce = 0, rx_pkts = 0, rx_msgs = 0, dup = 0, cnps = 0;
    for (const Host &h : hosts_) {
        std::vector<const RecvEntry *> es;
        for (const auto &[k, e] : h.recv) es.push_back(&e);
        std::sort(es.begin(), es.end(), [](auto *a, auto *b) { return a->qpn < b->qpn; });
        for (const RecvEntry *e : es) {
            const auto &s = e->qp.stats();
            const uint64_t all = s.packets + s.discarded_out_of_order + s.duplicates;
            char frac[32];
            std::snprintf(frac, sizeof(frac), "%.4f",
                          all ? double(e->np.ce_packets) / double(all) : 0.0);
            rc << h.cfg.name << ',' << e->src_ip.str() << ',' << e->qpn << ',' << s.packets << ','
               << s.bytes << ',' << s.messages << ',' << s.psn_gaps << ',' << s.missing_packets
               << ',' << s.discarded_out_of_order << ',' << s.duplicates << ',' << e->np.ce_packets
               << ',' << frac << ',' << e->np.cnps << ',' << s.acks_sent << ',' << s.naks_sent
               << '\n';
            gaps += s.psn_gaps;
            missing += s.missing_packets;
            ce += e->np.ce_packets;
            rx_pkts += s.packets;
            rx_msgs += s.messages;
            dup += s.duplicates;
            cnps += e->np.cnps;
        }
    }
    std::ofstream hs;
    if (!open("hosts.csv", hs)) return false;
    hs << "host,tx_frames,tx_data,rx_frames,rx_roce,rx_bad_icrc,rx_truncated,rx_not_roce,"
          "rx_unknown_qp,cnps_tx,cnps_rx,acks_rx,naks_rx,pause_frames,xon_frames,paused_us,"
          "arp_requests_rx,arp_requests_tx,alloc_failures\n";
    nlohmann::json jh = nlohmann::json::array();
    for (const Host &h : hosts_) {
        const uint8_t p = cfg_.traffic.data_priority;
        const double paused_us = double(h.pause.paused_ns(p, run_ns)) / 1000;
        hs << h.cfg.name << ',' << h.c.tx_frames << ',' << h.c.tx_data << ',' << h.c.rx_frames
           << ',' << h.c.rx_roce << ',' << h.c.rx_bad_icrc << ',' << h.c.rx_truncated << ','
           << h.c.rx_not_roce << ',' << h.c.rx_unknown_qp << ',' << h.c.cnps_tx << ','
           << h.c.cnps_rx << ',' << h.c.acks_rx << ',' << h.c.naks_rx << ','
           << h.pause.pause_frames(p) << ',' << h.pause.xon_frames(p) << ',' << paused_us << ','
           << h.c.arp_requests_rx << ',' << h.c.arp_requests_tx << ',' << h.c.alloc_failures
           << '\n';
        jh.push_back({{"name", h.cfg.name},
                      {"tx_data", h.c.tx_data},
                      {"rx_roce", h.c.rx_roce},
                      {"rx_bad_icrc", h.c.rx_bad_icrc},
                      {"cnps_tx", h.c.cnps_tx},
                      {"cnps_rx", h.c.cnps_rx},
                      {"naks_rx", h.c.naks_rx},
                      {"pause_frames", h.pause.pause_frames(p)},
                      {"paused_us", paused_us}});
    }
    std::ofstream ps;
    if (!open("pauses.csv", ps)) return false;
    ps << "host,t_ns,priority,quanta,until_ns\n";
    for (const Host &h : hosts_)
        for (const auto &e : h.pause_trace)
            ps << h.cfg.name << ',' << e.t_ns << ',' << int(e.priority) << ',' << e.quanta << ','
               << e.until_ns << '\n';

    auto buckets = roce::summarize(results);
    uint64_t completed = 0, retx = 0;
    for (const auto &r : results) {
        completed += r.completed;
        retx += r.retransmitted;
    }
    // Fairness over the flows that ran: bytes per flow per second of their FCT.
    std::vector<double> tput;
    for (const auto &r : results)
        if (r.completed && r.fct_ns())
            tput.push_back(double(r.size_bytes) * 8 / double(r.fct_ns()));
    js["run_ns"] = run_ns;
    js["dcqcn"] = cfg_.dcqcn_enabled;
    js["flows_local"] = results.size();
    js["flows_completed"] = completed;
    js["retransmitted_packets"] = retx;
    js["receiver"] = {{"packets", rx_pkts},         {"messages", rx_msgs}, {"psn_gaps", gaps},
                      {"missing_packets", missing}, {"duplicates", dup},   {"ce_packets", ce},
                      {"cnps_sent", cnps}};
    js["hosts"] = jh;
    js["loop_gaps"] = {{"max_us", double(gap_max_ns_) / 1000},
                       {"over_100us", gaps_100us_},
                       {"over_1ms", gaps_1ms_}};
    js["jain_throughput"] = roce::jain_index(tput);
    // Fairness while every local flow is active, over the second half of that interval.
    std::vector<roce::FlowTimeline> tl;
    for (const Flow &fl : flows_)
        if (fl.host >= 0) tl.push_back({fl.start_ns, fl.finish_ns, fl.done, &fl.bytes});
    const roce::OverlapFairness ov = roce::overlap_fairness(tl);
    if (ov.valid) {
        js["overlap"] = {{"window_start_ns", ov.window_start_ns},
                         {"window_end_ns", ov.window_end_ns},
                         {"half_start_ns", ov.half_start_ns},
                         {"rate_bps", ov.rate_bps},
                         {"jain", ov.jain}};
        js["jain_last_half"] = ov.jain;
    } else {
        js["overlap"] = nullptr;
        js["jain_last_half"] = nullptr;
    }
    nlohmann::json jb = nlohmann::json::array();
    for (const auto &b : buckets)
        jb.push_back({{"bucket", b.label},
                      {"flows", b.count},
                      {"mean_fct_us", b.mean_fct_us},
                      {"slowdown_mean", b.mean},
                      {"slowdown_median", b.median},
                      {"slowdown_p99", b.p99}});
    js["slowdown"] = jb;
    std::ofstream sj;
    if (!open("summary.json", sj)) return false;
    sj << js.dump(2) << '\n';

    std::printf("rocehost %s: %llu/%zu local flows completed in %.3f ms, dcqcn %s\n",
                cfg_.run.name.c_str(), (unsigned long long)completed, results.size(),
                double(run_ns) / 1e6, cfg_.dcqcn_enabled ? "on" : "off");
    std::printf(
        "receiver: %llu packets, %llu messages, %llu PSN gaps (%llu missing), %llu CE, "
        "%llu CNPs sent\n",
        (unsigned long long)rx_pkts, (unsigned long long)rx_msgs, (unsigned long long)gaps,
        (unsigned long long)missing, (unsigned long long)ce, (unsigned long long)cnps);
    std::printf(
        "polling loop while flows ran: longest gap %.1f us, %llu gaps > 100 us, %llu > 1 ms\n",
        double(gap_max_ns_) / 1000, (unsigned long long)gaps_100us_, (unsigned long long)gaps_1ms_);
    if (ov.valid) {
        std::printf(
            "fairness: all %zu flows active %.3f..%.3f ms; last half from %.3f ms: Jain "
            "%.4f (rates",
            ov.rate_bps.size(), double(ov.window_start_ns) / 1e6, double(ov.window_end_ns) / 1e6,
            double(ov.half_start_ns) / 1e6, ov.jain);
        for (double r : ov.rate_bps) std::printf(" %.1f", r / 1e6);
        std::printf(" Mb/s); whole flows: Jain %.4f\n", roce::jain_index(tput));
    }
    if (!results.empty()) std::printf("%s", roce::format_summary(buckets).c_str());
    std::fflush(stdout);
    return true;
}

}  // namespace rocesw::rocehost
