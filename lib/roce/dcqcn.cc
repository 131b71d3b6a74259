#include "roce/dcqcn.h"

#include <algorithm>
#include <cmath>

namespace rocesw::roce {

const char *rp_event_name(RpEvent e) {
    switch (e) {
        case RpEvent::start:
            return "start";
        case RpEvent::cnp_decrease:
            return "cnp";
        case RpEvent::fast_recovery:
            return "fast_recovery";
        case RpEvent::additive:
            return "additive";
        case RpEvent::hyper:
            return "hyper";
        case RpEvent::alpha_decay:
            return "alpha";
    }
    return "?";
}

namespace {

// v x num / den without overflow (num, den > 0), truncated.
uint64_t mul_div(uint64_t v, uint64_t num, uint64_t den) {
    return uint64_t((unsigned __int128)v * num / den);
}

}  // namespace

DcqcnParams scaled_to_link(const DcqcnParams &p) {
    DcqcnParams s = p;
    if (!p.scale_to_link || !p.reference_rate_bps || !p.line_rate_bps) return s;
    const uint64_t line = p.line_rate_bps, ref = p.reference_rate_bps;
    s.rate_ai_bps = mul_div(p.rate_ai_bps, line, ref);
    s.rate_hai_bps = mul_div(p.rate_hai_bps, line, ref);
    s.byte_counter_bytes = mul_div(p.byte_counter_bytes, line, ref);
    // A byte counter that scales to nothing would fire on every packet: keep it at least one
    // byte (it stays 0 when it was off).
    if (p.byte_counter_bytes && !s.byte_counter_bytes) s.byte_counter_bytes = 1;
    // The references keep the floor at every speed (HPCC: 1 Gb/s), and so do we, unless it
    // reaches the line rate: then no cut could slow the QP (hpcc-ns3 on a 1 Gb/s lab), and it
    // scales like the steps.
    if (p.min_rate_bps >= line) s.min_rate_bps = mul_div(p.min_rate_bps, line, ref);
    s.scale_to_link = false;
    s.reference_rate_bps = line;
    return s;
}

DcqcnRp::DcqcnRp(const DcqcnParams &p, std::vector<RateChange> *trace)
    : p_(scaled_to_link(p)),
      trace_(trace),
      rc_(p.line_rate_bps),
      rt_(p.line_rate_bps),
      alpha_(p.initial_alpha) {}

void DcqcnRp::record(uint64_t now_ns, RpEvent e) {
    if (trace_) trace_->push_back(RateChange{now_ns, rc_, rt_, alpha_, e});
}

uint64_t DcqcnRp::next_alpha_due() const {
    // A periodic tick with alpha at 0 and no CNP to count changes nothing.
    if (p_.alpha_update == AlphaUpdate::periodic && alpha_ == 0 && !alpha_cnp_seen_)
        return kNever;
    return next_alpha_ns_;
}

uint64_t DcqcnRp::next_event_ns() const {
    uint64_t t = next_inc_ns_;
    if (pending_cnp_) t = std::min(t, last_decrease_ns_ + p_.rate_reduce_period_ns);
    if (check_cnp_seen_) t = std::min(t, next_check_ns_);
    return t;
}

void DcqcnRp::on_cnp(uint64_t now_ns) {
    advance(now_ns);
    st_.cnps++;
    const bool first = !active_;
    active_ = true;
    if (p_.alpha_update == AlphaUpdate::periodic) {
        if (first) {
            alpha_ = p_.initial_alpha;
            next_alpha_ns_ = now_ns + p_.alpha_timer_ns;
        } else {
            alpha_cnp_seen_ = true;
        }
    }
    if (on_grid()) {
        const uint64_t period = p_.rate_reduce_period_ns;
        if (first) grid0_ns_ = now_ns + p_.check_grid_phase_ns + period;
        if (check_cnp_seen_) {
            st_.deferred_cnps++;  // folded into the cut already waiting for its check
            return;
        }
        check_cnp_seen_ = true;
        // The first check after now: a check due at now_ns has already run (advance above).
        next_check_ns_ = now_ns < grid0_ns_
                             ? grid0_ns_
                             : grid0_ns_ + ((now_ns - grid0_ns_) / period + 1) * period;
        return;
    }
    if (p_.rate_reduce_period_ns && decreased_once_ &&
        now_ns < last_decrease_ns_ + p_.rate_reduce_period_ns) {
        if (!pending_cnp_) st_.deferred_cnps++;
        pending_cnp_ = true;
        return;
    }
    decrease(now_ns);
}

void DcqcnRp::decrease(uint64_t now_ns) {
    decreased_once_ = true;
    pending_cnp_ = false;
    last_decrease_ns_ = now_ns;
    st_.decreases++;
    if (p_.target_reset == TargetReset::every_cut || t_ > 0) rt_ = rc_;
    const double cut = double(rc_) * (1.0 - alpha_ / 2);
    const double floor_by_factor = double(rc_) * p_.min_dec_factor;
    const double v = std::max(cut, floor_by_factor);
    const uint64_t rc =
        p_.rounding == RateRounding::truncate ? uint64_t(v) : uint64_t(std::llround(v));
    rc_ = std::max(rc, p_.min_rate_bps);
    if (p_.alpha_update == AlphaUpdate::on_cut) {
        alpha_ = (1 - p_.g) * alpha_ + p_.g;
        next_alpha_ns_ = now_ns + p_.alpha_timer_ns;
    }
    t_ = bc_ = 0;
    bytes_ = 0;
    next_inc_ns_ = now_ns + p_.rate_increase_timer_ns;
    record(now_ns, RpEvent::cnp_decrease);
}

void DcqcnRp::increase(uint64_t now_ns) {
    const uint32_t f = p_.fast_recovery_steps;
    RpEvent e = RpEvent::fast_recovery;
    if (p_.increase_rule == IncreaseRule::hpcc_ns3) {
        const uint32_t k = t_ - 1;  // timer events before this one since the cut
        if (k == f) {
            rt_ += p_.rate_ai_bps;
            e = RpEvent::additive;
        } else if (k > f) {
            rt_ += p_.rate_hai_bps;
            e = RpEvent::hyper;
        }
    } else {
        // Without a byte counter the timer alone drives the stages (item 1 of issue 17: with
        // BC stuck at 0 the QP could never leave additive increase).
        const uint32_t bc = p_.byte_counter_bytes ? bc_ : t_;
        if (std::max(t_, bc) <= f) {
        } else if (std::min(t_, bc) > f) {
            rt_ += uint64_t(std::min(t_, bc) - f) * p_.rate_hai_bps;
            e = RpEvent::hyper;
        } else {
            rt_ += p_.rate_ai_bps;
            e = RpEvent::additive;
        }
    }
    switch (e) {
        case RpEvent::fast_recovery:
            st_.fast_recovery++;
            break;
        case RpEvent::additive:
            st_.additive++;
            break;
        default:
            st_.hyper++;
    }
    rt_ = std::min(rt_, p_.line_rate_bps);
    if (p_.rounding == RateRounding::truncate)
        rc_ = rc_ / 2 + rt_ / 2;
    else
        rc_ = std::min((rt_ + rc_ + 1) / 2, p_.line_rate_bps);
    record(now_ns, e);
    if (rc_ == p_.line_rate_bps && rt_ == p_.line_rate_bps) next_inc_ns_ = kNever;
}

void DcqcnRp::alpha_tick() {
    if (p_.alpha_update == AlphaUpdate::periodic && alpha_cnp_seen_)
        alpha_ = (1 - p_.g) * alpha_ + p_.g;
    else
        alpha_ = (1 - p_.g) * alpha_;
    alpha_cnp_seen_ = false;
    st_.alpha_decays++;
    next_alpha_ns_ += p_.alpha_timer_ns;
}

void DcqcnRp::advance(uint64_t now_ns) {
    if (!active_) return;
    for (;;) {
        const uint64_t dec_at =
            pending_cnp_ ? last_decrease_ns_ + p_.rate_reduce_period_ns : kNever;
        const uint64_t check_at = check_cnp_seen_ ? next_check_ns_ : kNever;
        uint64_t alpha_at = next_alpha_due();
        if (alpha_at == kNever && next_alpha_ns_ <= now_ns) {
            // Ticks that cannot change alpha: keep the grid, skip the work.
            next_alpha_ns_ += ((now_ns - next_alpha_ns_) / p_.alpha_timer_ns + 1) *
                              p_.alpha_timer_ns;
        }
        const uint64_t t = std::min({dec_at, check_at, alpha_at, next_inc_ns_});
        if (t > now_ns) return;
        if (t == alpha_at) {
            alpha_tick();
        } else if (t == next_inc_ns_) {
            next_inc_ns_ += p_.rate_increase_timer_ns;
            t_++;
            increase(t);
        } else if (t == check_at) {
            check_cnp_seen_ = false;
            next_check_ns_ = kNever;
            decrease(t);
        } else {
            decrease(t);
        }
    }
}

void DcqcnRp::on_bytes_sent(uint64_t bytes, uint64_t now_ns) {
    advance(now_ns);
    if (!active_ || !p_.byte_counter_bytes || next_inc_ns_ == kNever ||
        p_.increase_rule == IncreaseRule::hpcc_ns3)
        return;
    bytes_ += bytes;
    while (bytes_ >= p_.byte_counter_bytes && next_inc_ns_ != kNever) {
        bytes_ -= p_.byte_counter_bytes;
        bc_++;
        increase(now_ns);
    }
}

}  // namespace rocesw::roce
