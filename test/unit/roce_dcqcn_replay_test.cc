// Exact replay: DcqcnRp against reference state machines written here from the references'
// rules, not from lib/roce, driven in virtual time by the same CNP arrivals (and the same
// packets, sent at the reference's rate). After every instant at which either side has
// something to do, Rc, Rt and alpha must agree exactly (the issue asks for 1 bit/s).
//
//   HpccNs3Ref   rdma-hw.cc's "Mellanox version" of DCQCN (CC_MODE 1) as HPCC's run.py
//                configures it: an ns-3 style event queue (time, then insertion order), a
//                free-running alpha update with a CNP-seen bit, a rate-decrease check every
//                RATE_DECREASE_INTERVAL (first one 1 ns after the interval, following the
//                alpha update), CLAMP_TARGET_RATE 0, a timer-only increase whose k-th event
//                after a cut is fast recovery (k < F), additive (k == F) or hyper (k > F), and
//                ns-3 DataRate arithmetic (products and halves truncate to whole bit/s).
//   PaperRef     Zhu et al., SIGCOMM 2015, section 3: on each CNP Rt = Rc, Rc x (1 - alpha/2),
//                alpha += g; alpha decays every K without CNP; timer and byte counter stages
//                with fast recovery, additive and hyper increase as in QCN; rocehost's integer
//                convention (cut rounds to nearest, the average rounds up).
// A CNP arriving at the same nanosecond as a timer is seen after it, in both.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "roce/dcqcn.h"
#include "roce/dcqcn_profile.h"

namespace rocesw::roce {
namespace {

constexpr uint64_t kNone = ~uint64_t(0);
constexpr uint64_t k100G = 100'000'000'000;

// ---- A tiny discrete-event queue with ns-3's order: time, then insertion.
class EventQueue {
  public:
    using Id = uint64_t;
    Id at(uint64_t t, std::function<void()> fn) {
        const Id id = seq_++;
        q_.emplace(std::make_pair(t, id), std::move(fn));
        return id;
    }
    void cancel(uint64_t t, Id id) { q_.erase({t, id}); }
    uint64_t next_time() const { return q_.empty() ? kNone : q_.begin()->first.first; }
    // Runs the earliest event; returns its time.
    uint64_t run_one() {
        auto it = q_.begin();
        const uint64_t t = it->first.first;
        auto fn = std::move(it->second);
        q_.erase(it);
        now_ = t;
        fn();
        return t;
    }
    uint64_t now() const { return now_; }

  private:
    std::map<std::pair<uint64_t, Id>, std::function<void()>> q_;
    Id seq_ = 0;
    uint64_t now_ = 0;
};

// ---- HPCC ns-3, CC_MODE 1, written from rdma-hw.cc's rules.
struct HpccSettings {
    uint64_t line_bps, min_rate_bps, rai_bps, rhai_bps;
    double g;
    uint64_t alpha_resume_ns, rate_decrease_ns, rp_timer_ns;
    uint32_t fast_recovery_times;
    bool clamp_target_rate;
};

// run.py --cc dcqcn / dcqcn_paper at `bw_gbps` (python 2: integer Mb/s).
HpccSettings run_py(uint64_t bw_gbps, bool paper_preset) {
    HpccSettings s{};
    s.line_bps = bw_gbps * 1'000'000'000;
    s.min_rate_bps = 1000'000'000;               // MIN_RATE 1000Mb/s
    s.rai_bps = (5 * bw_gbps / 25) * 1'000'000;  // ai = 5 * bw / 25
    s.rhai_bps = (50 * bw_gbps / 25) * 1'000'000;
    s.g = 0.00390625;
    s.alpha_resume_ns = paper_preset ? 50'000 : 1'000;
    s.rate_decrease_ns = paper_preset ? 50'000 : 4'000;
    s.rp_timer_ns = paper_preset ? 55'000 : 300'000;
    s.fast_recovery_times = 1;
    s.clamp_target_rate = false;  // CLAMP_TARGET_RATE 0
    return s;
}

class HpccNs3Ref {
  public:
    explicit HpccNs3Ref(const HpccSettings &s) : s_(s), rate_(s.line_bps), target_(s.line_bps) {}

    uint64_t next_time() const { return ev_.next_time(); }
    void run_one() { ev_.run_one(); }
    void on_bytes(uint64_t) {}  // timer only

