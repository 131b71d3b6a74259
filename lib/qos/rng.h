// The random numbers behind WRED decisions: PCG32 (O'Neill, pcg-random.org, XSH-RR output),
// one generator per worker, seeded from the plan's seed and the worker id, so that a run with
// the same seed and the same packets makes the same decisions. No std::random_device, no
// shared state, a multiply and a few shifts per number.
#pragma once

#include <cstdint>

namespace rocesw {

class Pcg32 {
  public:
    explicit Pcg32(uint64_t seed, uint64_t stream = 0) : inc_(stream << 1 | 1) {
        next();
        state_ += seed;
        next();
    }
    uint32_t next() {
        uint64_t old = state_;
        state_ = old * 6364136223846793005ull + inc_;
        auto xorshifted = uint32_t(((old >> 18) ^ old) >> 27);
        auto rot = uint32_t(old >> 59);
        return (xorshifted >> rot) | (xorshifted << ((32 - rot) & 31));
    }

  private:
    uint64_t state_ = 0;
    uint64_t inc_;
};

}  // namespace rocesw
