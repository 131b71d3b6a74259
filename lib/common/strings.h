#pragma once
// Text helpers shared by the config readers, error messages and tests.

#include <functional>
#include <string>
#include <string_view>

namespace rocesw {

// The items of `items`, each through `proj` (anything a std::string can append), separated by
// `sep`: join(names) gives "a, b, c". It appends piece by piece; the one-line form
// `s += (s.empty() ? "" : ", ") + item` builds a temporary by inserting at its front, which
// GCC 12 reports at -O3 and in LTO links as a memcpy overflow (a false -Wstringop-overflow that
// -Werror turns into a failed release build).
template <class Range, class Proj = std::identity>
std::string join(const Range &items, std::string_view sep = ", ", Proj proj = {}) {
    std::string s;
    bool first = true;
    for (const auto &x : items) {
        if (!first) s += sep;
        first = false;
        s += std::invoke(proj, x);
    }
    return s;
}

// join() of f(0), f(1), ..., f(n - 1): join_n(3, "|", [](int i) { return std::to_string(i); })
// gives "0|1|2". (Not join over std::views::iota: clang 14 cannot build libstdc++ 12's ranges.)
template <class F>
std::string join_n(int n, std::string_view sep, F f) {
    std::string s;
    for (int i = 0; i < n; i++) {
        if (i) s += sep;
        s += f(i);
    }
    return s;
}

}  // namespace rocesw
