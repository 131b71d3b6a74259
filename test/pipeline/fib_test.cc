#include <gtest/gtest.h>
#include <rte_malloc.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "fixture.h"

namespace rocesw::test {
namespace {

// The next-hop id the worker would use for `ip`, -1 for a miss.
int lookup4(const Fib &f, uint32_t ip) {
    uint32_t nh;
    fib_lookup4_bulk(f.reader(), &ip, &nh, 1);
    return nh == kNoRouteNh ? -1 : int(nh);
}
int lookup6(const Fib &f, const IpAddr &a) {
    uint8_t ip[1][16];
    std::memcpy(ip[0], a.v6.data(), 16);
    uint32_t nh;
    fib_lookup6_bulk(f.reader(), ip, &nh, 1);  // as the worker does
    return nh == kNoRouteNh ? -1 : int(nh);
}

// EAL memory of this process that pages are resident for: --no-huge memory is a shared memfd
// mapping, counted as RssShmem.
long rss_shmem_kb() {
    FILE *f = std::fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "RssShmem: %ld", &kb) == 1) break;
    if (f) std::fclose(f);
    return kb;
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

// Compact (RIB-only) tables answer every lookup as the DIR-24-8/lpm6 ones do, default routes
// included, across copies, and take a fraction of the memory.
TEST(Fib, CompactTablesLookUpAlike) {
    FibParams cp = small();
    cp.compact = true;
    Fib full(unique_name("fibF"), small(), nullptr), compact(unique_name("fibK"), cp, nullptr);
    const std::vector<FibOp> ops = {add("0.0.0.0/0", 7),      add("10.0.0.0/8", 1),
                                    add("10.1.0.0/16", 2),    add("10.1.2.0/24", 3),
                                    add("10.1.2.3/32", 6),    add("::/0", 8),
                                    add("fd00::/16", 4),      add("fd00:1::/32", 5)};
    for (Fib *f : {&full, &compact}) {
        for (bool b : f->commit(ops)) EXPECT_TRUE(b);
        f->commit({del("10.1.0.0/16")});  // the other copy, then both
    }
    for (uint32_t ip : {test::v4(10, 1, 2, 3), test::v4(10, 1, 2, 4), test::v4(10, 1, 3, 3),
                        test::v4(10, 2, 3, 3), test::v4(11, 0, 0, 1)})
        EXPECT_EQ(lookup4(compact, ip), lookup4(full, ip)) << std::hex << ip;
    EXPECT_EQ(lookup4(compact, test::v4(10, 1, 3, 3)), 1);
    EXPECT_EQ(lookup4(compact, test::v4(11, 0, 0, 1)), 7);
    for (const char *a : {"fd00:1::9", "fd00:2::9", "fe80::1"})
        EXPECT_EQ(lookup6(compact, ipa(a)), lookup6(full, ipa(a))) << a;
    EXPECT_EQ(lookup6(compact, ipa("fe80::1")), 8);
    EXPECT_LT(fib_memory_bytes(cp) * 100, fib_memory_bytes(small()));
}

// One copy (the simulator's single thread): commits change the tables in place, adds and
// deletes answer as with two copies, and the memory is half.
TEST(Fib, SingleCopyCommitsInPlace) {
    FibParams sp = small();
    sp.compact = true;
    sp.single_copy = true;
    Fib f(unique_name("fib1"), sp, nullptr);
    const FibTables *t = f.reader();
    for (bool b : f.commit({add("10.0.0.0/8", 1), add("10.1.0.0/16", 2), add("fd00::/16", 4)}))
        EXPECT_TRUE(b);
    EXPECT_EQ(f.reader(), t);  // the same tables, changed in place
    EXPECT_EQ(lookup4(f, test::v4(10, 1, 2, 3)), 2);
    f.commit({del("10.1.0.0/16")});
    EXPECT_EQ(lookup4(f, test::v4(10, 1, 2, 3)), 1);
    EXPECT_EQ(lookup6(f, ipa("fd00:1::9")), 4);
    FibParams two = sp;
    two.single_copy = false;
    EXPECT_EQ(2 * fib_memory_bytes(sp), fib_memory_bytes(two));
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
    // rte_fib rounds the tbl8 groups up to a multiple of 64. A /32 in a /24 with no route
    // longer than /24 yet takes one group, so 64 distinct /24s take them all.
    Fib f(unique_name("fibC"), small(), nullptr);
    std::vector<FibOp> ops;
    for (int i = 0; i < 70; i++)
        ops.push_back(FibOp{FibOp::Type::add_route,
                            IpPrefix{IpAddr{false, test::v4(10, uint8_t(i), 0, 1), {}}, 32},
                            1,
                            {}});
    auto ok = f.commit(ops);
    int installed = 0;
    for (bool b : ok) installed += b;
    EXPECT_EQ(installed, 64);
    EXPECT_FALSE(ok[69]);
    EXPECT_EQ(lookup4(f, test::v4(10, 0, 0, 1)), 1);
    EXPECT_EQ(lookup4(f, test::v4(10, 69, 0, 1)), -1);
    f.commit({});
    EXPECT_EQ(lookup4(f, test::v4(10, 3, 0, 1)), 1);  // the other copy agrees
    EXPECT_EQ(lookup4(f, test::v4(10, 69, 0, 1)), -1);
    // A second /32 in a /24 that already has a group needs none.
    EXPECT_TRUE(f.commit({add("10.3.0.2/32", 2)})[0]);
    EXPECT_EQ(lookup4(f, test::v4(10, 3, 0, 2)), 2);
}

TEST(Fib, RouteCapacityRefusesRouteAndKeepsExistingOnes) {
    // 256 routes: rte_rib has 2 nodes per route, enough for any 256 prefixes.
    Fib f(unique_name("fibE"), small(), nullptr);
    std::vector<FibOp> ops;
    for (uint32_t i = 0; i < 1024; i++)
        ops.push_back(FibOp{FibOp::Type::add_route,
                            IpPrefix{IpAddr{false, (20u << 24) + (i << 8), {}}, 24},
                            1 + i % 15,
                            {}});
    auto ok = f.commit(ops);
    uint32_t installed = 0;
    for (bool b : ok) installed += b;
    EXPECT_GE(installed, 256u);
    EXPECT_LT(installed, 1024u);
    f.commit({});
    for (uint32_t i = 0; i < 1024; i++)
        EXPECT_EQ(lookup4(f, (20u << 24) + (i << 8) + 1), ok[i] ? int(1 + i % 15) : -1) << i;
}

TEST(Fib, Ipv4DefaultRoute) {
    Fib f(unique_name("fibF"), small(), nullptr);
    EXPECT_TRUE(f.commit({add("0.0.0.0/0", 7), add("10.0.0.0/8", 1)})[0]);
    EXPECT_EQ(lookup4(f, test::v4(10, 1, 2, 3)), 1);
    EXPECT_EQ(lookup4(f, test::v4(192, 0, 2, 1)), 7);
    f.commit({del("0.0.0.0/0")});
    EXPECT_EQ(lookup4(f, test::v4(192, 0, 2, 1)), -1);
    f.commit({});
    EXPECT_EQ(lookup4(f, test::v4(192, 0, 2, 1)), -1);
}

// rte_lpm6 refuses depth 0: "::/0" lives beside it and a miss reads it, in both copies.
TEST(Fib, Ipv6DefaultRoute) {
    Fib f(unique_name("fibD6"), small(), nullptr);
    EXPECT_TRUE(f.commit({add("::/0", 9), add("fd00:1::/32", 1)})[0]);
    EXPECT_EQ(lookup6(f, ipa("fd00:1::5")), 1);
    EXPECT_EQ(lookup6(f, ipa("2001:db8::1")), 9);
    f.commit({});
    EXPECT_EQ(lookup6(f, ipa("2001:db8::1")), 9);
    const auto ok = f.commit({del("::/0")});
    EXPECT_TRUE(ok[0]);
    EXPECT_EQ(lookup6(f, ipa("2001:db8::1")), -1);
    f.commit({});
    EXPECT_EQ(lookup6(f, ipa("2001:db8::1")), -1);
    EXPECT_FALSE(f.commit({del("::/0")})[0]);  // nothing to delete
}

TEST(Fib, RouteToTheMissIdIsRefused) {
    Fib f(unique_name("fibG"), small(), nullptr);
    EXPECT_FALSE(f.commit({add("10.0.0.0/8", kNoRouteNh)})[0]);
}

// A large table: 200 000 /24s from 32.0.0.0 up (32.0.0.0 .. 35.13.63.0), with /8, /16 and /32
// routes over and inside them, installed in one commit (both copies). Checks a hit at every
// depth, misses, and that a delete uncovers the next shorter route. Prints the install rate;
// no timing assertion.
TEST(Fib, LargeTableWithOverlappingRoutes) {
    constexpr uint32_t kN = 200000;
    FibParams fp;
    fp.ipv4_max_routes = 1u << 18;
    fp.ipv4_tbl8s = 1024;
    fp.ipv6_max_routes = 256;
    fp.ipv6_tbl8s = 64;
    fp.max_nexthops = 1024;
    Fib f(unique_name("fibL"), fp, nullptr);
    auto id24 = [](uint32_t i) { return 10 + i % 900; };  // 10..909
    auto a24 = [](uint32_t i) { return (32u << 24) + (i << 8); };
    auto route = [](uint32_t a, uint8_t len, uint32_t nh) {
        return FibOp{FibOp::Type::add_route, IpPrefix{IpAddr{false, a, {}}, len}, nh, {}};
    };
    std::vector<FibOp> ops;
    ops.reserve(kN + 200);
    for (uint32_t i = 0; i < kN; i++) ops.push_back(route(a24(i), 24, id24(i)));
    ops.push_back(add("32.0.0.0/8", 1000));    // under 65 536 /24s: only seen after deletes
    ops.push_back(add("32.0.0.0/16", 1001));   // the same
    ops.push_back(add("35.13.0.0/16", 1002));  // /24s cover 35.13.0-63, the /16 the rest
    ops.push_back(add("35.0.0.0/8", 1003));    // 35.14.0.0 and up
    ops.push_back(add("36.0.0.0/16", 1004));   // beside the /24s
    for (uint32_t k = 0; k < 128; k++) ops.push_back(route(a24(k * 1000) + 7, 32, 1005 + k % 8));
    ops.push_back(add("35.13.200.9/32", 1020));  // inside the /16 only
    ops.push_back(add("36.0.0.0/32", 1021));     // inside a /16 beside the /24s
    auto t0 = std::chrono::steady_clock::now();
    auto ok = f.commit(ops);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ info     ] %zu routes installed in %.2f s: %.0f routes/s (two copies)\n",
                ops.size(), s, ops.size() / s);
    for (size_t i = 0; i < ok.size(); i++) ASSERT_TRUE(ok[i]) << i;

    auto check_all = [&] {
        std::vector<uint32_t> dst(kN), nh(kN);
        for (uint32_t i = 0; i < kN; i++) dst[i] = a24(i) + 1;
        for (uint32_t off = 0; off < kN; off += 256)  // bursts, as the worker looks up
            fib_lookup4_bulk(f.reader(), &dst[off], &nh[off], std::min(256u, kN - off));
        uint32_t wrong = 0;
        for (uint32_t i = 0; i < kN; i++) wrong += nh[i] != id24(i);
        EXPECT_EQ(wrong, 0u);
    };
    auto check_depths = [&] {
        EXPECT_EQ(lookup4(f, test::v4(32, 0, 0, 7)), 1005);           // /32 over a /24
        EXPECT_EQ(lookup4(f, test::v4(32, 0, 0, 8)), int(id24(0)));   // its /24
        EXPECT_EQ(lookup4(f, a24(127000) + 7), int(1005 + 127 % 8));  // the last /32
        EXPECT_EQ(lookup4(f, a24(127000) + 6), int(id24(127000)));
        EXPECT_EQ(lookup4(f, a24(kN - 1) + 255), int(id24(kN - 1)));  // last /24
        EXPECT_EQ(lookup4(f, a24(kN)), 1002);                         // 35.13.64.0: the /16
        EXPECT_EQ(lookup4(f, test::v4(35, 13, 200, 9)), 1020);        // /32 in the /16
        EXPECT_EQ(lookup4(f, test::v4(35, 13, 200, 10)), 1002);
        EXPECT_EQ(lookup4(f, test::v4(35, 14, 0, 0)), 1003);  // the /8
        EXPECT_EQ(lookup4(f, test::v4(35, 255, 255, 255)), 1003);
        EXPECT_EQ(lookup4(f, test::v4(36, 0, 0, 0)), 1021);
        EXPECT_EQ(lookup4(f, test::v4(36, 0, 0, 1)), 1004);
        EXPECT_EQ(lookup4(f, test::v4(36, 1, 0, 0)), -1);  // misses
        EXPECT_EQ(lookup4(f, test::v4(31, 255, 255, 255)), -1);
        EXPECT_EQ(lookup4(f, test::v4(8, 8, 8, 8)), -1);
    };
    check_all();
    check_depths();
    f.commit({});  // the other copy
    check_all();
    check_depths();

    // Deletes uncover the covering route: /32 -> /24 -> /16 -> /8 -> miss.
    f.commit({del("32.0.0.7/32")});
    EXPECT_EQ(lookup4(f, test::v4(32, 0, 0, 7)), int(id24(0)));
    f.commit({del("32.0.0.0/24")});
    EXPECT_EQ(lookup4(f, test::v4(32, 0, 0, 7)), 1001);
    EXPECT_EQ(lookup4(f, test::v4(32, 0, 1, 7)), int(id24(1)));  // neighbours untouched
    f.commit({del("32.0.0.0/16")});
    EXPECT_EQ(lookup4(f, test::v4(32, 0, 0, 7)), 1000);
    f.commit({del("32.0.0.0/8")});
    EXPECT_EQ(lookup4(f, test::v4(32, 0, 0, 7)), -1);
    f.commit({});
    EXPECT_EQ(lookup4(f, test::v4(32, 0, 0, 7)), -1);  // both copies
    EXPECT_EQ(lookup4(f, test::v4(32, 0, 1, 7)), int(id24(1)));
    // Deleting what is not there fails and changes nothing.
    EXPECT_FALSE(f.commit({del("32.0.0.0/24")})[0]);
    EXPECT_EQ(lookup4(f, test::v4(35, 13, 0, 1)), int(id24(kN - 64)));
}

