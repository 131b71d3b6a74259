// DCQCN (Zhu et al., SIGCOMM 2015) for a RoCE endpoint: the reaction point (RP, sender side,
// one per QP) and the notification point (NP, receiver side, one limiter per QP). Virtual time:
// every call takes `now_ns`; nothing reads a clock. Rates are integers in bits per second so
// that tests compare exact trajectories.
//
// The references disagree on several rules; each is a switch in DcqcnParams so that one RP runs
// the paper, HPCC's ns-3 model or NVIDIA's documented behaviour exactly (named sets of values:
// dcqcn_profile.h; the differences and their sources: doc/dcqcn.md).
//
// RP, per QP, once a first CNP has arrived (before that the QP sends at line rate):
//   cut        [target_reset] every_cut: Rt = Rc; after_timer_increase: Rt = Rc only if a timer
//              increase happened since the previous cut. Then
//              Rc = max(Rc x (1 - alpha/2), Rc x min_dec_factor, min_rate), rounded per
//              [rounding]; the stage counters T, BC and the byte count restart, and so does
//              the increase timer.
//   when       [cut_timing] on_cnp: the cut happens when the CNP arrives; with
//              rate_reduce_period_ns > 0 a CNP within that period of the previous cut is
//              applied when the period ends. check_grid: the first CNP starts a grid of checks
//              every rate_reduce_period_ns (the first at t_cnp + check_grid_phase_ns + period);
//              a check cuts once if any CNP arrived since the previous check.
//   alpha      [alpha_update] on_cut: alpha = (1 - g) alpha + g at each cut, which restarts
//              the alpha timer; each alpha_timer_ns without a cut alpha = (1 - g) alpha.
//              periodic: from the first CNP (alpha = initial_alpha) a free-running tick every
//              alpha_timer_ns: alpha = (1 - g) alpha + g if a CNP arrived since the previous
//              tick (the first CNP does not count), else (1 - g) alpha.
//   increase   an event each rate_increase_timer_ns after a cut (T += 1) and each
//              byte_counter_bytes sent (BC += 1). [increase_rule]
//                qcn: with BC = T when the byte counter is off (byte_counter_bytes 0)
//                  max(T, BC) <= F          fast recovery    Rc = (Rt + Rc) / 2
//                  min(T, BC) >  F          hyper increase   Rt += (min(T, BC) - F) x R_HAI; FR
//                  otherwise                additive increase Rt += R_AI;                 FR
//                hpcc_ns3: timer only; the k-th timer event after a cut (k = 0, 1, ...)
//                  k < F fast recovery; k == F additive increase; k > F Rt += R_HAI, then FR.
//              Rt is capped at the line rate; Rc = (Rt + Rc) / 2 rounds up with `nearest`
//              (so Rc reaches Rt) and halves each term down with `truncate` (ns-3's DataRate).
//              Once Rc and Rt are both at line rate the increase timer stops until the next cut.
//   Events due at the same nanosecond run in the order alpha tick, increase, cut; a CNP
//   arriving at that nanosecond is seen after them.
//   scale_to_link: R_AI, R_HAI and the byte counter are multiplied by
//   line_rate / reference_rate; min_rate too, but only when it is at or above the line rate.
// NP: a CE-marked packet of a QP triggers a CNP unless that QP got one less than
//   cnp_interval_ns ago (0: a CNP for every CE packet).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace rocesw::roce {

enum class AlphaUpdate : uint8_t { on_cut, periodic };
enum class CutTiming : uint8_t { on_cnp, check_grid };
enum class TargetReset : uint8_t { every_cut, after_timer_increase };
enum class IncreaseRule : uint8_t { qcn, hpcc_ns3 };
enum class RateRounding : uint8_t { nearest, truncate };

