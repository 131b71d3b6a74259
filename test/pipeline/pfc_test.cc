// PFC in virtual time (TESTPLAN L1-L8, W1-W5): generation with thresholds, headroom and
// refresh, honoring with quanta timers, MAC-control validation through the worker, an incast
// with and without PFC, and the watchdog. Frames the switch sends are decoded with
// parse_mac_control, whose decoding is checked against scapy's encoder (test/unit/pfc_test.cc);
// the system test decodes them with tshark.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "pfc/frame.h"
#include "pkt/bytes.h"
#include "qos_fixture.h"

namespace rocesw::test {
namespace {

constexpr uint64_t kUs = 1000, kMs = 1'000'000;
// 0xFFFF quanta at 10G.
constexpr uint64_t kPause10G = 3'355'392;

const std::string kPgTables =
    "BUFFER_POOL:\n  ingress_lossless_pool: {type: ingress, mode: static, size: 10000000}\n"
    "BUFFER_PROFILE:\n  pg_lossless: {pool: ingress_lossless_pool, static_th: 20000, xoff: 10000,"
    " xon_offset: 5000}\n"
    "BUFFER_PG:\n  default|3: {profile: pg_lossless}\n";

Bytes pfc_frame(uint8_t enable, std::array<uint16_t, 8> quanta) {
    Bytes b(kMacControlFrameLen);
    build_pfc_frame(b.data(), {0x02, 0, 0, 0, 0xBB, 0x02}, enable, quanta);
    return b;
}
Bytes pfc_one(unsigned prio, uint16_t quanta) {
    std::array<uint16_t, 8> q{};
    q[prio] = quanta;
    return pfc_frame(uint8_t(1u << prio), q);
}

class Pfc : public QosFixture {
  public:
    void start_pfc(const std::string &yaml, uint64_t speed_mbps = 10000) {
        start(yaml, speed_mbps);
        shared->pfc().set_source(ports->pool(),
                                 {{0x02, 0, 0, 0, 0, 0x10}, {0x02, 0, 0, 0, 0, 0x11}});
    }
    // Every frame port `port` sent, which must all be PFC frames, decoded.
    std::vector<MacControlFrame> pfc_sent(uint16_t port) {
        std::vector<MacControlFrame> out;
        for (auto &f : ports->take_tx(port)) {
            MacControlFrame m;
            EXPECT_EQ(parse_mac_control(f.data(), uint32_t(f.size()), &m), MacControlError::none);
            EXPECT_TRUE(m.pfc);
            EXPECT_EQ(f.size(), 60u);
            EXPECT_EQ(Bytes(f.begin() + 6, f.begin() + 12), Bytes(kP0.begin(), kP0.end()))
                << "source MAC is the ingress port's";
            out.push_back(m);
        }
        return out;
    }
    void receive(uint16_t port, const Bytes &f) {
        shared->pfc().receive_mac_control(port, f.data(), uint32_t(f.size()), now_ns);
    }
    void flush_at(uint64_t t) {
        now_ns = t;
        egress->flush(now_ns);
    }
    // UDP source ports of frames sent on `port` (the sequence number the tests give them).
    std::vector<uint16_t> sports(uint16_t port) {
        std::vector<uint16_t> s;
        for (auto &f : ports->take_tx(port)) s.push_back(rd16(&f[34]));
        return s;
    }
};

// L1, L2: below xoff nothing; crossing it sends one PFC frame for exactly priority 3 with the
// configured quanta, refreshed at half the advertised time while above xon; zero drops.
TEST_F(Pfc, XoffAtThresholdAndRefresh) {
    start_pfc(qos_profile(kPgTables, "pfc_enable: \"3\""));
    shared->set_paused(1, 0xFF);  // egress blocked: the PG only fills
    send(udp4_frame(3, 0, 1000), 19);
    flush_at(now_ns + kUs);
    EXPECT_EQ(shared->pg_bytes(0, 3), 19000u);
    EXPECT_TRUE(pfc_sent(0).empty()) << "L1: below xoff no PFC";
    send(udp4_frame(3, 0, 1000));
    const uint64_t t0 = now_ns + kUs;
    flush_at(t0);
    auto f = pfc_sent(0);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].enable, 1u << 3);
    EXPECT_EQ(f[0].quanta, (std::array<uint16_t, 8>{0, 0, 0, 0xFFFF, 0, 0, 0, 0}));
    EXPECT_TRUE(pfc_sent(1).empty()) << "PFC leaves the ingress port only";
    EXPECT_EQ(shared->pfc().stats(0).tx_pause[3].load(), 1u);
    EXPECT_EQ(shared->pfc().stats(0).pg_xoff[3].load(), 1u);
    // Refresh: not before half the pause time, then once per half.
    flush_at(t0 + kPause10G / 2 - 1);
    EXPECT_TRUE(pfc_sent(0).empty());
    flush_at(t0 + kPause10G / 2);
    ASSERT_EQ(pfc_sent(0).size(), 1u);
    flush_at(t0 + kPause10G);
    ASSERT_EQ(pfc_sent(0).size(), 1u);
    EXPECT_EQ(shared->pfc().stats(0).tx_pause[3].load(), 3u);
    EXPECT_EQ(q(3).drops_total(), 0u);
    EXPECT_EQ(shared->pg_drops(0, 3), 0u);
    // The pause the switch caused so far, by its clock.
    EXPECT_EQ(shared->pfc().stats(0).tx_clock[3].total_ns(t0 + kPause10G), kPause10G);
    shared->set_paused(1, 0);
    drain();
}

