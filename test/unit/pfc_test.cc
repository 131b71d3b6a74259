// lib/pfc: the MAC-control codec against scapy-encoded vectors (test/data/gen_pfc_pcaps.py),
// the pause clock, the watchdog state machine and the headroom calculator.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "pcap_reader.h"
#include "pfc/frame.h"
#include "pfc/headroom.h"
#include "pfc/pause_clock.h"
#include "pfc/watchdog.h"

namespace rocesw {
namespace {

using json = nlohmann::json;

struct Vectors {
    std::vector<std::vector<uint8_t>> frames;
    json cases;
};

Vectors load_vectors() {
    Vectors v;
    v.frames = test::read_pcap(std::string(ROCESW_TEST_DATA "/pfc_cases.pcap"));
    std::ifstream in(std::string(ROCESW_TEST_DATA "/pfc_cases.json"));
    v.cases = json::parse(in);
    return v;
}

TEST(PfcFrame, DecodesScapyVectors) {
    Vectors v = load_vectors();
    ASSERT_EQ(v.frames.size(), v.cases.size());
    ASSERT_GE(v.frames.size(), 15u);
    for (size_t i = 0; i < v.frames.size(); i++) {
        const json &c = v.cases[i];
        SCOPED_TRACE(c["name"].get<std::string>());
        MacControlFrame f;
        MacControlError e = parse_mac_control(v.frames[i].data(), uint32_t(v.frames[i].size()), &f);
        EXPECT_EQ(mac_control_error_name(e), c["error"].get<std::string>());
        if (e != MacControlError::none) continue;
        EXPECT_EQ(f.pfc, c["pfc"].get<bool>());
        EXPECT_EQ(f.enable, c["enable"].get<unsigned>());
        for (unsigned p = 0; p < 8; p++) EXPECT_EQ(f.quanta[p], c["quanta"][p].get<unsigned>());
    }
}

TEST(PfcFrame, BuildsTheBytesScapyBuilds) {
    Vectors v = load_vectors();
    const std::array<uint8_t, 6> src = {0x02, 0, 0, 0, 0, 0x0a};
    int checked = 0;
    for (size_t i = 0; i < v.frames.size(); i++) {
        const json &c = v.cases[i];
        if (c["error"] != "none") continue;
        SCOPED_TRACE(c["name"].get<std::string>());
        std::array<uint16_t, 8> q{};
        for (unsigned p = 0; p < 8; p++) q[p] = uint16_t(c["quanta"][p].get<unsigned>());
        uint8_t buf[64];
        uint32_t n = c["pfc"].get<bool>() ? build_pfc_frame(buf, src, uint8_t(c["enable"]), q)
                                          : build_pause_frame(buf, src, q[0]);
        ASSERT_EQ(n, v.frames[i].size());
        EXPECT_EQ(std::vector<uint8_t>(buf, buf + n), v.frames[i]);
        checked++;
    }
    EXPECT_EQ(checked, 8);
}

TEST(PfcFrame, BuildIgnoresTimersOfDisabledPriorities) {
    std::array<uint16_t, 8> q;
    q.fill(0x1234);
    uint8_t buf[64];
    build_pfc_frame(buf, {2, 0, 0, 0, 0, 1}, 1u << 3, q);
    MacControlFrame f;
    ASSERT_EQ(parse_mac_control(buf, 60, &f), MacControlError::none);
    EXPECT_EQ(f.enable, 8);
    for (unsigned p = 0; p < 8; p++) EXPECT_EQ(f.quanta[p], p == 3 ? 0x1234 : 0);
}

TEST(PfcFrame, QuantaToNanoseconds) {
    EXPECT_EQ(pause_quanta_to_ns(1, 10'000'000'000ull), 52u);      // 51.2 ns
    EXPECT_EQ(pause_quanta_to_ns(10, 10'000'000'000ull), 512u);
    EXPECT_EQ(pause_quanta_to_ns(1, 25'000'000'000ull), 21u);      // 20.48 ns
    EXPECT_EQ(pause_quanta_to_ns(1000, 100'000'000'000ull), 5120u);
    EXPECT_EQ(pause_quanta_to_ns(0xFFFF, 10'000'000'000ull), 3355392u);
    EXPECT_EQ(pause_quanta_to_ns(0, 10'000'000'000ull), 0u);
}

TEST(PauseClock, ExtendsShortensEndsAndAccumulates) {
    PauseClock c;
    EXPECT_FALSE(c.active(0));
    c.set(1000, 500);  // paused 1000..1500
    EXPECT_TRUE(c.active(1499));
    EXPECT_FALSE(c.active(1500));
    EXPECT_EQ(c.total_ns(1200), 200u);
    c.set(1200, 1000);  // extended to 2200
    EXPECT_TRUE(c.active(2000));
    EXPECT_EQ(c.total_ns(2000), 1000u);
    c.set(2100, 0);  // XON ends it
    EXPECT_FALSE(c.active(2100));
    EXPECT_EQ(c.total_ns(5000), 1100u);
    c.set(6000, 100);  // expires on its own
    EXPECT_EQ(c.total_ns(7000), 1200u);
    c.set(8000, 0);  // XON while not paused adds nothing
    EXPECT_EQ(c.total_ns(9000), 1200u);
}

constexpr uint64_t kMs = 1'000'000;

TEST(PfcWatchdog, StormAfterDetectionTimeAndRestore) {
    PfcWatchdog wd(100 * kMs, 200 * kMs);
    uint64_t t = 0, last_rx = 0;
    int storms = 0;
    for (; t <= 150 * kMs; t += kMs) {
        last_rx = t;
        if (wd.update(t, true, true, false, last_rx) == PfcWatchdog::Event::storm) {
            storms++;
            EXPECT_EQ(t, 100 * kMs);  // within [detect, detect + poll]
        }
    }
    EXPECT_EQ(storms, 1);
    EXPECT_TRUE(wd.stormed());
    const uint64_t storm_end = last_rx;  // no more pause frames from here
    for (; t < storm_end + 200 * kMs; t += kMs)
        EXPECT_EQ(wd.update(t, false, true, false, storm_end), PfcWatchdog::Event::none);
    EXPECT_EQ(wd.update(t, false, true, false, storm_end), PfcWatchdog::Event::restore);
    EXPECT_FALSE(wd.stormed());
}

TEST(PfcWatchdog, ShortStormOrProgressDoesNotTrigger) {
    PfcWatchdog wd(100 * kMs, 200 * kMs);
    for (uint64_t t = 0; t < 99 * kMs; t += kMs)
        EXPECT_EQ(wd.update(t, true, true, false, t), PfcWatchdog::Event::none);
    // The pause ends, the queue drains a packet: the candidate interval restarts.
    EXPECT_EQ(wd.update(99 * kMs, false, true, true, 98 * kMs), PfcWatchdog::Event::none);
    for (uint64_t t = 100 * kMs; t < 199 * kMs; t += kMs)
        EXPECT_EQ(wd.update(t, true, true, false, t), PfcWatchdog::Event::none);
    EXPECT_FALSE(wd.stormed());
}

TEST(PfcWatchdog, MostlyUnpausedStarvationIsNotAStorm) {
    // Non-empty, nothing sent, but paused only half the time: not a PFC storm.
    PfcWatchdog wd(100 * kMs, 200 * kMs);
    for (uint64_t t = 0; t < 1000 * kMs; t += kMs)
        EXPECT_EQ(wd.update(t, (t / kMs) % 2 == 0, true, false, t), PfcWatchdog::Event::none);
}

TEST(PfcWatchdog, EmptyQueueNeverStorms) {
    PfcWatchdog wd(10 * kMs, 20 * kMs);
    for (uint64_t t = 0; t < 100 * kMs; t += kMs)
        EXPECT_EQ(wd.update(t, true, false, false, t), PfcWatchdog::Event::none);
}

TEST(Headroom, ComponentsAddUp) {
    HeadroomInput in;
    in.speed_bps = 100'000'000'000ull;
    in.cable_m = 100;
    in.mtu = in.peer_mtu = 9216;
    in.tx_ring_bytes = 250'000;
    in.burst = 1;
    in.poll_ns = 0;
    HeadroomResult r = compute_headroom(in);
    EXPECT_EQ(r.detection, 0u);
    EXPECT_EQ(r.egress, 250'000u + 9254u);
    EXPECT_EQ(r.link, 84u + 12'500u);  // 1000 ns at 100G
    EXPECT_EQ(r.peer, 394u * 64u + 9254u);
    EXPECT_EQ(r.headroom_bytes, r.detection + r.egress + r.link + r.peer);
    EXPECT_EQ(r.xon_offset_bytes, 2u * 9254u);
    in.burst = 32;
    in.poll_ns = 10'000;
    HeadroomResult r2 = compute_headroom(in);
    EXPECT_EQ(r2.detection, 31u * 9254u + 125'000u);
    EXPECT_NE(r2.explain().find("headroom"), std::string::npos);
}

TEST(Headroom, GrowsWithSpeedAndCable) {
    HeadroomInput a;
    a.speed_bps = 10'000'000'000ull;
    HeadroomInput b = a;
    b.speed_bps = 25'000'000'000ull;
    HeadroomInput c = a;
    c.cable_m = 1000;
    EXPECT_LT(compute_headroom(a).headroom_bytes, compute_headroom(b).headroom_bytes);
    EXPECT_LT(compute_headroom(a).headroom_bytes, compute_headroom(c).headroom_bytes);
}

}  // namespace
}  // namespace rocesw
