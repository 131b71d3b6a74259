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

}  // namespace rocesw
