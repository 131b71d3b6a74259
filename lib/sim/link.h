// A full-duplex point-to-point link: two independent directions, each with a rate (bit/s) and
// a propagation delay (ps). Serialisation happens at the sender.
//
// Wire model. A frame of L bytes (L counts the Ethernet header and FCS, as a NIC reports its
// length plus 4) occupies the wire for L + 20 bytes: preamble 7 + SFD 1 + inter-frame gap 12
// (kWireOverheadBytes). Its serialisation time is (L + 20) * 8 / rate seconds; its last bit
// reaches the peer `delay` later (store-and-forward: the receiver sees the frame when it has
// all of it). So, for a frame handed to an idle wire at t:
//     start = t, end = t + (L + 20) * 8 * 1e12 / rate  [ps], arrival = end + delay.
//
// Exactness. Times are integer picoseconds. Where 8e12 / rate is not an integer (e.g. 3 Gb/s)
// the sub-picosecond remainder is carried from one frame to the next while the wire stays
// busy, so after any number of back-to-back frames the end time is exactly
// floor(start + total_bits * 1e12 / rate): no drift. When the wire goes idle the remainder is
// dropped (the next frame starts on a whole picosecond, at the time it was handed over).
//
// Up/down. A frame handed to a down direction is dropped and counted (frames_dropped_down).
// Frames already on the wire when the link goes down are lost too: each transmission carries
// the direction's generation, bumped on every down; `delivers(gen)` at arrival says whether
// the frame survived (the engine counts the ones that did not with count_lost_in_flight()).
//
// Errors. `loss_rate` (HPCC's per-link error_rate) drops frames at the receiver with that
// probability, from the direction's own seeded generator, so a run stays deterministic.
#pragma once

#include <cstdint>

#include "sim/event_queue.h"

namespace rocesw::sim {

constexpr uint32_t kWireOverheadBytes = 20;  // preamble 7 + SFD 1 + inter-frame gap 12

struct LinkDirectionConfig {
    uint64_t rate_bps = 0;   // bit/s, > 0
    TimePs delay_ps = 0;     // propagation delay
    double loss_rate = 0;    // probability a frame is lost (corrupted), 0..1
    uint64_t loss_seed = 0;  // seed of this direction's loss generator
};

// Serialisation time of `frame_bytes` (without the 20 overhead bytes) at `rate_bps`, in ps,
// rounded down. (Exact per-frame values; the link itself carries the remainder.)
constexpr TimePs serialisation_ps(uint64_t frame_bytes, uint64_t rate_bps) {
    return (frame_bytes + kWireOverheadBytes) * 8 * kPsPerS / rate_bps;
}

struct Transmission {
    bool sent = false;   // false: dropped (link down)
    bool lost = false;   // sent, but lost to the error model: the frame never arrives
    TimePs start = 0;    // first bit on the wire
    TimePs end = 0;      // last bit (plus IFG) on the wire: the wire is free again
    TimePs arrival = 0;  // last bit at the receiver: end + delay
    uint32_t generation = 0;
};

class LinkDirection {
  public:
    LinkDirection() = default;
    explicit LinkDirection(const LinkDirectionConfig &c)
        : cfg_(c), rng_(c.loss_seed ^ 0x6A09E667F3BCC909ull) {}

    const LinkDirectionConfig &config() const { return cfg_; }
    uint64_t rate_bps() const { return cfg_.rate_bps; }
    TimePs delay_ps() const { return cfg_.delay_ps; }

    // When the wire is free: a frame handed over at or after this starts at once. (A frame
    // handed over earlier starts here, behind the one in progress.)
    TimePs free_at() const { return busy_until_; }
    bool idle(TimePs now) const { return now >= busy_until_; }

    // Puts a frame of `frame_bytes` on the wire at max(now, free_at()).
    Transmission transmit(TimePs now, uint32_t frame_bytes) {
        Transmission t;
        t.generation = generation_;
        if (!up_) {
            ++frames_dropped_down_;
            bytes_dropped_down_ += frame_bytes;
            return t;
        }
        if (now > busy_until_) {  // the wire went idle: start on a whole picosecond
            busy_until_ = now;
            rem_ = 0;
        }
        t.start = busy_until_;
        // 128-bit: bits * 1e12 overflows 64 bits above ~2 MB frames; cheap insurance.
        const unsigned __int128 num =
            (unsigned __int128)(uint64_t(frame_bytes) + kWireOverheadBytes) * 8 * kPsPerS + rem_;
        busy_until_ += uint64_t(num / cfg_.rate_bps);
        rem_ = uint64_t(num % cfg_.rate_bps);
        t.end = busy_until_;
        t.arrival = t.end + cfg_.delay_ps;
        t.sent = true;
        busy_ps_ += t.end - t.start;
        ++frames_sent_;
        bytes_sent_ += frame_bytes;
        if (cfg_.loss_rate > 0 && uniform() < cfg_.loss_rate) {
            t.lost = true;
            ++frames_lost_error_;
        }
        return t;
    }

    // Link state. Going down bumps the generation: frames in flight will not be delivered.
    void set_up(bool up) {
        if (up_ && !up) ++generation_;
        up_ = up;
    }
    bool up() const { return up_; }
    uint32_t generation() const { return generation_; }
    // At a frame's arrival: did the link stay up (same generation) since it was sent?
    bool delivers(const Transmission &t) const {
        return !t.lost && t.generation == generation_ && up_;
    }
    void count_lost_in_flight() { ++frames_lost_in_flight_; }

    uint64_t frames_sent() const { return frames_sent_; }
    uint64_t bytes_sent() const { return bytes_sent_; }  // frame bytes, without the overhead
    TimePs busy_ps() const { return busy_ps_; }          // time the wire was occupied
    uint64_t frames_dropped_down() const { return frames_dropped_down_; }
    uint64_t bytes_dropped_down() const { return bytes_dropped_down_; }
    uint64_t frames_lost_in_flight() const { return frames_lost_in_flight_; }
    uint64_t frames_lost_error() const { return frames_lost_error_; }

  private:
    double uniform() {  // SplitMix64, 53 bits
        uint64_t z = (rng_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        return double(z >> 11) * (1.0 / 9007199254740992.0);
    }

    LinkDirectionConfig cfg_{};
    TimePs busy_until_ = 0;
    uint64_t rem_ = 0;  // sub-picosecond remainder, in units of 1/rate_bps ps
    uint64_t rng_ = 0;
    bool up_ = true;
    uint32_t generation_ = 0;
    uint64_t frames_sent_ = 0, bytes_sent_ = 0;
    TimePs busy_ps_ = 0;
    uint64_t frames_dropped_down_ = 0, bytes_dropped_down_ = 0;
    uint64_t frames_lost_in_flight_ = 0, frames_lost_error_ = 0;
};

// Both directions of one cable between (node_a, port_a) and (node_b, port_b).
struct Link {
    uint32_t node_a = 0, node_b = 0;
    uint16_t port_a = 0, port_b = 0;
    LinkDirection a_to_b, b_to_a;

    LinkDirection &from(uint32_t node) { return node == node_a ? a_to_b : b_to_a; }
    void set_up(bool up) {
        a_to_b.set_up(up);
        b_to_a.set_up(up);
    }
    bool up() const { return a_to_b.up() && b_to_a.up(); }
};

}  // namespace rocesw::sim
