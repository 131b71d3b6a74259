// The punt path's data-plane half (doc/control-plane.md): which packets go to the host
// interfaces, in which class, policed at exactly the configured rate in virtual time.
#include <gtest/gtest.h>

#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "fixture.h"
#include "pipeline/punt.h"
#include "pkt/mbuf_meta.h"

namespace rocesw::test {
namespace {

class PuntPipeline : public SwitchFixture {
  protected:
    // Two workers, as the Punt is built for: worker 0 polls both ports (the one the tests
    // drive), worker 1 port 1 (WorkersShareEachClassBucket).
    void adjust(DataplaneOptions &o) override {
        o.workers = 2;
        o.rx = {{{0, 0}, {1, 0}}, {{1, 0}}};
    }
    void SetUp() override {
        SwitchFixture::SetUp();
        cfg.punt_pps.fill(100000);  // high enough not to police unless a test says so
        make_punt();
    }
    void TearDown() override {
        drain();
        dp->set_punt(nullptr);
        punt.reset();
        SwitchFixture::TearDown();
    }
    void make_punt() {
        punt = std::make_unique<Punt>(cfg, 2);
        dp->set_punt(punt.get());
    }
    // What the hostif thread would write to the kernel: (ingress port, frame).
    std::vector<std::pair<uint16_t, Bytes>> drain(uint16_t w = 0) {
        std::vector<std::pair<uint16_t, Bytes>> out;
        rte_mbuf *m[64];
        size_t n;
        while ((n = punt->take(w, m, 64)) > 0)
            for (size_t i = 0; i < n; i++) {
                const uint8_t *d = rte_pktmbuf_mtod(m[i], const uint8_t *);
                out.emplace_back(meta_of(m[i])->in_port, Bytes(d, d + rte_pktmbuf_data_len(m[i])));
                rte_pktmbuf_free(m[i]);
            }
        return out;
    }
    uint64_t punted(PuntClass c) const { return punt->stats(c).punted.load(); }
    uint64_t policed(PuntClass c) const { return punt->stats(c).policed.load(); }