// L3, L4: headroom absorbs exactly xoff bytes, then drops count per PG; draining below xon
// sends XON (time 0) and every admitted packet leaves in order.
TEST_F(Pfc, HeadroomThenXonAndInOrderDelivery) {
    // A small shaper bucket and ring: about one frame leaves per microsecond.
    start_pfc(qos_profile(kPgTables,
                          "pfc_enable: \"3\", shaper_burst_bytes: 1100, tx_ring_bytes: 2100"));
    shared->set_paused(1, 0xFF);
    for (uint16_t i = 0; i < 32; i++) send(udp4_frame(3, 0, 1000, uint16_t(100 + i)));
    flush_at(now_ns + kUs);
    EXPECT_EQ(pfc_sent(0).size(), 1u);
    EXPECT_EQ(shared->pg_bytes(0, 3), 30000u);  // threshold 20000 + headroom 10000
    EXPECT_EQ(shared->pg_drops(0, 3), 2u);
    EXPECT_EQ(q(3).drops[size_t(QueueDrop::headroom_exhausted)], 2u);
    EXPECT_EQ(port_drops(1, DropReason::headroom_exhausted), 2u);
    EXPECT_EQ(shared->pfc().stats(0).pg_headroom_used[3].load(), 10000u);
    EXPECT_EQ(shared->pfc().stats(0).pg_headroom_watermark[3].load(), 10000u);
    // Release the egress one packet per flush; XON exactly when the PG falls to 15000.
    shared->set_paused(1, 0);
    std::vector<uint16_t> got;
    int xon_at = -1;
    for (int i = 0; i < 40 && got.size() < 30; i++) {
        flush_at(now_ns + 1000);  // 1 us: one 1000-byte frame at 10G (+ wire overhead)
        for (auto &f : ports->take_tx(1)) got.push_back(rd16(&f[34]));
        for (auto &m : pfc_sent(0)) {
            EXPECT_EQ(m.enable, 1u << 3);
            EXPECT_EQ(m.quanta[3], 0u) << "XON";
            EXPECT_EQ(xon_at, -1);
            xon_at = int(shared->pg_bytes(0, 3));
        }
    }
    drain();
    for (auto &f : ports->take_tx(1)) got.push_back(rd16(&f[34]));
    EXPECT_LE(xon_at, 15000);
    EXPECT_GE(xon_at, 15000 - 2000);  // in the flush that crossed xon (1-2 frames per flush)
    EXPECT_EQ(shared->pfc().stats(0).tx_xon[3].load(), 1u);
    ASSERT_EQ(got.size(), 30u);
    for (uint16_t i = 0; i < 30; i++) EXPECT_EQ(got[i], 100 + i);
    EXPECT_EQ(shared->pfc().stats(0).pg_xoff[3].load(), 0u);
}

