// The worker pipeline over in-memory ports: exact frames out of exact ports, exact counters.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstring>
#include <random>
#include <set>

#include "fixture.h"
#include "lb_fixture.h"
#include "pipeline/accounting.h"
#include "pkt/checksum.h"
#include "pkt/parser.h"

namespace rocesw::test {
namespace {

using WorkerPipeline = SwitchFixture;

Bytes udp4(uint32_t src, uint32_t dst, uint8_t ttl = 64, size_t payload = 32, uint8_t tos = 0) {
    return ipv4(src, dst, kProtoUdp, udp_payload(1000, 2000, payload), ttl, tos);
}

TEST_F(WorkerPipeline, ForwardsIpv4RewritingMacsTtlAndChecksum) {
    Bytes in =
        cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 0, 2, 2), 64, 32, 0x6a));
    ports->inject(0, in);
    EXPECT_EQ(worker->poll_once(now_ns), 1u);
    auto out = ports->take_tx(1);
    ASSERT_EQ(out.size(), 1u);
    Bytes expect =
        cat(eth(kH2, kP1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 0, 2, 2), 63, 32, 0x6a));
    EXPECT_EQ(out[0], expect);
    EXPECT_TRUE(ports->take_tx(0).empty());
    EXPECT_EQ(counters->ports[0].rx_packets.load(), 1u);
    EXPECT_EQ(counters->ports[0].rx_bytes.load(), in.size());
    EXPECT_EQ(counters->ports[1].tx_packets.load(), 1u);
    EXPECT_EQ(counters->ports[1].tx_bytes.load(), in.size());
    EXPECT_EQ(total_drops(0) + total_drops(1), 0u);
}

TEST_F(WorkerPipeline, ForwardsViaStaticRouteToGatewayMac) {
    ports->inject(0, cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 9, 3, 4))));
    worker->poll_once(now_ns);
    auto out = ports->take_tx(1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(std::equal(kH2.begin(), kH2.end(), out[0].begin()));
    EXPECT_TRUE(std::equal(kP1.begin(), kP1.end(), out[0].begin() + 6));
}

TEST_F(WorkerPipeline, ForwardsIpv6DecrementingHopLimit) {
    Bytes l4 = udp_payload(4791, 4791, 40);
    ports->inject(1, cat(eth(kP1, kH2, kEtherTypeIpv6),
                         ipv6(ip6(0xfd00, 2, 2), ip6(0xfd00, 1, 2), kProtoUdp, l4, 9)));
    worker->poll_once(now_ns);
    auto out = ports->take_tx(0);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], cat(eth(kH1, kP0, kEtherTypeIpv6),
                          ipv6(ip6(0xfd00, 2, 2), ip6(0xfd00, 1, 2), kProtoUdp, l4, 8)));
}

TEST_F(WorkerPipeline, RoutesIpv6PrefixViaGateway) {
    Bytes l4 = udp_payload(1, 2, 8);
    ports->inject(0, cat(eth(kP0, kH1, kEtherTypeIpv6),
                         ipv6(ip6(0xfd00, 1, 2), ip6(0xfd00, 9, 7), kProtoUdp, l4)));
    worker->poll_once(now_ns);
    EXPECT_EQ(ports->take_tx(1).size(), 1u);
}

// `frame` as a received mbuf from `pool`: one segment, or (two_segments) its first `first`
// bytes and the rest chained; the NIC's checksum verdict in ol_flags.
rte_mbuf *received(rte_mempool *pool, const Bytes &frame, bool two_segments, size_t first,
                   uint64_t verdict) {
    rte_mbuf *m = rte_pktmbuf_alloc(pool);
    EXPECT_NE(m, nullptr);
    if (!two_segments) first = frame.size();
    std::memcpy(rte_pktmbuf_append(m, uint16_t(first)), frame.data(), first);
    if (two_segments) {
        rte_mbuf *t = rte_pktmbuf_alloc(pool);
        EXPECT_NE(t, nullptr);
        std::memcpy(rte_pktmbuf_append(t, uint16_t(frame.size() - first)), frame.data() + first,
                    frame.size() - first);
        EXPECT_EQ(rte_pktmbuf_chain(m, t), 0);
    }
    m->ol_flags |= verdict;
    return m;
}

// The same pipeline over the compact (RIB-only) FIB, as the simulator runs it: IPv4 and IPv6
// forward alike, and a miss is a no_route drop on both.
struct CompactFibPipeline : SwitchFixture {
    CompactFibPipeline() { compact_fib = true; }
};
TEST_F(CompactFibPipeline, ForwardsIpv4AndIpv6AndDropsMisses) {
    ports->inject(0, cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 9, 3, 4))));
    Bytes l4 = udp_payload(4791, 4791, 40);
    ports->inject(1, cat(eth(kP1, kH2, kEtherTypeIpv6),
                         ipv6(ip6(0xfd00, 2, 2), ip6(0xfd00, 1, 2), kProtoUdp, l4, 9)));
    ports->inject(0, cat(eth(kP0, kH1, kEtherTypeIpv6),
                         ipv6(ip6(0xfd00, 1, 2), ip6(0xfd00, 9, 7), kProtoUdp, l4)));
    ports->inject(0, cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(11, 0, 0, 1))));
    ports->inject(0, cat(eth(kP0, kH1, kEtherTypeIpv6),
                         ipv6(ip6(0xfd00, 1, 2), ip6(0xfd01, 1, 1), kProtoUdp, l4)));
    worker->poll_once(now_ns);
    worker->poll_once(now_ns);
    auto out1 = ports->take_tx(1);
    ASSERT_EQ(out1.size(), 2u);
    EXPECT_TRUE(std::equal(kH2.begin(), kH2.end(), out1[0].begin()));
    auto out0 = ports->take_tx(0);
    ASSERT_EQ(out0.size(), 1u);
    EXPECT_EQ(out0[0], cat(eth(kH1, kP0, kEtherTypeIpv6),
                           ipv6(ip6(0xfd00, 2, 2), ip6(0xfd00, 1, 2), kProtoUdp, l4, 8)));
    EXPECT_EQ(drops(0, DropReason::no_route), 2u);
}

// A route that discards (the kernel's blackhole): its packets are dropped as route_discard, not
// routed by the shorter prefix around it; the IPv6 one alike.
TEST_F(WorkerPipeline, DiscardRouteDropsWithItsOwnReason) {
    rib->set_learned(*parse_prefix("10.9.3.0/24"), LearnedRoute{"static", {}, true});
    rib->set_learned(*parse_prefix("fd00:9::/48"), LearnedRoute{"static", {}, true});
    ASSERT_EQ(rib->sync(), 0u);
    Bytes l4 = udp_payload(4791, 4791, 40);
    ports->inject(0, cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 9, 3, 4))));
    ports->inject(0, cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 9, 4, 4))));
    ports->inject(0, cat(eth(kP0, kH1, kEtherTypeIpv6),
                         ipv6(ip6(0xfd00, 1, 2), ip6(0xfd00, 9, 7), kProtoUdp, l4)));
    worker->poll_once(now_ns);
    worker->poll_once(now_ns);
    EXPECT_EQ(ports->take_tx(1).size(), 1u);  // 10.9.4.4 by 10.9.0.0/16
    EXPECT_EQ(drops(0, DropReason::route_discard), 2u);
    EXPECT_EQ(total_drops(0), 2u);
}

TEST_F(WorkerPipeline, StripsVlanTagWhenRouting) {
    Bytes payload = udp4(v4(10, 0, 1, 2), v4(10, 0, 2, 2));
    ports->inject(0, cat(eth(kP0, kH1, kEtherTypeIpv4, 3), payload));
    worker->poll_once(now_ns);
    auto out = ports->take_tx(1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0],
              cat(eth(kH2, kP1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 0, 2, 2), 63)));
}

struct DropCase {
    const char *name;
    Bytes frame;
    DropReason reason;
};