    ControlPlaneConfig cfg;
    std::unique_ptr<Punt> punt;
};

Bytes arp_request(uint32_t target) {
    Bytes a = {0, 1, 8, 0, 6, 4, 0, 1};
    put(a, kH1.data(), 6);
    put32(a, v4(10, 0, 1, 2));
    for (int i = 0; i < 6; i++) a.push_back(0);
    put32(a, target);
    return cat(eth({0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, kH1, kEtherTypeArp), a);
}

Bytes tcp(uint16_t sport, uint16_t dport) {
    Bytes b;
    put16(b, sport);
    put16(b, dport);
    put32(b, 1);
    put32(b, 0);
    b.push_back(0x50);
    b.push_back(0x02);  // SYN
    put16(b, 1024);
    put16(b, 0);
    put16(b, 0);
    return b;
}

Bytes echo4(uint32_t dst, uint8_t ttl = 64) {
    Bytes icmp = {8, 0, 0, 0, 0, 1, 0, 1};
    return cat(eth(kP0, kH1, kEtherTypeIpv4), ipv4(v4(10, 0, 1, 2), dst, kProtoIcmp, icmp, ttl));
}

// Every class, each by one packet: the frame reaches the queue unchanged, tagged with its
// ingress port, and nothing is forwarded or dropped.
TEST_F(PuntPipeline, EachKindOfControlPacketGoesToItsClassUnchanged) {
    struct Case {
        const char *what;
        uint16_t port;
        Bytes frame;
        PuntClass cls;
    };
    const Ip6 h1_6 = ip6(0xfd00, 1, 2), sw1_6 = ip6(0xfd00, 1, 1);
    Ip6 solicited{};  // ff02::1:ff00:1
    solicited[0] = 0xff, solicited[1] = 0x02, solicited[11] = 1, solicited[12] = 0xff,
    solicited[15] = 1;
    Bytes ns = {135, 0, 0, 0, 0, 0, 0, 0};
    put(ns, sw1_6.data(), 16);
    Ip6 ll{};
    ll[0] = 0xfe, ll[1] = 0x80, ll[15] = 0x10;
    Ip6 ll_h1{};
    ll_h1[0] = 0xfe, ll_h1[1] = 0x80, ll_h1[15] = 0x02;
    const Mac lldp_mac{0x01, 0x80, 0xc2, 0, 0, 0x0e}, mcast6{0x33, 0x33, 0xff, 0, 0, 1};
    std::vector<Case> cases = {
        {"ARP request", 0, arp_request(v4(10, 0, 1, 1)), PuntClass::arp},
        {"ARP for someone else", 0, arp_request(v4(10, 0, 1, 77)), PuntClass::arp},
        {"echo to the switch", 0, echo4(v4(10, 0, 1, 1)), PuntClass::icmp},
        {"echo to the other port's address", 0, echo4(v4(10, 0, 2, 1)), PuntClass::icmp},
        {"BGP SYN to 179", 0,
         cat(eth(kP0, kH1, kEtherTypeIpv4),
             ipv4(v4(10, 0, 1, 2), v4(10, 0, 1, 1), kProtoTcp, tcp(40000, 179))),
         PuntClass::bgp},
        {"BGP reply from 179", 0,
         cat(eth(kP0, kH1, kEtherTypeIpv4),
             ipv4(v4(10, 0, 1, 2), v4(10, 0, 1, 1), kProtoTcp, tcp(179, 40000))),
         PuntClass::bgp},
        {"SSH", 0,
         cat(eth(kP0, kH1, kEtherTypeIpv4),
             ipv4(v4(10, 0, 1, 2), v4(10, 0, 1, 1), kProtoTcp, tcp(40000, 22))),
         PuntClass::l4},
        {"UDP (BFD)", 0,
         cat(eth(kP0, kH1, kEtherTypeIpv4),
             ipv4(v4(10, 0, 1, 2), v4(10, 0, 1, 1), kProtoUdp, udp_payload(49152, 3784, 24))),
         PuntClass::l4},
        {"GRE to the switch", 0,
         cat(eth(kP0, kH1, kEtherTypeIpv4),
             ipv4(v4(10, 0, 1, 2), v4(10, 0, 1, 1), 47, Bytes(8, 0))),
         PuntClass::other},
        {"neighbour solicitation", 0,
         cat(eth(mcast6, kH1, kEtherTypeIpv6), ipv6(h1_6, solicited, kProtoIcmpv6, ns, 255)),
         PuntClass::nd},
        {"link-local echo", 0,
         cat(eth(kP0, kH1, kEtherTypeIpv6),
             ipv6(ll_h1, ll, kProtoIcmpv6, Bytes{128, 0, 0, 0, 0, 1, 0, 1})),
         PuntClass::icmp},
        {"LLDP", 1, cat(eth(lldp_mac, kH2, kEtherTypeLldp), Bytes(46, 0)), PuntClass::lldp},
        {"TTL 1 to a routed host", 0, echo4(v4(10, 0, 2, 2), 1), PuntClass::ttl},
        {"unresolved gateway", 0, echo4(v4(10, 8, 0, 5)), PuntClass::glean},
        {"unresolved host on a connected subnet", 0, echo4(v4(10, 0, 2, 77)), PuntClass::glean},
    };
    std::array<uint64_t, kPuntClassCount> expect{};
    for (const auto &c : cases) {
        SCOPED_TRACE(c.what);
        ports->inject(c.port, c.frame);
        worker->poll_once(now_ns);
        now_ns += 1'000'000;
        auto got = drain();
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0].first, c.port);
        EXPECT_EQ(got[0].second, c.frame);
        expect[size_t(c.cls)]++;
        for (size_t k = 0; k < kPuntClassCount; k++)
            EXPECT_EQ(punted(PuntClass(k)), expect[k]) << punt_class_name(PuntClass(k));
        EXPECT_TRUE(ports->take_tx(0).empty());
        EXPECT_TRUE(ports->take_tx(1).empty());
    }
    EXPECT_EQ(total_drops(0) + total_drops(1), 0u);
    EXPECT_EQ(counters->ports[0].punted.load() + counters->ports[1].punted.load(), cases.size());
    EXPECT_EQ(counters->ports[1].punted.load(), 1u);  // LLDP
    EXPECT_EQ(counters->ports[0].local_packets.load(), 0u);  // nothing answered by the worker
}

// A reject route (the kernel's unreachable or prohibit) hands its packets to the kernel, which
// holds the same route and answers with ICMP unreachable (host unreachable, administratively
// prohibited), as it does TTL expiry; a blackhole's are dropped as route_discard, as the
// kernel drops them without a word. Without host interfaces a reject route drops too.
TEST_F(PuntPipeline, ARejectRoutesPacketsGoToTheKernelABlackholesAreDropped) {
    rib->set_learned(*parse_prefix("10.77.0.0/16"), LearnedRoute{"static", {}, true, true});
    rib->set_learned(*parse_prefix("fd00:77::/32"), LearnedRoute{"static", {}, true, true});
    rib->set_learned(*parse_prefix("10.78.0.0/16"), LearnedRoute{"static", {}, true, false});
    ASSERT_EQ(rib->sync(), 0u);
    const Bytes to_reject = echo4(v4(10, 77, 1, 1));
    const Bytes to_reject6 =
        cat(eth(kP0, kH1, kEtherTypeIpv6),
            ipv6(ip6(0xfd00, 1, 2), ip6(0xfd00, 0x77, 1), kProtoIcmpv6, Bytes{128, 0, 0, 0, 0, 1, 0, 1}));
    const Bytes to_blackhole = echo4(v4(10, 78, 1, 1));
    for (const Bytes *f : {&to_reject, &to_reject6, &to_blackhole}) ports->inject(0, *f);
    worker->poll_once(now_ns);
    auto got = drain();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0], (std::pair<uint16_t, Bytes>{0, to_reject}));
    EXPECT_EQ(got[1], (std::pair<uint16_t, Bytes>{0, to_reject6}));
    EXPECT_EQ(punted(PuntClass::unreachable), 2u);
    EXPECT_EQ(drops(0, DropReason::route_discard), 1u);
    EXPECT_EQ(total_drops(0), 1u);
    EXPECT_TRUE(ports->take_tx(1).empty());
    // A TTL of 1 does not matter: the route rejects first, as in the kernel.
    ports->inject(0, echo4(v4(10, 77, 1, 1), 1));
    worker->poll_once(now_ns);
    EXPECT_EQ(drain().size(), 1u);
    EXPECT_EQ(punted(PuntClass::unreachable), 3u);
    EXPECT_EQ(punted(PuntClass::ttl), 0u);
    dp->set_punt(nullptr);
    ports->inject(0, to_reject);
    worker->poll_once(now_ns);
    EXPECT_EQ(drops(0, DropReason::route_discard), 2u);
    dp->set_punt(punt.get());
    EXPECT_EQ(punted(PuntClass::unreachable), 3u);
}

