// DCQCN (Zhu et al., SIGCOMM 2015) for a RoCE endpoint: the reaction point (RP, sender side,
// one per QP) and the notification point (NP, receiver side, one limiter per QP). Virtual time:
// every call takes `now_ns`; nothing reads a clock. Rates are integers in bits per second so
// that tests compare exact trajectories.
//
// RP, per QP, once a first CNP has arrived (before that the QP sends at line rate):
//   CNP        Rt = Rc; Rc = max(Rc x (1 - alpha/2), Rc x min_dec_factor, min_rate);
//              alpha = (1 - g) alpha + g; the stage counters T, BC and the byte count restart,
//              and so do both timers. With rate_reduce_period_ns > 0 (NVIDIA NICs) a CNP that
//              arrives within that period of the previous decrease is applied when it ends.
//   alpha timer  every alpha_timer_ns without a CNP: alpha = (1 - g) alpha.
//   increase   an event each rate_increase_timer_ns (T += 1) and each byte_counter_bytes sent
//              (BC += 1). On an event:
//                max(T, BC) <= F          fast recovery    Rc = (Rt + Rc) / 2
//                min(T, BC) >  F          hyper increase   Rt += (min(T, BC) - F) x R_HAI; then FR
//                otherwise                additive increase Rt += R_AI;                 then FR
//              Rt and Rc are capped at the line rate (Rc rounds up, so it reaches Rt); once both
//              are at line rate the increase timer stops until the next CNP.
// NP: a CE-marked packet of a QP triggers a CNP unless that QP got one less than
//   cnp_interval_ns ago (0: a CNP for every CE packet).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace rocesw::roce {

struct DcqcnParams {
    uint64_t line_rate_bps = 10'000'000'000;  // the QP's ceiling (the host's link speed)
    double g = 1.0 / 256;                     // alpha gain
    double initial_alpha = 1.0;
    uint64_t alpha_timer_ns = 55'000;          // alpha decay period without CNP
    uint64_t rate_increase_timer_ns = 55'000;  // T: rate increase period
    uint64_t byte_counter_bytes = 10'000'000;  // B: bytes per increase event; 0 = timer only
    uint32_t fast_recovery_steps = 5;          // F
    uint64_t rate_ai_bps = 40'000'000;         // R_AI: additive increase step
    uint64_t rate_hai_bps = 400'000'000;       // R_HAI: hyper increase step
    uint64_t min_rate_bps = 1'000'000;         // floor
    double min_dec_factor = 0.5;               // one CNP never cuts below this fraction of Rc
    uint64_t rate_reduce_period_ns = 0;        // at most one decrease per period (0 = per CNP)
    uint64_t cnp_interval_ns = 50'000;         // NP: at most one CNP per QP per interval
};

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
    // `trace` (optional, owned by the caller) receives a RateChange on every rate change and
    // every CNP; alpha-only decays are not traced (they would dominate the file).
    explicit DcqcnRp(const DcqcnParams &p, std::vector<RateChange> *trace = nullptr);

    void on_cnp(uint64_t now_ns);
    // Bytes of payload+headers sent by the QP (drives the byte counter).
    void on_bytes_sent(uint64_t bytes, uint64_t now_ns);
    // Runs every timer that expires at or before now_ns, in time order.
    void advance(uint64_t now_ns);
    // The earliest time advance() has something to do (kNever when idle).
    uint64_t next_event_ns() const;

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
    void record(uint64_t now_ns, RpEvent e);

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
    bool pending_cnp_ = false;
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
