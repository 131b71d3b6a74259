// RoCEv2 packet codec and ICRC against frames encoded by scapy.contrib.roce (roce_golden.inc):
// exact bytes out of build_packet, and parse_packet on bytes we did not produce.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "pkt/checksum.h"
#include "roce/icrc.h"
#include "roce/packet.h"
#include "roce/qp.h"

namespace rocesw::roce {
namespace {

#include "roce_golden.inc"

L2L3 data_l2l3() {
    L2L3 l;
    l.src_mac = {0x02, 0, 0, 0, 0x01, 0x02};
    l.dst_mac = {0x02, 0, 0, 0, 0x01, 0x01};
    l.src_ip4 = 0x0A000102;
    l.dst_ip4 = 0x0A000202;
    l.dscp = 26;
    l.ecn = Ecn::ect0;
    l.udp_src = 0xC123;
    return l;
}

L2L3 reply_l2l3(uint8_t dscp, Ecn ecn) {
    L2L3 l = data_l2l3();
    l.src_ip4 = 0x0A000202;
    l.dst_ip4 = 0x0A000102;
    l.udp_src = 0xC456;
    l.dscp = dscp;
    l.ecn = ecn;
    return l;
}

std::vector<uint8_t> build(const PacketSpec &s) {
    std::vector<uint8_t> b(packet_len(s));
    EXPECT_EQ(build_packet(b.data(), uint32_t(b.size()), s), b.size());
    return b;
}

TEST(RocePacket, WriteSegmentsMatchScapyByteForByte) {
    // A 2053-byte WRITE at MTU 1024 starting at PSN 0xFFFFFE: first (RETH), middle, last (5
    // bytes, pad 3), the PSN wrapping to 0 on the last.
    SendQp qp(1024, 0xFFFFFE);
    qp.post_write(2053);
    ASSERT_EQ(qp.packets(), 3u);
    const std::vector<uint8_t> *golden[] = {&kGolden_write_first, &kGolden_write_middle,
                                            &kGolden_write_last};
    for (int i = 0; i < 3; i++) {
        ASSERT_TRUE(qp.has_segment());
        Segment seg = qp.next_segment(0);
        PacketSpec s;
        s.l = data_l2l3();
        s.bth.opcode = seg.opcode;
        s.bth.dest_qp = 0x123;
        s.bth.psn = seg.psn;
        s.bth.ack_req = seg.ack_req;
        s.reth = {0x1000, 0x55, 2053};
        s.payload_len = seg.len;
        EXPECT_EQ(build(s), *golden[i]) << "segment " << i;
    }
    EXPECT_FALSE(qp.has_segment());
}

TEST(RocePacket, AckNakAndCnpMatchScapy) {
    EXPECT_EQ(build(ack_spec(reply_l2l3(26, Ecn::ect0), 0x123, 0, kSyndromeAck, 1)), kGolden_ack);
    EXPECT_EQ(build(ack_spec(reply_l2l3(26, Ecn::ect0), 0x123, 0x10, kSyndromeNakPsnSeq, 0)),
              kGolden_nak);
    EXPECT_EQ(build(cnp_spec(reply_l2l3(48, Ecn::not_ect), 0x123)), kGolden_cnp);
}

TEST(RocePacket, IcrcIgnoresTosAndTtlButNotPayload) {
    // scapy encoded this WRITE ONLY with ECN CE; a switch rewriting DSCP, ECN and TTL (and the
    // IP checksum) must leave the ICRC valid.
    std::vector<uint8_t> f = kGolden_write_only_ce;
    ParsedRoce p;
    ASSERT_EQ(parse_packet(f.data(), uint32_t(f.size()), true, &p), ParseResult::ok);
    EXPECT_EQ(p.ecn, Ecn::ce);
    ipv4_set_tos(f.data() + 14, 0x00);
    ipv4_decrement_ttl(f.data() + 14);
    ASSERT_EQ(parse_packet(f.data(), uint32_t(f.size()), true, &p), ParseResult::ok);
    f[f.size() - 5] ^= 1;  // last RETH byte: covered by the ICRC
    EXPECT_EQ(parse_packet(f.data(), uint32_t(f.size()), true, &p), ParseResult::bad_icrc);
}

TEST(RocePacket, ParsesScapyFrames) {
    ParsedRoce p;
    const auto &first = kGolden_write_first;
    ASSERT_EQ(parse_packet(first.data(), uint32_t(first.size()), true, &p), ParseResult::ok);
    EXPECT_TRUE(p.icrc_ok);
    EXPECT_EQ(p.bth.opcode, 0x06);
    EXPECT_EQ(p.bth.dest_qp, 0x123u);
    EXPECT_EQ(p.bth.psn, 0xFFFFFEu);
    EXPECT_EQ(p.bth.pkey, 0xFFFF);
    EXPECT_EQ(p.reth.va, 0x1000u);
    EXPECT_EQ(p.reth.rkey, 0x55u);
    EXPECT_EQ(p.reth.dma_len, 2053u);
    EXPECT_EQ(p.payload_len, 1024u);
    EXPECT_EQ(p.payload_off, 14u + 20 + 8 + 12 + 16);
    EXPECT_EQ(p.dscp, 26);
    EXPECT_EQ(p.ecn, Ecn::ect0);
    EXPECT_EQ(p.udp_src, 0xC123);
    EXPECT_EQ(p.src_ip4, 0x0A000102u);

    const auto &last = kGolden_write_last;
    ASSERT_EQ(parse_packet(last.data(), uint32_t(last.size()), true, &p), ParseResult::ok);
    EXPECT_EQ(p.bth.pad, 3);
    EXPECT_EQ(p.payload_len, 5u);
    EXPECT_TRUE(p.bth.ack_req);

    const auto &nak = kGolden_nak;
    ASSERT_EQ(parse_packet(nak.data(), uint32_t(nak.size()), true, &p), ParseResult::ok);
    EXPECT_EQ(p.bth.opcode, 0x11);
    EXPECT_EQ(p.aeth.syndrome, kSyndromeNakPsnSeq);
    EXPECT_EQ(p.bth.psn, 0x10u);

    const auto &cnp = kGolden_cnp;
    ASSERT_EQ(parse_packet(cnp.data(), uint32_t(cnp.size()), true, &p), ParseResult::ok);
    EXPECT_EQ(p.bth.opcode, 0x81);
    EXPECT_TRUE(p.bth.becn);
    EXPECT_EQ(p.dscp, 48);
    EXPECT_EQ(p.payload_len, 0u);
}

TEST(RocePacket, TruncatedAndForeignFramesAreRefused) {
    ParsedRoce p;
    const auto &f = kGolden_ack;
    // Every cut inside the UDP payload makes the frame shorter than its IP header claims.
    for (uint32_t len = 0; len < f.size(); len++) {
        auto r = parse_packet(f.data(), len, true, &p);
        EXPECT_NE(r, ParseResult::ok) << "length " << len;
    }
    std::vector<uint8_t> arp(60, 0);
    arp[12] = 0x08, arp[13] = 0x06;
    EXPECT_EQ(parse_packet(arp.data(), 60, true, &p), ParseResult::not_roce);
    std::vector<uint8_t> other = kGolden_ack;
    other[14 + 20 + 3] = 0x35;  // UDP destination 4661, not 4791
    EXPECT_EQ(parse_packet(other.data(), uint32_t(other.size()), true, &p), ParseResult::not_roce);
}

TEST(RocePacket, Ipv6RoundTripKeepsIcrcValidAcrossTrafficClassRewrite) {
    PacketSpec s;
    s.l = data_l2l3();
    s.l.is_v6 = true;
    s.l.src_ip6 = {0xfd, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    s.l.dst_ip6 = {0xfd, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    s.l.flow_label = 0x12345;
    s.bth.opcode = uint8_t(Opcode::write_only);
    s.bth.dest_qp = 9;
    s.bth.psn = 3;
    s.reth.dma_len = 100;
    s.payload_len = 100;
    auto f = build(s);
    ParsedRoce p;
    ASSERT_EQ(parse_packet(f.data(), uint32_t(f.size()), true, &p), ParseResult::ok);
    EXPECT_TRUE(p.is_v6);
    EXPECT_EQ(p.payload_len, 100u);
    f[14 + 1] |= 0x30;  // ECN CE in the traffic class
    f[14 + 3] ^= 0xFF;  // flow label
    f[14 + 7] = 1;      // hop limit
    ASSERT_EQ(parse_packet(f.data(), uint32_t(f.size()), true, &p), ParseResult::ok);
    EXPECT_EQ(p.ecn, Ecn::ce);
}

TEST(RocePacket, UdpSourcePortIsPerQpEntropy) {
    EXPECT_EQ(udp_src_port_for_qp(0x0A000102, 5) & 0xC000, 0xC000);
    int distinct = 0;
    uint16_t prev = 0;
    for (uint32_t q = 0; q < 64; q++) {
        uint16_t p = udp_src_port_for_qp(0x0A000102, q);
        distinct += p != prev;
        prev = p;
    }
    EXPECT_GT(distinct, 60);
    EXPECT_EQ(udp_src_port_for_qp(0x0A000102, 5), udp_src_port_for_qp(0x0A000102, 5));
}

}  // namespace
}  // namespace rocesw::roce