TEST_F(WorkerPipeline, EveryDropHasItsReasonAndNothingLeaves) {
    Bytes bad_csum = cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 0, 2, 2)));
    bad_csum[14 + 10] ^= 0xFF;
    Bytes big =
        cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 0, 2, 2), 64, 1473));
    std::vector<DropCase> cases = {
        {"no route", cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(192, 168, 1, 1))),
         DropReason::no_route},
        {"no route v6",
         cat(eth(kP0, kH1, kEtherTypeIpv6),
             ipv6(ip6(0xfd00, 1, 2), ip6(0x2001, 0xdb8, 1), kProtoUdp, udp_payload(1, 2, 8))),
         DropReason::no_route},
        {"glean", cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 0, 2, 77))),
         DropReason::no_neighbour},
        {"unresolved gw",
         cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 8, 0, 1))),
         DropReason::no_neighbour},
        {"ttl 1", cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 0, 2, 2), 1)),
         DropReason::ttl_expired},
        {"ttl 0", cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 0, 2, 2), 0)),
         DropReason::ttl_expired},
        {"hop limit 1",
         cat(eth(kP0, kH1, kEtherTypeIpv6),
             ipv6(ip6(0xfd00, 1, 2), ip6(0xfd00, 2, 2), kProtoUdp, udp_payload(1, 2, 8), 1)),
         DropReason::ttl_expired},
        {"bad checksum", bad_csum, DropReason::ipv4_checksum_bad},
        {"frame above MTU", big, DropReason::frame_too_long},
        {"other MAC",
         cat(eth({0x02, 9, 9, 9, 9, 9}, kH1, kEtherTypeIpv4),
             udp4(v4(10, 0, 1, 2), v4(10, 0, 2, 2))),
         DropReason::dst_mac_mismatch},
        {"multicast dst",
         cat(eth({0x01, 0, 0x5e, 0, 0, 5}, kH1, kEtherTypeIpv4),
             udp4(v4(10, 0, 1, 2), v4(224, 0, 0, 5))),
         DropReason::l3_multicast},
        {"broadcast dst",
         cat(eth({0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, kH1, kEtherTypeIpv4),
             udp4(v4(10, 0, 1, 2), v4(255, 255, 255, 255))),
         DropReason::l3_multicast},
        {"lldp", cat(eth({0x01, 0x80, 0xc2, 0, 0, 0x0e}, kH1, 0x88cc), Bytes(46, 0)),
         DropReason::ethertype_unsupported},
        {"runt", Bytes(10, 0), DropReason::eth_truncated},
        {"udp to switch",
         cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 0, 1, 1))),
         DropReason::local_unhandled},
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c.name);
        uint64_t before = drops(0, c.reason);
        uint64_t all_before = total_drops(0);
        ports->inject(0, c.frame);
        worker->poll_once(now_ns);
        EXPECT_EQ(drops(0, c.reason), before + 1);
        EXPECT_EQ(total_drops(0), all_before + 1);
        EXPECT_TRUE(ports->take_tx(0).empty());
        EXPECT_TRUE(ports->take_tx(1).empty());
    }
    EXPECT_EQ(counters->ports[0].rx_packets.load(), cases.size());
}

// The NIC's IPv4 checksum verdict in the mbuf (RTE_MBUF_F_RX_IP_CKSUM_*) decides over the
// software check: BAD drops as ipv4_checksum_bad even with a correct checksum, GOOD forwards
// even with a wrong one (the NIC checked the frame as it arrived), UNKNOWN is checked here.
TEST_F(WorkerPipeline, NicChecksumVerdictDecidesOverSoftwareCheck) {
    const Bytes good = cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 0, 2, 2)));
    Bytes wrong = good;
    wrong[14 + 10] ^= 0xFF;
    auto burst = [&](const Bytes &f, uint64_t ol_flags) {
        rte_mbuf *m = rte_pktmbuf_alloc(ports->pool());
        ASSERT_NE(m, nullptr);
        std::memcpy(rte_pktmbuf_append(m, uint16_t(f.size())), f.data(), f.size());
        m->ol_flags |= ol_flags;
        worker->process_burst(0, &m, 1, now_ns);
        worker->poll_once(now_ns);  // egress flush
    };
    const uint64_t bad0 = drops(0, DropReason::ipv4_checksum_bad);

    burst(good, RTE_MBUF_F_RX_IP_CKSUM_BAD);
    EXPECT_EQ(drops(0, DropReason::ipv4_checksum_bad), bad0 + 1);
    EXPECT_TRUE(ports->take_tx(1).empty());

    burst(wrong, RTE_MBUF_F_RX_IP_CKSUM_GOOD);
    auto out = ports->take_tx(1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0][14 + 8], 63);  // routed: TTL decremented
    EXPECT_EQ(drops(0, DropReason::ipv4_checksum_bad), bad0 + 1);

    burst(wrong, RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN);
    EXPECT_EQ(drops(0, DropReason::ipv4_checksum_bad), bad0 + 2);
    burst(wrong, RTE_MBUF_F_RX_IP_CKSUM_NONE);  // no verdict on the data: checked here
    EXPECT_EQ(drops(0, DropReason::ipv4_checksum_bad), bad0 + 3);
    EXPECT_TRUE(ports->take_tx(1).empty());

    burst(good, RTE_MBUF_F_RX_IP_CKSUM_GOOD);
    burst(good, RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN);
    EXPECT_EQ(ports->take_tx(1).size(), 2u);
    EXPECT_EQ(total_drops(0), 3u);
}

// A burst longer than the prefetch distance, in every length around it: every packet is
// forwarded (the prefetch of packet i + 4 never reads past the burst).
TEST_F(WorkerPipeline, ForwardsEveryPacketOfBurstsAroundThePrefetchDistance) {
    const Bytes f = cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 0, 2, 2)));
    for (uint16_t n = 1; n <= 9; n++) {
        SCOPED_TRACE(n);
        for (uint16_t k = 0; k < n; k++) ports->inject(0, f);
        EXPECT_EQ(worker->poll_once(now_ns), n);
        EXPECT_EQ(ports->take_tx(1).size(), n);
    }
    EXPECT_EQ(total_drops(0), 0u);
}

// The receive loop's mbuf checks (one segment or more, the NIC's checksum verdict), its two
// parts (the packets with a prefetch kPrefetchAhead later, then the last few) and its two copies
// (the port's checksum option on and off), against a model of each packet alone: every burst
// length from 1 to 32, every packet a different mix of checksum (right, wrong), verdict (none,
// UNKNOWN, GOOD, BAD), segments (1, 2) and TTL (64, 2, 1, 0). Exact frames out, every counter.
TEST_F(WorkerPipeline, ReceiveLoopGivesEachPacketsOwnResultForEveryBurstLength) {
    const uint64_t verdicts[] = {0, RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN, RTE_MBUF_F_RX_IP_CKSUM_GOOD,
                                 RTE_MBUF_F_RX_IP_CKSUM_BAD, RTE_MBUF_F_RX_IP_CKSUM_NONE};
    const uint8_t ttls[] = {64, 2, 1, 0};
    struct Case {
        Bytes frame, out;  // out: the forwarded frame, empty when dropped
        uint16_t port = 1;  // out's port
        DropReason reason = DropReason::ttl_expired;
        uint64_t verdict = 0;
        bool two_segments = false;
    };
    auto make = [&](unsigned k, bool verify) {
        Case c;
        const bool wrong = k % 2;
        c.verdict = verdicts[k / 2 % 5];
        c.two_segments = k / 10 % 2;
        const uint8_t ttl = ttls[k / 3 % 4];
        const uint8_t tos = uint8_t(k * 4);
        // Runs of next hops A A B (B back out of the ingress port, p0).
        c.port = k % 3 ? 1 : 0;
        const uint32_t dst = c.port ? v4(10, 0, 2, 2) : v4(10, 0, 1, 2);
        const Mac &hop = c.port ? kH2 : kH1, &mac = c.port ? kP1 : kP0;
        c.frame = cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), dst, ttl, 20 + k % 9, tos));
        if (wrong) c.frame[14 + 10] ^= 0x5A;
        const bool bad = c.verdict == RTE_MBUF_F_RX_IP_CKSUM_BAD ||
                         (wrong && verify && c.verdict != RTE_MBUF_F_RX_IP_CKSUM_GOOD);
        if (bad) {
            c.reason = DropReason::ipv4_checksum_bad;
        } else if (ttl > 1 && !wrong) {
            c.out = cat(eth(hop, mac, kEtherTypeIpv4),
                        udp4(v4(10, 0, 1, 2), dst, uint8_t(ttl - 1), 20 + k % 9, tos));
        } else if (ttl > 1) {  // forwarded with its wrong checksum, updated incrementally
            c.out = c.frame;
            std::copy(hop.begin(), hop.end(), c.out.begin());
            std::copy(mac.begin(), mac.end(), c.out.begin() + 6);
            ipv4_decrement_ttl(c.out.data() + 14);
        }
        return c;
    };
    auto mbuf = [&](const Case &c) {
        return received(ports->pool(), c.frame, c.two_segments, 20, c.verdict);
    };
    for (const bool verify : {true, false}) {
        dp->ctx().ports[0].parse.verify_ipv4_checksum = verify;
        for (uint16_t n = 1; n <= 32; n++) {
            SCOPED_TRACE(testing::Message() << "verify " << verify << ", burst " << n);
            std::vector<Case> cases;
            rte_mbuf *pkts[32];
            uint64_t bytes = 0;
            std::vector<Bytes> expect[2];
            std::vector<uint64_t> want;
            for (const auto &c : counters->ports[0].drops) want.push_back(c.load());
            for (uint16_t i = 0; i < n; i++) {
                cases.push_back(make(i * 5 + n, verify));
                pkts[i] = mbuf(cases.back());
                bytes += cases.back().frame.size();
                if (cases.back().out.empty())
                    want[size_t(cases.back().reason)]++;
                else
                    expect[cases.back().port].push_back(cases.back().out);
            }
            const uint64_t rx0 = counters->ports[0].rx_packets.load();
            const uint64_t bytes0 = counters->ports[0].rx_bytes.load();
            const uint64_t fwd0 = counters->ports[0].forwarded.load();
            worker->process_burst(0, pkts, n, now_ns);
            worker->poll_once(now_ns);  // egress flush
            EXPECT_EQ(ports->take_tx(0), expect[0]);
            EXPECT_EQ(ports->take_tx(1), expect[1]);
            EXPECT_EQ(counters->ports[0].rx_packets.load(), rx0 + n);
            EXPECT_EQ(counters->ports[0].rx_bytes.load(), bytes0 + bytes);
            EXPECT_EQ(counters->ports[0].forwarded.load(),
                      fwd0 + expect[0].size() + expect[1].size());
            for (size_t r = 0; r < want.size(); r++)
                EXPECT_EQ(counters->ports[0].drops[r].load(), want[r]) << drop_reason_name(DropReason(r));
        }
    }
}