// fib_memory_bytes (EAL -m sizing) against what creating the Fib takes from the EAL heap.
TEST(Fib, MemoryEstimateCoversTheAllocation) {
    FibParams fp;
    fp.ipv4_max_routes = 1u << 17;
    fp.ipv4_tbl8s = 1024;
    fp.ipv6_max_routes = 1024;
    fp.ipv6_tbl8s = 256;
    fp.max_nexthops = 4096;
    rte_malloc_socket_stats before{}, after{};
    ASSERT_EQ(rte_malloc_get_socket_stats(0, &before), 0);
    auto f = std::make_unique<Fib>(unique_name("fibM"), fp, nullptr);
    ASSERT_EQ(rte_malloc_get_socket_stats(0, &after), 0);
    const uint64_t used = after.heap_allocsz_bytes - before.heap_allocsz_bytes;
    const uint64_t est = fib_memory_bytes(fp);
    std::printf("[ info     ] Fib heap use %.1f MiB, estimate %.1f MiB\n", used / 1048576.0,
                est / 1048576.0);
    EXPECT_LE(used, est);
    EXPECT_GE(used, est * 9 / 10);  // the estimate follows the tables, not a blanket margin
}

TEST(Fib, NextHopIdBeyondTableIsRefused) {
    Fib f(unique_name("fibD"), small(), nullptr);
    auto ok = f.commit({add("10.0.0.0/8", 16), FibOp{FibOp::Type::set_nexthop, {}, 99, {}}});
    EXPECT_FALSE(ok[0]);
    EXPECT_FALSE(ok[1]);
}

