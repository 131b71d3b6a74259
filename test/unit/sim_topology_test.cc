#include "sim/topology.h"

#include <gtest/gtest.h>

using namespace rocesw::sim;

namespace {
std::string error_of(std::string_view text) {
    try {
        parse_topology(text, "t.txt");
    } catch (const InputError &e) {
        return e.what();
    }
    return "no error";
}
}  // namespace

TEST(SimUnits, RatesAsNs3WritesThem) {
    EXPECT_EQ(parse_rate_bps("100Gbps"), 100'000'000'000u);
    EXPECT_EQ(parse_rate_bps("25Gbps"), 25'000'000'000u);
    EXPECT_EQ(parse_rate_bps("10Gbps"), 10'000'000'000u);
    EXPECT_EQ(parse_rate_bps("1Gbps"), 1'000'000'000u);
    EXPECT_EQ(parse_rate_bps("2.5Gb/s"), 2'500'000'000u);
    EXPECT_EQ(parse_rate_bps("400Mbps"), 400'000'000u);
    EXPECT_EQ(parse_rate_bps("1GBps"), 8'000'000'000u);
    EXPECT_THROW(parse_rate_bps("100Gbs"), std::invalid_argument);
    EXPECT_THROW(parse_rate_bps("0.5bps"), std::invalid_argument);  // not whole bit/s
    EXPECT_THROW(parse_rate_bps("Gbps"), std::invalid_argument);
    EXPECT_EQ(format_rate(100'000'000'000), "100Gbps");
    EXPECT_EQ(format_rate(2'500'000'000), "2500Mbps");
}

TEST(SimUnits, DelaysAreExactPicoseconds) {
    EXPECT_EQ(parse_delay_ps("1000ns"), 1'000'000u);
    EXPECT_EQ(parse_delay_ps("1us"), 1'000'000u);
    EXPECT_EQ(parse_delay_ps("0.001ms"), 1'000'000u);
    EXPECT_EQ(parse_delay_ps("1.5ns"), 1'500u);
    EXPECT_EQ(parse_delay_ps("0.000001"), 1'000'000u);  // bare number: seconds, as ns-3
    EXPECT_THROW(parse_delay_ps("0.5ps"), std::invalid_argument);
    EXPECT_THROW(parse_delay_ps("1 ns"), std::invalid_argument);
    EXPECT_EQ(format_delay(1'000'000), "1000ns");
    EXPECT_EQ(format_delay(1'500), "1500ps");
}

TEST(SimTopology, ParsesHpccFile) {
    Topology t = load_topology(ROCESW_TEST_DATA "/sim/small_topology.txt");
    EXPECT_EQ(t.node_count(), 6u);
    EXPECT_EQ(t.switch_count(), 2u);
    EXPECT_EQ(t.host_count(), 4u);
    ASSERT_EQ(t.link_count(), 5u);
    EXPECT_TRUE(t.is_switch(4));
    EXPECT_TRUE(t.is_host(0));
    EXPECT_EQ(t.link(1).rate_bps, 25'000'000'000u);
    EXPECT_EQ(t.link(2).delay_ps, 1'000'000u);  // 0.001ms
    EXPECT_EQ(t.link(4).delay_ps, 500'000u);
    // Ports in link order: switch 4 has hosts 0, 1 on ports 0, 1, switch 5 on port 2.
    ASSERT_EQ(t.ports(4).size(), 3u);
    EXPECT_EQ(t.ports(4)[2].peer, 5u);
    EXPECT_EQ(t.ports(4)[2].peer_port, 2u);  // 5's third link
    EXPECT_EQ(t.host_rate_bps(3), 1'000'000'000u);
}

TEST(SimTopology, RoundTripsThroughHpccText) {
    Topology t = load_topology(ROCESW_TEST_DATA "/sim/small_topology.txt");
    Topology u = parse_topology(t.to_hpcc(), "again");
    ASSERT_EQ(u.link_count(), t.link_count());
    for (uint32_t i = 0; i < t.link_count(); ++i) {
        EXPECT_EQ(u.link(i).rate_bps, t.link(i).rate_bps);
        EXPECT_EQ(u.link(i).delay_ps, t.link(i).delay_ps);
        EXPECT_EQ(u.link(i).a, t.link(i).a);
    }
}

TEST(SimTopology, ErrorsNameFileLineAndField) {
    EXPECT_EQ(error_of("3 1 2\n2\n0 2 100Gbs 1000ns 0\n1 2 100Gbps 1000ns 0\n"),
              "t.txt:3: field 3 (rate): '100Gbs' is not a rate (unknown unit 'Gbs'; e.g. "
              "100Gbps, 25Gbps, 10Gbps, 1Gbps)");
    EXPECT_EQ(error_of("3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000xs 0\n"),
              "t.txt:4: field 4 (delay): '1000xs' is not a delay (unknown unit 'xs'; e.g. "
              "1000ns, 1us, 0.001ms)");
    EXPECT_EQ(error_of("3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 7 100Gbps 1000ns 0\n"),
              "t.txt:4: field 2 (b): '7' is not a node id");
    EXPECT_EQ(error_of("3 1 2\n2\n0 2 100Gbps 1000ns 0\n"),
              "t.txt:3: file ends where a link (a b rate delay error_rate) field 1 (a) was "
              "expected");
    EXPECT_EQ(error_of("3 1 1\n5\n"), "t.txt:2: field 1 (switch id): '5' is not a node id (0..2)");
    EXPECT_EQ(error_of("3 x 1\n"),
              "t.txt:1: field 2 (switches): 'x' is not a non-negative integer");
    EXPECT_EQ(error_of("3 1 1\n2\n0 2 100Gbps 1000ns 2\n"),
              "t.txt:3: field 5 (error_rate): '2' is not a probability in [0, 1]");
}

TEST(SimFlows, ParsesHpccFlowFileIgnoringTrailer) {
    Topology t = load_topology(ROCESW_TEST_DATA "/sim/small_topology.txt");
    auto f = load_flows(ROCESW_TEST_DATA "/sim/small_flow.txt", t);
    ASSERT_EQ(f.size(), 3u);
    EXPECT_EQ(f[0].src, 0u);
    EXPECT_EQ(f[0].dst, 1u);
    EXPECT_EQ(f[0].pg, 3u);
    EXPECT_EQ(f[0].dport, 100u);
    EXPECT_EQ(f[0].size_bytes, 1000u);
    EXPECT_EQ(f[0].start_ns, 2'000'000'000u);
    EXPECT_EQ(f[1].start_ns, 2'000'001'000u);
    EXPECT_EQ(f[2].start_ns, 2'500'000'000u);
    EXPECT_EQ(f[2].dport, 200u);
    EXPECT_EQ(f[2].line, 4u);
}

TEST(SimFlows, ErrorsNameFileLineAndField) {
    Topology t = load_topology(ROCESW_TEST_DATA "/sim/small_topology.txt");
    auto err = [&](std::string_view s) {
        try {
            parse_flows(s, "f.txt", t);
        } catch (const InputError &e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(err("1\n0 4 3 100 1000 2\n"),
              "f.txt:2: field 2 (dst): '4' is not a host of the topology");
    EXPECT_EQ(err("1\n0 1 9 100 1000 2\n"), "f.txt:2: field 3 (pg): '9' is above the maximum 7");
    EXPECT_EQ(err("1\n0 1 3 100 1000 2s\n"),
              "f.txt:2: field 6 (start_seconds): '2s' is not a non-negative decimal number of "
              "seconds");
    EXPECT_EQ(err("2\n0 1 3 100 1000 2\n"),
              "f.txt:2: file ends where a flow (src dst pg dport size start_seconds) field 1 "
              "(src) was expected");
    EXPECT_EQ(err("1\n0 0 3 100 1000 2\n"), "f.txt:2: field 2 (dst): '0' equals src");
}

TEST(SimFlows, FormatRoundTrips) {
    Topology t = load_topology(ROCESW_TEST_DATA "/sim/small_topology.txt");
    auto f = load_flows(ROCESW_TEST_DATA "/sim/small_flow.txt", t);
    std::string s = format_flows(f);
    EXPECT_EQ(s.substr(0, s.find('\n', 2) + 1), "3\n0 1 3 100 1000 2.000000000\n");
    auto g = parse_flows(s, "again", t);
    ASSERT_EQ(g.size(), f.size());
    for (size_t i = 0; i < f.size(); ++i) {
        EXPECT_EQ(g[i].start_ns, f[i].start_ns);
        EXPECT_EQ(g[i].size_bytes, f[i].size_bytes);
    }
}