// Bursts mixing the receive loop's ways out: the port's fast path (plain UDP, RoCEv2, a wrong
// checksum after a GOOD verdict), the general parser (IPv4 options, a VLAN tag, IPv6, ARP and
// echo for the switch, frames under 60 bytes, TTL 1 and 2, another MAC, multicast, no route, a
// wrong checksum) and the out-of-line mbuf work (two segments, BAD and NONE verdicts), in random
// orders and lengths, with the port's checksum check on and off. Each burst against each of its
// packets alone: every frame out (a port's ARP replies first, then its routed IPv4 and the
// switch's replies to it, then its IPv6, each in the burst's order: the stages' order) and every
// counter of both ports.
TEST_F(WorkerPipeline, MixedBurstsGiveEachPacketsOwnResultInOrder) {
    // udp and roce take the port's fast path.
    enum class Kind {
        udp,
        roce,
        csum_wrong,
        options,
        tagged,
        v6,
        arp,
        echo,
        short_frame,
        ttl1,
        ttl2,
        other_mac,
        mcast,
        no_route,
        back_out,
        two_segments,
        verdict_bad,
        good_wrong,
        none_good,
        none_wrong,
        count
    };
    constexpr unsigned kKinds = unsigned(Kind::count);
    struct Case {
        Bytes frame;
        uint64_t verdict = 0;
        bool two_segments = false;
        int order = 1;  // 0: an ARP reply (the receive loop's), 1: routed IPv4, 2: routed IPv6
    };
    std::mt19937 rng(20);
    auto make = [&](Kind kind) {
        Case c;
        const uint8_t tos = uint8_t(rng()), last = uint8_t(2 + rng() % 2);
        const size_t payload = 18 + rng() % 40;
        const uint32_t to_p1 = v4(10, 0, 2, 2), src = v4(10, 0, 1, last);
        const Bytes e = eth(kP0, kH1, kEtherTypeIpv4);
        c.frame = cat(e, udp4(src, to_p1, 64, payload, tos));
        auto wrong = [&] { c.frame[14 + 10] ^= 0x5A; };
        switch (kind) {
            case Kind::udp:
                break;
            case Kind::roce:
                c.frame = cat(
                    e, ipv4(src, v4(10, 9, uint8_t(rng()), 1), kProtoUdp,
                            roce_l4(uint16_t(49152 + rng() % 64), rng() & 0xFFFFFF, 7), 64, tos));
                break;
            case Kind::csum_wrong:
                wrong();
                break;
            case Kind::options: {  // IHL 6: one word of NOP options
                Bytes ip = udp4(src, to_p1, 64, payload, tos);
                ip.insert(ip.begin() + 20, {1, 1, 1, 1});
                ip[0] = 0x46;
                wr16(&ip[2], uint16_t(ip.size()));
                wr16(&ip[10], 0);
                wr16(&ip[10], csum_finish(csum_partial(ip.data(), 24)));
                c.frame = cat(e, ip);
                break;
            }
            case Kind::tagged:
                c.frame = cat(eth(kP0, kH1, kEtherTypeIpv4, 3), udp4(src, to_p1, 64, payload, tos));
                break;
            case Kind::v6:
                c.frame =
                    cat(eth(kP0, kH1, kEtherTypeIpv6), ipv6(ip6(0xfd00, 1, last), ip6(0xfd00, 2, 2),
                                                            kProtoUdp, udp_payload(1, 2, payload)));
                c.order = 2;
                break;
            case Kind::arp:
                c.frame = cat(eth({0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, kH1, kEtherTypeArp),
                              arp_request(kH1, src, v4(10, 0, 1, 1)));
                c.order = 0;
                break;
            case Kind::echo:
                // Routed to the switch's address (a local next hop): the reply in IPv4's order.
                c.frame =
                    cat(e, ipv4(src, v4(10, 0, 1, 1), kProtoIcmp, {8, 0, 0xf7, 0xfd, 0, 1, 0, 1}));
                break;
            case Kind::short_frame:
                c.frame = cat(e, udp4(src, to_p1, 64, rng() % 18, tos));
                break;
            case Kind::ttl1:
                c.frame = cat(e, udp4(src, to_p1, 1, payload, tos));
                break;
            case Kind::ttl2:
                c.frame = cat(e, udp4(src, to_p1, 2, payload, tos));
                break;
            case Kind::other_mac:
                c.frame = cat(eth(kH2, kH1, kEtherTypeIpv4), udp4(src, to_p1));
                break;
            case Kind::mcast:
                c.frame = cat(eth({0x01, 0, 0x5e, 0, 0, 5}, kH1, kEtherTypeIpv4),
                              udp4(src, v4(224, 0, 0, 5)));
                break;
            case Kind::no_route:
                c.frame = cat(e, udp4(src, v4(192, 168, 1, 1)));
                break;
            case Kind::back_out:
                c.frame = cat(e, udp4(v4(10, 0, 2, 2), v4(10, 0, 1, 2), 64, payload, tos));
                break;
            case Kind::two_segments:
                c.two_segments = true;
                break;
            case Kind::verdict_bad:
                c.verdict = RTE_MBUF_F_RX_IP_CKSUM_BAD;
                break;
            case Kind::good_wrong:
                c.verdict = RTE_MBUF_F_RX_IP_CKSUM_GOOD;
                wrong();
                break;
            case Kind::none_good:
                c.verdict = RTE_MBUF_F_RX_IP_CKSUM_NONE;
                break;
            case Kind::none_wrong:
                c.verdict = RTE_MBUF_F_RX_IP_CKSUM_NONE;
                wrong();
                break;
            case Kind::count:
                break;
        }
        return c;
    };
    auto mbuf = [&](const Case &c) {
        return received(ports->pool(), c.frame, c.two_segments, 30, c.verdict);
    };
    // Both ports' counters, in one list.
    auto snapshot = [&] {
        std::vector<uint64_t> s;
        for (size_t p = 0; p < 2; p++) {
            const PortTotals t = sum_port(counters, 1, p);
            s.insert(s.end(), {t.rx_packets, t.rx_bytes, t.tx_packets, t.tx_bytes, t.local_packets,
                               t.local_replies, t.punted, t.forwarded, t.forwarded_out});
            s.insert(s.end(), t.drops.begin(), t.drops.end());
        }
        return s;
    };
    auto diff = [](const std::vector<uint64_t> &a, const std::vector<uint64_t> &b) {
        std::vector<uint64_t> d(a.size());
        for (size_t i = 0; i < a.size(); i++) d[i] = b[i] - a[i];
        return d;
    };
    int fast = 0, general = 0;
    for (const bool verify : {true, false}) {
        dp->ctx().ports[0].parse.verify_ipv4_checksum = verify;
        for (int round = 0; round < 200; round++) {
            SCOPED_TRACE(testing::Message() << "verify " << verify << ", round " << round);
            const uint16_t n = uint16_t(1 + rng() % 32);
            std::vector<Case> cases;
            // Fast-path packets in most rounds' majority, as traffic has them.
            const unsigned fast_share = rng() % 4;
            for (uint16_t i = 0; i < n; i++) {
                const Kind kind = Kind(rng() % 4 < fast_share ? rng() % 2 : rng() % kKinds);
                (kind == Kind::udp || kind == Kind::roce ? fast : general)++;
                cases.push_back(make(kind));
            }
            // Each alone.
            std::vector<Bytes> want[2][3];
            std::vector<uint64_t> want_ctr(snapshot().size(), 0);
            for (const Case &c : cases) {
                const std::vector<uint64_t> before = snapshot();
                rte_mbuf *m = mbuf(c);
                worker->process_burst(0, &m, 1, now_ns);
                worker->poll_once(now_ns);  // egress flush
                const std::vector<uint64_t> d = diff(before, snapshot());
                for (size_t i = 0; i < d.size(); i++) want_ctr[i] += d[i];
                for (uint16_t p = 0; p < 2; p++)
                    for (Bytes &f : ports->take_tx(p)) want[p][c.order].push_back(std::move(f));
            }
            // The burst.
            rte_mbuf *pkts[32];
            for (uint16_t i = 0; i < n; i++) pkts[i] = mbuf(cases[i]);
            const std::vector<uint64_t> before = snapshot();
            worker->process_burst(0, pkts, n, now_ns);
            worker->poll_once(now_ns);
            EXPECT_EQ(diff(before, snapshot()), want_ctr);
            for (uint16_t p = 0; p < 2; p++) {
                std::vector<Bytes> expect;
                for (auto &part : want[p]) expect.insert(expect.end(), part.begin(), part.end());
                EXPECT_EQ(ports->take_tx(p), expect) << "port " << p;
            }
        }
    }
    EXPECT_GT(fast, 2000);
    EXPECT_GT(general, 1000);
}

// One burst mixing every way out of the route stage: single-path IPv4 and IPv6, VLAN-tagged
// single-path packets (to a port whose MTU would let a burst without tags skip the VLAN test,
// and to one whose MTU would not), a multipath (ECMP) packet, a local echo request, and drops before the
// rewrite (TTL 1 single-path and multipath, no route, unresolved neighbour, MTU, other MAC).
// Exact frames per port (headers built independently, checksums computed in full), every
// counter, and the accounting identity: the dispatch and forward_to's fast path against the
// expected result of each packet alone.
TEST(WorkerMixedBurst, EveryPathOfOneBurstGivesExactFramesAndCounters) {
    LbSwitch sw(2, LbConfig{}, LbSwitch::route(2));
    sw.dp->ctx().ports[2].mtu = 200;
    const uint32_t host = v4(10, 0, 0, 2);
    const Mac p1{0x02, 0, 0, 0, 0, 0x21}, p2{0x02, 0, 0, 0, 0, 0x22};
    auto mac = [](const MacAddr &m) {
        Mac r;
        std::copy(m.b.begin(), m.b.end(), r.begin());
        return r;
    };
    auto udp = [&](uint32_t dst, uint8_t ttl, size_t payload = 32) {
        return ipv4(host, dst, kProtoUdp, udp_payload(1000, 2000, payload), ttl);
    };
    const Bytes l4 = udp_payload(4791, 4791, 40);
    const Bytes roce = roce_l4(49152, 17, 5);
    const Bytes echo = {8, 0, 0xf7, 0xfd, 0, 1, 0, 1};
    const Bytes burst[] = {
        cat(eth(kLbP0, kLbHost, kEtherTypeIpv4), udp(v4(10, 0, 1, 2), 64)),  // p1
        cat(eth(kLbP0, kLbHost, kEtherTypeIpv4, 7), udp(v4(10, 0, 1, 2), 12)),  // tagged, p1
        cat(eth(kLbP0, kLbHost, kEtherTypeIpv4),
            ipv4(host, v4(10, 99, 0, 1), kProtoUdp, roce, 64)),  // ECMP
        cat(eth(kLbP0, kLbHost, kEtherTypeIpv4), ipv4(host, v4(10, 0, 0, 1), kProtoIcmp, echo)),
        cat(eth(kLbP0, kLbHost, kEtherTypeIpv4), udp(v4(10, 0, 1, 2), 1)),  // TTL expired
        cat(eth(kLbP0, kLbHost, kEtherTypeIpv4),
            ipv4(host, v4(10, 99, 0, 1), kProtoUdp, roce, 1)),                  // TTL expired
        cat(eth(kLbP0, kLbHost, kEtherTypeIpv4), udp(v4(192, 168, 1, 1), 64)),  // no route
        cat(eth(kLbP0, kLbHost, kEtherTypeIpv4, 5), udp(v4(10, 0, 2, 2), 9)),   // tagged, p2
        cat(eth(kLbP0, kLbHost, kEtherTypeIpv6),
            ipv6(ip6(0xfd00, 0, 2), ip6(0xfd00, 1, 2), kProtoUdp, l4, 2)),        // p1
        cat(eth(kLbP0, kLbHost, kEtherTypeIpv4), udp(v4(10, 0, 1, 77), 64)),      // no neighbour
        cat(eth(kLbP0, kLbHost, kEtherTypeIpv4), udp(v4(10, 0, 2, 2), 64, 300)),  // MTU 200
        cat(eth(kLbHost, kLbHost, kEtherTypeIpv4), udp(v4(10, 0, 1, 2), 64)),     // other MAC
    };
    for (const auto &f : burst) sw.ports->inject(0, f);
    EXPECT_EQ(sw.worker->poll_once(1000), std::size(burst));

    std::vector<Bytes> out1 = sw.ports->take_tx(1), out2 = sw.ports->take_tx(2);
    const std::vector<Bytes> out0 = sw.ports->take_tx(0);
    ASSERT_EQ(out0.size(), 1u);      // the echo reply
    EXPECT_EQ(out0[0][14 + 20], 0);  // ICMP echo reply
    // The multipath packet took one member: its gateway's MAC, that port's MAC, TTL 63.
    const bool ecmp_on_1 = out1.size() == 4;
    const uint16_t k = ecmp_on_1 ? 1 : 2;
    const Bytes ecmp_out = cat(eth(mac(LbSwitch::gw_mac(k)), k == 1 ? p1 : p2, kEtherTypeIpv4),
                               ipv4(host, v4(10, 99, 0, 1), kProtoUdp, roce, 63));
    std::vector<Bytes> want1 = {
        cat(eth(mac(LbSwitch::gw_mac(1)), p1, kEtherTypeIpv4), udp(v4(10, 0, 1, 2), 63)),
        cat(eth(mac(LbSwitch::gw_mac(1)), p1, kEtherTypeIpv4), udp(v4(10, 0, 1, 2), 11)),
        cat(eth(mac(LbSwitch::gw_mac(1)), p1, kEtherTypeIpv6),
            ipv6(ip6(0xfd00, 0, 2), ip6(0xfd00, 1, 2), kProtoUdp, l4, 1)),
    };
    std::vector<Bytes> want2 = {
        cat(eth(mac(LbSwitch::gw_mac(2)), p2, kEtherTypeIpv4), udp(v4(10, 0, 2, 2), 8)),
    };
    // Multipath packets leave after the burst's single-path ones.
    (ecmp_on_1 ? want1 : want2).push_back(ecmp_out);
    EXPECT_EQ(out1, want1);
    EXPECT_EQ(out2, want2);

    const WorkerCounters &c = *sw.counters;
    EXPECT_EQ(c.ports[0].rx_packets.load(), std::size(burst));
    EXPECT_EQ(c.ports[0].forwarded.load(), 5u);
    EXPECT_EQ(c.ports[0].local_replies.load(), 1u);
    EXPECT_EQ(c.ports[1].forwarded_out.load(), want1.size());
    EXPECT_EQ(c.ports[2].forwarded_out.load(), want2.size());
    EXPECT_EQ(c.ports[1].tx_packets.load(), want1.size());
    EXPECT_EQ(c.ports[2].tx_packets.load(), want2.size());
    auto drops = [&](DropReason r) { return c.ports[0].drops[size_t(r)].load(); };
    EXPECT_EQ(drops(DropReason::ttl_expired), 2u);
    EXPECT_EQ(drops(DropReason::no_route), 1u);
    EXPECT_EQ(drops(DropReason::no_neighbour), 1u);
    EXPECT_EQ(drops(DropReason::mtu_exceeded), 1u);
    EXPECT_EQ(drops(DropReason::dst_mac_mismatch), 1u);
    EXPECT_EQ(sw.drops_total(), 6u);
    const AccountingReport r =
        check_accounting(take_accounting(accounting_sources(*sw.dp, {"p0", "p1", "p2"})));
    EXPECT_TRUE(r.balanced) << accounting_json(r).dump();
}

// Port p's counters and drops as one vector, to compare two switches.
std::vector<uint64_t> port_counter_values(const WorkerCounters &c, uint16_t p) {
    const PortCounters &x = c.ports[p];
    std::vector<uint64_t> v = {x.rx_packets.load(),    x.rx_bytes.load(),
                               x.tx_packets.load(),    x.tx_bytes.load(),
                               x.local_packets.load(), x.local_replies.load(),
                               x.punted.load(),        x.forwarded.load(),
                               x.forwarded_out.load()};
    for (const auto &d : x.drops) v.push_back(d.load());
    return v;
}

// `burst` ({kind, frame}) into port 0: into `together` as one poll, into `alone` one frame per
// poll. `together` must send on each of the kPorts ports alone's frames grouped by kind, in
// kind order (the worker's output lists). Returns alone's frames by [port][kind].
template <size_t kPorts, size_t kKinds, typename Kind>
std::array<std::array<std::vector<Bytes>, kKinds>, kPorts> expect_burst_as_alone(
    LbSwitch &together, LbSwitch &alone, const std::vector<std::pair<Kind, Bytes>> &burst) {
    for (const auto &[k, f] : burst) together.ports->inject(0, f);
    EXPECT_EQ(together.worker->poll_once(1000), burst.size());
    std::array<std::array<std::vector<Bytes>, kKinds>, kPorts> want;
    for (const auto &[k, f] : burst) {
        alone.ports->inject(0, f);
        EXPECT_EQ(alone.worker->poll_once(1000), 1u);
        for (uint16_t p = 0; p < kPorts; p++)
            for (Bytes &o : alone.ports->take_tx(p)) want[p][size_t(k)].push_back(o);
    }
    for (uint16_t p = 0; p < kPorts; p++) {
        SCOPED_TRACE(p);
        std::vector<Bytes> expect;
        for (auto &w : want[p]) expect.insert(expect.end(), w.begin(), w.end());
        EXPECT_EQ(together.ports->take_tx(p), expect);
    }
    return want;
}

// One burst of runs of packets to one next hop (the route stage rewrites a run with the next
// hop's words in registers), broken by every other way out: another next hop on the same port,
// other ports, the ingress port (hairpin forwards and a local echo reply, both in out_[p0]),
// TTL-expired, MTU-exceeded and VLAN-tagged packets inside a run, no route, no neighbour,
// multipath, IPv6, a wrong destination MAC and the IPv4 destinations one compare tells apart
// (224/4 and 255.255.255.255 dropped, 240/4 routed). Against the same frames sent one per
// poll through a second switch: the same frames per port (the burst's IPv4 single-path outputs
// in order, then IPv6, then multipath, as the stages order them) and every port counter equal.
TEST(WorkerRuns, BurstGivesThePacketAtATimeFramesAndCounters) {
    enum Kind { kV4, kV6, kMulti };  // which list of the route stage the packet's output is in
    const uint32_t host = v4(10, 0, 0, 2);
    auto udp = [&](uint32_t dst, uint8_t ttl = 64, size_t payload = 32, uint16_t sport = 1000) {
        return ipv4(host, dst, kProtoUdp, udp_payload(sport, 2000, payload), ttl);
    };
    const Mac p0 = kLbP0;
    auto f4 = [&](uint32_t dst, uint8_t ttl = 64, size_t payload = 32, int vlan = -1,
                  uint16_t sport = 1000) {
        return cat(eth(p0, kLbHost, kEtherTypeIpv4, vlan), udp(dst, ttl, payload, sport));
    };
    auto f6 = [&](const Ip6 &dst, uint8_t hlim = 64, int vlan = -1) {
        return cat(eth(p0, kLbHost, kEtherTypeIpv6, vlan),
                   ipv6(ip6(0xfd00, 0, 2), dst, kProtoUdp, udp_payload(4791, 4791, 40), hlim));
    };
    auto ecmp = [&](uint16_t sport) {
        return cat(eth(p0, kLbHost, kEtherTypeIpv4),
                   ipv4(host, v4(10, 99, 0, 1), kProtoUdp, roce_l4(sport, 17, 5), 64));
    };
    const uint32_t a = v4(10, 0, 1, 2), b = v4(10, 0, 2, 2), h = v4(10, 0, 0, 2);
    const Bytes echo = {8, 0, 0xf7, 0xfd, 0, 1, 0, 1};
    const std::vector<std::pair<Kind, Bytes>> burst = {
        {kV4, f4(a, 64, 32)},
        {kV4, f4(a, 64, 33)},
        {kV4, f4(a, 64, 34)},
        {kV4, f4(b, 64, 35)},
        {kV4, f4(a, 64, 36)},
        {kV4, f4(a, 1, 37)},  // TTL expired inside a run
        {kV4, f4(a, 9, 38)},
        {kMulti, ecmp(49152)},
        {kV4, f4(a, 64, 39, 3)},  // tagged, inside a run
        {kV4, f4(h, 64, 40)},     // back out of p0
        {kV4, f4(h, 64, 41)},
        {kV4, cat(eth(p0, kLbHost, kEtherTypeIpv4),
                 ipv4(host, v4(10, 0, 0, 1), kProtoIcmp, echo))},  // echo reply to p0
        {kV4, f4(h, 64, 42)},
        {kV4, f4(v4(192, 168, 1, 1))},  // no route
        {kV4, f4(a, 64, 43)},
        {kV6, f6(ip6(0xfd00, 1, 2))},
        {kV6, f6(ip6(0xfd00, 1, 2), 7)},
        {kV4, f4(b, 64, 300)},  // MTU 200 on p2
        {kV4, f4(b, 64, 44)},
        {kV6, f6(ip6(0xfd00, 2, 2), 64, 1)},  // tagged
        {kV6, f6(ip6(0xfd00, 0, 2))},
        {kV4, f4(v4(10, 0, 1, 77))},  // no neighbour
        {kMulti, ecmp(49153)},
        {kV4, cat(eth(kLbHost, kLbHost, kEtherTypeIpv4), udp(a))},  // other MAC
        {kV4, f4(b, 64, 45)},
        {kV4, f4(b, 64, 46, 2)},
        {kV6, f6(ip6(0xfd00, 1, 2), 1)},        // hop limit expired
        {kV4, f4(v4(224, 0, 0, 5))},       // multicast
        {kV4, f4(v4(255, 255, 255, 255))},  // limited broadcast
        {kV4, f4(v4(240, 0, 0, 1))},        // class E: routed (no route here)
        {kMulti, ecmp(49152)},
        {kV4, f4(a, 64, 47)},
    };
    ASSERT_LE(burst.size(), 32u);  // one RX burst
    auto make = [] {
        auto sw = std::make_unique<LbSwitch>(2, LbConfig{}, LbSwitch::route(2));
        sw->dp->ctx().ports[2].mtu = 200;
        return sw;
    };
    auto together = make(), alone = make();
    const auto want = expect_burst_as_alone<3, 3>(*together, *alone, burst);
    size_t sent = 0;
    for (const auto &port : want)
        for (const auto &kind : port) sent += kind.size();
    EXPECT_EQ(sent, 23u);  // not a vacuous comparison
    for (uint16_t p = 0; p < 3; p++)
        EXPECT_EQ(port_counter_values(*together->counters, p),
                  port_counter_values(*alone->counters, p))
            << p;
    const PortCounters &c0 = together->counters->ports[0];
    EXPECT_EQ(c0.drops[size_t(DropReason::ttl_expired)].load(), 2u);
    EXPECT_EQ(c0.drops[size_t(DropReason::mtu_exceeded)].load(), 1u);
    EXPECT_EQ(c0.drops[size_t(DropReason::no_route)].load(), 2u);
    EXPECT_EQ(c0.drops[size_t(DropReason::no_neighbour)].load(), 1u);
    EXPECT_EQ(c0.drops[size_t(DropReason::l3_multicast)].load(), 2u);
    EXPECT_EQ(c0.drops[size_t(DropReason::dst_mac_mismatch)].load(), 1u);
    const AccountingReport r = check_accounting(
        take_accounting(accounting_sources(*together->dp, {"p0", "p1", "p2"})));
    EXPECT_TRUE(r.balanced) << accounting_json(r).dump();
}

// Runs that skip forward_to's VLAN and MTU tests (OutRun::plain): a burst without a tagged packet,
// to a port whose MTU reaches the ingress port's parse bound (p0's 1500). The same untagged burst
// as above, with 1500-byte IP packets (the bound) single-path and multipath, against the same
// frames each sent in a poll of its own with a tagged frame to another MAC (a dst_mac_mismatch
// drop), which keeps every forward on the tested path: the same frames per port and the same
// counters but the companions' rx and drop. p1's MTU is the bound (plain) or one below it (tested:
// the 1500-byte packets to p1 are mtu_exceeded); p2's is 200 (tested).
TEST(WorkerRuns, PlainRunsGiveTheTestedPathsFramesAndCounters) {
    enum Kind { kV4, kV6, kMulti };
    const uint32_t host = v4(10, 0, 0, 2);
    const Mac p0 = kLbP0;
    auto f4 = [&](uint32_t dst, uint8_t ttl = 64, size_t payload = 32, uint16_t sport = 1000) {
        return cat(eth(p0, kLbHost, kEtherTypeIpv4),
                   ipv4(host, dst, kProtoUdp, udp_payload(sport, 2000, payload), ttl));
    };
    auto f6 = [&](const Ip6 &dst, uint8_t hlim = 64, size_t payload = 40) {
        return cat(eth(p0, kLbHost, kEtherTypeIpv6),
                   ipv6(ip6(0xfd00, 0, 2), dst, kProtoUdp, udp_payload(4791, 4791, payload), hlim));
    };
    auto ecmp = [&](uint16_t sport, uint8_t ttl = 64, size_t payload = 32) {
        return f4(v4(10, 99, 0, 1), ttl, payload, sport);
    };
    const uint32_t a = v4(10, 0, 1, 2), b = v4(10, 0, 2, 2), h = v4(10, 0, 0, 2);
    constexpr size_t kBig4 = 1500 - 28, kBig6 = 1500 - 48;  // IP packets of 1500 bytes
    const std::vector<std::pair<Kind, Bytes>> burst = {
        {kV4, f4(a)},
        {kV4, f4(a, 64, 33)},
        {kV4, f4(a, 64, kBig4)},  // the bound: p1's MTU or one above it
        {kV4, f4(a, 1, 34)},      // TTL expired inside a run
        {kV4, f4(a, 64, 35)},
        {kV4, f4(b, 64, 36)},
        {kV4, f4(b, 64, 300)},  // MTU 200 on p2
        {kV4, f4(b, 2, 37)},
        {kMulti, ecmp(49152)},
        {kMulti, ecmp(49153, 64, kBig4)},
        {kMulti, ecmp(49154, 1)},
        {kMulti, ecmp(49155, 64, 300)},
        {kV4, f4(h, 64, 38)},  // back out of p0 (MTU 1500: plain)
        {kV4, f4(v4(192, 168, 1, 1))},  // no route
        {kV6, f6(ip6(0xfd00, 1, 2))},
        {kV6, f6(ip6(0xfd00, 1, 2), 64, kBig6)},
        {kV6, f6(ip6(0xfd00, 1, 2), 1)},  // hop limit expired
        {kV6, f6(ip6(0xfd00, 2, 2), 64, 300)},  // MTU 200 on p2
        {kV6, f6(ip6(0xfd00, 2, 2), 9)},
        {kV4, f4(a, 64, 39)},
        {kMulti, ecmp(49156)},
        {kMulti, ecmp(49157, 64, kBig4)},
        {kMulti, ecmp(49158, 64, 300)},
        {kV4, f4(a, 64, kBig4)},
    };
    ASSERT_LE(burst.size(), 32u);  // one RX burst
    const Bytes companion =
        cat(eth(kLbHost, kLbHost, kEtherTypeIpv4, 3), ipv4(host, a, kProtoUdp, udp_payload(1, 2, 32)));
    for (const uint32_t p1_mtu : {1500u, 1499u}) {
        SCOPED_TRACE(p1_mtu);
        auto make = [&] {
            auto sw = std::make_unique<LbSwitch>(2, LbConfig{}, LbSwitch::route(2));
            sw->dp->ctx().ports[1].mtu = p1_mtu;
            sw->dp->ctx().ports[2].mtu = 200;
            return sw;
        };
        auto together = make(), tested = make();
        for (const auto &[k, f] : burst) together->ports->inject(0, f);
        EXPECT_EQ(together->worker->poll_once(1000), burst.size());
        std::array<std::array<std::vector<Bytes>, 3>, 3> want;
        for (const auto &[k, f] : burst) {
            tested->ports->inject(0, f);
            tested->ports->inject(0, companion);
            EXPECT_EQ(tested->worker->poll_once(1000), 2u);
            for (uint16_t p = 0; p < 3; p++)
                for (Bytes &o : tested->ports->take_tx(p)) want[p][size_t(k)].push_back(o);
        }
        size_t sent = 0;
        for (uint16_t p = 0; p < 3; p++) {
            SCOPED_TRACE(p);
            std::vector<Bytes> expect;
            for (auto &w : want[p]) expect.insert(expect.end(), w.begin(), w.end());
            sent += expect.size();
            EXPECT_EQ(together->ports->take_tx(p), expect);
        }
        // Not a vacuous comparison: the single-path outputs per port, multipath ones on both.
        EXPECT_EQ(want[1][kV4].size(), p1_mtu == 1500 ? 6u : 4u);
        EXPECT_EQ(want[1][kV6].size(), p1_mtu == 1500 ? 2u : 1u);
        EXPECT_EQ(want[2][kV4].size(), 2u);
        EXPECT_EQ(want[2][kV6].size(), 1u);
        EXPECT_EQ(want[0][kV4].size(), 1u);
        EXPECT_GE(sent, (p1_mtu == 1500 ? 12u : 9u) + 2u);
        std::vector<uint64_t> tested0 = port_counter_values(*tested->counters, 0);
        const size_t k = burst.size(), mismatch = 9 + size_t(DropReason::dst_mac_mismatch);
        tested0[0] -= k;                    // rx_packets
        tested0[1] -= k * companion.size();  // rx_bytes
        tested0[mismatch] -= k;
        EXPECT_EQ(port_counter_values(*together->counters, 0), tested0);
        for (uint16_t p = 1; p < 3; p++)
            EXPECT_EQ(port_counter_values(*together->counters, p),
                      port_counter_values(*tested->counters, p))
                << p;
        const PortCounters &c0 = together->counters->ports[0];
        // The single-path ones, and the multipath 1500-byte packets (whichever member; with
        // p1's MTU 1499) and 300-byte ones whose flow took p2.
        EXPECT_GE(c0.drops[size_t(DropReason::mtu_exceeded)].load(), p1_mtu == 1500 ? 2u : 7u);
        EXPECT_EQ(c0.drops[size_t(DropReason::ttl_expired)].load(), 3u);
        EXPECT_EQ(c0.drops[size_t(DropReason::dst_mac_mismatch)].load(), 0u);
        const AccountingReport r = check_accounting(
            take_accounting(accounting_sources(*together->dp, {"p0", "p1", "p2"})));
        EXPECT_TRUE(r.balanced) << accounting_json(r).dump();
    }
}

// The multipath half of the above: one burst of IPv4 and IPv6 packets to three-member groups
// (members on p1, p2 and p3, MTU 200 on p2), interleaved, with runs of one flow (one member)
// and of alternating members, TTL and hop limit expired, MTU-exceeded and VLAN-tagged packets
// among them, a group with no member alive and single-path packets of both families in between.
// forward_groups takes the IPv4 members and then the IPv6 ones (forward_members per family);
// against the same frames sent one per poll through a second switch: the same frames per port
// (single-path IPv4, IPv6, then multipath IPv4, IPv6), every port counter and every member,
// policy and no-member counter of the balancer equal.
TEST(WorkerRuns, MultipathBurstGivesThePacketAtATimeFramesAndCounters) {
    enum Kind { kV4, kV6, kM4, kM6 };  // the output list: single-path, then multipath, by family
    const uint32_t host = v4(10, 0, 0, 2);
    const Mac p0 = kLbP0;
    // `big`: an L3 length above p2's MTU.
    auto l4 = [](uint16_t sport, bool big) {
        return big ? udp_payload(sport, 4791, 300) : roce_l4(sport, 17, 5);
    };
    auto m4 = [&](uint16_t sport, uint8_t ttl = 64, bool big = false, int vlan = -1,
                  uint32_t dst = v4(10, 99, 0, 1)) {
        return cat(eth(p0, kLbHost, kEtherTypeIpv4, vlan),
                   ipv4(host, dst, kProtoUdp, l4(sport, big), ttl));
    };
    auto m6 = [&](uint16_t sport, uint8_t hlim = 64, bool big = false, int vlan = -1) {
        return cat(eth(p0, kLbHost, kEtherTypeIpv6, vlan),
                   ipv6(ip6(0xfd00, 0, 2), ip6(0xfd00, 0x99, 1), kProtoUdp, l4(sport, big), hlim));
    };
    auto dead = [&](uint16_t sport) { return m4(sport, 64, false, -1, v4(10, 98, 0, 1)); };
    const Bytes one4 = cat(eth(p0, kLbHost, kEtherTypeIpv4),
                           ipv4(host, v4(10, 0, 1, 2), kProtoUdp, udp_payload(1000, 2000, 32)));
    const Bytes one6 = cat(eth(p0, kLbHost, kEtherTypeIpv6),
                           ipv6(ip6(0xfd00, 0, 2), ip6(0xfd00, 3, 2), kProtoUdp,
                                udp_payload(1000, 2000, 32)));
    const std::vector<std::pair<Kind, Bytes>> burst = {
        {kM4, m4(49152)},
        {kM4, m4(49152)},  // a run of one flow
        {kM4, m4(49153)},
        {kM6, m6(49152)},
        {kM4, m4(49154)},
        {kM4, m4(49155, 1)},  // TTL expired
        {kM4, m4(49156)},
        {kM6, m6(49153)},
        {kM6, m6(49153)},
        {kM4, m4(49157, 64, true)},
        {kM4, dead(1)},  // no member alive
        {kM4, m4(49152, 64, false, 3)},  // tagged, inside a run of its flow
        {kM4, m4(49152)},
        {kV4, one4},
        {kM6, m6(49154, 1)},  // hop limit expired
        {kM6, m6(49155, 64, true)},
        {kM4, m4(49158)},
        {kM4, m4(49158, 64, true)},
        {kM4, m4(49158)},
        {kM4, dead(2)},
        {kM6, m6(49156, 64, false, 4)},  // tagged
        {kM4, m4(49159, 2)},
        {kM6, m6(49157)},
        {kM4, m4(49160, 64, true)},
        {kM4, m4(49161, 64, true)},
        {kM6, m6(49158, 64, true)},
        {kV6, one6},
        {kM4, m4(49162, 64, true)},
        {kM4, m4(49163)},
        {kM6, m6(49159)},
        {kM6, m6(49160)},
        {kM4, m4(49164)},
    };
    ASSERT_LE(burst.size(), 32u);  // one RX burst
    auto make = [] {
        auto sw = std::make_unique<LbSwitch>(3, LbConfig{}, LbSwitch::route(3));
        sw->dp->ctx().ports[2].mtu = 200;
        // 10.98.0.0/16 over two gateways that never resolve: a group with no member alive.
        MultipathRouteConfig none{*parse_prefix("10.98.0.0/16"), {}, ""};
        none.paths = {{ipa("10.0.1.77"), "p1", 1}, {ipa("10.0.2.77"), "p2", 1}};
        sw->rib->set_multipath({sw->route_, LbSwitch::route6(3), none});
        EXPECT_EQ(sw->rib->sync(), 0u);
        return sw;
    };
    auto together = make(), alone = make();
    const auto want = expect_burst_as_alone<4, 4>(*together, *alone, burst);
    for (uint16_t p = 1; p < 4; p++) {  // not a vacuous comparison: every member of both groups
        EXPECT_FALSE(want[p][kM4].empty()) << p;
        EXPECT_FALSE(want[p][kM6].empty()) << p;
    }
    for (uint16_t p = 0; p < 4; p++)
        EXPECT_EQ(port_counter_values(*together->counters, p),
                  port_counter_values(*alone->counters, p))
            << p;
    auto lb_counters = [](const LbSwitch &sw) {
        const LbWorkerCounters &c = sw.lbc();
        std::vector<uint64_t> v = {c.no_member.load()};
        for (const auto &g : sw.rib->groups())
            for (uint32_t s = 0; s < kMaxGroupMembers; s++) {
                const LbMemberCounters &m = c.member(g.id, s);
                v.insert(v.end(), {m.packets.load(), m.bytes.load(), m.flowlets.load()});
            }
        for (const auto &p : c.policies)
            v.insert(v.end(), {p.packets.load(), p.decisions.load(), p.path_changes.load(),
                               p.fallbacks.load(), p.aged.load()});
        return v;
    };
    EXPECT_EQ(lb_counters(*together), lb_counters(*alone));
    const PortCounters &c0 = together->counters->ports[0];
    EXPECT_EQ(c0.drops[size_t(DropReason::ttl_expired)].load(), 2u);
    EXPECT_GE(c0.drops[size_t(DropReason::mtu_exceeded)].load(), 1u);
    EXPECT_EQ(c0.drops[size_t(DropReason::no_neighbour)].load(), 2u);
    EXPECT_EQ(together->lbc().no_member.load(), 2u);
    const AccountingReport r = check_accounting(
        take_accounting(accounting_sources(*together->dp, {"p0", "p1", "p2", "p3"})));
    EXPECT_TRUE(r.balanced) << accounting_json(r).dump();
}

// forward_groups' loop for a burst whose members are all on one port (forward_members_to: the
// run opened once, no compare of each member's port) against the general one: groups whose
// members are two gateways on one port each (p1 for 10.99.0.0/16, flowlet, and fd00:99::/32,
// hash; p2 for 10.97.0.0/16, hash). `together` gets bursts of the p1 groups' packets alone,
// IPv4 and IPv6, runs of one flow and of several: every member on p1, the one-port loop.
// `tested` gets each of those packets in a poll of its own with a packet to the p2 group (two
// ports: the general loop). The same frames on p1 and counters of p1, p0's drops and the p1
// groups' member and policy counters, with p1's MTU at the ingress bound (plain runs, unless
// the burst has an expired TTL or a tag) and at 200 (tested runs).
TEST(WorkerRuns, OnePortMultipathBurstGivesTheGeneralPathsFramesAndCounters) {
    const uint32_t host = v4(10, 0, 0, 2);
    const Mac p0 = kLbP0;
    auto m4 = [&](uint16_t sport, uint8_t ttl = 64, bool big = false, int vlan = -1,
                  uint32_t dst = v4(10, 99, 0, 1)) {
        return cat(eth(p0, kLbHost, kEtherTypeIpv4, vlan),
                   ipv4(host, dst, kProtoUdp,
                        big ? udp_payload(sport, 4791, 300) : roce_l4(sport, 17, 5), ttl));
    };
    auto m6 = [&](uint16_t sport, uint8_t hlim = 64, bool big = false) {
        return cat(eth(p0, kLbHost, kEtherTypeIpv6),
                   ipv6(ip6(0xfd00, 0, 2), ip6(0xfd00, 0x99, 1), kProtoUdp,
                        big ? udp_payload(sport, 4791, 300) : roce_l4(sport, 17, 5), hlim));
    };
    const Bytes companion = m4(7, 64, false, -1, v4(10, 97, 0, 1));
    const std::vector<Bytes> plain = {m4(49152), m4(49152), m4(49153), m6(49152), m4(49154),
                                      m6(49153), m6(49153), m4(49155), m4(49156), m4(49152),
                                      m4(49157), m6(49154), m4(49158), m4(49159)};
    std::vector<Bytes> tested_run = plain;  // an expired TTL and a tag: no plain run
    tested_run.insert(tested_run.begin() + 3, m4(49160, 1));
    tested_run.insert(tested_run.begin() + 6, m4(49152, 64, false, 3));
    tested_run.insert(tested_run.begin() + 9, m4(49161, 64, true));
    tested_run.insert(tested_run.begin() + 10, m6(49155, 1));
    tested_run.insert(tested_run.begin() + 12, m6(49156, 64, true));
    for (const uint32_t p1_mtu : {1500u, 200u}) {
        SCOPED_TRACE(p1_mtu);
        auto make = [&] {
            auto sw = std::make_unique<LbSwitch>(2, LbConfig{}, LbSwitch::route(2));
            sw->dp->ctx().ports[1].mtu = p1_mtu;
            MacAddr mac3 = LbSwitch::gw_mac(1);
            mac3.b[5] = 0x03;
            sw->rib->add_neighbour(1, ipa("10.0.1.3"), mac3);
            sw->rib->add_neighbour(1, ipa("fd00:1::3"), mac3);
            sw->rib->add_neighbour(2, ipa("10.0.2.3"), mac3);
            MultipathRouteConfig a4{*parse_prefix("10.99.0.0/16"), {}, "flowlet"};
            a4.paths = {{ipa("10.0.1.2"), "p1", 1}, {ipa("10.0.1.3"), "p1", 1}};
            MultipathRouteConfig a6{*parse_prefix("fd00:99::/32"), {}, "hash"};
            a6.paths = {{ipa("fd00:1::2"), "p1", 1}, {ipa("fd00:1::3"), "p1", 1}};
            MultipathRouteConfig b{*parse_prefix("10.97.0.0/16"), {}, "hash"};
            b.paths = {{ipa("10.0.2.2"), "p2", 1}, {ipa("10.0.2.3"), "p2", 1}};
            sw->rib->set_multipath({a4, a6, b});
            EXPECT_EQ(sw->rib->sync(), 0u);
            return sw;
        };
        auto lb_counters = [](const LbSwitch &sw) {
            const LbWorkerCounters &c = sw.lbc();
            std::vector<uint64_t> v;
            for (const auto &g : sw.rib->groups()) {
                if (g.members[0].port != 1) continue;
                for (uint32_t sl = 0; sl < 2; sl++) {
                    const LbMemberCounters &m = c.member(g.id, sl);
                    v.insert(v.end(), {m.packets.load(), m.bytes.load(), m.flowlets.load()});
                }
            }
            const LbPolicyCounters &f = c.policies[uint8_t(LbPolicyId::flowlet)];
            v.insert(v.end(), {f.packets.load(), f.decisions.load(), f.path_changes.load(),
                               f.fallbacks.load(), c.no_member.load()});
            return v;
        };
        const std::vector<Bytes> *bursts[] = {&plain, &tested_run};
        for (const std::vector<Bytes> *burst : bursts) {
            ASSERT_LE(burst->size(), 32u);  // one RX burst
            auto together = make(), tested = make();
            for (const Bytes &f : *burst) together->ports->inject(0, f);
            EXPECT_EQ(together->worker->poll_once(1000), burst->size());
            EXPECT_EQ(together->worker->balancer().burst_ports(), 1u << 1);  // one port
            // The worker forwards the burst's IPv4 multipath packets, then its IPv6 ones.
            std::vector<Bytes> want, want6;
            for (const Bytes &f : *burst) {
                tested->ports->inject(0, f);
                tested->ports->inject(0, companion);
                EXPECT_EQ(tested->worker->poll_once(1000), 2u);
                EXPECT_EQ(tested->worker->balancer().burst_ports() >> 2 & 1, 1u);  // with p2
                const bool v6 = f[12] == 0x86;
                for (Bytes &o : tested->ports->take_tx(1)) (v6 ? want6 : want).push_back(o);
            }
            want.insert(want.end(), want6.begin(), want6.end());
            EXPECT_GE(want.size(), 12u);  // not a vacuous comparison
            std::set<Bytes> macs;  // both members of each group
            for (const Bytes &f : want) macs.insert(Bytes(f.begin(), f.begin() + 6));
            EXPECT_EQ(macs.size(), 2u);
            EXPECT_EQ(together->ports->take_tx(1), want);
            EXPECT_EQ(tested->counters->ports[2].forwarded_out.load(), burst->size());
            EXPECT_EQ(port_counter_values(*together->counters, 1),
                      port_counter_values(*tested->counters, 1));
            const auto &d1 = together->counters->ports[0].drops, &d2 = tested->counters->ports[0].drops;
            for (size_t r = 0; r < d1.size(); r++) EXPECT_EQ(d1[r].load(), d2[r].load()) << r;
            EXPECT_EQ(lb_counters(*together), lb_counters(*tested));
        }
    }
}

TEST_F(WorkerPipeline, DropsPacketLargerThanEgressMtu) {
    dp->ctx().ports[1].mtu = 1000;
    ports->inject(
        0, cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 0, 2, 2), 64, 1200)));
    ports->inject(
        0, cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 0, 2, 2), 64, 900)));
    worker->poll_once(now_ns);
    EXPECT_EQ(drops(0, DropReason::mtu_exceeded), 1u);
    EXPECT_EQ(ports->take_tx(1).size(), 1u);
}