// A routed packet above the egress port's MTU goes to the kernel (class mtu), which routes it to
// the egress port's host interface (the port's MTU) and answers as a router does: ICMP
// fragmentation needed (IPv4 with DF), packet too big (IPv6), or fragments (IPv4 without DF).
// A TTL of 1 is the ttl class first, as in the kernel; a packet within the MTU is forwarded.
// Without host interfaces it is the mtu_exceeded drop.
TEST_F(PuntPipeline, APacketAboveTheEgressMtuGoesToTheKernel) {
    dp->ctx().ports[1].mtu = 1000;
    const auto udp4 = [](size_t payload, uint8_t ttl = 64) {
        return cat(eth(kP0, kH1, kEtherTypeIpv4),
                   ipv4(v4(10, 0, 1, 2), v4(10, 0, 2, 2), kProtoUdp,
                        udp_payload(49152, 4791, payload), ttl));
    };
    const Bytes over = udp4(1000 - 20 - 8 + 1);  // 1001-byte IPv4 packet
    const Bytes at = udp4(1000 - 20 - 8);        // 1000: leaves
    const Bytes over6 = cat(eth(kP0, kH1, kEtherTypeIpv6),
                            ipv6(ip6(0xfd00, 1, 2), ip6(0xfd00, 2, 2), kProtoUdp,
                                 udp_payload(49152, 4791, 1000 - 40 - 8 + 1)));
    const Bytes over_ttl1 = udp4(1200, 1);
    for (const Bytes *f : {&over, &at, &over6, &over_ttl1}) ports->inject(0, *f);
    worker->poll_once(now_ns);
    // Unchanged, from p0 (the order is the stages': IPv4 before IPv6, TTL 1 by the general path).
    auto got = drain();
    std::vector<std::pair<uint16_t, Bytes>> want = {{0, over}, {0, over6}, {0, over_ttl1}};
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want);
    EXPECT_EQ(punted(PuntClass::mtu), 2u);
    EXPECT_EQ(punted(PuntClass::ttl), 1u);
    EXPECT_EQ(counters->ports[0].punted.load(), 3u);
    const auto out = ports->take_tx(1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].size(), at.size());
    EXPECT_EQ(total_drops(0), 0u);

    // Policed at its own rate: a flood of oversized packets is counted and cannot starve the
    // other classes.
    cfg.punt_pps[size_t(PuntClass::mtu)] = 1;
    make_punt();
    for (int i = 0; i < 3; i++) ports->inject(0, over);
    worker->poll_once(now_ns);
    EXPECT_EQ(drain().size(), 1u);
    EXPECT_EQ(punted(PuntClass::mtu), 1u);
    EXPECT_EQ(policed(PuntClass::mtu), 2u);
    EXPECT_EQ(total_drops(0), 2u);

    dp->set_punt(nullptr);
    ports->inject(0, over);
    ports->inject(0, over6);
    worker->poll_once(now_ns);
    EXPECT_EQ(drops(0, DropReason::mtu_exceeded), 2u);
    dp->set_punt(punt.get());
}

