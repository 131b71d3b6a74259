#include "sim/link.h"

#include <gtest/gtest.h>

using namespace rocesw::sim;

namespace {
LinkDirection dir(uint64_t rate, TimePs delay) {
    return LinkDirection({rate, delay, 0, 0});
}
}  // namespace

TEST(Link, SerialisationCountsPreambleSfdAndInterFrameGap) {
    EXPECT_EQ(kWireOverheadBytes, 20u);
    // (1000 + 20) * 8 bits: 81.6 ns at 100G, 326.4 ns at 25G, 20.4 ns at 400G.
    EXPECT_EQ(serialisation_ps(1000, 100'000'000'000), 81'600u);
    EXPECT_EQ(serialisation_ps(1000, 25'000'000'000), 326'400u);
    EXPECT_EQ(serialisation_ps(1000, 400'000'000'000), 20'400u);
    // 64 B frames at 100G: 6.72 ns each, 148.8 Mpps.
    EXPECT_EQ(serialisation_ps(64, 100'000'000'000), 6'720u);
}

TEST(Link, ArrivalIsEndOfSerialisationPlusDelay) {
    auto d = dir(100'000'000'000, 1 * kPsPerUs);
    Transmission t = d.transmit(5'000, 1000);
    ASSERT_TRUE(t.sent);
    EXPECT_EQ(t.start, 5'000u);
    EXPECT_EQ(t.end, 5'000u + 81'600u);
    EXPECT_EQ(t.arrival, 5'000u + 81'600u + 1'000'000u);
    EXPECT_EQ(d.free_at(), t.end);
    EXPECT_FALSE(d.idle(t.end - 1));
    EXPECT_TRUE(d.idle(t.end));
}

TEST(Link, FrameHandedOverWhileBusyStartsWhenTheWireIsFree) {
    auto d = dir(100'000'000'000, 0);
    auto a = d.transmit(0, 1000);
    auto b = d.transmit(10, 1000);
    EXPECT_EQ(b.start, a.end);
    EXPECT_EQ(b.end, 2 * 81'600u);
}

TEST(Link, BackToBackFramesDoNotDriftAtRatesThatDoNotDivideAPicosecond) {
    // 7 Gb/s: one 1000 B frame is 8160e12 / 7e9 = 1165714.285... ps.
    auto d = dir(7'000'000'000, 0);
    for (uint64_t k = 1; k <= 7; ++k) {
        auto t = d.transmit(0, 1000);
        EXPECT_EQ(t.end, k * 8'160'000'000ull / 7'000) << "frame " << k;
    }
    EXPECT_EQ(d.free_at(), 8'160'000'000ull / 1000);  // exactly 8.16 us after 7 frames
}

TEST(Link, IdleWireRestartsOnAWholePicosecond) {
    auto d = dir(7'000'000'000, 0);
    d.transmit(0, 1000);  // ends at 1165714.28...
    auto t = d.transmit(2'000'000, 1000);
    EXPECT_EQ(t.start, 2'000'000u);
    EXPECT_EQ(t.end, 2'000'000u + 1'165'714u);
}

TEST(Link, DownLinkDropsAndCountsFrames) {
    auto d = dir(100'000'000'000, 1000);
    d.set_up(false);
    auto t = d.transmit(0, 1000);
    EXPECT_FALSE(t.sent);
    EXPECT_EQ(d.frames_dropped_down(), 1u);
    EXPECT_EQ(d.bytes_dropped_down(), 1000u);
    EXPECT_EQ(d.frames_sent(), 0u);
    EXPECT_EQ(d.free_at(), 0u);  // the wire stayed idle
}

TEST(Link, FramesInFlightWhenTheLinkGoesDownAreNotDelivered) {
    auto d = dir(100'000'000'000, 1000);
    auto before = d.transmit(0, 1000);
    EXPECT_TRUE(d.delivers(before));
    d.set_up(false);
    d.set_up(true);
    EXPECT_FALSE(d.delivers(before));  // sent before the flap
    auto after = d.transmit(200'000, 1000);
    EXPECT_TRUE(d.delivers(after));
}

TEST(Link, LossRateIsDeterministicPerSeed) {
    LinkDirection a({100'000'000'000, 0, 0.1, 42}), b({100'000'000'000, 0, 0.1, 42});
    int lost = 0;
    for (int i = 0; i < 10000; ++i) {
        auto x = a.transmit(0, 100), y = b.transmit(0, 100);
        EXPECT_EQ(x.lost, y.lost);
        lost += x.lost;
    }
    EXPECT_NEAR(lost, 1000, 150);
    EXPECT_EQ(a.frames_lost_error(), uint64_t(lost));
}

TEST(Link, FullDuplexDirectionsAreIndependent) {
    Link l{0, 1, 0, 0, dir(100'000'000'000, 0), dir(25'000'000'000, 0)};
    auto x = l.from(0).transmit(0, 1000);
    auto y = l.from(1).transmit(0, 1000);
    EXPECT_EQ(x.end, 81'600u);
    EXPECT_EQ(y.end, 326'400u);
    l.set_up(false);
    EXPECT_FALSE(l.up());
}
