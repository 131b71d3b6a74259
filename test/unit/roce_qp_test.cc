// RC WRITE sender and receiver: segmentation, ACK/NAK, PSN gaps, go-back-N, and a lossy
// channel end to end. Also the pacer and PFC pause honoring.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <vector>

#include "pfc/frame.h"
#include "roce/pacer.h"
#include "roce/pause.h"
#include "roce/qp.h"
#include "roce/results.h"

namespace rocesw::roce {
namespace {

TEST(SendQp, SegmentsAtTheMtuWithFirstMiddleLastAndOnly) {
    SendQp qp(1024, 10, 2);
    qp.post_write(3 * 1024 + 1);
    std::vector<Segment> s;
    while (qp.has_segment()) s.push_back(qp.next_segment(0));
    ASSERT_EQ(s.size(), 4u);
    EXPECT_EQ(s[0].opcode, 0x06);
    EXPECT_EQ(s[1].opcode, 0x07);
    EXPECT_EQ(s[2].opcode, 0x07);
    EXPECT_EQ(s[3].opcode, 0x08);
    EXPECT_EQ(s[3].len, 1u);
    EXPECT_EQ(s[3].offset, 3072u);
    for (uint32_t i = 0; i < 4; i++) EXPECT_EQ(s[i].psn, 10 + i);
    // ack_every 2: packets 2 and 4 ask for an ACK (4 is also the last).
    EXPECT_FALSE(s[0].ack_req);
    EXPECT_TRUE(s[1].ack_req);
    EXPECT_FALSE(s[2].ack_req);
    EXPECT_TRUE(s[3].ack_req);
    // Byte counters for the timeline: all 3073 bytes sent, none acknowledged; an ACK of the
    // second PSN acknowledges 2048, of the last one the whole message (not 4 x 1024).
    EXPECT_EQ(qp.sent_bytes(), 3073u);
    EXPECT_EQ(qp.acked_bytes(), 0u);
    qp.on_ack(kSyndromeAck, 11, 0);
    EXPECT_EQ(qp.acked_bytes(), 2048u);
    EXPECT_TRUE(qp.on_ack(kSyndromeAck, 13, 0));
    EXPECT_EQ(qp.acked_bytes(), 3073u);

    SendQp one(1024, 0);
    one.post_write(1024);
    Segment o = one.next_segment(0);
    EXPECT_EQ(o.opcode, 0x0A);
    EXPECT_EQ(o.len, 1024u);
    EXPECT_TRUE(o.ack_req);
    SendQp empty(1024, 0);
    empty.post_write(0);
    EXPECT_EQ(empty.packets(), 1u);
    EXPECT_EQ(empty.next_segment(0).len, 0u);
}

TEST(RecvQp, InOrderPacketsAreAcceptedAndTheLastIsAcked) {
    RecvQp r(100);
    auto a = r.on_data(0x06, 100, false, 1024);
    EXPECT_TRUE(a.accept);
    EXPECT_FALSE(a.reply);
    a = r.on_data(0x08, 101, true, 10);
    EXPECT_TRUE(a.accept);
    EXPECT_TRUE(a.reply);
    EXPECT_TRUE(a.message_done);
    EXPECT_EQ(a.syndrome, kSyndromeAck);
    EXPECT_EQ(a.psn, 101u);
    EXPECT_EQ(a.msn, 1u);
    EXPECT_EQ(r.stats().psn_gaps, 0u);
    EXPECT_EQ(r.stats().bytes, 1034u);
}

TEST(RecvQp, AGapIsCountedOnceAndAnsweredByOneNak) {
    RecvQp r(0xFFFFFF);
    EXPECT_TRUE(r.on_data(0x06, 0xFFFFFF, false, 8).accept);
    auto a = r.on_data(0x07, 2, false, 8);  // PSNs 0 and 1 lost
    EXPECT_FALSE(a.accept);
    EXPECT_TRUE(a.reply);
    EXPECT_EQ(a.syndrome, kSyndromeNakPsnSeq);
    EXPECT_EQ(a.psn, 0u);
    a = r.on_data(0x07, 3, false, 8);
    EXPECT_FALSE(a.accept);
    EXPECT_FALSE(a.reply);
    EXPECT_EQ(r.stats().psn_gaps, 1u);
    EXPECT_EQ(r.stats().missing_packets, 2u);
    EXPECT_EQ(r.stats().discarded_out_of_order, 2u);
    // The sender goes back: 0, 1, 2, 3 are accepted.
    for (uint32_t psn = 0; psn < 4; psn++) EXPECT_TRUE(r.on_data(0x07, psn, false, 8).accept);
    a = r.on_data(0x07, 1, true, 8);  // a duplicate asking for an ACK: re-acknowledge 3
    EXPECT_FALSE(a.accept);
    EXPECT_TRUE(a.reply);
    EXPECT_EQ(a.psn, 3u);
    EXPECT_EQ(r.stats().duplicates, 1u);
}

TEST(SendQp, NakAndTimeoutGoBackToTheFirstUnackedPsn) {
    SendQp s(100, 50, 0);
    s.post_write(1000);  // 10 packets, PSN 50..59
    for (int i = 0; i < 6; i++) s.next_segment(0);
    EXPECT_FALSE(s.on_ack(kSyndromeNakPsnSeq, 53, 1000));
    EXPECT_EQ(s.next_index(), 3u);
    EXPECT_EQ(s.acked_packets(), 3u);
    Segment seg = s.next_segment(0);
    EXPECT_EQ(seg.psn, 53u);
    EXPECT_TRUE(seg.retransmit);
    EXPECT_EQ(s.retransmitted(), 1u);
    // No packet asked for an ACK yet: no timer.
    EXPECT_EQ(s.timeout_at_ns(1000), UINT64_MAX);
    EXPECT_FALSE(s.on_timer(100'000, 1000));
    while (s.has_segment()) s.next_segment(1500);  // the last asks for an ACK: timer from 1500
    EXPECT_EQ(s.timeout_at_ns(1000), 2500u);
    // No progress for the RTO: back to the first unacknowledged; the RTO doubles.
    EXPECT_FALSE(s.on_timer(1500 + 999, 1000));
    EXPECT_TRUE(s.on_timer(2500, 1000));
    EXPECT_EQ(s.next_index(), 3u);
    EXPECT_EQ(s.timeout_at_ns(1000), 4500u);
    seg = s.next_segment(2600);
    EXPECT_EQ(seg.psn, 53u);
    EXPECT_TRUE(seg.ack_req);  // the probe
    EXPECT_FALSE(s.next_segment(2700).ack_req);
    EXPECT_TRUE(s.on_timer(4500, 1000));
    EXPECT_EQ(s.timeout_at_ns(1000), 4500u + 4000);
    // Progress restarts the timer; the RTO stays backed off (no sample from a resent packet).
    s.next_segment(4600);
    s.on_ack(kSyndromeAck, 54, 5000);
    EXPECT_EQ(s.timeout_at_ns(1000), 5000u + 4000);
    while (s.has_segment()) s.next_segment(5000);
    EXPECT_TRUE(s.on_ack(kSyndromeAck, 59, 6000));
    EXPECT_TRUE(s.done());
}

TEST(SendQp, RtoFollowsTheMeasuredRoundTrip) {
    SendQp s(100, 0, 2);
    s.post_write(10'000);
    s.next_segment(0);
    s.next_segment(0);  // asks: sampled
    EXPECT_EQ(s.timeout_at_ns(1000), 1000u);
    s.on_ack(kSyndromeAck, 1, 3000);  // RTT 3000: SRTT 3000, RTTVAR 1500
    EXPECT_EQ(s.srtt_ns(), 3000u);
    EXPECT_EQ(s.rto_ns_for(1000), 9000u);
    EXPECT_EQ(s.rto_ns_for(20'000), 20'000u);  // the floor when longer
}

// ack_every packets that take longer than the RTO at the sender's rate (1 KB packets, ACK every
// 16, a 1 ms RTO at 100 Mb/s: 1.35 ms) complete: the timer waits for a packet that asked.
TEST(RcWrite, CompletesWhenAckEveryTakesLongerThanTheRto) {
    SendQp s(1024, 7, 16);
    RecvQp r(7);
    s.post_write(200'000);
    const uint64_t pkt_ns = 84'000, one_way_ns = 2'000'000, rto = 1'000'000;  // queued path
    struct Reply {
        uint64_t at;
        RecvAction a;
    };
    std::vector<Reply> replies;
    uint64_t now = 0;
    while (!s.done() && now < 1'000'000'000) {
        for (size_t i = 0; i < replies.size();)
            if (replies[i].at <= now) {
                s.on_ack(replies[i].a.syndrome, replies[i].a.psn, replies[i].at);
                replies.erase(replies.begin() + long(i));
            } else {
                i++;
            }
        s.on_timer(now, rto);
        if (s.has_segment()) {
            Segment seg = s.next_segment(now);
            RecvAction a = r.on_data(seg.opcode, seg.psn, seg.ack_req, seg.len);
            if (a.reply) replies.push_back({now + 2 * one_way_ns, a});
        }
        now += pkt_ns;
    }
    EXPECT_TRUE(s.done());
    EXPECT_EQ(r.stats().messages, 1u);
    EXPECT_EQ(r.stats().bytes, 200'000u);
    // The round trip (4 ms) is four RTOs: a few timeouts until the RTO has backed off, then none.
    EXPECT_LE(s.timeouts(), 6u);
    EXPECT_LT(s.retransmitted(), 200u);
}

TEST(SendQp, AsksForAnAckWhenTheWindowFills) {
    SendQp s(100, 0, 16, 4);
    s.post_write(1000);
    for (int i = 0; i < 3; i++) EXPECT_FALSE(s.next_segment(0).ack_req) << i;
    EXPECT_TRUE(s.next_segment(0).ack_req);
    EXPECT_FALSE(s.has_segment());
    EXPECT_EQ(s.timeout_at_ns(1000), 1000u);
}

TEST(SendQp, WindowBoundsUnacknowledgedPackets) {
    SendQp s(100, 0, 2, 3);
    s.post_write(1000);
    for (int i = 0; i < 3; i++) ASSERT_TRUE(s.has_segment()) << i;
    s.next_segment(0);
    s.next_segment(0);
    s.next_segment(0);
    EXPECT_FALSE(s.has_segment());
    s.on_ack(kSyndromeAck, 1, 10);  // packets 0 and 1 acknowledged: two more may go
    EXPECT_TRUE(s.has_segment());
    s.next_segment(0);
    s.next_segment(0);
    EXPECT_FALSE(s.has_segment());
    EXPECT_EQ(s.next_index(), 5u);
}

TEST(RcWrite, CompletesOverALossyChannelWithGoBackN) {
    SendQp s(256, 0xFFFFF0, 8);
    RecvQp r(0xFFFFF0);
    s.post_write(100'000);
    uint64_t now = 0, delivered = 0;
    int n = 0;
    while (!s.done() && now < 10'000'000) {
        now += 100;
        if (s.has_segment()) {
            Segment seg = s.next_segment(now);
            if (++n % 37 == 0) continue;  // every 37th packet is lost
            auto a = r.on_data(seg.opcode, seg.psn, seg.ack_req, seg.len);
            if (a.accept) delivered += seg.len;
            if (a.reply) s.on_ack(a.syndrome, a.psn, now);
        } else {
            s.on_timer(now, 5'000);
        }
    }
    EXPECT_TRUE(s.done());
    EXPECT_EQ(delivered, 100'000u);
    EXPECT_EQ(r.stats().messages, 1u);
    EXPECT_GT(r.stats().psn_gaps, 0u);
    EXPECT_GT(s.retransmitted(), 0u);
}

TEST(Pacer, HoldsTheRateExactlyOverManyPackets) {
    Pacer p;
    uint64_t now = 0;
    for (int i = 0; i < 1000; i++) {
        while (!p.ready(now)) now++;
        p.on_send(1000, 10'000'000'000, now);  // 800 ns each at 10 Gb/s
    }
    EXPECT_EQ(now, 999u * 800);
    Pacer slow;
    slow.on_send(125, 1'000'000, 0);  // 1000 bits at 1 Mb/s: 1 ms
    EXPECT_FALSE(slow.ready(999'999));
    EXPECT_TRUE(slow.ready(1'000'000));
}

TEST(Pacer, SlackLetsALateSenderCatchUpByAtMostTheSlack) {
    Pacer p(2'000);
    p.on_send(1000, 10'000'000'000, 0);      // next at 800
    p.on_send(1000, 10'000'000'000, 5'000);  // served late: starts at 5000 - 2000 = 3000
    EXPECT_EQ(p.next_ns(), 3'800u);
}

TEST(PauseState, PfcPausesItsPriorityForQuantaTimes512BitTimes) {
    PauseState ps(10'000'000'000, 1 << 3);  // priority 3 lossless, 10 Gb/s
    MacControlFrame f;
    f.pfc = true;
    f.enable = 1 << 3 | 1 << 4;
    f.quanta[3] = 100;  // 100 x 51.2 ns = 5120 ns
    f.quanta[4] = 100;
    std::vector<PauseEvent> tr;
    ps.on_frame(f, 1'000, &tr);
    EXPECT_TRUE(ps.paused(3, 1'000));
    EXPECT_TRUE(ps.paused(3, 6'119));
    EXPECT_FALSE(ps.paused(3, 6'120));
    EXPECT_FALSE(ps.paused(4, 2'000));  // lossy here: ignored
    EXPECT_EQ(ps.ignored(), 1u);
    EXPECT_EQ(ps.pause_frames(3), 1u);
    ASSERT_EQ(tr.size(), 1u);
    EXPECT_EQ(tr[0].until_ns, 6'120u);
    // A new frame extends the pause from its own arrival.
    ps.on_frame(f, 5'000, &tr);
    EXPECT_TRUE(ps.paused(3, 10'119));
    EXPECT_FALSE(ps.paused(3, 10'120));
    // XON ends it at once and is not a pause event.
    f.quanta[3] = 0;
    ps.on_frame(f, 7'000, &tr);
    EXPECT_FALSE(ps.paused(3, 7'000));
    EXPECT_EQ(ps.pause_frames(3), 2u);
    EXPECT_EQ(ps.xon_frames(3), 1u);
    EXPECT_EQ(ps.paused_ns(3, 100'000), 6'000u);  // 1000 .. 7000
    // A second, separate pause adds up.
    f.quanta[3] = 0xFFFF;
    ps.on_frame(f, 200'000, &tr);
    EXPECT_EQ(ps.paused_until(3), 200'000 + pause_quanta_to_ns(0xFFFF, 10'000'000'000));
    EXPECT_EQ(ps.paused_ns(3, 200'100), 6'100u);
}

TEST(PauseState, GlobalPausePausesEveryLosslessPriority) {
    PauseState ps(25'000'000'000, 0xFF);
    MacControlFrame f;
    f.pfc = false;
    f.enable = 0xFF;
    f.quanta[0] = 1000;  // 1000 x 20.48 ns
    ps.on_frame(f, 0);
    for (uint8_t p = 0; p < 8; p++) {
        EXPECT_TRUE(ps.paused(p, 20'479));
        EXPECT_FALSE(ps.paused(p, 20'480));
    }
}

TEST(FlowResults, IdealFctAndSlowdownBuckets) {
    // 2 packets at MTU 1000: (14+20+8+12+16+1000+4 + 24) + (14+20+8+12+1000+4 + 24) bytes.
    EXPECT_EQ(ideal_fct_ns(2000, 1000, 8'000'000'000, 0), uint64_t(1098 + 1082));
    EXPECT_EQ(write_wire_bytes(0, false), 60u + 24);  // padded to the minimum frame
    std::vector<FlowResult> f(4);
    for (int i = 0; i < 4; i++) {
        f[i].completed = true;
        f[i].size_bytes = i < 3 ? 5'000 : 50'000;
        f[i].start_ns = 0;
        f[i].ideal_ns = 1000;
        f[i].finish_ns = uint64_t(1000 * (i + 1));
    }
    auto b = summarize(f);
    EXPECT_EQ(b[0].count, 3u);
    EXPECT_DOUBLE_EQ(b[0].mean, 2.0);
    EXPECT_DOUBLE_EQ(b[0].median, 2.0);
    EXPECT_DOUBLE_EQ(b[0].p99, 3.0);
    EXPECT_EQ(b[1].count, 1u);
    EXPECT_EQ(b.back().count, 4u);
    EXPECT_DOUBLE_EQ(jain_index({1, 1, 1, 1}), 1.0);
    EXPECT_DOUBLE_EQ(jain_index({1, 0}), 0.5);
}

TEST(FlowResults, SlowdownIsClampedAtOne) {
    FlowResult r;
    r.completed = true;
    r.ideal_ns = 1000;
    r.finish_ns = 999;  // beat the model by a clock's rounding
    EXPECT_DOUBLE_EQ(r.slowdown(), 1.0);
    r.finish_ns = 1500;
    EXPECT_DOUBLE_EQ(r.slowdown(), 1.5);
    r.completed = false;
    EXPECT_DOUBLE_EQ(r.slowdown(), 0.0);
}

// Hand-computed paths at 8 Gb/s (1 ns a byte): a 2000-byte WRITE is a first packet of 1098
// wire bytes (RETH) and a last of 1082; the ACK is 86 wire bytes.
TEST(FlowResults, PathIdealFctByHand) {
    const uint64_t us = 1'000'000;  // ps
    // One link: both packets back to back, 1 us there, the ACK's 86 ns and 1 us back.
    std::vector<PathLink> one = {{8'000'000'000, us}};
    EXPECT_EQ(path_ideal_fct_ns(2000, 1000, one), 2180u + 1000 + 86 + 1000);
    // Two equal links: the second link runs one (the largest, first) packet behind.
    std::vector<PathLink> two = {{8'000'000'000, us}, {8'000'000'000, us}};
    EXPECT_EQ(path_ideal_fct_ns(2000, 1000, two), 2180u + 1098 + 4000 + 2 * 86);
    // A faster second link (0.5 ns a byte): it forwards each packet as it arrives; the last
    // (1082 B) leaves it 541 ns after the first link finishes at 3262 ns. ACK: 86 + 43.
    std::vector<PathLink> up = {{8'000'000'000, 0}, {16'000'000'000, 0}};
    EXPECT_EQ(path_ideal_fct_ns(3000, 1000, up), 3262u + 541 + 86 + 43);
    // One packet: its transmission on every link.
    EXPECT_EQ(path_ideal_fct_ns(100, 1000, two),
              uint64_t(write_wire_bytes(100, true)) * 2 + 4000 + 2 * 86);
    // The base RTT of the one-link path: 2 us and one ACK, beyond the bytes at line rate.
    EXPECT_EQ(path_ideal_fct_ns(2000, 1000, one) - ideal_fct_ns(2000, 1000, 8'000'000'000, 0),
              2086u);
}

// Against an independent tandem-queue model (packet by packet: a link sends packet k once it
// has sent k-1 and packet k has arrived), on random paths, sizes and MTUs, at rates where every
// transmission is a whole number of ps.
TEST(FlowResults, PathIdealFctEqualsAPacketByPacketTandem) {
    const uint64_t rates[] = {8'000'000'000,  10'000'000'000, 16'000'000'000,
                              25'000'000'000, 40'000'000'000, 100'000'000'000};
    std::mt19937_64 rng(17);
    for (int trial = 0; trial < 500; trial++) {
        std::vector<PathLink> links(1 + rng() % 5);
        for (auto &l : links) l = {rates[rng() % 6], (rng() % 3000) * 1000};
        const uint32_t mtu = 256u << (rng() % 5);
        const uint64_t size = 1 + rng() % (40 * mtu);
        const uint64_t n = (size + mtu - 1) / mtu;
        std::vector<uint64_t> done(n, 0);  // when the current link has sent packet k (ps)
        for (size_t h = 0; h < links.size(); h++) {
            uint64_t free = 0;
            for (uint64_t k = 0; k < n; k++) {
                const uint32_t payload = uint32_t(k + 1 < n ? mtu : size - (n - 1) * mtu);
                const uint64_t w =
                    write_wire_bytes(payload, k == 0) * 8'000'000'000'000ull / links[h].rate_bps;
                const uint64_t arrived = h == 0 ? 0 : done[k] + links[h - 1].delay_ps;
                free = std::max(free, arrived) + w;
                done[k] = free;
            }
        }
        uint64_t t = done[n - 1] + links.back().delay_ps;
        for (auto it = links.rbegin(); it != links.rend(); ++it)
            t += 86 * 8'000'000'000'000ull / it->rate_bps + it->delay_ps;
        EXPECT_EQ(path_ideal_fct_ns(size, mtu, links), t / 1000)
            << "trial " << trial << ": " << links.size() << " links, size " << size << ", mtu "
            << mtu;
    }
}

TEST(FlowResults, AckedBytesInterpolateBetweenSamples) {
    std::vector<ByteSample> s = {{1000, 0, 0}, {2000, 4096, 2048}, {4000, 8192, 8192}};
    EXPECT_DOUBLE_EQ(acked_bytes_at(s, 0), 0);
    EXPECT_DOUBLE_EQ(acked_bytes_at(s, 1500), 1024);
    EXPECT_DOUBLE_EQ(acked_bytes_at(s, 2000), 2048);
    EXPECT_DOUBLE_EQ(acked_bytes_at(s, 3000), 5120);
    EXPECT_DOUBLE_EQ(acked_bytes_at(s, 9000), 8192);
    EXPECT_DOUBLE_EQ(acked_bytes_at({}, 9000), 0);
}

TEST(FlowResults, OverlapFairnessUsesTheSecondHalfOfTheSharedInterval) {
    // Flow 0 runs 0..10 ms at 1 Gb/s-equivalent steps; flow 1 starts at 2 ms and finishes at
    // 14 ms. Shared interval 2..10 ms, second half 6..10 ms. In it flow 0 acknowledges
    // 500 KB, flow 1 250 KB: rates 1 Gb/s and 0.5 Gb/s, Jain (1.5^2)/(2 x 1.25) = 0.9.
    std::vector<ByteSample> a, b;
    for (uint64_t t = 0; t <= 10; t++) a.push_back({t * 1'000'000, t * 125'000, t * 125'000});
    b.push_back({2'000'000, 0, 0});
    b.push_back({6'000'000, 400'000, 400'000});   // fast before the half: ignored
    b.push_back({10'000'000, 650'000, 650'000});  // 250 KB in 4 ms
    b.push_back({14'000'000, 900'000, 900'000});
    std::vector<FlowTimeline> f = {{0, 10'000'000, true, &a}, {2'000'000, 14'000'000, true, &b}};
    OverlapFairness o = overlap_fairness(f);
    ASSERT_TRUE(o.valid);
    EXPECT_EQ(o.window_start_ns, 2'000'000u);
    EXPECT_EQ(o.window_end_ns, 10'000'000u);
    EXPECT_EQ(o.half_start_ns, 6'000'000u);
    ASSERT_EQ(o.rate_bps.size(), 2u);
    EXPECT_NEAR(o.rate_bps[0], 1e9, 1);
    EXPECT_NEAR(o.rate_bps[1], 0.5e9, 1);
    EXPECT_NEAR(o.jain, 0.9, 1e-12);
    // An incomplete flow does not count; one flow alone, or no overlap, gives no figure.
    f[1].completed = false;
    EXPECT_FALSE(overlap_fairness(f).valid);
    f[1].completed = true;
    f[1].start_ns = 10'000'000;
    EXPECT_FALSE(overlap_fairness(f).valid);
}

}  // namespace
}  // namespace rocesw::roce
