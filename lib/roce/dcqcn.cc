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

DcqcnRp::DcqcnRp(const DcqcnParams &p, std::vector<RateChange> *trace)
    : p_(p), trace_(trace), rc_(p.line_rate_bps), rt_(p.line_rate_bps), alpha_(p.initial_alpha) {}

void DcqcnRp::record(uint64_t now_ns, RpEvent e) {
    if (trace_) trace_->push_back(RateChange{now_ns, rc_, rt_, alpha_, e});
}

uint64_t DcqcnRp::next_event_ns() const {
    uint64_t t = std::min(next_alpha_ns_, next_inc_ns_);
    if (pending_cnp_) t = std::min(t, last_decrease_ns_ + p_.rate_reduce_period_ns);
    return t;
}

void DcqcnRp::on_cnp(uint64_t now_ns) {
    advance(now_ns);
    st_.cnps++;
    if (p_.rate_reduce_period_ns && decreased_once_ &&
        now_ns < last_decrease_ns_ + p_.rate_reduce_period_ns) {
        if (!pending_cnp_) st_.deferred_cnps++;
        pending_cnp_ = true;
        return;
    }
    decrease(now_ns);
}

void DcqcnRp::decrease(uint64_t now_ns) {
    active_ = true;
    decreased_once_ = true;
    pending_cnp_ = false;
    last_decrease_ns_ = now_ns;
    st_.decreases++;
    rt_ = rc_;
    const double cut = double(rc_) * (1.0 - alpha_ / 2);
    const double floor_by_factor = double(rc_) * p_.min_dec_factor;
    uint64_t rc = uint64_t(std::llround(std::max(cut, floor_by_factor)));
    rc_ = std::max(rc, p_.min_rate_bps);
    alpha_ = (1 - p_.g) * alpha_ + p_.g;
    t_ = bc_ = 0;
    bytes_ = 0;
    next_alpha_ns_ = now_ns + p_.alpha_timer_ns;
    next_inc_ns_ = now_ns + p_.rate_increase_timer_ns;
    record(now_ns, RpEvent::cnp_decrease);
}

void DcqcnRp::increase(uint64_t now_ns) {
    const uint32_t f = p_.fast_recovery_steps;
    RpEvent e = RpEvent::fast_recovery;
    if (std::max(t_, bc_) <= f) {
        st_.fast_recovery++;
    } else if (std::min(t_, bc_) > f) {
        rt_ += uint64_t(std::min(t_, bc_) - f) * p_.rate_hai_bps;
        e = RpEvent::hyper;
        st_.hyper++;
    } else {
        rt_ += p_.rate_ai_bps;
        e = RpEvent::additive;
        st_.additive++;
    }
    rt_ = std::min(rt_, p_.line_rate_bps);
    rc_ = std::min((rt_ + rc_ + 1) / 2, p_.line_rate_bps);
    record(now_ns, e);
    if (rc_ == p_.line_rate_bps && rt_ == p_.line_rate_bps) next_inc_ns_ = kNever;
}

void DcqcnRp::advance(uint64_t now_ns) {
    if (!active_) return;
    for (;;) {
        const uint64_t dec_at =
            pending_cnp_ ? last_decrease_ns_ + p_.rate_reduce_period_ns : kNever;
        const uint64_t t = std::min({dec_at, next_alpha_ns_, next_inc_ns_});
        if (t > now_ns) return;
        if (t == dec_at) {
            decrease(t);
        } else if (t == next_alpha_ns_) {
            alpha_ = (1 - p_.g) * alpha_;
            st_.alpha_decays++;
            next_alpha_ns_ += p_.alpha_timer_ns;
        } else {
            next_inc_ns_ += p_.rate_increase_timer_ns;
            t_++;
            increase(t);
        }
    }
}

void DcqcnRp::on_bytes_sent(uint64_t bytes, uint64_t now_ns) {
    advance(now_ns);
    if (!active_ || !p_.byte_counter_bytes || next_inc_ns_ == kNever) return;
    bytes_ += bytes;
    while (bytes_ >= p_.byte_counter_bytes && next_inc_ns_ != kNever) {
        bytes_ -= p_.byte_counter_bytes;
        bc_++;
        increase(now_ns);
    }
}

}  // namespace rocesw::roce