// Like free_tbl8s4 (fixture.h) for IPv6: /64s in distinct /32s (fd77:i::/64) the table still
// takes, until the first one it refuses.
int free_v6_routes(Fib &f) {
    for (int n = 0; n < 4096; n++) {
        IpAddr a = ipa("fd77::");
        a.v6[2] = uint8_t(n >> 8);
        a.v6[3] = uint8_t(n);
        if (!f.commit({FibOp{FibOp::Type::add_route, IpPrefix{a, 64}, 1, {}}})[0]) return n;
    }
    return -1;
}

// Regression (DPDK 22.11 DIR-24-8, fib.cc add4): a route longer than /24 with the next hop of
// the route covering it, added and deleted, made DPDK's count of /24s holding such routes wrap
// below zero: every later one in a /24 without one was refused, itself included.
TEST(Fib, RouteLongerThan24WithItsCoversNextHopCanComeAndGo) {
    Fib f(unique_name("fibR"), small(), nullptr);
    ASSERT_TRUE(f.commit({add("10.0.0.0/16", 1)})[0]);
    for (int k = 0; k < 3; k++) {
        EXPECT_TRUE(f.commit({add("10.0.1.0/25", 1)})[0]) << k;
        EXPECT_EQ(lookup4(f, test::v4(10, 0, 1, 5)), 1);
        EXPECT_TRUE(f.commit({del("10.0.1.0/25")})[0]) << k;
    }
    EXPECT_TRUE(f.commit({add("10.0.1.0/25", 2)})[0]);  // another next hop: a tbl8 group
    EXPECT_EQ(lookup4(f, test::v4(10, 0, 1, 5)), 2);
    EXPECT_EQ(lookup4(f, test::v4(10, 0, 1, 200)), 1);
    EXPECT_TRUE(f.commit({del("10.0.1.0/25")})[0]);
    f.commit({});
    EXPECT_EQ(lookup4(f, test::v4(10, 0, 1, 5)), 1);  // both copies
    EXPECT_EQ(free_tbl8s4(f), 64);
}