    void on_cnp(uint64_t now) {
        alpha_cnp_ = true;
        decrease_cnp_ = true;
        if (first_cnp_) {
            first_cnp_ = false;
            alpha_ = 1;
            alpha_cnp_ = false;
            ev_.at(now + s_.alpha_resume_ns, [this] { update_alpha(); });
            ev_.at(now + s_.rate_decrease_ns + 1, [this] { check_decrease(); });
            target_ = rate_;  // RateOnFirstCnp 1.0
        }
    }

    uint64_t rate() const { return rate_; }
    uint64_t target() const { return target_; }
    double alpha() const { return alpha_; }
    int cuts = 0, fast = 0, active = 0, hyper = 0;

  private:
    static uint64_t times(uint64_t bps, double c) { return uint64_t(double(bps) * c); }

    void update_alpha() {
        alpha_ = alpha_cnp_ ? (1 - s_.g) * alpha_ + s_.g : (1 - s_.g) * alpha_;
        alpha_cnp_ = false;
        ev_.at(ev_.now() + s_.alpha_resume_ns, [this] { update_alpha(); });
    }
    void check_decrease() {
        const uint64_t now = ev_.now();
        ev_.at(now + s_.rate_decrease_ns, [this] { check_decrease(); });
        if (!decrease_cnp_) return;
        if (s_.clamp_target_rate || stage_ != 0) target_ = rate_;
        rate_ = std::max(s_.min_rate_bps, times(rate_, 1 - alpha_ / 2));
        stage_ = 0;
        decrease_cnp_ = false;
        if (timer_ != kNone) ev_.cancel(timer_at_, timer_);
        arm_timer(now + s_.rp_timer_ns);
        cuts++;
    }
    void arm_timer(uint64_t t) {
        timer_at_ = t;
        timer_ = ev_.at(t, [this] { rate_increase_timer(); });
    }
    void rate_increase_timer() {
        arm_timer(ev_.now() + s_.rp_timer_ns);
        if (stage_ < s_.fast_recovery_times) {
            fast++;
        } else if (stage_ == s_.fast_recovery_times) {
            target_ = std::min(target_ + s_.rai_bps, s_.line_bps);
            active++;
        } else {
            target_ = std::min(target_ + s_.rhai_bps, s_.line_bps);
            hyper++;
        }
        rate_ = times(rate_, 0.5) + times(target_, 0.5);
        stage_++;
    }

    HpccSettings s_;
    EventQueue ev_;
    uint64_t rate_, target_;
    double alpha_ = 1;
    bool alpha_cnp_ = false, decrease_cnp_ = false, first_cnp_ = true;
    uint32_t stage_ = 0;
    EventQueue::Id timer_ = kNone;
    uint64_t timer_at_ = 0;
};

// ---- The paper's RP (section 3.1 and the QCN increase stages it adopts).
struct PaperSettings {
    uint64_t line_bps = k100G;
    double g = 1.0 / 256;
    uint64_t k_ns = 55'000;       // alpha: no CNP for K
    uint64_t timer_ns = 55'000;   // T
    uint64_t bytes = 10'000'000;  // B
    uint32_t f = 5;               // F
    uint64_t rai_bps = 40'000'000, rhai_bps = 400'000'000, min_rate_bps = 1'000'000;
};

class PaperRef {
  public:
    explicit PaperRef(const PaperSettings &s) : s_(s), rc_(s.line_bps), rt_(s.line_bps) {}

    uint64_t next_time() const { return std::min(alpha_at_, timer_at_); }
    void run_one() {
        if (alpha_at_ <= timer_at_) {
            alpha_ = (1 - s_.g) * alpha_;
            alpha_at_ += s_.k_ns;
        } else {
            timer_at_ += s_.timer_ns;
            t_++;
            increase();
        }
    }
    void on_cnp(uint64_t now) {
        rt_ = rc_;
        const uint64_t cut = uint64_t(std::llround(double(rc_) * (1 - alpha_ / 2)));
        rc_ = std::max(cut, s_.min_rate_bps);
        alpha_ = (1 - s_.g) * alpha_ + s_.g;
        t_ = bc_ = 0;
        sent_ = 0;
        alpha_at_ = now + s_.k_ns;
        timer_at_ = now + s_.timer_ns;
        cuts++;
    }
    void on_bytes(uint64_t n) {
        if (timer_at_ == kNone) return;  // no CNP yet: line rate, no increase machinery
        sent_ += n;
        while (sent_ >= s_.bytes) {
            sent_ -= s_.bytes;
            bc_++;
            increase();
        }
    }
    uint64_t rate() const { return rc_; }
    uint64_t target() const { return rt_; }
    double alpha() const { return alpha_; }
    int cuts = 0, fast = 0, active = 0, hyper = 0;