// L5: a PFC frame stops exactly its priority's queue for quanta x 512 bit times; other queues
// keep the full line rate; a new frame extends the pause, XON ends it.
TEST_F(Pfc, HonorQuantaTimerExtendAndXon) {
    start_pfc(qos_profile(kPgTables, "pfc_enable: \"3\""));
    const uint64_t t0 = now_ns;
    receive(1, pfc_one(3, 1000));  // 1000 quanta at 10G = 51200 ns
    EXPECT_EQ(shared->pfc().stats(1).rx_pause[3].load(), 1u);
    for (uint16_t i = 0; i < 200; i++) send(udp4_frame(3, 0, 1000, uint16_t(i)));
    for (uint16_t i = 0; i < 200; i++) send(udp4_frame(1, 0, 1000, uint16_t(1000 + i)));
    // For 51.2 us only queue 1 sends, at the line rate: 1024 wire bytes per frame at 10G is
    // 819.2 ns, so 62 or 63 frames (plus the shaper's initial burst).
    size_t tc1 = 0;
    for (uint64_t t = t0; t < t0 + 51200; t += 100) {
        flush_at(t);
        for (uint16_t s : sports(1)) {
            EXPECT_GE(s, 1000) << "a priority-3 frame left while paused, at " << t - t0;
            tc1++;
        }
    }
    const double line = 51200.0 / 819.2;
    EXPECT_GE(double(tc1), line - 1);
    EXPECT_LE(double(tc1), line + 1 + 25000.0 / 1024);  // the bucket starts full (25000 bytes)
    EXPECT_EQ(shared->pfc().stats(1).paused_queues.load(), 1u << 3);
    bool tc3_left = false;
    for (uint64_t t = t0 + 51200; t < t0 + 51200 + 5 * kUs; t += 100) {
        flush_at(t);
        for (uint16_t s : sports(1)) tc3_left |= s < 1000;
    }
    EXPECT_TRUE(tc3_left) << "the pause expires after quanta x 512 bit times";
    // A new frame pauses again; a second one extends; XON ends it.
    receive(1, pfc_one(3, 0xFFFF));
    flush_at(now_ns + 10 * kUs);
    for (uint16_t s : sports(1)) EXPECT_GE(s, 1000);
    receive(1, pfc_one(3, 0xFFFF));
    flush_at(now_ns + kPause10G - 5 * kUs);  // past the first frame's end, within the second
    for (uint16_t s : sports(1)) EXPECT_GE(s, 1000);
    receive(1, pfc_one(3, 0));
    EXPECT_EQ(shared->pfc().stats(1).rx_xon[3].load(), 1u);
    tc3_left = false;
    for (uint64_t t = now_ns, end = now_ns + 5 * kUs; t < end; t += 100) {
        flush_at(t);
        for (uint16_t s : sports(1)) tc3_left |= s < 1000;
    }
    EXPECT_TRUE(tc3_left) << "XON ends the pause";
    EXPECT_EQ(shared->pfc().stats(1).rx_pause[3].load(), 3u);
    drain();
}

// L7: lossy priorities ignore PFC; XON is not a pause event; pause duration is accounted.
TEST_F(Pfc, LossyPrioritiesIgnorePfc) {
    start_pfc(qos_profile(kPgTables, "pfc_enable: \"3\""));
    std::array<uint16_t, 8> q{};
    q[1] = 0xFFFF;
    q[3] = 100;
    receive(1, pfc_frame(0x0A, q));
    EXPECT_EQ(shared->pfc().stats(1).rx_ignored[1].load(), 1u);
    EXPECT_EQ(shared->pfc().stats(1).rx_pause[3].load(), 1u);
    EXPECT_EQ(shared->pfc().stats(1).rx_pause[1].load(), 0u);
    send(udp4_frame(1, 0, 1000), 3);
    flush_at(now_ns + kUs);
    EXPECT_EQ(sports(1).size(), 3u) << "priority 1 is lossy: not paused";
    receive(1, pfc_one(3, 0));
    EXPECT_EQ(shared->pfc().stats(1).rx_xon[3].load(), 1u);
    EXPECT_EQ(shared->pfc().stats(1).rx_pause[3].load(), 1u) << "XON is not a pause event";
    // 100 quanta = 5120 ns, ended by the XON 1 us after it started.
    EXPECT_EQ(shared->pfc().stats(1).rx_clock[3].total_ns(now_ns + kMs), kUs);
}