// Adding and removing the same routes again and again gives every pooled object back: after K
// cycles each copy holds as many rte_rib/rte_rib6 nodes as before, the EAL heap as many bytes,
// and the table takes exactly as many more routes as a fresh one with the same routes (tbl8
// groups of rte_fib and rte_lpm6, rte_lpm6 rules). The churned routes cover the cases: /24s
// (nodes, branching nodes), routes longer than /24 with their cover's next hop and with another,
// with no cover, overlapping routes, next hops that change between cycles, IPv6 /48 to /128.
TEST(Fib, RouteChurnReturnsEveryObject) {
    for (bool compact : {false, true}) {
        SCOPED_TRACE(compact ? "compact" : "DIR-24-8 and lpm6");
        FibParams fp = small();
        fp.compact = compact;
        const std::vector<FibOp> base = {add("10.0.0.0/16", 1),  add("10.0.1.0/24", 2),
                                         add("10.0.1.1/32", 3),  add("10.0.1.2/32", 4),
                                         add("fd00::/16", 1),    add("fd00:1::/64", 2),
                                         add("fd00:1::1/128", 3)};
        Fib fresh(unique_name("fibN"), fp, nullptr), f(unique_name("fibN"), fp, nullptr);
        for (Fib *x : {&fresh, &f})
            for (bool b : x->commit(base)) ASSERT_TRUE(b);
        f.commit({});
        const FibUsage u0 = f.usage(0), u1 = f.usage(1);
        rte_malloc_socket_stats h0{}, h1{};
        ASSERT_EQ(rte_malloc_get_socket_stats(0, &h0), 0);
        for (int k = 0; k < 50; k++) {
            const uint32_t nh = 5 + k % 2;  // alternates: the second add of a route modifies it
            std::vector<FibOp> adds, dels;
            auto churn = [&](const char *p, uint32_t id) {
                adds.push_back(add(p, id));
                dels.push_back(del(p));
            };
            for (int i = 0; i < 20; i++) {
                const std::string p = "20.0." + std::to_string(i * 3) + ".0/24";
                churn(p.c_str(), nh);
            }
            churn("20.0.0.0/16", 1);    // covers the /24s: a branching node becomes a route
            churn("10.0.1.128/25", 2);  // the cover's (10.0.1.0/24) next hop
            churn("10.0.1.7/32", 2);    // likewise, the /24 already has a longer route
            churn("10.0.3.0/30", 1);    // the /16's next hop, a /24 with no longer route
            churn("10.0.4.5/32", nh);   // another next hop: a tbl8 group
            churn("40.0.0.1/32", nh);   // no cover
            churn("40.0.1.0/28", nh);
            churn("fd00:2::/48", nh);
            churn("fd00:1::/80", 2);  // the cover's next hop
            churn("fd00:1::7/128", nh);
            churn("fd00:3::1/128", nh);
            for (bool b : f.commit(adds)) ASSERT_TRUE(b) << k;
            EXPECT_EQ(lookup4(f, test::v4(10, 0, 4, 5)), int(nh));
            EXPECT_EQ(lookup4(f, test::v4(10, 0, 1, 200)), 2);
            for (bool b : f.commit(dels)) ASSERT_TRUE(b) << k;
        }
        f.commit({});
        ASSERT_EQ(rte_malloc_get_socket_stats(0, &h1), 0);
        EXPECT_EQ(h1.heap_allocsz_bytes, h0.heap_allocsz_bytes);
        EXPECT_EQ(f.usage(0), u0);
        EXPECT_EQ(f.usage(1), u1);
        // 10.0.0.0/16 and 10.0.1.0/24 and the /32s in it, two branching nodes at most.
        EXPECT_GE(u0.v4_nodes, 4u);
        EXPECT_LE(u0.v4_nodes, 6u);
        if (compact) {
            EXPECT_GE(u0.v6_nodes, 3u);
        }
        for (uint32_t ip : {test::v4(10, 0, 1, 1), test::v4(10, 0, 1, 2), test::v4(10, 0, 1, 7),
                            test::v4(10, 0, 1, 200), test::v4(10, 0, 4, 5), test::v4(20, 0, 3, 1),
                            test::v4(40, 0, 0, 1)})
            EXPECT_EQ(lookup4(f, ip), lookup4(fresh, ip)) << ip;
        for (const char *a : {"fd00:1::1", "fd00:1::7", "fd00:2::1", "fd00:3::1"})
            EXPECT_EQ(lookup6(f, ipa(a)), lookup6(fresh, ipa(a))) << a;
        if (compact) continue;  // RIB-only: no tbl8 groups
        // One /24 holds routes longer than /24 (10.0.1.0/24): 63 of the 64 groups are free.
        EXPECT_EQ(free_tbl8s4(f), 63);
        EXPECT_EQ(free_tbl8s4(fresh), 63);
        const int v6_free = free_v6_routes(fresh);
        EXPECT_GT(v6_free, 0);
        EXPECT_EQ(free_v6_routes(f), v6_free);
    }
}

