// DCQCN reaction point and notification point in virtual time, against trajectories computed
// by hand from the update rules in lib/roce/dcqcn.h (see doc/dcqcn.md).
#include <gtest/gtest.h>

#include <vector>

#include "roce/dcqcn.h"
#include "roce/dcqcn_profile.h"

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

TEST(DcqcnRp, OneCnpHalvesThenFastRecoveryThenHyperIncreaseWhenTimerOnly) {
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
    // Five fast-recovery steps, then (timer only: BC follows T) hyper increase; Rt is capped
    // at line rate, so Rc keeps halving the gap.
    ASSERT_EQ(trace.size(), 8u);
    EXPECT_EQ(trace[0].event, RpEvent::cnp_decrease);
    for (int i = 1; i <= 5; i++) EXPECT_EQ(trace[i].event, RpEvent::fast_recovery);
    EXPECT_EQ(trace[6].event, RpEvent::hyper);
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
    EXPECT_EQ(rp.stats().additive, 0u);
    EXPECT_EQ(rp.stats().hyper, 28u);
    // Only the alpha timer remains, and it is not an event (advance applies its ticks).
    EXPECT_EQ(rp.next_event_ns(), DcqcnRp::kNever);
    EXPECT_EQ(rp.next_alpha_tick_ns() % 55'000, 0u);
    rp.advance(10'000'000);
    EXPECT_EQ(rp.stats().hyper, 28u);
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

// Issue 17 item 1: with the byte counter off the timer stage alone decides, so hyper increase
// begins after F stages (it used to stay additive forever, BC being stuck at 0).
TEST(DcqcnRp, TimerOnlyReachesHyperIncreaseAfterFStages) {
    DcqcnParams p;
    p.line_rate_bps = 1'000'000'000;
    p.byte_counter_bytes = 0;
    p.fast_recovery_steps = 1;
    p.rate_increase_timer_ns = 100'000;
    p.rate_ai_bps = 10'000'000;
    p.rate_hai_bps = 100'000'000;
    DcqcnRp rp(p);
    rp.on_cnp(0);
    rp.on_cnp(1);  // Rt 500M, Rc 250M
    rp.advance(100'001);  // T 1: fast recovery
    EXPECT_EQ(rp.rate_bps(), 375'000'000u);
    rp.advance(200'001);  // T 2 > F: hyper, Rt += 1 x R_HAI
    EXPECT_EQ(rp.target_bps(), 600'000'000u);
    rp.advance(300'001);  // T 3: Rt += 2 x R_HAI
    EXPECT_EQ(rp.target_bps(), 800'000'000u);
    EXPECT_EQ(rp.stats().additive, 0u);
    EXPECT_EQ(rp.stats().hyper, 2u);
}

// HPCC's rule: the k-th timer event after a cut is FR (k < F), additive (k == F), hyper
// (k > F, a constant R_HAI step), and ns-3's DataRate truncates each half.
TEST(DcqcnRp, HpccNs3IncreaseRuleOneAdditiveThenConstantHyperSteps) {
    DcqcnParams p;
    p.line_rate_bps = 1'000'000'000;
    p.fast_recovery_steps = 1;
    p.rate_increase_timer_ns = 100'000;
    p.rate_ai_bps = 10'000'000;
    p.rate_hai_bps = 100'000'000;
    p.increase_rule = IncreaseRule::hpcc_ns3;
    p.rounding = RateRounding::truncate;
    std::vector<RateChange> trace;
    DcqcnRp rp(p, &trace);
    rp.on_cnp(0);
    rp.on_cnp(1);  // Rt 500M, Rc 250M
    rp.on_bytes_sent(100'000'000, 2);  // ignored: timer only
    EXPECT_EQ(rp.byte_stage(), 0u);
    for (uint64_t i = 1; i <= 4; i++) rp.advance(1 + i * 100'000);
    ASSERT_EQ(trace.size(), 6u);
    EXPECT_EQ(trace[2].event, RpEvent::fast_recovery);
    EXPECT_EQ(trace[3].event, RpEvent::additive);
    EXPECT_EQ(trace[3].rt_bps, 510'000'000u);
    EXPECT_EQ(trace[4].event, RpEvent::hyper);
    EXPECT_EQ(trace[4].rt_bps, 610'000'000u);
    EXPECT_EQ(trace[5].rt_bps, 710'000'000u);
    p.rate_ai_bps = 1;
    DcqcnRp odd(p);
    odd.on_cnp(0);  // Rc 500M, Rt 1G
    odd.on_cnp(1);  // Rc 250M, Rt 500M
    odd.advance(100'001);
    EXPECT_EQ(odd.rate_bps(), 375'000'000u);
    odd.advance(200'001);  // Rt 500000001: halves truncate, 187500000 + 250000000
    EXPECT_EQ(odd.rate_bps(), 437'500'000u);
}

// Issue 17 item 2: with after_timer_increase, a cut keeps Rt unless a timer increase happened
// since the previous cut (HPCC CLAMP_TARGET_RATE 0, NVIDIA clamp_tgt_rate 0 and
// clamp_tgt_rate_after_time_inc 1).
TEST(DcqcnRp, TargetKeptAcrossCutsWithoutATimerIncrease) {
    DcqcnParams p;
    p.target_reset = TargetReset::after_timer_increase;
    p.byte_counter_bytes = 0;
    DcqcnRp rp(p);
    rp.on_cnp(0);
    rp.on_cnp(10'000);
    EXPECT_EQ(rp.target_bps(), 10'000'000'000u);  // kept: no increase between the cuts
    EXPECT_EQ(rp.rate_bps(), 2'500'000'000u);
    rp.advance(65'000);  // one timer increase: FR to 6.25G
    EXPECT_EQ(rp.rate_bps(), 6'250'000'000u);
    rp.on_cnp(70'000);
    EXPECT_EQ(rp.target_bps(), 6'250'000'000u);  // reset: a timer increase came first
    DcqcnParams q = p;
    q.target_reset = TargetReset::every_cut;
    DcqcnRp paper(q);
    paper.on_cnp(0);
    paper.on_cnp(10'000);
    EXPECT_EQ(paper.target_bps(), 5'000'000'000u);
}

// Issue 17 item 3: a free-running alpha tick every alpha_timer_ns from the first CNP; a CNP
// sets a bit that the next tick turns into + g; the first CNP does not count.
TEST(DcqcnRp, PeriodicAlphaCountsAtMostOneCnpPerPeriod) {
    DcqcnParams p;
    p.alpha_update = AlphaUpdate::periodic;
    p.alpha_timer_ns = 1'000;
    p.g = 1.0 / 16;
    p.initial_alpha = 0.5;
    DcqcnRp rp(p);
    rp.on_cnp(100);  // cut by alpha 0.5: 7.5G; alpha stays 0.5 (no + g at the cut)
    EXPECT_EQ(rp.rate_bps(), 7'500'000'000u);
    EXPECT_DOUBLE_EQ(rp.alpha(), 0.5);
    rp.advance(1'100);  // tick 1: the first CNP does not count
    EXPECT_DOUBLE_EQ(rp.alpha(), 0.5 * 15 / 16);
    rp.on_cnp(1'200);
    rp.on_cnp(1'300);  // two CNPs in one period: one + g
    rp.advance(2'100);
    EXPECT_DOUBLE_EQ(rp.alpha(), (0.5 * 15 / 16) * 15 / 16 + 1.0 / 16);
    EXPECT_EQ(rp.next_alpha_tick_ns(), 3'100u);
    EXPECT_EQ(rp.next_event_ns(), 1'300u + 55'000);  // the increase timer (last cut), not the tick
}

// The alpha ticks are not events: an RP advanced only at its events (next_event_ns) and at
// its CNPs follows the same trajectory as one advanced at every tick.
TEST(DcqcnRp, AlphaTicksNeedNoWakeUps) {
    DcqcnParams p = *dcqcn_profile("nvidia");
    p.line_rate_bps = 100'000'000;
    std::vector<RateChange> ta, tb;
    DcqcnRp a(p, &ta), b(p, &tb);
    const uint64_t cnps[] = {10'000, 11'500, 30'000, 700'000, 702'000, 2'000'000};
    uint64_t now = 0;
    for (uint64_t c : cnps) {
        for (; now < c; now += 1'000) a.advance(now);  // every tick (1 us)
        while (b.next_event_ns() <= c) b.advance(b.next_event_ns());
        a.on_cnp(c);
        b.on_cnp(c);
    }
    for (; now < 5'000'000; now += 1'000) a.advance(now);
    while (b.next_event_ns() < 5'000'000) b.advance(b.next_event_ns());
    a.advance(5'000'000);
    b.advance(5'000'000);
    ASSERT_EQ(ta.size(), tb.size());
    for (size_t i = 0; i < ta.size(); i++) {
        EXPECT_EQ(ta[i].t_ns, tb[i].t_ns) << i;
        EXPECT_EQ(ta[i].rc_bps, tb[i].rc_bps) << i;
        EXPECT_EQ(ta[i].alpha, tb[i].alpha) << i;
    }
    EXPECT_EQ(a.alpha(), b.alpha());
    EXPECT_EQ(a.stats().alpha_decays, b.stats().alpha_decays);
    EXPECT_GT(a.stats().alpha_decays, 4'000u);
}

// Issue 17 item 4: cuts on a grid of checks every rate_reduce_period_ns from the first CNP;
// all CNPs between two checks make one cut at the later check.
TEST(DcqcnRp, CheckGridCutsOncePerPeriodAtTheCheck) {
    DcqcnParams p;
    p.cut_timing = CutTiming::check_grid;
    p.rate_reduce_period_ns = 4'000;
    p.check_grid_phase_ns = 1;
    std::vector<RateChange> trace;
    DcqcnRp rp(p, &trace);
    rp.on_cnp(1'000);
    EXPECT_EQ(rp.rate_bps(), 10'000'000'000u);  // not yet: the first check is at 5001
    EXPECT_EQ(rp.next_event_ns(), 5'001u);
    rp.advance(5'001);
    EXPECT_EQ(rp.rate_bps(), 5'000'000'000u);
    rp.on_cnp(6'000);
    rp.on_cnp(9'000);
    rp.on_cnp(9'001);  // the check at 9001 has run: this one waits for 13001
    rp.advance(13'001);
    ASSERT_EQ(trace.size(), 3u);
    EXPECT_EQ(trace[1].t_ns, 9'001u);
    EXPECT_EQ(trace[2].t_ns, 13'001u);
    EXPECT_EQ(rp.stats().cnps, 4u);
    EXPECT_EQ(rp.stats().decreases, 3u);
    EXPECT_EQ(rp.next_event_ns(), 13'001u + 55'000);  // increase timer; no check waits
}

// Issue 17 item 6: scale_to_link multiplies R_AI, R_HAI and the byte counter by
// line / reference rate; min_rate only when it would otherwise stop every cut.
TEST(DcqcnRp, ScaleToLinkScalesStepsAndByteCounter) {
    DcqcnParams p;  // paper values, chosen for 40G
    p.scale_to_link = true;
    p.line_rate_bps = 1'000'000'000;
    DcqcnRp rp(p);
    EXPECT_EQ(rp.params().rate_ai_bps, 1'000'000u);
    EXPECT_EQ(rp.params().rate_hai_bps, 10'000'000u);
    EXPECT_EQ(rp.params().byte_counter_bytes, 250'000u);
    EXPECT_EQ(rp.params().min_rate_bps, 1'000'000u);
    EXPECT_FALSE(rp.params().scale_to_link);
    EXPECT_EQ(scaled_to_link(rp.params()).rate_ai_bps, 1'000'000u);  // idempotent
    DcqcnParams h = p;
    h.reference_rate_bps = 25'000'000'000;
    h.min_rate_bps = 1'000'000'000;
    h.line_rate_bps = 100'000'000'000;
    EXPECT_EQ(scaled_to_link(h).min_rate_bps, 1'000'000'000u);  // kept, as HPCC does
    EXPECT_EQ(scaled_to_link(h).rate_ai_bps, 160'000'000u);
    h.line_rate_bps = 1'000'000'000;  // a 1 Gb/s floor on a 1 Gb/s link: scaled to 40 Mb/s
    EXPECT_EQ(scaled_to_link(h).min_rate_bps, 40'000'000u);
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