// L8 (part): 802.3x PAUSE is ignored on a PFC port, honored on a port configured for it.
TEST_F(Pfc, GlobalPauseHonoredOnlyWhereConfigured) {
    start_pfc(qos_profile(kPgTables, "pfc_enable: \"3\""));
    Bytes pause(60);
    build_pause_frame(pause.data(), {2, 0, 0, 0, 0xBB, 2}, 0xFFFF);
    EXPECT_EQ(shared->pfc().receive_mac_control(1, pause.data(), 60, now_ns),
              PfcEngine::MacControlResult::ignored);
    EXPECT_EQ(shared->pfc().stats(1).rx_global_ignored.load(), 1u);
    send(udp4_frame(1, 0, 1000), 2);
    flush_at(now_ns + kUs);
    EXPECT_EQ(sports(1).size(), 2u);
    egress.reset();
    shared.reset();
    start_pfc(qos_profile("", "pause: honor"));
    EXPECT_EQ(shared->pfc().receive_mac_control(1, pause.data(), 60, now_ns),
              PfcEngine::MacControlResult::consumed);
    send(udp4_frame(1, 0, 1000), 2);
    send(udp4_frame(6, 0, 1000), 2);
    flush_at(now_ns + kUs);
    EXPECT_TRUE(sports(1).empty()) << "802.3x pauses every queue";
    flush_at(now_ns + kPause10G);
    EXPECT_EQ(sports(1).size(), 4u);
    EXPECT_EQ(shared->pfc().stats(1).rx_global_pause.load(), 1u);
}

// A dynamic threshold: reserved + alpha x free shared bytes of the ingress pool.
TEST_F(Pfc, DynamicThresholdFollowsThePool) {
    start_pfc(qos_profile(
        "BUFFER_POOL:\n  ipool: {type: ingress, mode: dynamic, size: 100000, xoff: 20000}\n"
        "BUFFER_PROFILE:\n  pg: {pool: ipool, size: 2000, dynamic_th: 0, xoff: 8000}\n"
        "BUFFER_PG:\n  default|3: {profile: pg}\n",
        "pfc_enable: \"3\""));
    shared->set_paused(1, 0xFF);
    // shared = 80000; threshold = 2000 + (80000 - (b - 2000)) -> b >= 42000 pauses.
    send(udp4_frame(3, 0, 1000), 41);
    flush_at(now_ns + kUs);
    EXPECT_EQ(shared->pfc().stats(0).pg_threshold[3].load(), 2000u + 80000u - 39000u);
    EXPECT_TRUE(pfc_sent(0).empty());
    send(udp4_frame(3, 0, 1000), 1);
    flush_at(now_ns + kUs);
    EXPECT_EQ(pfc_sent(0).size(), 1u);
    EXPECT_EQ(shared->pfc().stats(0).pg_threshold[3].load(), 42000u);
    shared->set_paused(1, 0);
    drain();
}

// A lossless PG without a BUFFER_PG row gets the calculator's threshold and headroom.
TEST_F(Pfc, AutomaticProfileFromTheCalculator) {
    start_pfc(qos_profile("", "pfc_enable: \"3\""));
    const PgPlan &g = plan.ports[0].pgs[3];
    EXPECT_TRUE(g.automatic);
    EXPECT_EQ(g.priorities, 1u << 3);
    EXPECT_GT(g.headroom_bytes, 25000u);
    EXPECT_EQ(g.static_th_bytes, g.headroom_bytes);
    EXPECT_EQ(plan.ports[0].pgs[1].priorities, 0u);
    shared->set_paused(1, 0xFF);
    const int n = int(g.static_th_bytes / 1000) + 1;
    send(udp4_frame(3, 0, 1000), n);
    flush_at(now_ns + kUs);
    EXPECT_EQ(pfc_sent(0).size(), 1u);
    shared->set_paused(1, 0);
    drain();
}

// Headroom below the calculator's figure is a warning in the plan.
TEST_F(Pfc, SmallHeadroomIsWarned) {
    start_pfc(qos_profile(kPgTables, "pfc_enable: \"3\""));
    ASSERT_EQ(plan.warnings.size(), 2u);  // one per port
    EXPECT_NE(plan.warnings[0].find("headroom"), std::string::npos) << plan.warnings[0];
    EXPECT_NE(plan.warnings[0].find("BUFFER_PG.default|3"), std::string::npos) << plan.warnings[0];
}

// --------------------------------------------------------------------------------- watchdog