// Forwarding is untouched by the punt path: a routed packet still leaves, nothing is punted.
TEST_F(PuntPipeline, ForwardedTrafficIsNotPunted) {
    ports->inject(0, echo4(v4(10, 9, 1, 1)));
    worker->poll_once(now_ns);
    EXPECT_EQ(ports->take_tx(1).size(), 1u);
    EXPECT_TRUE(drain().empty());
}

// Without host interfaces LLDP is not even parsed as such: the old drop reason.
TEST_F(PuntPipeline, WithoutPuntLldpIsAnUnsupportedEtherType) {
    dp->set_punt(nullptr);
    ports->inject(0, cat(eth({0x01, 0x80, 0xc2, 0, 0, 0x0e}, kH1, kEtherTypeLldp), Bytes(46, 0)));
    worker->poll_once(now_ns);
    EXPECT_EQ(drops(0, DropReason::ethertype_unsupported), 1u);
    dp->set_punt(punt.get());
}

// GCRA: over 1 s of virtual time at 10x the rate, exactly burst + rate packets pass; the rest
// are counted as punt_policed on the ingress port. Another class is not affected.
TEST_F(PuntPipeline, PolicesEachClassAtItsRateAndBurst) {
    cfg.punt_pps[size_t(PuntClass::icmp)] = 1000;
    cfg.punt_pps[size_t(PuntClass::bgp)] = 200;
    cfg.punt_burst_ms = 50;  // icmp burst 50, bgp burst 10
    make_punt();
    ASSERT_EQ(punt->burst(PuntClass::icmp), 50u);
    const Bytes echo = echo4(v4(10, 0, 1, 1));
    const Bytes bgp = cat(eth(kP0, kH1, kEtherTypeIpv4),
                          ipv4(v4(10, 0, 1, 2), v4(10, 0, 1, 1), kProtoTcp, tcp(179, 40000)));
    const uint64_t t0 = now_ns;
    uint64_t sent_echo = 0, sent_bgp = 0;
    for (int i = 0; i < 10000; i++) {  // 10 kpps of echo for 1 s, 100 pps of BGP
        ports->inject(0, echo);
        sent_echo++;
        if (i % 100 == 0) {
            ports->inject(0, bgp);
            sent_bgp++;
        }
        worker->poll_once(t0 + uint64_t(i) * 100'000);
        drain();
    }
    // Arrivals at 0, 100 us, ... 999.9 ms: the first burst, then one per ms.
    EXPECT_EQ(punted(PuntClass::icmp), 50u + 999u);
    EXPECT_EQ(policed(PuntClass::icmp), sent_echo - punted(PuntClass::icmp));
    EXPECT_EQ(punted(PuntClass::bgp), sent_bgp);  // under its own rate: all of it
    EXPECT_EQ(policed(PuntClass::bgp), 0u);
    EXPECT_EQ(drops(0, DropReason::punt_policed), policed(PuntClass::icmp));
}

// Two workers share one bucket per class: their sum is policed, not each alone.
TEST_F(PuntPipeline, WorkersShareEachClassBucket) {
    cfg.punt_pps[size_t(PuntClass::arp)] = 500;
    cfg.punt_burst_ms = 10;  // burst 5
    make_punt();
    Worker *w1 = &dp->worker(1);
    const Bytes arp = arp_request(v4(10, 0, 1, 1));
    const uint64_t t0 = now_ns;
    for (int i = 0; i < 2000; i++) {  // each worker 1 kpps for 1 s
        const uint64_t t = t0 + uint64_t(i) * 500'000;
        ports->inject(i % 2 ? 1 : 0, arp);
        if (i % 2)
            w1->poll_once(t);
        else
            worker->poll_once(t);
        drain(0);
        drain(1);
    }
    EXPECT_EQ(punted(PuntClass::arp), 5u + 499u);
    EXPECT_EQ(punted(PuntClass::arp) + policed(PuntClass::arp), 2000u);
}

// A full queue (the hostif thread is behind) drops with its own reason; nothing waits.
TEST_F(PuntPipeline, FullQueueIsACountedDrop) {
    cfg.punt_queue = 64;
    make_punt();
    const Bytes echo = echo4(v4(10, 0, 1, 1));
    for (int i = 0; i < 100; i++) {
        ports->inject(0, echo);
        worker->poll_once(now_ns + uint64_t(i) * 1000);
    }
    EXPECT_EQ(punted(PuntClass::icmp), 64u);
    EXPECT_EQ(punt->stats(PuntClass::icmp).queue_full.load(), 36u);
    EXPECT_EQ(drops(0, DropReason::punt_queue_full), 36u);
    EXPECT_EQ(drain().size(), 64u);
}

// The worker and the hostif thread at once, each on its own thread (the case tools/sanitize runs
// under TSan): every frame the worker punts reaches the hostif side once and unchanged, and
// punted + queue_full accounts for every frame sent.
TEST_F(PuntPipeline, WorkerAndHostifThreadsRunAtOnce) {
    cfg.punt_queue = 64;  // small, so that the queue also fills now and then
    make_punt();
    constexpr uint64_t kPackets = 3000;
    const Bytes echo = echo4(v4(10, 0, 1, 1));
    std::atomic<bool> stop{false};
    uint64_t taken = 0, unchanged = 0;
    std::thread hostif([&] {
        rte_mbuf *m[32];
        while (!stop.load()) {
            size_t n = punt->take(0, m, 32);
            for (size_t i = 0; i < n; i++) {
                const uint8_t *d = rte_pktmbuf_mtod(m[i], const uint8_t *);
                unchanged += Bytes(d, d + rte_pktmbuf_data_len(m[i])) == echo;
                rte_pktmbuf_free(m[i]);
            }
            taken += n;
            if (n == 0) std::this_thread::yield();
        }
    });
    std::thread worker_thread([&, t = now_ns]() mutable {
        while (!stop.load()) worker->poll_once(t += 1000);
    });
    auto accounted = [&] {
        return punted(PuntClass::icmp) + punt->stats(PuntClass::icmp).queue_full.load();
    };
    for (uint64_t i = 0; i < kPackets; i++) {
        for (;;) {
            try {
                ports->inject(0, echo);
                break;
            } catch (const std::exception &) {
                std::this_thread::yield();  // ring or pool momentarily full
            }
        }
    }
    for (int i = 0; i < 30000 && accounted() < kPackets; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    stop = true;
    worker_thread.join();
    hostif.join();
    EXPECT_EQ(accounted(), kPackets);
    EXPECT_EQ(policed(PuntClass::icmp), 0u);
    const size_t rest = drain().size();
    EXPECT_EQ(taken + rest, punted(PuntClass::icmp));
    EXPECT_EQ(unchanged, taken);
    EXPECT_EQ(drops(0, DropReason::punt_queue_full),
              punt->stats(PuntClass::icmp).queue_full.load());
}

}  // namespace
}  // namespace rocesw::test
