#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/strings.h"

namespace rocesw {
namespace {

TEST(Join, SeparatesItemsOnlyBetweenThem) {
    EXPECT_EQ(join(std::vector<std::string>{}), "");
    EXPECT_EQ(join(std::vector<std::string>{"a"}), "a");
    EXPECT_EQ(join(std::vector<std::string>{"a", "", "c"}), "a, , c");
    EXPECT_EQ(join(std::vector<std::string_view>{"x", "y"}, "|"), "x|y");
    EXPECT_EQ(join(std::vector<const char *>{"p", "q", "r"}, ""), "pqr");
}

TEST(Join, ProjectsEachItem) {
    EXPECT_EQ(join_n(4, ", ", [](int i) { return std::to_string(i * i); }), "0, 1, 4, 9");
    EXPECT_EQ(join_n(0, ", ", [](int i) { return std::to_string(i); }), "");
    EXPECT_EQ(join_n(1, ", ", [](int i) { return std::to_string(i); }), "0");
    const std::vector<std::string> names = {"p0", "p1", "p2"};
    const std::vector<int> picked = {2, 0};
    EXPECT_EQ(join(picked, " and ", [&](int i) -> const std::string & { return names[i]; }),
              "p2 and p0");
}

}  // namespace
}  // namespace rocesw