const std::string kWd = "PFC_WD:\n  default: {detection_time: 10, restoration_time: 20, "
                        "action: drop}\n";

// Sends a PFC storm for priority 3 on port 1 from `from` to `to` (a frame every ms), flushing
// every 100 us; returns when the storm was detected (0 if never).
class PfcWd : public Pfc {
  public:
    uint64_t storm(uint16_t port, uint64_t from, uint64_t to, uint64_t until) {
        uint64_t detected = 0;
        uint64_t storms = shared->pfc().stats(port).wd_storms[3].load();
        for (uint64_t t = from; t < until; t += 100 * kUs) {
            now_ns = t;
            if (t < to && (t - from) % kMs == 0) receive(port, pfc_one(3, 0xFFFF));
            egress->flush(t);
            if (!detected && shared->pfc().stats(port).wd_storms[3].load() > storms) detected = t;
        }
        return detected;
    }
};

// W1: detected within [detect, detect + poll]; the queue is flushed and its new packets
// dropped; other queues are unaffected; no PFC upstream because of it.
TEST_F(PfcWd, StormDetectedQueueFlushedOthersFlow) {
    start_pfc(qos_profile(kPgTables + kWd, "pfc_enable: \"3\""));
    send(udp4_frame(3, 0, 1000), 5);  // queue 3 of port 1 non-empty
    const uint64_t t0 = 2 * kMs;
    uint64_t det = storm(1, t0, t0 + 50 * kMs, t0 + 12 * kMs);
    ASSERT_NE(det, 0u);
    EXPECT_GE(det, t0 + 10 * kMs);
    EXPECT_LE(det, t0 + 10 * kMs + 100 * kUs);
    EXPECT_EQ(shared->pfc().stats(1).wd_stormed.load(), 1u << 3);
    EXPECT_EQ(q(3).drops[size_t(QueueDrop::pfc_watchdog)], 5u);
    EXPECT_EQ(port_drops(1, DropReason::pfc_watchdog), 5u);
    // New priority-3 packets to the stormed queue are dropped, even enough to pass xoff;
    // so the ingress PG does not fill and no PFC goes upstream.
    send(udp4_frame(3, 0, 1000), 40);
    EXPECT_EQ(q(3).drops[size_t(QueueDrop::pfc_watchdog)], 45u);
    EXPECT_EQ(shared->pg_bytes(0, 3), 0u);
    send(udp4_frame(1, 0, 1000), 10);
    flush_at(now_ns + 100 * kUs);
    EXPECT_EQ(sports(1).size(), 10u) << "other queues flow";
    EXPECT_TRUE(pfc_sent(0).empty());
}

// W2: a storm shorter than detection time triggers nothing and drops nothing.
TEST_F(PfcWd, ShortStormNoTrigger) {
    start_pfc(qos_profile(kPgTables + kWd, "pfc_enable: \"3\""));
    send(udp4_frame(3, 0, 1000), 5);
    EXPECT_EQ(storm(1, 2 * kMs, 2 * kMs + 5 * kMs, 30 * kMs), 0u);
    EXPECT_EQ(q(3).drops_total(), 0u);
    EXPECT_EQ(sports(1).size(), 5u) << "delivered once the pause ran out";
}

// W3: restoration within [restore, restore + poll] of the last pause frame, 20 times over.
TEST_F(PfcWd, RestoreTwentyTimes) {
    start_pfc(qos_profile(kPgTables + kWd, "pfc_enable: \"3\""));
    uint64_t t = 2 * kMs;
    for (int rep = 0; rep < 20; rep++) {
        SCOPED_TRACE(rep);
        send(udp4_frame(3, 0, 1000), 2);
        const uint64_t end = t + 15 * kMs;  // last frame at end - 1 ms
        ASSERT_NE(storm(1, t, end, end), 0u);
        const uint64_t last_frame = end - kMs;
        uint64_t restored = 0;
        for (uint64_t u = end; u < last_frame + 25 * kMs; u += 100 * kUs) {
            flush_at(u);
            if (!restored && shared->pfc().stats(1).wd_restores[3].load() == uint64_t(rep + 1))
                restored = u;
        }
        ASSERT_NE(restored, 0u);
        EXPECT_GE(restored, last_frame + 20 * kMs);
        EXPECT_LE(restored, last_frame + 20 * kMs + 100 * kUs);
        EXPECT_EQ(shared->pfc().stats(1).wd_stormed.load(), 0u);
        // After restoration the queue takes packets again and they leave.
        send(udp4_frame(3, 0, 1000), 1);
        flush_at(now_ns + 100 * kUs);
        EXPECT_EQ(sports(1).size(), 1u);
        t = now_ns + kMs;
        ports->take_tx(1);
    }
    EXPECT_EQ(shared->pfc().stats(1).wd_storms[3].load(), 20u);
}

