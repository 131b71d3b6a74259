#include <gtest/gtest.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>

#include "fixture.h"

namespace rocesw::test {
namespace {

int lookup4(const Fib &f, uint32_t ip) {
    uint32_t nh;
    return rte_lpm_lookup(f.reader()->lpm4, ip, &nh) == 0 ? int(nh) : -1;
}
int lookup6(const Fib &f, const IpAddr &a) {
    uint32_t nh;
    return rte_lpm6_lookup(f.reader()->lpm6, a.v6.data(), &nh) == 0 ? int(nh) : -1;
}

FibOp add(const char *p, uint32_t nh) {
    return FibOp{FibOp::Type::add_route, *parse_prefix(p), nh, {}};
}
FibOp del(const char *p) {
    return FibOp{FibOp::Type::del_route, *parse_prefix(p), 0, {}};
}

FibParams small() {
    FibParams fp;
    fp.ipv4_max_routes = 256;
    fp.ipv4_tbl8s = 4;
    fp.ipv6_max_routes = 256;
    fp.ipv6_tbl8s = 64;
    fp.max_nexthops = 16;
    return fp;
}

TEST(Fib, LongestPrefixWinsForIpv4AndIpv6) {
    Fib f(unique_name("fibA"), small(), nullptr);
    auto ok = f.commit({add("10.0.0.0/8", 1), add("10.1.0.0/16", 2), add("10.1.2.0/24", 3),
                        add("fd00::/16", 4), add("fd00:1::/32", 5)});
    for (bool b : ok) EXPECT_TRUE(b);
    EXPECT_EQ(lookup4(f, test::v4(10, 1, 2, 3)), 3);
    EXPECT_EQ(lookup4(f, test::v4(10, 1, 3, 3)), 2);
    EXPECT_EQ(lookup4(f, test::v4(10, 2, 3, 3)), 1);
    EXPECT_EQ(lookup4(f, test::v4(11, 0, 0, 1)), -1);
    EXPECT_EQ(lookup6(f, ipa("fd00:1::9")), 5);
    EXPECT_EQ(lookup6(f, ipa("fd00:2::9")), 4);
    EXPECT_EQ(lookup6(f, ipa("fe80::1")), -1);
}

TEST(Fib, BothCopiesStayLevelAcrossCommits) {
    Fib f(unique_name("fibB"), small(), nullptr);
    f.commit({add("10.0.0.0/8", 1)});
    f.commit({add("20.0.0.0/8", 2)});  // lands in the other copy, then both
    f.commit({del("10.0.0.0/8")});
    f.commit({add("30.0.0.0/8", 3)});
    EXPECT_EQ(lookup4(f, test::v4(10, 0, 0, 1)), -1);
    EXPECT_EQ(lookup4(f, test::v4(20, 0, 0, 1)), 2);
    EXPECT_EQ(lookup4(f, test::v4(30, 0, 0, 1)), 3);
    f.commit({});
    EXPECT_EQ(lookup4(f, test::v4(20, 0, 0, 1)), 2);
    EXPECT_EQ(lookup4(f, test::v4(30, 0, 0, 1)), 3);
}

TEST(Fib, FullTableRefusesRouteAndKeepsExistingOnes) {
    Fib f(unique_name("fibC"), small(), nullptr);  // 4 tbl8 groups: 4 distinct /24s beyond /24
    std::vector<FibOp> ops;
    for (int i = 0; i < 8; i++)
        ops.push_back(FibOp{FibOp::Type::add_route,
                            IpPrefix{IpAddr{false, test::v4(10, uint8_t(i), 0, 1), {}}, 32},
                            1,
                            {}});
    auto ok = f.commit(ops);
    int installed = 0;
    for (bool b : ok) installed += b;
    EXPECT_EQ(installed, 4);
    EXPECT_FALSE(ok[7]);
    EXPECT_EQ(lookup4(f, test::v4(10, 0, 0, 1)), 1);
    EXPECT_EQ(lookup4(f, test::v4(10, 7, 0, 1)), -1);
    f.commit({});
    EXPECT_EQ(lookup4(f, test::v4(10, 3, 0, 1)), 1);  // the other copy agrees
}

TEST(Fib, NextHopIdBeyondTableIsRefused) {
    Fib f(unique_name("fibD"), small(), nullptr);
    auto ok = f.commit({add("10.0.0.0/8", 16), FibOp{FibOp::Type::set_nexthop, {}, 99, {}}});
    EXPECT_FALSE(ok[0]);
    EXPECT_FALSE(ok[1]);
}

}  // namespace
}  // namespace rocesw::test
