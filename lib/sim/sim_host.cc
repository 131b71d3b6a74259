#include "sim/sim_host.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "pfc/frame.h"
#include "pkt/bytes.h"
#include "sim/routing.h"

namespace rocesw::sim {

UdpHost::UdpHost(const UdpHostParams &p, const std::vector<UdpFlowSpec> &flows, UdpRecorder &rec)
    : p_(p), rec_(rec) {
    for (uint32_t i = 0; i < flows.size(); i++) {
        if (flows[i].src != p.node) continue;
        flows_.push_back(Flow{i, &flows[i],
                              roce::UdpSchedule(flows[i].start, flows[i].stop,
                                                flows[i].frame_bytes, flows[i].rate_bps)});
    }
}

TimePs UdpHost::due(const Flow &f) const {
    const TimePs t = f.sched.due_ps();
    if (t == roce::kUdpNever) return kNever;
    return std::max(t, paused_until_[f.spec->priority & 7]);
}

TimePs UdpHost::next_event(TimePs wire_free) const {
    TimePs best = kNever;
    for (const auto &f : flows_) best = std::min(best, due(f));
    return best == kNever ? kNever : std::max(best, wire_free);
}

rte_mbuf *UdpHost::build(const Flow &f) {
    const UdpFlowSpec &s = *f.spec;
    const uint32_t len = roce::udp_flow_frame_len(s.frame_bytes);
    rte_mbuf *m = rte_pktmbuf_alloc(p_.pool);
    if (!m) return nullptr;
    uint8_t *b = reinterpret_cast<uint8_t *>(rte_pktmbuf_append(m, uint16_t(len)));
    if (!b) {
        rte_pktmbuf_free(m);
        return nullptr;
    }
    roce::UdpFlowAddr a;
    a.dst_mac = p_.peer_mac;
    a.src_mac = p_.mac;
    a.src_ip = p_.ip;
    a.dst_ip = host_address(s.dst);
    a.dscp = s.dscp;
    a.ecn = s.ecn;
    a.sport = s.sport;
    a.dport = s.dport;
    roce::build_udp_flow_frame(b, len, a, {f.id, f.sched.seq(), f.sched.due_ps()});
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
    best->sched.advance();
}

bool UdpHost::is_mac_control(const rte_mbuf *m) {
    const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
    return rte_pktmbuf_data_len(m) >= 14 && rd16(b + 12) == kEtherTypeMacControl;
}

bool UdpHost::is_udp_flow_frame(const rte_mbuf *m) {
    roce::UdpFlowStamp s;
    return roce::parse_udp_flow_frame(rte_pktmbuf_mtod(m, const uint8_t *),
                                      rte_pktmbuf_data_len(m), &s);
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
        } else if (roce::UdpFlowStamp st; roce::parse_udp_flow_frame(b, len, &st)) {
            rec_.on_delivery(st.flow, st.seq, st.sent_ps, now);
        } else {
            rx_other_++;
        }
        rte_pktmbuf_free(m);
    }
}

}  // namespace rocesw::sim
