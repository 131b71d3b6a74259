// Reliable-connection QP halves for RDMA WRITE, one message per QP (rocehost maps each flow to
// its own QP). Pure state machines: the caller builds and sends the packets they describe.
//
//  SendQp: segments a message at the path MTU into WRITE first/middle/last (or only), one PSN
//    each, RETH on the first; asks for an ACK on the last packet, every `ack_every` packets and
//    on the packet that fills the window; completes when the ACK for the last PSN arrives; on a
//    NAK (PSN sequence error) or a timeout it goes back to the first unacknowledged PSN
//    (go-back-N).
//    The timeout (transport timer) runs only while a packet that asked for an ACK is
//    unacknowledged: from its send, restarted by progress and by each timeout. A sender whose
//    `ack_every` packets take longer than the RTO at its rate (1 KB packets, ack_every 16 and
//    a 1 ms RTO: below 134 Mb/s; a 100 Mb/s link, or a QP DCQCN cut that far) would otherwise
//    time out before it ever asked for an ACK, go back, resend what had arrived, and never
//    complete. The first packet resent after a timeout asks for an ACK (a probe: a receiver
//    re-acknowledges a duplicate that asks), so the sender learns at once what did arrive.
//    The RTO given is a floor: the timer waits at least the round trip measured as TCP does
//    (RFC 6298: SRTT + 4 RTTVAR, from packets that asked for an ACK and were sent once; Karn's
//    rule drops a sample across a go-back), and each timeout doubles it (at most 64 x) until
//    the next valid sample, so a floor shorter than the round trip (a queue at a slow bottleneck:
//    100 KB is 8 ms at 100 Mb/s) does not resend a window every RTO. With round trips under
//    the floor (every run at 10 Gb/s and up with rocesim's 1 ms) nothing changes.
//  RecvQp: accepts packets in PSN order only; a PSN beyond the expected one is a gap (counted
//    once per gap, with the number of missing packets, answered by one NAK); packets after the
//    gap are discarded (counted) until the sender goes back; old PSNs are duplicates.
#pragma once

#include <cstdint>

#include "roce/packet.h"

namespace rocesw::roce {

// The initial PSN both ends of a QP use (there is no connection handshake in rocehost): a hash
// of the QP number, so runs exercise the 24-bit PSN wrap-around.
inline uint32_t initial_psn(uint32_t qpn) {
    return (qpn * 2654435761u) & kPsnMask;
}

struct Segment {
    uint8_t opcode = 0;
    uint32_t psn = 0;
    uint32_t len = 0;     // payload bytes
    uint64_t offset = 0;  // into the message
    bool ack_req = false;
    bool retransmit = false;
};

class SendQp {
  public:
    SendQp() = default;
    // mtu: payload bytes per packet (the RoCE path MTU: 256..4096). window: at most this many
    // packets sent and not yet acknowledged (0: no limit), which bounds what go-back-N resends.
    SendQp(uint32_t mtu, uint32_t start_psn, uint32_t ack_every = 0, uint32_t window = 0)
        : mtu_(mtu ? mtu : 1024),
          start_psn_(start_psn & kPsnMask),
          ack_every_(ack_every),
          window_(window) {}