TEST_F(WorkerPipeline, AnswersArpRequestForItsAddress) {
    Bytes arp = arp_request(kH1, v4(10, 0, 1, 2), v4(10, 0, 1, 1));
    Mac bcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    ports->inject(0, cat(eth(bcast, kH1, kEtherTypeArp), arp));
    worker->poll_once(now_ns);
    auto out = ports->take_tx(0);
    ASSERT_EQ(out.size(), 1u);
    Bytes reply;
    put16(reply, 1);
    put16(reply, kEtherTypeIpv4);
    reply.push_back(6);
    reply.push_back(4);
    put16(reply, 2);
    put(reply, kP0.data(), 6);
    put32(reply, v4(10, 0, 1, 1));
    put(reply, kH1.data(), 6);
    put32(reply, v4(10, 0, 1, 2));
    EXPECT_EQ(out[0], cat(eth(kH1, kP0, kEtherTypeArp), reply));
    EXPECT_EQ(counters->ports[0].local_packets.load(), 1u);

    // A request for an address of the other port is not answered on this one.
    wr32(&arp[24], v4(10, 0, 2, 1));
    ports->inject(0, cat(eth(bcast, kH1, kEtherTypeArp), arp));
    worker->poll_once(now_ns);
    EXPECT_TRUE(ports->take_tx(0).empty());
    EXPECT_EQ(counters->ports[0].local_packets.load(), 2u);
    EXPECT_EQ(total_drops(0), 0u);
}

