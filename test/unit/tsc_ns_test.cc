// TscToNs (lib/common/tsc_ns.h) against the straightforward division it replaces in roceswd's
// clock: the same nanoseconds for every reading.
#include "common/tsc_ns.h"

#include <gtest/gtest.h>

#include <random>

namespace rocesw {
namespace {

uint64_t by_division(uint64_t c, uint64_t hz) {
    return c / hz * 1'000'000'000ull + (c % hz) * 1'000'000'000ull / hz;
}

TEST(TscToNs, EqualsTheDivisionForEveryReading) {
    std::mt19937_64 rng(20);
    for (uint64_t hz : {1'000'000'000ull, 2'994'372'000ull, 3'700'000'000ull, 2'399'999'999ull,
                        999'999'937ull, 100'000'000ull, 1'000'003ull, 12'345'678'901ull}) {
        const TscToNs conv(hz);
        std::vector<uint64_t> cs = {0, 1, hz - 1, hz, hz + 1, 2 * hz - 1, 1ull << 32,
                                    (1ull << 40) + 12345, 1ull << 50, 3'600ull * hz * 24 * 30};
        // around every multiple of hz / 1e9 where the floor steps, and anywhere over a year
        for (int i = 0; i < 200'000; i++) {
            const uint64_t c = rng() % (hz * 3'600ull * 24 * 365);
            cs.push_back(c);
            const uint64_t ns = by_division(c, hz);
            // the cycles on either side of the next nanosecond step
            const auto step = uint64_t((unsigned __int128)(ns + 1) * hz / 1'000'000'000ull);
            cs.push_back(step);
            cs.push_back(step + 1);
        }
        for (uint64_t c : cs) ASSERT_EQ(conv(c), by_division(c, hz)) << "hz " << hz << " c " << c;
    }
}

}  // namespace
}  // namespace rocesw
