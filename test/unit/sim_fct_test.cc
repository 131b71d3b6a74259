#include "sim/fct.h"

#include <gtest/gtest.h>

#include "sim/topo_gen.h"

using namespace rocesw::sim;

TEST(SimFct, LineFormatIsHpccs) {
    FctRecord r{host_address(0), host_address(1), 10000,  100,
                1'000'000,       2'000'000'000,   90'000, 88'000};
    EXPECT_EQ(format_fct_line(r), "0b000001 0b000101 10000 100 1000000 2000000000 90000 88000\n");
    FctRecord big{host_address(300), host_address(2), 65535, 200, 1ull << 40, 1ull << 50, 7, 8};
    EXPECT_EQ(format_fct_line(big),
              "0b012c01 0b000201 65535 200 1099511627776 1125899906842624 7 8\n");
}

TEST(SimFct, StandaloneFctOnAStarMatchesHpccFormula) {
    // host - switch - host, 100G, 1 us links.
    Topology t = make_star({2, 100'000'000'000, 1 * kPsPerUs});
    EcmpRouting r(t);
    PathInfo p = r.path(0, 1);
    EXPECT_EQ(p.hops, 2u);
    EXPECT_EQ(p.delay_ns, 2000u);
    EXPECT_EQ(p.tx_ns, 160u);  // 2 x 1000 B x 8 / 100G
    EXPECT_EQ(hpcc_base_rtt_ns(p), 4160u);
    // 1 MB: 1000 packets x (1000 + 48) B = 1,048,000 B = 83,840 ns at 100G.
    EXPECT_EQ(standalone_fct_ns(1'000'000, p), 4160u + 83'840u);
    // 1 byte: one packet of 49 B: 3.92 ns -> 3 (integer division, as HPCC).
    EXPECT_EQ(standalone_fct_ns(1, p), 4160u + 3u);
    // Our own wire bytes (62 B of RoCEv2 headers + 20 B overhead) instead of HPCC's 48.
    EXPECT_EQ(standalone_fct_ns(1'000'000, p, {1000, 82}), 4160u + 86'560u);
}

TEST(SimFct, StandaloneFctAcrossAFatTreeUsesEveryHop) {
    // HPCC's fat.txt rates: 100G to hosts, 400G in the fabric, 1 us per link.
    Topology t = make_fat_tree({4, 100'000'000'000, 400'000'000'000, 1 * kPsPerUs});
    EcmpRouting r(t);
    PathInfo p = r.path(0, 15);
    EXPECT_EQ(p.hops, 6u);
    EXPECT_EQ(p.bottleneck_bps, 100'000'000'000u);
    // 2 x 6 us + 2 x 80 ns (100G hops) + 4 x 20 ns (400G hops)
    EXPECT_EQ(hpcc_base_rtt_ns(p), 12'000u + 160u + 80u);
}

TEST(SimFct, SourcePortsStartAt10000PerHost) {
    SourcePorts sp(3);
    EXPECT_EQ(sp.next(0), 10000u);
    EXPECT_EQ(sp.next(0), 10001u);
    EXPECT_EQ(sp.next(2), 10000u);
}

TEST(SimFct, WriterAppendsLines) {
    char *buf = nullptr;
    size_t len = 0;
    std::FILE *f = open_memstream(&buf, &len);
    {
        FctWriter w(f);
        w.write({host_address(0), host_address(1), 10000, 100, 1, 2, 3, 4});
        w.write({host_address(1), host_address(0), 10000, 100, 5, 6, 7, 8});
        EXPECT_EQ(w.lines(), 2u);
    }
    std::fclose(f);
    EXPECT_EQ(std::string(buf, len),
              "0b000001 0b000101 10000 100 1 2 3 4\n0b000101 0b000001 10000 100 5 6 7 8\n");
    free(buf);
}
