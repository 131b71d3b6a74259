// DCQCN reaction point and notification point in virtual time, against trajectories computed
// by hand from the update rules in lib/roce/dcqcn.h (see doc/dcqcn.md).
#include <gtest/gtest.h>

#include <vector>

#include "roce/dcqcn.h"

namespace rocesw::roce {
namespace {

TEST(DcqcnRp, SendsAtLineRateUntilTheFirstCnp) {
    DcqcnParams p;
    DcqcnRp rp(p);
    rp.advance(10'000'000);
    EXPECT_EQ(rp.rate_bps(), 10'000'000'000u);
    EXPECT_FALSE(rp.active());
    EXPECT_EQ(rp.next_event_ns(), DcqcnRp::kNever);
}

TEST(DcqcnRp, OneCnpHalvesThenFastRecoveryThenAdditiveIncrease) {
    DcqcnParams p;  // paper defaults: g 1/256, T 55 us, F 5, R_AI 40 Mb/s, 10G line
    p.byte_counter_bytes = 0;
    std::vector<RateChange> trace;
    DcqcnRp rp(p, &trace);
    rp.on_cnp(0);
    EXPECT_EQ(rp.rate_bps(), 5'000'000'000u);  // alpha 1: Rc x (1 - 1/2)
    EXPECT_EQ(rp.target_bps(), 10'000'000'000u);
    EXPECT_DOUBLE_EQ(rp.alpha(), 1.0);  // (1 - g) + g
    const uint64_t expect[] = {7'500'000'000, 8'750'000'000, 9'375'000'000, 9'687'500'000,
                               9'843'750'000, 9'921'875'000, 9'960'937'500};
    for (int i = 0; i < 7; i++) {
        rp.advance(uint64_t(i + 1) * 55'000 - 1);
        EXPECT_EQ(rp.rate_bps(), i ? expect[i - 1] : 5'000'000'000u) << "before step " << i + 1;
        rp.advance(uint64_t(i + 1) * 55'000);
        EXPECT_EQ(rp.rate_bps(), expect[i]) << "step " << i + 1;
    }
    // Five fast-recovery steps, then additive increase (Rt is capped at line rate).
    ASSERT_EQ(trace.size(), 8u);
    EXPECT_EQ(trace[0].event, RpEvent::cnp_decrease);
    for (int i = 1; i <= 5; i++) EXPECT_EQ(trace[i].event, RpEvent::fast_recovery);
    EXPECT_EQ(trace[6].event, RpEvent::additive);
    EXPECT_EQ(trace[6].rt_bps, 10'000'000'000u);
    // alpha decayed once per 55 us without CNP.
    double a = 1.0;
    for (int i = 0; i < 7; i++) a *= 1 - 1.0 / 256;
    EXPECT_DOUBLE_EQ(rp.alpha(), a);
}

TEST(DcqcnRp, RecoversExactlyToLineRateAndStopsItsIncreaseTimer) {
    DcqcnParams p;
    p.byte_counter_bytes = 0;
    DcqcnRp rp(p);
    rp.on_cnp(0);
    rp.advance(1'815'000 - 1);
    EXPECT_LT(rp.rate_bps(), 10'000'000'000u);
    rp.advance(1'815'000);  // the 33rd increase: the gap to Rt halves (rounded down) each step
    EXPECT_EQ(rp.rate_bps(), 10'000'000'000u);
    EXPECT_EQ(rp.stats().fast_recovery, 5u);
    EXPECT_EQ(rp.stats().additive, 28u);
    // Only the alpha timer remains.
    EXPECT_EQ(rp.next_event_ns() % 55'000, 0u);
    rp.advance(10'000'000);
    EXPECT_EQ(rp.stats().additive, 28u);
}

TEST(DcqcnRp, CnpTrainCutsByTheDecayedAlpha) {
    DcqcnParams p;
    p.byte_counter_bytes = 0;
    DcqcnRp rp(p);
    rp.on_cnp(0);
    rp.on_cnp(56'000);  // after one alpha decay and one fast-recovery step (7.5 Gb/s)
    const double a = 1 - 1.0 / 256;
    EXPECT_EQ(rp.target_bps(), 7'500'000'000u);
    EXPECT_EQ(rp.rate_bps(), 3'764'648'438u);  // 7.5e9 x (1 - a/2) = 3764648437.5, rounded
    EXPECT_DOUBLE_EQ(rp.alpha(), (1 - 1.0 / 256) * a + 1.0 / 256);
    // Timers restarted at the CNP: the next increase is at 56 + 55 us.
    rp.advance(111'000 - 1);
    EXPECT_EQ(rp.rate_bps(), 3'764'648'438u);
    rp.advance(111'000);
    EXPECT_EQ(rp.rate_bps(), (7'500'000'000u + 3'764'648'438u + 1) / 2);
}

TEST(DcqcnRp, ByteCounterAndTimerDriveAdditiveThenHyperIncrease) {
    DcqcnParams p;
    p.line_rate_bps = 1'000'000'000;
    p.fast_recovery_steps = 1;
    p.byte_counter_bytes = 1000;
    p.rate_increase_timer_ns = 100'000;
    p.alpha_timer_ns = 1'000'000'000;
    p.rate_ai_bps = 10'000'000;
    p.rate_hai_bps = 100'000'000;
    std::vector<RateChange> trace;
    DcqcnRp rp(p, &trace);
    rp.on_cnp(0);
    rp.on_cnp(1);
    EXPECT_EQ(rp.rate_bps(), 250'000'000u);
    EXPECT_EQ(rp.target_bps(), 500'000'000u);
    rp.on_bytes_sent(1000, 10);  // BC 1: fast recovery
    EXPECT_EQ(rp.rate_bps(), 375'000'000u);
    rp.on_bytes_sent(999, 20);
    EXPECT_EQ(rp.byte_stage(), 1u);
    rp.on_bytes_sent(1, 20);  // BC 2, T 0: additive
    EXPECT_EQ(rp.target_bps(), 510'000'000u);
    EXPECT_EQ(rp.rate_bps(), 442'500'000u);
    rp.advance(100'001);  // T 1, BC 2: additive
    EXPECT_EQ(rp.rate_bps(), 481'250'000u);
    rp.on_bytes_sent(1000, 100'010);  // BC 3, T 1: additive
    EXPECT_EQ(rp.rate_bps(), 505'625'000u);
    rp.advance(200'001);  // T 2, BC 3: both above F = 1: hyper, Rt += 1 x R_HAI
    EXPECT_EQ(rp.target_bps(), 630'000'000u);
    EXPECT_EQ(rp.rate_bps(), 567'812'500u);
    rp.advance(300'001);  // T 3, BC 3: Rt += 2 x R_HAI
    EXPECT_EQ(rp.target_bps(), 830'000'000u);
    EXPECT_EQ(rp.rate_bps(), 698'906'250u);
    EXPECT_EQ(trace.back().event, RpEvent::hyper);
    EXPECT_EQ(rp.stats().hyper, 2u);
    EXPECT_EQ(rp.stats().additive, 3u);
}

TEST(DcqcnRp, MinimumRateAndDecreaseFactorBoundTheCut) {
    DcqcnParams p;
    p.line_rate_bps = 100'000'000;
    p.min_rate_bps = 30'000'000;
    p.min_dec_factor = 0.75;
    DcqcnRp rp(p);
    rp.on_cnp(0);
    EXPECT_EQ(rp.rate_bps(), 75'000'000u);  // alpha 1 would halve; the factor keeps 75 %
    rp.on_cnp(1);
    EXPECT_EQ(rp.rate_bps(), 56'250'000u);
    rp.on_cnp(2);
    rp.on_cnp(3);
    EXPECT_EQ(rp.rate_bps(), 31'640'625u);
    rp.on_cnp(4);
    EXPECT_EQ(rp.rate_bps(), 30'000'000u);  // floor
}

TEST(DcqcnRp, RateReducePeriodDefersCnpsToThePeriodEnd) {
    DcqcnParams p;
    p.rate_reduce_period_ns = 4'000;  // NVIDIA rate_reduce_monitor_period
    std::vector<RateChange> trace;
    DcqcnRp rp(p, &trace);
    rp.on_cnp(0);
    rp.on_cnp(1'000);
    rp.on_cnp(2'000);
    EXPECT_EQ(rp.rate_bps(), 5'000'000'000u);
    EXPECT_EQ(rp.stats().deferred_cnps, 1u);
    EXPECT_EQ(rp.next_event_ns(), 4'000u);
    rp.advance(4'000);
    EXPECT_EQ(rp.rate_bps(), 2'500'000'000u);
    ASSERT_EQ(trace.size(), 2u);
    EXPECT_EQ(trace[1].t_ns, 4'000u);
    EXPECT_EQ(rp.stats().decreases, 2u);
    EXPECT_EQ(rp.stats().cnps, 3u);
}

TEST(CnpLimiter, AtMostOneCnpPerQpPerInterval) {
    CnpLimiter np;
    const uint64_t iv = 50'000;
    EXPECT_TRUE(np.on_ce(1'000, iv));
    EXPECT_FALSE(np.on_ce(1'001, iv));
    EXPECT_FALSE(np.on_ce(50'999, iv));
    EXPECT_TRUE(np.on_ce(51'000, iv));
    EXPECT_FALSE(np.on_ce(60'000, iv));
    EXPECT_EQ(np.ce_packets, 5u);
    EXPECT_EQ(np.cnps, 2u);
    EXPECT_EQ(np.suppressed, 3u);
    CnpLimiter every;
    EXPECT_TRUE(every.on_ce(5, 0));
    EXPECT_TRUE(every.on_ce(5, 0));
}

}  // namespace
}  // namespace rocesw::roce