// Why the EAL memory of roceswd (RssShmem) creeps up under route churn, and that it is bounded
// (doc/testing.md, soak): rte_rib takes its nodes from a mempool without a cache, i.e. from a
// FIFO ring. Each freed node is written to the next ring slot, so churn walks the whole ring,
// and the slots the pool's creation did not fill (the ring is the power of two above the pool)
// are touched once, 8 bytes per freed node and copy. The roceswd default size: a 131 200-node
// pool per copy in a 262 144-slot ring, at most 2 x 1 MiB. Measured once around; then nothing.
TEST(Fib, ChurnTouchesTheNodePoolRingsOnceAround) {
    FibParams fp;
    fp.ipv4_max_routes = 65536 + 64;  // what roceswd's defaults give
    fp.ipv6_max_routes = 1024;
    fp.ipv6_tbl8s = 64;
    fp.max_nexthops = 1024;
    Fib f(unique_name("fibP"), fp, nullptr);
    const uint64_t pool = 2ull * fp.ipv4_max_routes;
    uint64_t ring = 1;  // rte_mempool's ring: the power of two above the pool (262 144 here)
    while (ring < pool + 1) ring <<= 1;
    const uint64_t bound_kb = 2 * (ring - pool) * 8 / 1024 + 2 * 4;  // + a partial page each
    std::vector<FibOp> adds, dels;
    for (uint32_t i = 0; i < 50; i++) {
        IpPrefix p{IpAddr{false, (20u << 24) + (i << 8), {}}, 24};
        adds.push_back(FibOp{FibOp::Type::add_route, p, 1 + i % 7, {}});
        dels.push_back(FibOp{FibOp::Type::del_route, p, 0, {}});
    }
    ASSERT_TRUE(f.commit({add("10.0.0.0/8", 3)})[0]);
    const FibUsage u0 = f.usage(0);
    // A cycle frees at least the 50 routes' nodes: enough cycles to wrap the ring.
    const int round = int((ring - pool) / 50) + 1;
    const long kb0 = rss_shmem_kb();
    for (int k = 0; k < round; k++) {
        f.commit(adds);
        f.commit(dels);
    }
    const long kb1 = rss_shmem_kb();
    for (int k = 0; k < round; k++) {
        f.commit(adds);
        f.commit(dels);
    }
    const long kb2 = rss_shmem_kb();
    std::printf(
        "[ info     ] %d route changes: EAL memory (RssShmem) %+ld kB (at most %lu: the "
        "rings' free slots); the next %d: %+ld kB\n",
        100 * round, kb1 - kb0, (unsigned long)bound_kb, 100 * round, kb2 - kb1);
    EXPECT_LE(kb1 - kb0, long(bound_kb));
    EXPECT_LE(kb2 - kb1, 0);  // nothing newly touched (reclaim could only lower it)
    EXPECT_EQ(f.usage(0), u0);
    EXPECT_EQ(f.usage(1), u0);
}

}  // namespace
}  // namespace rocesw::test