// W4: action forward: the stormed queue ignores PFC and its packets flow.
TEST_F(PfcWd, ForwardActionIgnoresPfc) {
    std::string wd = kWd;
    wd.replace(wd.find("drop"), 4, "forward");
    start_pfc(qos_profile(kPgTables + wd, "pfc_enable: \"3\""));
    send(udp4_frame(3, 0, 1000), 5);
    const uint64_t t0 = 2 * kMs;
    ASSERT_NE(storm(1, t0, t0 + 50 * kMs, t0 + 11 * kMs), 0u);
    EXPECT_EQ(sports(1).size(), 5u) << "stormed + forward: the queue ignores the pause";
    send(udp4_frame(3, 0, 1000), 5);
    receive(1, pfc_one(3, 0xFFFF));
    flush_at(now_ns + 100 * kUs);
    EXPECT_EQ(sports(1).size(), 5u);
    EXPECT_EQ(q(3).drops_total(), 0u);
}

// W5: a storm on every port at once: each detects and restores.
TEST_F(PfcWd, StormOnEveryPort) {
    start_pfc(qos_profile(kPgTables + kWd, "pfc_enable: \"3\""));
    send(udp4_frame(3, 0, 1000), 3, 1, 0);
    send(udp4_frame(3, 0, 1000), 3, 0, 1);
    const uint64_t t0 = 2 * kMs;
    for (uint64_t t = t0; t < t0 + 40 * kMs; t += 100 * kUs) {
        now_ns = t;
        if (t < t0 + 15 * kMs && (t - t0) % kMs == 0) {
            receive(0, pfc_one(3, 0xFFFF));
            receive(1, pfc_one(3, 0xFFFF));
        }
        egress->flush(t);
    }
    for (uint16_t p : {0, 1}) {
        EXPECT_EQ(shared->pfc().stats(p).wd_storms[3].load(), 1u) << p;
        EXPECT_EQ(shared->pfc().stats(p).wd_restores[3].load(), 1u) << p;
    }
}

}  // namespace
}  // namespace rocesw::test

