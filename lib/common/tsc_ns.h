// TSC cycles to nanoseconds without a division: the worker loop converts one TSC reading per
// poll, and the straightforward floor(c * 1e9 / hz) takes two 64-bit divides (tens of cycles
// each), about as many cycles as the rest of the loop around Worker::poll_once.
#pragma once

#include <cstdint>

namespace rocesw {

class TscToNs {
  public:
    // hz > 0.
    explicit TscToNs(uint64_t hz)
        : hz_(hz),
          int_(kNsPerS / hz),
          frac_(uint64_t((static_cast<unsigned __int128>(kNsPerS % hz) << 64) / hz)) {}

    // floor(cycles * 1e9 / hz), exactly (the value of the division).
    uint64_t operator()(uint64_t cycles) const {
        using u128 = unsigned __int128;
        // frac_ / 2^64 is 1e9 / hz's fraction rounded down, so this is the floor or one below.
        uint64_t ns = cycles * int_ + uint64_t((u128(cycles) * frac_) >> 64);
        return ns + (u128(ns + 1) * hz_ <= u128(cycles) * kNsPerS);
    }

  private:
    static constexpr uint64_t kNsPerS = 1'000'000'000ull;
    uint64_t hz_, int_, frac_;
};

}  // namespace rocesw
