#include "roce/packet.h"

#include <cstring>

#include "pkt/bytes.h"
#include "pkt/checksum.h"
#include "roce/icrc.h"

namespace rocesw::roce {

namespace {

uint32_t after_bth_len(const PacketSpec &s) {
    uint32_t n = 0;
    if (opcode_has_reth(s.bth.opcode)) n += kRethLen;
    if (s.bth.opcode == uint8_t(Opcode::ack)) n += kAethLen;
    if (s.bth.opcode == uint8_t(Opcode::cnp)) n += kCnpPadLen;
    return n;
}

uint32_t pad_of(uint32_t payload_len) {
    return (4 - (payload_len & 3)) & 3;
}

}  // namespace

uint32_t packet_len(const PacketSpec &s) {
    return 14 + (s.l.is_v6 ? 40 : 20) + 8 + kBthLen + after_bth_len(s) + s.payload_len +
           pad_of(s.payload_len) + kIcrcLen;
}

uint32_t build_packet(uint8_t *buf, uint32_t cap, const PacketSpec &s) {
    const uint32_t len = packet_len(s);
    if (len > cap) return 0;
    uint8_t *p = buf;
    std::memcpy(p, s.l.dst_mac.data(), 6);
    std::memcpy(p + 6, s.l.src_mac.data(), 6);
    wr16(p + 12, s.l.is_v6 ? kEtherTypeIpv6 : kEtherTypeIpv4);
    uint8_t *ip = p + 14;
    const uint32_t ip_len = s.l.is_v6 ? 40 : 20;
    const uint32_t udp_len = len - 14 - ip_len;
    const uint8_t tos = uint8_t(s.l.dscp << 2 | uint8_t(s.l.ecn));
    if (s.l.is_v6) {
        wr32(ip, 6u << 28 | uint32_t(tos) << 20 | (s.l.flow_label & 0xFFFFF));
        wr16(ip + 4, uint16_t(udp_len));
        ip[6] = kProtoUdp;
        ip[7] = s.l.ttl;
        std::memcpy(ip + 8, s.l.src_ip6.data(), 16);
        std::memcpy(ip + 24, s.l.dst_ip6.data(), 16);
    } else {
        ip[0] = 0x45;
        ip[1] = tos;
        wr16(ip + 2, uint16_t(ip_len + udp_len));
        wr16(ip + 4, s.l.ip_id);
        wr16(ip + 6, 0x4000);  // DF
        ip[8] = s.l.ttl;
        ip[9] = kProtoUdp;
        wr16(ip + 10, 0);
        wr32(ip + 12, s.l.src_ip4);
        wr32(ip + 16, s.l.dst_ip4);
        wr16(ip + 10, csum_finish(csum_partial(ip, 20)));
    }
    uint8_t *udp = ip + ip_len;
    wr16(udp, s.l.udp_src);
    wr16(udp + 2, kRoceUdpPort);
    wr16(udp + 4, uint16_t(udp_len));
    wr16(udp + 6, 0);  // RoCEv2 senders leave the UDP checksum zero
    uint8_t *bth = udp + 8;
    const uint8_t pad = uint8_t(pad_of(s.payload_len));
    bth[0] = s.bth.opcode;
    bth[1] = uint8_t((s.bth.solicited ? 0x80 : 0) | (s.bth.migreq ? 0x40 : 0) | pad << 4);
    wr16(bth + 2, s.bth.pkey);
    bth[4] = uint8_t((s.bth.fecn ? 0x80 : 0) | (s.bth.becn ? 0x40 : 0));
    bth[5] = uint8_t(s.bth.dest_qp >> 16);
    bth[6] = uint8_t(s.bth.dest_qp >> 8);
    bth[7] = uint8_t(s.bth.dest_qp);
    bth[8] = s.bth.ack_req ? 0x80 : 0;
    bth[9] = uint8_t(s.bth.psn >> 16);
    bth[10] = uint8_t(s.bth.psn >> 8);
    bth[11] = uint8_t(s.bth.psn);
    uint8_t *q = bth + kBthLen;
    if (opcode_has_reth(s.bth.opcode)) {
        wr32(q, uint32_t(s.reth.va >> 32));
        wr32(q + 4, uint32_t(s.reth.va));
        wr32(q + 8, s.reth.rkey);
        wr32(q + 12, s.reth.dma_len);
        q += kRethLen;
    }
    if (s.bth.opcode == uint8_t(Opcode::ack)) {
        wr32(q, uint32_t(s.aeth.syndrome) << 24 | (s.aeth.msn & kPsnMask));
        q += kAethLen;
    }
    if (s.bth.opcode == uint8_t(Opcode::cnp)) {
        std::memset(q, 0, kCnpPadLen);
        q += kCnpPadLen;
    }
    if (s.payload) {
        std::memcpy(q, s.payload, s.payload_len);
    } else {
        // A recognisable pattern: the low PSN byte plus the offset.
        for (uint32_t i = 0; i < s.payload_len; i++) q[i] = uint8_t(s.bth.psn + i);
    }
    q += s.payload_len;
    std::memset(q, 0, pad);
    q += pad;
    wr_icrc(q, icrc_compute(ip, size_t(q - ip), s.l.is_v6));
    return len;
}

PacketSpec cnp_spec(const L2L3 &l, uint32_t dest_qp) {
    PacketSpec s;
    s.l = l;
    s.bth.opcode = uint8_t(Opcode::cnp);
    s.bth.becn = true;
    s.bth.dest_qp = dest_qp;
    return s;
}

PacketSpec ack_spec(const L2L3 &l, uint32_t dest_qp, uint32_t psn, uint8_t syndrome, uint32_t msn) {
    PacketSpec s;
    s.l = l;
    s.bth.opcode = uint8_t(Opcode::ack);
    s.bth.dest_qp = dest_qp;
    s.bth.psn = psn & kPsnMask;
    s.aeth.syndrome = syndrome;
    s.aeth.msn = msn & kPsnMask;
    return s;
}

ParseResult parse_packet(const uint8_t *f, uint32_t len, bool check_icrc, ParsedRoce *o) {
    if (len < 14) return ParseResult::not_roce;
    std::memcpy(o->dst_mac.data(), f, 6);
    std::memcpy(o->src_mac.data(), f + 6, 6);
    uint32_t off = 12;
    uint16_t et = rd16(f + off);
    o->vlan = false;
    o->pcp = 0;
    if (et == kEtherTypeVlan) {
        if (len < 18) return ParseResult::not_roce;
        o->vlan = true;
        o->pcp = f[14] >> 5;
        off += 4;
        et = rd16(f + off);
    }
    off += 2;
    const uint8_t *ip = f + off;
    uint32_t ip_len, l4_total;
    if (et == kEtherTypeIpv4) {
        if (len < off + 20) return ParseResult::not_roce;
        if ((ip[0] >> 4) != 4 || (ip[0] & 0x0F) < 5 || ip[9] != kProtoUdp)
            return ParseResult::not_roce;
        ip_len = uint32_t(ip[0] & 0x0F) * 4;
        uint32_t tot = rd16(ip + 2);
        if (tot < ip_len + 8 || off + tot > len) return ParseResult::not_roce;
        if ((rd16(ip + 6) & 0x3FFF) != 0) return ParseResult::not_roce;  // fragments
        l4_total = tot - ip_len;
        o->is_v6 = false;
        o->dscp = ip[1] >> 2;
        o->ecn = Ecn(ip[1] & 3);
        o->src_ip4 = rd32(ip + 12);
        o->dst_ip4 = rd32(ip + 16);
    } else if (et == kEtherTypeIpv6) {
        if (len < off + 40 || ip[6] != kProtoUdp) return ParseResult::not_roce;
        ip_len = 40;
        l4_total = rd16(ip + 4);
        if (off + 40 + l4_total > len || l4_total < 8) return ParseResult::not_roce;
        o->is_v6 = true;
        uint8_t tc = uint8_t(rd16(ip) >> 4);
        o->dscp = tc >> 2;
        o->ecn = Ecn(tc & 3);
        std::memcpy(o->src_ip6.data(), ip + 8, 16);
        std::memcpy(o->dst_ip6.data(), ip + 24, 16);
    } else {
        return ParseResult::not_roce;
    }
    const uint8_t *udp = ip + ip_len;
    if (rd16(udp + 2) != kRoceUdpPort) return ParseResult::not_roce;
    uint32_t udp_len = rd16(udp + 4);
    if (udp_len < 8 || udp_len > l4_total) return ParseResult::truncated;
    o->udp_src = rd16(udp);
    if (udp_len < 8 + kBthLen + kIcrcLen) return ParseResult::truncated;
    const uint8_t *bth = udp + 8;
    o->bth.opcode = bth[0];
    o->bth.solicited = bth[1] & 0x80;
    o->bth.migreq = bth[1] & 0x40;
    o->bth.pad = (bth[1] >> 4) & 3;
    o->bth.pkey = rd16(bth + 2);
    o->bth.fecn = bth[4] & 0x80;
    o->bth.becn = bth[4] & 0x40;
    o->bth.dest_qp = rd24(bth + 5);
    o->bth.ack_req = bth[8] & 0x80;
    o->bth.psn = rd24(bth + 9);
    uint32_t rest = udp_len - 8 - kBthLen - kIcrcLen;  // bytes between BTH and ICRC
    const uint8_t *q = bth + kBthLen;
    if (opcode_has_reth(o->bth.opcode)) {
        if (rest < kRethLen) return ParseResult::truncated;
        o->reth.va = uint64_t(rd32(q)) << 32 | rd32(q + 4);
        o->reth.rkey = rd32(q + 8);
        o->reth.dma_len = rd32(q + 12);
        q += kRethLen;
        rest -= kRethLen;
    }
    if (o->bth.opcode == uint8_t(Opcode::ack)) {
        if (rest < kAethLen) return ParseResult::truncated;
        uint32_t a = rd32(q);
        o->aeth.syndrome = uint8_t(a >> 24);
        o->aeth.msn = a & kPsnMask;
        q += kAethLen;
        rest -= kAethLen;
    }
    if (o->bth.opcode == uint8_t(Opcode::cnp)) {
        if (rest < kCnpPadLen) return ParseResult::truncated;
        q += kCnpPadLen;
        rest -= kCnpPadLen;
    }
    if (rest < o->bth.pad) return ParseResult::truncated;
    o->payload_off = uint32_t(q - f);
    o->payload_len = rest - o->bth.pad;
    const uint8_t *icrc_at = udp + udp_len - kIcrcLen;
    o->icrc_ok = false;
    if (check_icrc) {
        o->icrc_ok = icrc_compute(ip, size_t(icrc_at - ip), o->is_v6) == rd_icrc(icrc_at);
        if (!o->icrc_ok) return ParseResult::bad_icrc;
    }
    return ParseResult::ok;
}

uint16_t udp_src_port_for_qp(uint32_t local_ip, uint32_t qpn) {
    uint64_t h = (uint64_t(local_ip) << 24 | qpn) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    return uint16_t(0xC000 | ((h >> 32) & 0x3FFF));
}

}  // namespace rocesw::roce
