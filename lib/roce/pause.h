// PFC honoring at an endpoint, as a NIC does it: one pause timer per priority. A PFC frame
// sets, for each priority it enables, the timer to quanta x 512 bit times at the link speed
// from now (a new frame extends or shortens a running pause; 0 quanta resumes at once). An
// 802.3x PAUSE frame pauses every priority. Frames for priorities not configured lossless are
// ignored (counted). Time is an argument.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "pfc/frame.h"

namespace rocesw::roce {

struct PauseEvent {
    uint64_t t_ns;
    uint8_t priority;
    uint16_t quanta;
    uint64_t until_ns;
};

class PauseState {
  public:
    PauseState() = default;
    PauseState(uint64_t rate_bps, uint8_t lossless_mask) : rate_(rate_bps), mask_(lossless_mask) {}

    void on_frame(const MacControlFrame &f, uint64_t now_ns,
                  std::vector<PauseEvent> *trace = nullptr) {
        frames_++;
        for (uint8_t p = 0; p < kNumPriorities; p++) {
            if (!((f.enable >> p) & 1)) continue;
            if (!((mask_ >> p) & 1)) {
                ignored_++;
                continue;
            }
            const uint16_t q = f.pfc ? f.quanta[p] : f.quanta[0];
            const uint64_t until = now_ns + pause_quanta_to_ns(q, rate_);
            if (q == 0) {
                xon_[p]++;
            } else {
                pauses_[p]++;
            }
            if (open_[p] && until_[p] > now_ns) {
                until_[p] = until;  // extend or end the running pause
            } else {
                if (open_[p]) closed_ns_[p] += until_[p] - start_[p];
                open_[p] = q != 0;
                start_[p] = now_ns;
                until_[p] = until;
            }
            if (trace) trace->push_back(PauseEvent{now_ns, p, q, until});
        }
    }
    bool paused(uint8_t prio, uint64_t now_ns) const { return now_ns < until_[prio & 7]; }
    uint64_t paused_until(uint8_t prio) const { return until_[prio & 7]; }
    // Total time priority `prio` has been paused up to now_ns.
    uint64_t paused_ns(uint8_t prio, uint64_t now_ns) const {
        prio &= 7;
        uint64_t t = closed_ns_[prio];
        if (open_[prio]) t += std::min(now_ns, until_[prio]) - std::min(now_ns, start_[prio]);
        return t;
    }
    uint64_t pause_frames(uint8_t prio) const { return pauses_[prio & 7]; }
    uint64_t xon_frames(uint8_t prio) const { return xon_[prio & 7]; }
    uint64_t frames() const { return frames_; }
    uint64_t ignored() const { return ignored_; }

  private:
    uint64_t rate_ = 10'000'000'000;
    uint8_t mask_ = 0xFF;
    std::array<uint64_t, kNumPriorities> until_{}, start_{}, closed_ns_{}, pauses_{}, xon_{};
    std::array<bool, kNumPriorities> open_{};
    uint64_t frames_ = 0, ignored_ = 0;
};

}  // namespace rocesw::roce