// A broadcast ARP that is not an Ethernet/IPv4 request or reply is a named drop (arp_invalid),
// never counted as consumed (local) and never answered.
TEST_F(WorkerPipeline, DropsMalformedArpAsArpInvalid) {
    const Bytes good = arp_request(kH1, v4(10, 0, 1, 2), v4(10, 0, 1, 1));
    Mac bcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    const std::vector<std::pair<size_t, uint8_t>> bad = {
        {1, 6},     // hardware type 6
        {2, 0x86},  // protocol type 0x86dd
        {4, 8},     // hardware address length
        {5, 16},    // protocol address length
        {7, 3},     // opcode 3
    };
    for (auto [off, v] : bad) {
        Bytes a = good;
        a[off] = v;
        if (off == 2) a[3] = 0xdd;
        ports->inject(0, cat(eth(bcast, kH1, kEtherTypeArp), a));
    }
    worker->poll_once(now_ns);
    EXPECT_TRUE(ports->take_tx(0).empty());
    EXPECT_EQ(drops(0, DropReason::arp_invalid), bad.size());
    EXPECT_EQ(counters->ports[0].local_packets.load(), 0u);
    EXPECT_EQ(total_drops(0), bad.size());
}

TEST_F(WorkerPipeline, AnswersEchoRequestToItsAddress) {
    Bytes icmp = {8, 0, 0, 0, 0x12, 0x34, 0, 1, 'p', 'i', 'n', 'g'};
    wr16(&icmp[2], csum_finish(csum_partial(icmp.data(), icmp.size())));
    ports->inject(0, cat(eth(kP0, kH1, kEtherTypeIpv4),
                         ipv4(v4(10, 0, 1, 2), v4(10, 0, 2, 1), kProtoIcmp, icmp)));
    worker->poll_once(now_ns);
    auto out = ports->take_tx(0);
    ASSERT_EQ(out.size(), 1u);
    const uint8_t *ip = out[0].data() + 14;
    EXPECT_TRUE(ipv4_header_checksum_ok(ip, 20));
    EXPECT_EQ(rd32(ip + 12), v4(10, 0, 2, 1));
    EXPECT_EQ(rd32(ip + 16), v4(10, 0, 1, 2));
    EXPECT_EQ(ip[20], 0);  // echo reply
    EXPECT_EQ(csum_fold(csum_partial(ip + 20, icmp.size())), 0xFFFF);
    EXPECT_TRUE(std::equal(kH1.begin(), kH1.end(), out[0].begin()));
}