struct DcqcnParams {
    uint64_t line_rate_bps = 10'000'000'000;  // the QP's ceiling (the host's link speed)
    double g = 1.0 / 256;                     // alpha gain
    double initial_alpha = 1.0;
    uint64_t alpha_timer_ns = 55'000;          // alpha decay (on_cut) or update (periodic) period
    uint64_t rate_increase_timer_ns = 55'000;  // T: rate increase period
    uint64_t byte_counter_bytes = 10'000'000;  // B: bytes per increase event; 0 = timer only
    uint32_t fast_recovery_steps = 5;          // F
    uint64_t rate_ai_bps = 40'000'000;         // R_AI: additive increase step
    uint64_t rate_hai_bps = 400'000'000;       // R_HAI: hyper increase step
    uint64_t min_rate_bps = 1'000'000;         // floor
    double min_dec_factor = 0.5;               // one cut never goes below this fraction of Rc
    uint64_t rate_reduce_period_ns = 0;        // on_cnp: at most one cut per period (0 = per
                                               // CNP); check_grid: the grid period
    uint64_t cnp_interval_ns = 50'000;         // NP: at most one CNP per QP per interval
    // Rule switches; the defaults are the paper's state machine.
    AlphaUpdate alpha_update = AlphaUpdate::on_cut;
    CutTiming cut_timing = CutTiming::on_cnp;
    uint64_t check_grid_phase_ns = 0;  // check_grid: extra delay of the grid after the first CNP
    TargetReset target_reset = TargetReset::every_cut;
    IncreaseRule increase_rule = IncreaseRule::qcn;
    RateRounding rounding = RateRounding::nearest;
    bool scale_to_link = false;
    uint64_t reference_rate_bps = 40'000'000'000;  // the link speed the values were chosen for
};

// `p` with scale_to_link applied for p.line_rate_bps (and scale_to_link cleared, so applying it
// twice changes nothing). DcqcnRp runs on the result.
DcqcnParams scaled_to_link(const DcqcnParams &p);

enum class RpEvent : uint8_t { start, cnp_decrease, fast_recovery, additive, hyper, alpha_decay };
const char *rp_event_name(RpEvent e);

struct RateChange {
    uint64_t t_ns;
    uint64_t rc_bps, rt_bps;
    double alpha;
    RpEvent event;
};

struct RpStats {
    uint64_t cnps = 0, decreases = 0, deferred_cnps = 0;
    uint64_t fast_recovery = 0, additive = 0, hyper = 0, alpha_decays = 0;
};

class DcqcnRp {
  public:
    static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

    DcqcnRp() = default;
    // `trace` (optional, owned by the caller) receives a RateChange on every cut and every
    // increase; alpha-only updates are not traced (they would dominate the file).
    explicit DcqcnRp(const DcqcnParams &p, std::vector<RateChange> *trace = nullptr);

    void on_cnp(uint64_t now_ns);
    // Bytes of payload+headers sent by the QP (drives the byte counter).
    void on_bytes_sent(uint64_t bytes, uint64_t now_ns);
    // Runs every timer that expires at or before now_ns, in time order (alpha ticks included).
    void advance(uint64_t now_ns);
    // The earliest time advance() has something to do that changes the rate (kNever when
    // none): an increase, a deferred cut, a grid check while a CNP waits. Alpha ticks are not
    // events: they change alpha only, which nothing reads before the next cut or increase, and
    // advance() (which every call here starts with) applies the ticks due before those in
    // time order, so the trajectory is the same whether or not the caller wakes for each tick.
    // (NVIDIA's profile ticks every 1 us for as long as alpha is non-zero, about 150 ms after a
    // CNP: waking for them cost a simulated host one event per us, 84 per packet at 100 Mb/s.)
    uint64_t next_event_ns() const;
    // The next alpha tick (kNever when no tick can change alpha).
    uint64_t next_alpha_tick_ns() const { return next_alpha_due(); }

    uint64_t rate_bps() const { return rc_; }
    uint64_t target_bps() const { return rt_; }
    double alpha() const { return alpha_; }
    bool active() const { return active_; }
    uint32_t time_stage() const { return t_; }
    uint32_t byte_stage() const { return bc_; }
    const RpStats &stats() const { return st_; }
    const DcqcnParams &params() const { return p_; }

  private:
    void decrease(uint64_t now_ns);
    void increase(uint64_t now_ns);
    void alpha_tick();
    void record(uint64_t now_ns, RpEvent e);
    bool on_grid() const {
        return p_.cut_timing == CutTiming::check_grid && p_.rate_reduce_period_ns;
    }
    uint64_t next_alpha_due() const;

    DcqcnParams p_;
    std::vector<RateChange> *trace_ = nullptr;
    uint64_t rc_ = 0, rt_ = 0;
    double alpha_ = 1.0;
    bool active_ = false;  // a CNP has arrived
    uint32_t t_ = 0, bc_ = 0;
    uint64_t bytes_ = 0;
    uint64_t next_alpha_ns_ = kNever, next_inc_ns_ = kNever;
    uint64_t last_decrease_ns_ = 0;
    bool decreased_once_ = false;
    bool pending_cnp_ = false;    // on_cnp with a period: a CNP waits for the period's end
    bool alpha_cnp_seen_ = false;  // periodic alpha: a CNP arrived since the previous tick
    bool check_cnp_seen_ = false;  // check_grid: a CNP arrived since the previous check
    uint64_t grid0_ns_ = 0;        // check_grid: the first check
    uint64_t next_check_ns_ = kNever;
    RpStats st_;
};

// NP rate limiter of one QP.
struct CnpLimiter {
    uint64_t last_ns = 0;
    bool sent_any = false;
    uint64_t ce_packets = 0, cnps = 0, suppressed = 0;

    // A CE-marked packet arrived: true when a CNP should go out now.
    bool on_ce(uint64_t now_ns, uint64_t interval_ns) {
        ce_packets++;
        if (sent_any && now_ns - last_ns < interval_ns) {
            suppressed++;
            return false;
        }
        sent_any = true;
        last_ns = now_ns;
        cnps++;
        return true;
    }
};

}  // namespace rocesw::roce