  private:
    void increase() {
        if (std::max(t_, bc_) <= s_.f) {
            fast++;
        } else if (std::min(t_, bc_) > s_.f) {
            rt_ += (std::min(t_, bc_) - s_.f) * s_.rhai_bps;
            hyper++;
        } else {
            rt_ += s_.rai_bps;
            active++;
        }
        rt_ = std::min(rt_, s_.line_bps);
        rc_ = (rt_ + rc_ + 1) / 2;
    }

    PaperSettings s_;
    uint64_t rc_, rt_;
    double alpha_ = 1;
    uint32_t t_ = 0, bc_ = 0;
    uint64_t sent_ = 0;
    uint64_t alpha_at_ = kNone, timer_at_ = kNone;
};

// ---- CNP arrival patterns.
std::vector<uint64_t> single_cnp() {
    return {10'000};
}

std::vector<uint64_t> train_50us_for_1ms() {
    std::vector<uint64_t> v;
    for (uint64_t t = 0; t < 1'000'000; t += 50'000) v.push_back(10'000 + t);
    return v;
}

// Poisson arrivals at `per_s` for `for_ns`, from a seeded splitmix64.
std::vector<uint64_t> poisson(double per_s, uint64_t for_ns, uint64_t seed) {
    auto next = [&seed] {
        uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    std::vector<uint64_t> v;
    double t = 0;
    for (;;) {
        const double u = double((next() >> 11) + 1) / 9007199254740992.0;  // (0, 1]
        t += -std::log(u) / per_s * 1e9;
        if (t >= double(for_ns)) break;
        v.push_back(uint64_t(std::llround(t)));
    }
    return v;
}

struct ReplayResult {
    uint64_t steps = 0, max_rc_diff = 0, max_rt_diff = 0;
    bool alpha_equal = true;
    uint64_t first_mismatch_ns = kNone;
};

// Drives `ref` and `rp` to `end_ns`: CNPs at `cnps`; packets of `pkt_bytes` back to back at the
// reference's current rate (the byte counter's input). Compares after every instant.
template <class Ref>
ReplayResult replay(Ref &ref, DcqcnRp &rp, const std::vector<uint64_t> &cnps, uint64_t end_ns,
                    uint64_t pkt_bytes) {
    ReplayResult r;
    size_t ci = 0;
    uint64_t next_pkt = 0;
    auto diff = [](uint64_t a, uint64_t b) { return a > b ? a - b : b - a; };
    for (;;) {
        const uint64_t t_ev = ref.next_time();
        const uint64_t t_cnp = ci < cnps.size() ? cnps[ci] : kNone;
        const uint64_t t = std::min({t_ev, t_cnp, next_pkt});
        if (t > end_ns) break;
        if (t == t_ev) {
            while (ref.next_time() == t) ref.run_one();  // every timer due at t first
            rp.advance(t);
        } else if (t == t_cnp) {
            ref.on_cnp(t);
            rp.on_cnp(t);
            ci++;
        } else {
            ref.on_bytes(pkt_bytes);
            rp.on_bytes_sent(pkt_bytes, t);
            next_pkt = t + (pkt_bytes * 8 * 1'000'000'000 + ref.rate() - 1) / ref.rate();
        }
        r.steps++;
        const uint64_t d = diff(ref.rate(), rp.rate_bps());
        const uint64_t dt = diff(ref.target(), rp.target_bps());
        if ((d || dt || ref.alpha() != rp.alpha()) && r.first_mismatch_ns == kNone)
            r.first_mismatch_ns = t;
        r.max_rc_diff = std::max(r.max_rc_diff, d);
        r.max_rt_diff = std::max(r.max_rt_diff, dt);
        r.alpha_equal &= ref.alpha() == rp.alpha();
    }
    return r;
}

DcqcnParams profile_at(const char *name, uint64_t line_bps) {
    auto p = dcqcn_profile(name);
    EXPECT_TRUE(p.has_value()) << name;
    p->line_rate_bps = line_bps;
    return *p;
}

// The issue asks for agreement to 1 bit/s; both sides use the same integer arithmetic, so we
// hold them to exact equality.
void expect_agree(const ReplayResult &r) {
    EXPECT_GT(r.steps, 0u);
    EXPECT_EQ(r.max_rc_diff, 0u) << "first mismatch at " << r.first_mismatch_ns << " ns";
    EXPECT_EQ(r.max_rt_diff, 0u) << "first mismatch at " << r.first_mismatch_ns << " ns";
    EXPECT_TRUE(r.alpha_equal) << "first mismatch at " << r.first_mismatch_ns << " ns";
}

// ---- hpcc-ns3 (run.py --cc dcqcn) at 100 Gb/s.

TEST(DcqcnReplayHpccNs3, ProfileScalesRunPyValuesTo100G) {
    DcqcnRp rp(profile_at("hpcc-ns3", k100G));
    EXPECT_EQ(rp.params().rate_ai_bps, 20'000'000u);    // 5 Mb/s x 100/25
    EXPECT_EQ(rp.params().rate_hai_bps, 200'000'000u);  // 50 Mb/s x 100/25
    EXPECT_EQ(rp.params().min_rate_bps, 1'000'000'000u);
}

TEST(DcqcnReplayHpccNs3, SingleCnpCutsOnTheCheckGridThenRecoversTimerOnly) {
    HpccNs3Ref ref(run_py(100, false));
    std::vector<RateChange> trace;
    DcqcnRp rp(profile_at("hpcc-ns3", k100G), &trace);
    auto r = replay(ref, rp, single_cnp(), 20'000'000, 4096);
    expect_agree(r);
    // The CNP at 10 us is applied by the check at 10 + 4 us + 1 ns, with alpha decayed by the
    // four 1-us updates before it; then one fast recovery, one additive, hyper from then on.
    ASSERT_GE(trace.size(), 4u);
    EXPECT_EQ(trace[0].event, RpEvent::cnp_decrease);
    EXPECT_EQ(trace[0].t_ns, 14'001u);
    const double a4 = std::pow(1 - 1.0 / 256, 4);
    EXPECT_EQ(trace[0].rc_bps, uint64_t(double(k100G) * (1 - a4 / 2)));
    EXPECT_EQ(trace[1].event, RpEvent::fast_recovery);
    EXPECT_EQ(trace[1].t_ns, 314'001u);
    EXPECT_EQ(trace[2].event, RpEvent::additive);
    EXPECT_EQ(trace[3].event, RpEvent::hyper);
    EXPECT_EQ(ref.cuts, 1);
    EXPECT_GT(ref.hyper, 50);
    // ns-3's halves truncate: Rc settles 1 bit/s under the line rate, and so does ours.
    EXPECT_EQ(rp.rate_bps(), k100G - 1);
}

TEST(DcqcnReplayHpccNs3, CnpTrainEvery50usFor1msKeepsTheTargetWithoutTimerIncreases) {
    HpccNs3Ref ref(run_py(100, false));
    DcqcnRp rp(profile_at("hpcc-ns3", k100G));
    auto r = replay(ref, rp, train_50us_for_1ms(), 5'000'000, 4096);
    expect_agree(r);
    EXPECT_EQ(ref.cuts, 20);
    EXPECT_EQ(rp.stats().decreases, 20u);
    EXPECT_GT(ref.hyper, 0);
}

TEST(DcqcnReplayHpccNs3, TrainKeepsTheLineRateTargetAndAlphaDecaysBetweenCnps) {
    HpccNs3Ref ref(run_py(100, false));
    DcqcnRp rp(profile_at("hpcc-ns3", k100G));
    auto r = replay(ref, rp, train_50us_for_1ms(), 960'000, 4096);
    expect_agree(r);
    // No timer increase between cuts 50 us apart (T = 300 us): CLAMP_TARGET_RATE 0 leaves Rt
    // at the line rate through the whole train. One CNP per 50 one-microsecond alpha periods
    // lets alpha decay between them, so the cuts shrink (the paper's alpha would stay near 1).
    EXPECT_EQ(rp.target_bps(), k100G);
    EXPECT_LT(rp.alpha(), 0.5);
    EXPECT_GT(rp.rate_bps(), 2'000'000'000u);
    EXPECT_LT(rp.rate_bps(), 5'000'000'000u);
}

TEST(DcqcnReplayHpccNs3, DenseCnpsReachTheOneGigabitFloor) {
    std::vector<uint64_t> cnps;
    for (uint64_t t = 10'000; t < 400'000; t += 2'000) cnps.push_back(t);
    HpccNs3Ref ref(run_py(100, false));
    DcqcnRp rp(profile_at("hpcc-ns3", k100G));
    expect_agree(replay(ref, rp, cnps, 400'000, 4096));
    EXPECT_EQ(rp.rate_bps(), 1'000'000'000u);  // MIN_RATE 1000Mb/s
}

TEST(DcqcnReplayHpccNs3, PoissonCnpsAt20kPerSecondFor10ms) {
    const auto cnps = poisson(20'000, 10'000'000, 17);
    ASSERT_GT(cnps.size(), 150u);
    ASSERT_LT(cnps.size(), 260u);
    HpccNs3Ref ref(run_py(100, false));
    DcqcnRp rp(profile_at("hpcc-ns3", k100G));
    auto r = replay(ref, rp, cnps, 15'000'000, 4096);
    expect_agree(r);
    EXPECT_GT(ref.cuts, 100);
    EXPECT_LT(ref.cuts, int(cnps.size()));  // CNPs within one 4 us check make one cut
    EXPECT_GT(ref.fast + ref.active + ref.hyper, 0);
}

TEST(DcqcnReplayHpccNs3, PaperPresetPoissonAndTrain) {
    // run.py --cc dcqcn_paper: alpha 50 us, check 50 us, T 55 us (increase and check coincide
    // every 550 us: the increase, scheduled earlier, runs first in ns-3 and here).
    for (int seed = 1; seed <= 3; seed++) {
        HpccNs3Ref ref(run_py(100, true));
        DcqcnRp rp(profile_at("hpcc-ns3-paper", k100G));
        auto r = replay(ref, rp, poisson(20'000, 10'000'000, uint64_t(seed)), 15'000'000, 4096);
        expect_agree(r);
        EXPECT_GT(ref.cuts, 50);
    }
    HpccNs3Ref ref(run_py(100, true));
    DcqcnRp rp(profile_at("hpcc-ns3-paper", k100G));
    expect_agree(replay(ref, rp, train_50us_for_1ms(), 5'000'000, 4096));
}

TEST(DcqcnReplayHpccNs3, AgreesAt25And10G) {
    for (uint64_t bw : {25, 10}) {
        HpccNs3Ref ref(run_py(bw, false));
        DcqcnRp rp(profile_at("hpcc-ns3", bw * 1'000'000'000));
        SCOPED_TRACE(bw);
        expect_agree(replay(ref, rp, poisson(20'000, 10'000'000, 5), 15'000'000, 4096));
        EXPECT_GT(ref.cuts, 100);
    }
}

// ---- paper at 100 Gb/s.

TEST(DcqcnReplayPaper, SingleCnp) {
    PaperRef ref{PaperSettings{}};
    DcqcnRp rp(profile_at("paper", k100G));
    auto r = replay(ref, rp, single_cnp(), 10'000'000, 4096);
    expect_agree(r);
    EXPECT_EQ(ref.cuts, 1);
    EXPECT_GT(ref.hyper, 0);  // the 10 MB byte counter fires every 0.8 ms at 100G
    EXPECT_EQ(ref.fast, 5);
}

TEST(DcqcnReplayPaper, CnpTrainEvery50usFor1ms) {
    PaperRef ref{PaperSettings{}};
    DcqcnRp rp(profile_at("paper", k100G));
    auto r = replay(ref, rp, train_50us_for_1ms(), 5'000'000, 4096);
    expect_agree(r);
    EXPECT_EQ(ref.cuts, 20);
    EXPECT_EQ(rp.stats().decreases, 20u);
}

TEST(DcqcnReplayPaper, PoissonCnpsAt20kPerSecondFor10ms) {
    for (int seed = 17; seed <= 19; seed++) {
        const auto cnps = poisson(20'000, 10'000'000, uint64_t(seed));
        PaperRef ref{PaperSettings{}};
        DcqcnRp rp(profile_at("paper", k100G));
        auto r = replay(ref, rp, cnps, 15'000'000, 4096);
        expect_agree(r);
        EXPECT_EQ(ref.cuts, int(cnps.size()));
        EXPECT_GT(ref.fast + ref.active + ref.hyper, 0);
    }
}

}  // namespace
}  // namespace rocesw::roce