    void post_write(uint64_t bytes) {
        bytes_ = bytes;
        npkts_ = bytes ? uint32_t((bytes + mtu_ - 1) / mtu_) : 1;
        next_ = acked_ = high_ = req_high_ = 0;
        done_ = probe_ = false;
        backoff_ = sample_end_ = 0;
    }
    uint32_t packets() const { return npkts_; }
    bool has_segment() const {
        return !done_ && next_ < npkts_ && (!window_ || next_ - acked_ < window_);
    }
    // The next packet, sent at now_ns (a packet asking for an ACK starts the timer when none
    // was waiting).
    Segment next_segment(uint64_t now_ns);
    // An ACK or NAK for this QP. Returns true when it completes the message.
    bool on_ack(uint8_t syndrome, uint32_t psn, uint64_t now_ns);
    // Go back to the first unacknowledged PSN when a packet that asked for an ACK has waited
    // the RTO (rto_ns_for, doubled per timeout until a round-trip sample) without progress.
    // Returns true when it went back.
    bool on_timer(uint64_t now_ns, uint64_t rto_ns);
    // When on_timer(_, rto_ns) would go back: UINT64_MAX while no ACK is awaited.
    uint64_t timeout_at_ns(uint64_t rto_ns) const {
        if (done_ || req_high_ <= acked_) return UINT64_MAX;
        return timer_ns_ + (rto_ns_for(rto_ns) << backoff_);
    }
    // The RTO before backoff: the floor `rto_ns`, or SRTT + 4 RTTVAR when longer.
    uint64_t rto_ns_for(uint64_t rto_ns) const {
        const uint64_t est = srtt_ns_ ? srtt_ns_ + 4 * rttvar_ns_ : 0;
        return est > rto_ns ? est : rto_ns;
    }
    uint64_t srtt_ns() const { return srtt_ns_; }

    bool done() const { return done_; }
    uint32_t acked_packets() const { return acked_; }
    uint32_t next_index() const { return next_; }
    // Payload bytes acknowledged (delivered in order) and sent at least once so far.
    uint64_t acked_bytes() const { return bytes_upto(acked_); }
    uint64_t sent_bytes() const { return bytes_upto(high_); }
    uint64_t retransmitted() const { return retransmitted_; }
    uint64_t naks() const { return naks_; }
    uint64_t timeouts() const { return timeouts_; }
    uint32_t start_psn() const { return start_psn_; }

  private:
    static constexpr uint32_t kMaxBackoff = 6;  // RTO x 64 at most
    uint64_t bytes_upto(uint32_t n) const {
        const uint64_t b = uint64_t(n) * mtu_;
        return b < bytes_ ? b : bytes_;
    }
    uint32_t mtu_ = 1024, start_psn_ = 0, ack_every_ = 0, window_ = 0;
    uint64_t bytes_ = 0;
    uint32_t npkts_ = 0, next_ = 0, acked_ = 0, high_ = 0;  // high_: highest index sent + 1
    uint32_t req_high_ = 0;  // highest index sent asking for an ACK + 1
    bool done_ = true;
    bool probe_ = false;      // the next packet is the first resent after a timeout
    uint32_t backoff_ = 0;    // timeouts since the last round-trip sample (RTO x 2^backoff_)
    uint64_t timer_ns_ = 0;   // the transport timer's start
    // Round-trip sampling: one packet at a time (index + 1, 0: none), sent at sample_ns_.
    uint32_t sample_end_ = 0;
    uint64_t sample_ns_ = 0, srtt_ns_ = 0, rttvar_ns_ = 0;
    void rtt_sample(uint64_t r);
    uint64_t retransmitted_ = 0, naks_ = 0, timeouts_ = 0;
};

struct RecvAction {
    bool accept = false;  // in order: deliver the payload
    bool reply = false;   // send an ACK/NAK with `syndrome`, `psn`, `msn`
    uint8_t syndrome = kSyndromeAck;
    uint32_t psn = 0;
    uint32_t msn = 0;
    bool message_done = false;
};

struct RecvQpStats {
    uint64_t packets = 0, bytes = 0, messages = 0;
    uint64_t psn_gaps = 0;         // gap events (each answered by one NAK)
    uint64_t missing_packets = 0;  // packets missing at the gaps
    uint64_t discarded_out_of_order = 0;
    uint64_t duplicates = 0;
    uint64_t acks_sent = 0, naks_sent = 0;
};

class RecvQp {
  public:
    explicit RecvQp(uint32_t start_psn = 0) : expected_(start_psn & kPsnMask) {}
    RecvAction on_data(uint8_t opcode, uint32_t psn, bool ack_req, uint32_t payload_len);
    uint32_t expected_psn() const { return expected_; }
    const RecvQpStats &stats() const { return st_; }

  private:
    uint32_t expected_;
    uint32_t msn_ = 0;
    bool nak_outstanding_ = false;
    RecvQpStats st_;
};

}  // namespace rocesw::roce
