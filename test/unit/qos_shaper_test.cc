// TokenBucket and TxRingModel as pure logic: exact long-run rate, bounded burst, no drift.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <utility>

#include "qos/shaper.h"

namespace rocesw {
namespace {

TEST(TokenBucket, ReleasesExactlyTheRateOverAnyLongInterval) {
    for (uint64_t rate : {1'000'000'000ull, 10'000'000'000ull, 25'000'000'000ull,
                          100'000'000'000ull, 400'000'000'000ull}) {
        // The depth must cover one polling gap (3.7 us at 400G = 185 KB), else credit is lost.
        TokenBucket tb(rate, 250000);
        uint64_t now = 1'000'000, sent = 0;
        tb.refill(now);
        const uint32_t wire = 84;
        while (tb.ready()) {
            tb.consume(wire);
            sent += wire;
        }
        // Drain whatever the bucket holds every 3.7 us for 10 ms.
        for (int step = 0; step < 2703; step++) {
            now += 3700;
            tb.refill(now);
            while (tb.ready()) {
                tb.consume(wire);
                sent += wire;
            }
        }
        double elapsed_s = 2703 * 3700e-9;
        double expected = rate / 8.0 * elapsed_s + 250000;  // plus the initial full bucket
        EXPECT_NEAR(double(sent), expected, 2 * wire) << rate;
    }
}

TEST(TokenBucket, IdleTimeRefillsOnlyUpToTheDepth) {
    TokenBucket tb(10'000'000'000ull, 5000);
    tb.refill(0);
    tb.refill(1'000'000'000);  // a second idle: far more than 5000 bytes of credit
    uint64_t sent = 0;
    while (tb.ready()) {
        tb.consume(1000);
        sent += 1000;
    }
    EXPECT_EQ(sent, 5000u);
    EXPECT_EQ(tb.credit_bytes(), 0);
}

// A refill adds exactly what the rate gives, up to the depth, from any credit: full (refill()
// and ready_below() then take a shortcut), part spent, spent below zero. At 8 Gb/s a ns adds one
// byte of credit, so the expected credit is whole bytes.
TEST(TokenBucket, RefillAddsTheRateUpToTheDepthFromAnyCredit) {
    std::mt19937 rng(5);
    for (int trial = 0; trial < 5000; trial++) {
        const uint64_t depth = 1 + rng() % 5000;
        TokenBucket tb(8'000'000'000ull, depth);
        uint64_t now = 1000;
        tb.refill(now);
        const int64_t spent = trial % 4 == 0 ? 0 : int64_t(rng() % (2 * depth));
        tb.consume(uint64_t(spent));
        for (int step = 0; step < 3; step++) {
            const int64_t before = tb.credit_bytes();
            const uint64_t dt = rng() % 3 == 0 ? 0 : rng() % (depth + 100);
            now += dt;
            tb.refill(now);
            const int64_t want = std::min<int64_t>(int64_t(depth), before + int64_t(dt));
            ASSERT_EQ(tb.credit_bytes(), want) << "trial " << trial << " step " << step;
            ASSERT_EQ(tb.ready_below(), want > 0 ? uint64_t(want) : 0u) << "trial " << trial;
        }
    }
}

TEST(TokenBucket, CreditDipsBelowZeroByAtMostOnePacket) {
    TokenBucket tb(1'000'000'000ull, 1000);
    tb.refill(0);
    tb.consume(900);
    EXPECT_TRUE(tb.ready());
    tb.consume(9000);  // a jumbo frame may go on 100 bytes of credit
    EXPECT_FALSE(tb.ready());
    EXPECT_EQ(tb.credit_bytes(), -8900);
    tb.refill(8900 * 8);  // 8 ns per byte at 1G
    EXPECT_FALSE(tb.ready());
    tb.refill(8900 * 8 + 8);
    EXPECT_TRUE(tb.ready());
}

TEST(TokenBucket, ZeroRateIsUnlimited) {
    TokenBucket tb(0, 0);
    tb.refill(5);
    tb.consume(1'000'000);
    EXPECT_TRUE(tb.ready());
}

TEST(TxRingModel, CapsBytesInFlightAndDrainsAtLineRate) {
    TxRingModel r(10'000'000'000ull, 10000);  // 10G: 1.25 bytes per ns
    r.drain(0);
    int n = 0;
    while (r.fits(1024)) {
        r.add(1024);
        n++;
    }
    EXPECT_EQ(n, 9);  // 9216 bytes; a tenth would be 10240 > 10000
    EXPECT_EQ(r.inflight_bytes(), 9216u);
    r.drain(800);  // 1000 bytes left the wire
    EXPECT_EQ(r.inflight_bytes(), 8216u);
    EXPECT_TRUE(r.fits(1024));
    r.drain(1'000'000);
    EXPECT_EQ(r.inflight_bytes(), 0u);
    EXPECT_TRUE(r.fits(50000));  // an empty ring takes any one frame
    r.add(50000);
    EXPECT_FALSE(r.fits(64));
}

TEST(TxRingModel, ZeroCapIsUnlimited) {
    TxRingModel r(1'000'000'000ull, 0);
    r.drain(0);
    for (int i = 0; i < 1000; i++) {
        ASSERT_TRUE(r.fits(9000));
        r.add(9000);
    }
}

// A shaper and ring model at `rate` (0: unlimited) after some random history: credit spent,
// ring filled (every 7th trial without a ring cap).
std::pair<TokenBucket, TxRingModel> random_history(std::mt19937 &rng, uint64_t rate, int trial) {
    TokenBucket tb(rate, 1 + rng() % 5000);
    TxRingModel ring(rate, trial % 7 == 0 ? 0 : rng() % 6000);
    uint64_t now = 1000;
    tb.refill(now);
    ring.drain(now);
    for (int k = rng() % 4; k > 0; k--) {
        tb.consume(60 + rng() % 3000);
        ring.add(60 + rng() % 3000);
        now += rng() % 20000;
        tb.refill(now);
        ring.drain(now);
    }
    return {tb, ring};
}

// A dequeue run charges the shaper and the ring model once (QosEgress::take_run): ready_below()
// and room() must predict ready() and fits() after each frame of the run exactly, from random
// states (credit around zero, rings empty, part full and beyond their cap), rates 0 included.
TEST(TokenBucket, RunChargePredictsEveryFrame) {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 20000; trial++) {
        const uint64_t rate = trial % 5 == 0 ? 0 : 1'000'000'000ull * (1 + rng() % 400);
        auto [tb, ring] = random_history(rng, rate, trial);
        const uint64_t below = tb.ready_below();
        const int64_t room = ring.room();
        const bool empty = ring.empty();
        TokenBucket t1 = tb;
        TxRingModel r1 = ring;
        uint64_t run = 0;
        for (int f = 0; f < 40; f++) {
            const uint32_t w = 84 + rng() % 1500;
            ASSERT_EQ(r1.fits(w), int64_t(run + w) <= room || (run == 0 && empty))
                << "trial " << trial << " frame " << f;
            if (!r1.fits(w)) break;
            t1.consume(w);
            r1.add(w);
            run += w;
            ASSERT_EQ(t1.ready(), run < below) << "trial " << trial << " frame " << f;
            if (!t1.ready()) break;
        }
        // The run charged at once leaves the same state.
        tb.consume(run);
        ring.add(run);
        EXPECT_EQ(tb.credit_bytes(), t1.credit_bytes());
        EXPECT_EQ(tb.ready(), t1.ready());
        EXPECT_EQ(ring.inflight_bytes(), r1.inflight_bytes());
    }
}

// QosEgress::RunLimits: after charges of w bytes in a service pass, ready_below() is what it was
// less w (0 once not ready), room() what it was less w (both negative: nothing fits) and
// inflight_bytes() what it was plus w, so the pass asks the shaper and the ring model once.
TEST(TokenBucket, ChargesMoveTheRunLimitsExactly) {
    std::mt19937 rng(11);
    for (int trial = 0; trial < 20000; trial++) {
        const uint64_t rate = trial % 5 == 0 ? 0 : 1'000'000'000ull * (1 + rng() % 400);
        auto [tb, ring] = random_history(rng, rate, trial);
        const uint64_t below = tb.ready_below(), ring_bytes = ring.inflight_bytes();
        const int64_t room = ring.room();
        uint64_t charged = 0;
        for (int run = 0; run < 6; run++) {
            const uint64_t w = rng() % 4 == 0 ? 84 : 84 + rng() % 4000;
            tb.consume(w);
            ring.add(w);
            charged += w;
            const std::string at = "trial " + std::to_string(trial) + " run " + std::to_string(run);
            if (rate == 0) {
                EXPECT_EQ(tb.ready_below(), UINT64_MAX) << at;  // unlimited, as below - charged
            } else {
                EXPECT_EQ(tb.ready_below(), below > charged ? below - charged : 0) << at;
            }
            if (room == INT64_MAX) {
                EXPECT_EQ(ring.room(), INT64_MAX) << at;  // no cap
            } else if (room - int64_t(charged) >= 0) {
                EXPECT_EQ(ring.room(), room - int64_t(charged)) << at;
            } else {
                EXPECT_LT(ring.room(), 0) << at;
            }
            EXPECT_EQ(ring.inflight_bytes(), ring_bytes + charged) << at;
        }
    }
}

}  // namespace
}  // namespace rocesw
