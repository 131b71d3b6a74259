#include "sim/sim_host.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "pfc/frame.h"
#include "pkt/bytes.h"
#include "pkt/checksum.h"

namespace rocesw::sim {

namespace {
constexpr uint32_t kMagic = 0x5253494d;  // "RSIM"
constexpr uint32_t kHeaders = 14 + 20 + 8;
constexpr uint32_t kPayloadOff = kHeaders;
constexpr uint32_t kMinFrame = kHeaders + 24;

void wr64(uint8_t *p, uint64_t v) {
    wr32(p, uint32_t(v >> 32));
    wr32(p + 4, uint32_t(v));
}
uint64_t rd64(const uint8_t *p) {
    return uint64_t(rd32(p)) << 32 | rd32(p + 4);
}
}  // namespace

void UdpRecorder::on_delivery(uint32_t flow, uint64_t seq, TimePs sent, TimePs now) {
    if (flow >= stats_.size()) return;
    UdpFlowStats &s = stats_[flow];
    s.received++;
    if (seq < s.next_seq)
        s.out_of_order++;
    else
        s.next_seq = seq + 1;
    const TimePs d = now - sent;
    s.min_delay = std::min(s.min_delay, d);
    s.max_delay = std::max(s.max_delay, d);
    s.sum_delay += d;
    if (keep_) deliveries_.push_back(UdpDelivery{flow, seq, sent, now});
}

UdpHost::UdpHost(const UdpHostParams &p, const std::vector<UdpFlowSpec> &flows, UdpRecorder &rec)
    : p_(p), rec_(rec) {
    for (uint32_t i = 0; i < flows.size(); i++) {
        if (flows[i].src != p.node) continue;
        Flow f{i, &flows[i]};
        f.bits_ps =
            (unsigned __int128)(std::max(flows[i].frame_bytes, kMinFrame) + 24) * 8 * kPsPerS;
        f.t = flows[i].start < flows[i].stop && flows[i].rate_bps ? flows[i].start : kNever;
        flows_.push_back(f);
    }
}

TimePs UdpHost::due(const Flow &f) const {
    if (f.t == kNever) return kNever;
    return std::max(f.t, paused_until_[f.spec->priority & 7]);
}

void UdpHost::advance(Flow &f) {
    f.k++;
    const TimePs t = f.spec->start + TimePs(f.bits_ps * f.k / f.spec->rate_bps);
    f.t = t < f.spec->stop ? t : kNever;
}

TimePs UdpHost::next_event(TimePs wire_free) const {
    TimePs best = kNever;
    for (const auto &f : flows_) best = std::min(best, due(f));
    return best == kNever ? kNever : std::max(best, wire_free);
}

rte_mbuf *UdpHost::build(const Flow &f) {
    const UdpFlowSpec &s = *f.spec;
    const uint32_t len = std::max(s.frame_bytes, kMinFrame);
    rte_mbuf *m = rte_pktmbuf_alloc(p_.pool);
    if (!m) return nullptr;
    uint8_t *b = reinterpret_cast<uint8_t *>(rte_pktmbuf_append(m, uint16_t(len)));
    if (!b) {
        rte_pktmbuf_free(m);
        return nullptr;
    }
    std::memcpy(b, p_.peer_mac.b.data(), 6);
    std::memcpy(b + 6, p_.mac.b.data(), 6);
    wr16(b + 12, kEtherTypeIpv4);
    uint8_t *ip = b + 14;
    ip[0] = 0x45;
    ip[1] = uint8_t(s.dscp << 2 | (s.ecn ? 2 : 0));
    wr16(ip + 2, uint16_t(len - 14));
    wr16(ip + 4, uint16_t(f.k));
    wr16(ip + 6, 0x4000);  // DF
    ip[8] = 64;
    ip[9] = kProtoUdp;
    wr16(ip + 10, 0);
    wr32(ip + 12, p_.ip);
    wr32(ip + 16, 0x0b000001u + (s.dst / 256) * 0x10000u + (s.dst % 256) * 0x100u);
    wr16(ip + 10, csum_finish(csum_partial(ip, 20)));
    uint8_t *udp = ip + 20;
    wr16(udp, s.sport);
    wr16(udp + 2, s.dport);
    wr16(udp + 4, uint16_t(len - 34));
    wr16(udp + 6, 0);  // no checksum (IPv4 allows it)
    uint8_t *pl = b + kPayloadOff;
    std::memset(pl, 0, len - kPayloadOff);
    wr32(pl, kMagic);
    wr32(pl + 4, f.id);
    wr64(pl + 8, f.k);
    wr64(pl + 16, f.t);
    return m;
}

void UdpHost::run(TimePs now, TimePs wire_free, std::vector<rte_mbuf *> &out) {
    if (wire_free > now) return;
    // The flow whose packet is due first (ties: flow order); one frame per run, since it
    // makes the wire busy.
    Flow *best = nullptr;
    TimePs bt = kNever;
    for (auto &f : flows_) {
        const TimePs d = due(f);
        if (d <= now && d < bt) {
            bt = d;
            best = &f;
        }
    }
    if (!best) return;
    rte_mbuf *m = build(*best);
    if (m) {
        out.push_back(m);
        rec_.on_sent(best->id);
    } else {
        rec_.stats()[best->id].alloc_failed++;
    }
    advance(*best);
}

bool UdpHost::is_mac_control(const rte_mbuf *m) {
    const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
    return rte_pktmbuf_data_len(m) >= 14 && rd16(b + 12) == kEtherTypeMacControl;
}

bool UdpHost::is_udp_flow_frame(const rte_mbuf *m) {
    const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
    return rte_pktmbuf_data_len(m) >= kMinFrame && rd16(b + 12) == kEtherTypeIpv4 &&
           b[23] == kProtoUdp && rd32(b + kPayloadOff) == kMagic;
}

void UdpHost::on_rx(rte_mbuf **frames, uint16_t n, TimePs now) {
    for (uint16_t i = 0; i < n; i++) {
        rte_mbuf *m = frames[i];
        const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
        const uint32_t len = rte_pktmbuf_data_len(m);
        if (is_mac_control(m)) {
            MacControlFrame mc;
            if (parse_mac_control(b, len, &mc) == MacControlError::none) {
                pause_frames_++;
                for (unsigned p = 0; p < 8; p++) {
                    if (!(mc.enable >> p & 1)) continue;
                    const uint16_t q = mc.pfc ? mc.quanta[p] : mc.quanta[0];
                    // quanta x 512 bit times at the port rate, in ps, rounded up.
                    const unsigned __int128 bits = (unsigned __int128)q * kQuantumBits * kPsPerS;
                    paused_until_[p] =
                        q ? now + TimePs((bits + p_.port_rate_bps - 1) / p_.port_rate_bps) : 0;
                }
            }
        } else if (is_udp_flow_frame(m)) {
            const uint8_t *pl = b + kPayloadOff;
            rec_.on_delivery(rd32(pl + 4), rd64(pl + 8), rd64(pl + 16), now);
        } else {
            rx_other_++;
        }
        rte_pktmbuf_free(m);
    }
}

}  // namespace rocesw::sim