TEST_F(WorkerPipeline, AnswersNeighbourSolicitationWithAdvertisement) {
    Ip6 target = ip6(0xfd00, 1, 1);
    Bytes ns = {135, 0, 0, 0, 0, 0, 0, 0};
    put(ns, target.data(), 16);
    ns.insert(ns.end(), {1, 1});
    put(ns, kH1.data(), 6);
    Ip6 src = ip6(0xfd00, 1, 2);
    Ip6 group = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 1};
    Bytes pkt = ipv6(src, group, kProtoIcmpv6, ns, 255);
    uint32_t sum = csum_partial(pkt.data() + 8, 32) + uint32_t(ns.size()) + kProtoIcmpv6;
    wr16(&pkt[40 + 2], csum_finish(csum_partial(pkt.data() + 40, ns.size(), sum)));
    ports->inject(0, cat(eth({0x33, 0x33, 0xff, 0, 0, 1}, kH1, kEtherTypeIpv6), pkt));
    worker->poll_once(now_ns);
    auto out = ports->take_tx(0);
    ASSERT_EQ(out.size(), 1u);
    const uint8_t *ip = out[0].data() + 14;
    ASSERT_EQ(out[0].size(), 14u + 40 + 32);
    EXPECT_EQ(ip[40], 136);
    EXPECT_EQ(ip[7], 255);
    EXPECT_EQ(std::memcmp(ip + 8, target.data(), 16), 0);
    EXPECT_EQ(std::memcmp(ip + 24, src.data(), 16), 0);
    EXPECT_EQ(std::memcmp(ip + 40 + 26, kP0.data(), 6), 0);
    uint32_t vsum = csum_partial(ip + 8, 32) + 32u + kProtoIcmpv6;
    EXPECT_EQ(csum_fold(csum_partial(ip + 40, 32, vsum)), 0xFFFF);
}

