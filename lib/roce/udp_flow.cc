#include "roce/udp_flow.h"

#include <algorithm>
#include <cstring>

#include "pkt/bytes.h"
#include "pkt/checksum.h"

namespace rocesw::roce {

namespace {
constexpr uint64_t kPsPerS = 1'000'000'000'000ull;
void wr64(uint8_t *p, uint64_t v) {
    wr32(p, uint32_t(v >> 32));
    wr32(p + 4, uint32_t(v));
}
uint64_t rd64(const uint8_t *p) {
    return uint64_t(rd32(p)) << 32 | rd32(p + 4);
}
}  // namespace

void build_udp_flow_frame(uint8_t *b, uint32_t len, const UdpFlowAddr &a, const UdpFlowStamp &s) {
    std::memcpy(b, a.dst_mac.b.data(), 6);
    std::memcpy(b + 6, a.src_mac.b.data(), 6);
    wr16(b + 12, kEtherTypeIpv4);
    uint8_t *ip = b + 14;
    ip[0] = 0x45;
    ip[1] = uint8_t(a.dscp << 2 | (a.ecn ? 2 : 0));
    wr16(ip + 2, uint16_t(len - 14));
    wr16(ip + 4, uint16_t(s.seq));
    wr16(ip + 6, 0x4000);  // DF
    ip[8] = 64;
    ip[9] = kProtoUdp;
    wr16(ip + 10, 0);
    wr32(ip + 12, a.src_ip);
    wr32(ip + 16, a.dst_ip);
    wr16(ip + 10, csum_finish(csum_partial(ip, 20)));
    uint8_t *udp = ip + 20;
    wr16(udp, a.sport);
    wr16(udp + 2, a.dport);
    wr16(udp + 4, uint16_t(len - 34));
    wr16(udp + 6, 0);
    uint8_t *pl = b + kUdpFlowHeaders;
    std::memset(pl, 0, len - kUdpFlowHeaders);
    wr32(pl, kUdpFlowMagic);
    wr32(pl + 4, s.flow);
    wr64(pl + 8, s.seq);
    wr64(pl + 16, s.sent_ps);
}

bool parse_udp_flow_frame(const uint8_t *b, uint32_t len, UdpFlowStamp *s) {
    if (len < kUdpFlowMinFrame || rd16(b + 12) != kEtherTypeIpv4 || b[14] != 0x45 ||
        b[23] != kProtoUdp || rd32(b + kUdpFlowHeaders) != kUdpFlowMagic)
        return false;
    const uint8_t *pl = b + kUdpFlowHeaders;
    s->flow = rd32(pl + 4);
    s->seq = rd64(pl + 8);
    s->sent_ps = rd64(pl + 16);
    return true;
}

UdpSchedule::UdpSchedule(uint64_t start_ps, uint64_t stop_ps, uint32_t frame_bytes,
                         uint64_t rate_bps)
    : start_(start_ps), stop_(stop_ps), rate_(rate_bps) {
    bits_ps_ = (unsigned __int128)(udp_flow_frame_len(frame_bytes) + 24) * 8 * kPsPerS;
    t_ = start_ < stop_ && rate_ ? start_ : kUdpNever;
}

void UdpSchedule::advance() {
    if (t_ == kUdpNever) return;
    k_++;
    const uint64_t t = start_ + uint64_t(bits_ps_ * k_ / rate_);
    t_ = t < stop_ ? t : kUdpNever;
}

void UdpRecorder::on_delivery(uint32_t flow, uint64_t seq, uint64_t sent_ps, uint64_t now_ps) {
    if (flow >= stats_.size()) return;
    UdpFlowStats &s = stats_[flow];
    s.received++;
    if (seq < s.next_seq)
        s.out_of_order++;
    else
        s.next_seq = seq + 1;
    const uint64_t d = now_ps > sent_ps ? now_ps - sent_ps : 0;
    s.min_delay = std::min(s.min_delay, d);
    s.max_delay = std::max(s.max_delay, d);
    s.sum_delay += d;
    if (keep_) deliveries_.push_back(UdpDelivery{flow, seq, sent_ps, now_ps});
}

uint64_t UdpRecorder::sent() const {
    uint64_t n = 0;
    for (const auto &s : stats_) n += s.sent;
    return n;
}
uint64_t UdpRecorder::received() const {
    uint64_t n = 0;
    for (const auto &s : stats_) n += s.received;
    return n;
}

void write_udp_flows_csv(std::FILE *f, const std::vector<UdpFlowRow> &rows,
                         const UdpRecorder &rec) {
    std::fprintf(f,
                 "flow,src,dst,sport,dport,sent,received,out_of_order,min_delay_ps,"
                 "mean_delay_ps,max_delay_ps\n");
    for (size_t i = 0; i < rows.size() && i < rec.stats().size(); i++) {
        const UdpFlowRow &r = rows[i];
        const UdpFlowStats &st = rec.stats()[i];
        std::fprintf(f, "%zu,%u,%u,%u,%u,%lu,%lu,%lu,%lu,%lu,%lu\n", i, r.src, r.dst, r.sport,
                     r.dport, (unsigned long)st.sent, (unsigned long)st.received,
                     (unsigned long)st.out_of_order,
                     (unsigned long)(st.received ? st.min_delay : 0),
                     (unsigned long)(st.received ? uint64_t(st.sum_delay / st.received) : 0),
                     (unsigned long)st.max_delay);
    }
}

}  // namespace rocesw::roce
