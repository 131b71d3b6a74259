#include "roce/qp.h"

namespace rocesw::roce {

Segment SendQp::next_segment(uint64_t now_ns) {
    Segment s;
    const uint32_t i = next_;
    s.psn = psn_add(start_psn_, i);
    s.offset = uint64_t(i) * mtu_;
    s.len = uint32_t(i + 1 < npkts_ ? mtu_ : bytes_ - s.offset);
    if (npkts_ == 1)
        s.opcode = uint8_t(Opcode::write_only);
    else if (i == 0)
        s.opcode = uint8_t(Opcode::write_first);
    else if (i + 1 == npkts_)
        s.opcode = uint8_t(Opcode::write_last);
    else
        s.opcode = uint8_t(Opcode::write_middle);
    s.ack_req = i + 1 == npkts_ || (ack_every_ && (i + 1) % ack_every_ == 0) ||
                (window_ && i + 1 - acked_ >= window_) || probe_;
    probe_ = false;
    s.retransmit = i < high_;
    if (s.ack_req) {
        if (req_high_ <= acked_) timer_ns_ = now_ns;  // nothing awaited: the timer starts
        if (i + 1 > req_high_) req_high_ = i + 1;
        if (!s.retransmit && !sample_end_) {
            sample_end_ = i + 1;
            sample_ns_ = now_ns;
        }
    }
    if (s.retransmit) retransmitted_++;
    next_++;
    if (next_ > high_) high_ = next_;
    return s;
}

bool SendQp::on_ack(uint8_t syndrome, uint32_t psn, uint64_t now_ns) {
    if (done_) return false;
    const int32_t idx = psn_diff(psn, start_psn_);
    if ((syndrome & 0xE0) == (kSyndromeNakPsnSeq & 0xE0)) {
        // NAK: `psn` is the PSN the responder expects; everything before it arrived.
        if (idx < 0 || uint32_t(idx) > high_) return false;
        naks_++;
        if (uint32_t(idx) > acked_) acked_ = uint32_t(idx);
        next_ = uint32_t(idx);
        timer_ns_ = now_ns;
        sample_end_ = 0;  // Karn: what was sampled may be resent
        return false;
    }
    if ((syndrome & 0xE0) != 0) return false;  // RNR NAK and others: not produced by rocehost
    // ACK: everything up to and including `psn` arrived.
    if (idx < 0 || uint32_t(idx) >= high_) return false;
    if (uint32_t(idx) + 1 > acked_) {
        acked_ = uint32_t(idx) + 1;
        if (sample_end_ && acked_ >= sample_end_) {
            rtt_sample(now_ns - sample_ns_);
            sample_end_ = 0;
        }
        timer_ns_ = now_ns;
        if (next_ < acked_) next_ = acked_;
    }
    if (acked_ == npkts_) done_ = true;
    return done_;
}

// RFC 6298 2.2-2.3 (alpha 1/8, beta 1/4), in ns.
void SendQp::rtt_sample(uint64_t r) {
    backoff_ = 0;  // Karn: a backed-off RTO stays until a valid sample
    if (!srtt_ns_) {
        srtt_ns_ = r ? r : 1;
        rttvar_ns_ = r / 2;
        return;
    }
    const uint64_t d = srtt_ns_ > r ? srtt_ns_ - r : r - srtt_ns_;
    rttvar_ns_ = (3 * rttvar_ns_ + d) / 4;
    srtt_ns_ = (7 * srtt_ns_ + r) / 8;
    if (!srtt_ns_) srtt_ns_ = 1;
}

bool SendQp::on_timer(uint64_t now_ns, uint64_t rto_ns) {
    if (now_ns < timeout_at_ns(rto_ns)) return false;
    timeouts_++;
    next_ = acked_;
    timer_ns_ = now_ns;
    probe_ = true;
    sample_end_ = 0;  // Karn
    if (backoff_ < kMaxBackoff) backoff_++;
    return true;
}

RecvAction RecvQp::on_data(uint8_t opcode, uint32_t psn, bool ack_req, uint32_t payload_len) {
    RecvAction a;
    const int32_t d = psn_diff(psn, expected_);
    if (d == 0) {
        a.accept = true;
        st_.packets++;
        st_.bytes += payload_len;
        expected_ = psn_add(expected_, 1);
        nak_outstanding_ = false;
        if (opcode_ends_message(opcode)) {
            msn_ = (msn_ + 1) & kPsnMask;
            st_.messages++;
            a.message_done = true;
        }
        if (ack_req || a.message_done) {
            a.reply = true;
            a.syndrome = kSyndromeAck;
            a.psn = psn;
            a.msn = msn_;
            st_.acks_sent++;
        }
        return a;
    }
    if (d > 0) {
        if (!nak_outstanding_) {
            nak_outstanding_ = true;
            st_.psn_gaps++;
            st_.missing_packets += uint64_t(d);
            a.reply = true;
            a.syndrome = kSyndromeNakPsnSeq;
            a.psn = expected_;
            a.msn = msn_;
            st_.naks_sent++;
        }
        st_.discarded_out_of_order++;
        return a;
    }
    // An old PSN: a retransmission of something already received. Re-acknowledge what we
    // have when the sender asks, so a lost ACK does not stall it.
    st_.duplicates++;
    if (ack_req) {
        a.reply = true;
        a.syndrome = kSyndromeAck;
        a.psn = psn_add(expected_, kPsnMask);  // expected - 1
        a.msn = msn_;
        st_.acks_sent++;
    }
    return a;
}

}  // namespace rocesw::roce