TEST_F(WorkerPipeline, FullDeviceRingKeepsPacketsUntilFifoOverflowsThenCountsTxFull) {
    ports->set_tx_budget(1, 0);
    for (int i = 0; i < 100; i++)
        ports->inject(0,
                      cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 0, 2, 2))));
    for (int i = 0; i < 4; i++) worker->poll_once(now_ns);
    // The FIFO holds 64; the other 36 are dropped as tx_full on the egress port.
    EXPECT_EQ(egress->backlog(), 64u);
    EXPECT_EQ(drops(1, DropReason::tx_full), 36u);
    ports->set_tx_budget(1, UINT32_MAX);
    worker->poll_once(now_ns);
    EXPECT_EQ(ports->take_tx(1).size(), 64u);
    EXPECT_EQ(counters->ports[1].tx_packets.load(), 64u);
}

TEST_F(WorkerPipeline, RouteChangeAppliesToTheNextBurst) {
    Bytes f = cat(eth(kP0, kH1, kEtherTypeIpv4), udp4(v4(10, 0, 1, 2), v4(10, 8, 0, 1)));
    ports->inject(0, f);
    worker->poll_once(now_ns);
    EXPECT_EQ(drops(0, DropReason::no_neighbour), 1u);
    rib->add_neighbour(1, ipa("10.0.2.99"), maca("02:00:00:00:cc:03"));
    rib->sync();
    ports->inject(0, f);
    worker->poll_once(now_ns);
    auto out = ports->take_tx(1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0][5], 0x03);
}

}  // namespace
}  // namespace rocesw::test