namespace rocesw::test {
namespace {

// ------------------------------------------------------------------ through the worker (L7, L8)

class PfcWorker : public SwitchFixture {
  protected:
    // The switch classifies and hands MAC-control frames to the PFC engine; the egress stays
    // SwitchFixture's FIFO.
    void SetUp() override {
        std::vector<QosPortInfo> info = {{"p0", 10000}, {"p1", 10000}};
        plan = build_qos_plan(
            load_qos_string(qos_profile(kPgTables, "pfc_enable: \"3\""), "t.yaml"), info);
        qos_plan = &plan;
        SwitchFixture::SetUp();
        shared = &dp->tm();
    }
    QosPlan plan;
    TrafficManager *shared = nullptr;
};

// PFC frames are acted on and never forwarded, whatever their destination; malformed ones and
// 802.3x PAUSE on a PFC port are counted and dropped, and pause nothing.
TEST_F(PfcWorker, MacControlIsConsumedNeverForwarded) {
    struct Case {
        const char *name;
        Bytes frame;
        DropReason reason;  // port_stopped here means: consumed, no drop
        MacControlError error;
    };
    Bytes tagged = pfc_one(3, 5);
    tagged.insert(tagged.begin() + 12, {0x81, 0x00, 0x60, 0x05});
    tagged.resize(64);
    Bytes bad_op = pfc_one(3, 5);
    bad_op[15] = 0x02;
    Bytes bad_dst = pfc_one(3, 5);
    std::copy(kP1.begin(), kP1.end(), bad_dst.begin());
    Bytes pause(60);
    build_pause_frame(pause.data(), {2, 0, 0, 0, 0xBB, 2}, 100);
    std::vector<Case> cases = {
        {"pfc", pfc_one(3, 0xFFFF), DropReason::port_stopped, MacControlError::none},
        {"xon", pfc_one(3, 0), DropReason::port_stopped, MacControlError::none},
        {"lossy_only", pfc_one(1, 0xFFFF), DropReason::pause_ignored, MacControlError::none},
        {"pause_on_pfc_port", pause, DropReason::pause_ignored, MacControlError::none},
        {"tagged", tagged, DropReason::mac_control_malformed, MacControlError::tagged},
        {"bad_opcode", bad_op, DropReason::mac_control_malformed, MacControlError::bad_opcode},
        {"bad_dst", bad_dst, DropReason::mac_control_malformed, MacControlError::bad_dst},
        {"truncated", Bytes(bad_op.begin(), bad_op.begin() + 40),
         DropReason::mac_control_malformed, MacControlError::truncated},
    };
    uint64_t consumed = 0;
    for (auto &c : cases) {
        SCOPED_TRACE(c.name);
        const uint64_t before = c.reason == DropReason::port_stopped ? 0 : drops(1, c.reason);
        ports->inject(1, c.frame);
        worker->poll_once(now_ns);
        EXPECT_TRUE(ports->take_tx(0).empty());
        EXPECT_TRUE(ports->take_tx(1).empty());
        if (c.reason == DropReason::port_stopped)
            consumed++;
        else
            EXPECT_EQ(drops(1, c.reason), before + 1);
        if (c.error != MacControlError::none) {
            EXPECT_EQ(shared->pfc().stats(1).rx_malformed[size_t(c.error)].load(), 1u);
        }
        // After the XON (the second case) nothing may pause port 1's egress: the ignored and
        // the malformed frames pause no priority, and no 802.3x PAUSE is in force (L8).
        const PfcPortView v = shared->pfc().snapshot(1, now_ns);
        for (unsigned p = 0; p < kNumPriorities; p++)
            EXPECT_EQ(v.priorities[p].rx_paused_now, std::string(c.name) == "pfc" && p == 3) << p;
        EXPECT_EQ(v.rx_global_pause, 0u);
    }
    EXPECT_EQ(counters->ports[1].local_packets.load(), consumed);
    EXPECT_EQ(shared->pfc().stats(1).rx_pause[3].load(), 1u);
    EXPECT_EQ(shared->pfc().stats(1).rx_xon[3].load(), 1u);
    EXPECT_EQ(shared->pfc().stats(1).rx_ignored[1].load(), 1u);
    EXPECT_EQ(shared->pfc().stats(1).rx_global_ignored.load(), 1u);
    EXPECT_EQ(total_drops(0), 0u);
}

// ---------------------------------------------------------------------------- incast (L6)

// Four senders at line rate (10G each, 1000-byte frames of the lossless class) into one 10G
// port, in virtual time with 100 ns steps. Each sender honors the PFC frames the switch sends
// it, 1 us after they leave (its response time). With PFC: zero drops and every packet
// delivered; without: drops, counted as such.
struct IncastResult {
    uint64_t sent = 0, delivered = 0, drops = 0, pfc_frames = 0;
    std::map<std::string, uint64_t> drops_by_reason;  // the reasons with drops
};

IncastResult run_incast(bool pfc) {
    constexpr unsigned kSenders = 4;
    constexpr uint64_t kStep = 100, kRun = 2 * kMs;
    constexpr uint32_t kFrame = 1000, kWire = kFrame + 24;
    TestPorts ports(unique_name("inc"), kSenders + 1, 65536);
    std::vector<QosPortInfo> info;
    for (unsigned i = 0; i <= kSenders; i++) info.push_back({numbered("p", i), 10000});
    const std::string tables =
        kPgTables + "ROCESW: {queue_packets: 2048}\n";
    QosPlan plan = build_qos_plan(
        load_qos_string(qos_profile(tables, pfc ? "pfc_enable: \"3\"" : ""), "i.yaml"), info);
    auto shared = std::make_unique<TrafficManager>(plan, 1, unique_name("iq"));
    std::vector<std::array<uint8_t, 6>> macs(kSenders + 1, {2, 0, 0, 0, 0, 0x10});
    shared->pfc().set_source(ports.pool(), macs);
    WorkerCounters ctr;
    auto egress = std::make_unique<QosEgress>(*shared, ports, ctr, 0, 0, 32);
    const Bytes frame = udp4_frame(3, 0, kFrame);
    ParseOptions opt;
    opt.max_l3_len = 9000;

    IncastResult r;
    std::array<int64_t, kSenders> credit{};  // wire bytes the sender may send now
    std::array<PauseClock, kSenders> paused;
    struct Pending {
        uint64_t at;
        unsigned sender;
        uint64_t t_ns;
    };
    std::vector<Pending> pending;  // PFC frames on their way to a sender
    const uint64_t end = 1'000'000 + kRun;
    for (uint64_t t = 1'000'000; t < end || egress->backlog(); t += kStep) {
        for (unsigned s = 0; s < kSenders; s++) {
            if (t >= end) break;
            credit[s] = std::min<int64_t>(credit[s] + int64_t(10'000'000'000ull * kStep / 8 /
                                                                1'000'000'000ull),
                                          2 * kWire);
            if (paused[s].active(t)) continue;
            while (credit[s] >= int64_t(kWire)) {
                credit[s] -= kWire;
                rte_mbuf *m = rte_pktmbuf_alloc(ports.pool());
                std::memcpy(rte_pktmbuf_append(m, kFrame), frame.data(), kFrame);
                PacketMeta *meta = meta_of(m);
                parse_frame(frame.data(), kFrame, opt, meta);
                meta->in_port = uint8_t(s);
                meta->out_port = kSenders;
                meta->tc = classify_tc(*meta, plan.ports[s].cls);
                egress->enqueue(kSenders, &m, 1, t);
                r.sent++;
            }
        }
        egress->flush(t);
        r.delivered += ports.take_tx(kSenders).size();
        for (unsigned s = 0; s < kSenders; s++)
            for (auto &f : ports.take_tx(s)) {
                MacControlFrame m;
                EXPECT_EQ(parse_mac_control(f.data(), uint32_t(f.size()), &m),
                          MacControlError::none);
                r.pfc_frames++;
                pending.push_back({t + kUs, s, pause_quanta_to_ns(m.quanta[3], 10'000'000'000ull)});
            }
        for (size_t i = 0; i < pending.size();) {
            if (pending[i].at <= t) {
                paused[pending[i].sender].set(t, pending[i].t_ns);
                pending.erase(pending.begin() + long(i));
            } else {
                i++;
            }
        }
        if (t > end + 100 * kMs) break;  // safety
    }
    for (size_t d = 0; d < kDropReasonCount; d++) {
        const uint64_t n = ctr.ports[kSenders].drops[d].load();
        r.drops += n;
        if (n) r.drops_by_reason[std::string(drop_reason_name(DropReason(d)))] = n;
    }
    egress.reset();
    shared.reset();
    return r;
}

TEST(PfcIncast, LosslessWithPfcDropsWithout) {
    // Virtual time makes the run deterministic: exact counts, the figures doc/pfc.md quotes.
    // With PFC, sent = the 2441 frames the egress carries in 2 ms (10G, 1024-byte wire frames)
    // plus what waits in the buffers when the senders stop.
    IncastResult on = run_incast(true);
    EXPECT_EQ(on.sent, 2543u);
    EXPECT_EQ(on.drops, 0u);
    EXPECT_EQ(on.delivered, on.sent);
    EXPECT_EQ(on.pfc_frames, 694u);
    IncastResult off = run_incast(false);
    EXPECT_EQ(off.sent, 9764u);
    EXPECT_EQ(off.drops, 5252u);
    // All of them the lossless queue's own limit (2048 packets), counted as such (L6).
    EXPECT_EQ(off.drops_by_reason, (std::map<std::string, uint64_t>{{"queue_full", 5252}}));
    EXPECT_TRUE(on.drops_by_reason.empty());
    EXPECT_EQ(off.delivered, off.sent - off.drops);
    EXPECT_EQ(off.pfc_frames, 0u);
    std::printf("incast 4x10G -> 10G, 2 ms: PFC on: sent %llu delivered %llu drops %llu "
                "pfc %llu; off: sent %llu drops %llu\n",
                (unsigned long long)on.sent, (unsigned long long)on.delivered,
                (unsigned long long)on.drops, (unsigned long long)on.pfc_frames,
                (unsigned long long)off.sent, (unsigned long long)off.drops);
}

}  // namespace
}  // namespace rocesw::test
