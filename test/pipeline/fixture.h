// A two-port switch over in-memory ports, driven in virtual time.
//   p0: 02:00:00:00:00:10  10.0.1.1/24  fd00:1::1/64   host h1 10.0.1.2 / fd00:1::2
//   p1: 02:00:00:00:00:11  10.0.2.1/24  fd00:2::1/64   host h2 10.0.2.2 / fd00:2::2
//   static: 10.9.0.0/16 via 10.0.2.2 (resolved), 10.8.0.0/16 via 10.0.2.99 (unresolved),
//           fd00:9::/32 via fd00:2::2
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "support/fifo_egress.h"
#include "frames.h"
#include "pipeline/dataplane.h"
#include "pipeline/worker.h"
#include "route/fib.h"
#include "route/rib.h"
#include "test_ports.h"

namespace rocesw::test {

// "p3", "h0": a prefix and a number, appended. Not "p" + std::to_string(n): that prepends the
// literal into the temporary, where GCC 12 at -O3 (the release build) reports a bogus -Wrestrict.
inline std::string numbered(const char *prefix, unsigned n) {
    std::string s = prefix;
    s += std::to_string(n);
    return s;
}

inline std::string unique_name(const char *base) {
    static std::atomic<int> n{0};
    return numbered(base, unsigned(n++));
}

inline IfAddr ifa(const char *s) {
    return *parse_if_addr(s);
}
inline IpAddr ipa(const char *s) {
    return *parse_ip(s);
}
inline MacAddr maca(const char *s) {
    return *parse_mac(s);
}

// Routes longer than /24 the IPv4 table still takes, one per /24 from 30.0.0.0 (each /24 with
// such a route holds a tbl8 group, and DPDK refuses one more /24 than it has groups for): the
// free tbl8 groups. Adds them (both copies): for the end of a test.
inline int free_tbl8s4(Fib &f) {
    std::vector<FibOp> ops;
    for (uint32_t i = 0; i < 4096 + 64; i++)
        ops.push_back(FibOp{FibOp::Type::add_route,
                            IpPrefix{IpAddr{false, (30u << 24) + (i << 8) + 1, {}}, 32},
                            1,
                            {}});
    int n = 0;
    for (bool b : f.commit(ops)) n += b;
    return n;
}

inline const Mac kP0{0x02, 0, 0, 0, 0, 0x10}, kP1{0x02, 0, 0, 0, 0, 0x11};
inline const Mac kH1{0x02, 0, 0, 0, 0xAA, 0x01}, kH2{0x02, 0, 0, 0, 0xBB, 0x02};

// One worker over both ports with a FIFO egress (64 packets per port), burst 32, built by the
// Dataplane assembly. A derived fixture may set `compact_fib` or `qos_plan` (classification and
// the PFC engine; the egress stays the FIFO) in its constructor or before SwitchFixture::SetUp,
// and change the options in adjust().
class SwitchFixture : public ::testing::Test {
  protected:
    void SetUp() override {
        ports = std::make_unique<TestPorts>(unique_name("tp"), 2);
        DataplaneOptions o = options();
        adjust(o);
        dp = std::make_unique<Dataplane>(spec(), qos_plan, *ports, std::move(o));
        ASSERT_EQ(dp->refused_routes(), 0u);
        fib = &dp->fib();
        rib = &dp->rib();
        counters = &dp->counters(0);
        egress = &dp->egress(0);
        worker = &dp->worker(0);
        baseline_mbufs = ports->mbufs_in_use();
    }
    void TearDown() override {
        dp.reset();
        ports->take_tx(0);
        ports->take_tx(1);
        EXPECT_EQ(ports->mbufs_in_use(), baseline_mbufs) << "mbufs leaked";
    }
    virtual void adjust(DataplaneOptions &) {}

    // The header comment's neighbours as the kernel's (add_neighbour) instead of the config's:
    // for tests of neighbours coming and going, which a configured neighbour does not do.
    void neighbours_from_kernel() {
        const DataplaneSpec s = spec();
        for (const auto &n : s.neighbours) rib->add_neighbour(*rib->port_for(n.ip), n.ip, n.mac);
        rib->set_static(s.routes, {});
        rib->sync();
    }

    // The two ports, their addresses, the static routes and neighbours of the header comment.
    DataplaneSpec spec() const {
        DataplaneSpec s;
        s.ports = {{"p0", maca("02:00:00:00:00:10"), 1500, {ifa("10.0.1.1/24"), ifa("fd00:1::1/64")}},
                   {"p1", maca("02:00:00:00:00:11"), 1500, {ifa("10.0.2.1/24"), ifa("fd00:2::1/64")}}};
        s.fib.ipv4_max_routes = 1024;
        s.fib.ipv4_tbl8s = 64;
        s.fib.ipv6_max_routes = 1024;
        s.fib.ipv6_tbl8s = 256;
        s.fib.max_nexthops = 1024;
        s.fib.compact = compact_fib;
        s.routes = {{*parse_prefix("10.9.0.0/16"), ipa("10.0.2.2"), ""},
                    {*parse_prefix("10.8.0.0/16"), ipa("10.0.2.99"), ""},
                    {*parse_prefix("fd00:9::/32"), ipa("fd00:2::2"), "p1"}};
        s.neighbours = {{ipa("10.0.1.2"), maca("02:00:00:00:aa:01"), "p0"},
                        {ipa("10.0.2.2"), maca("02:00:00:00:bb:02"), "p1"},
                        {ipa("fd00:1::2"), maca("02:00:00:00:aa:01"), ""},
                        {ipa("fd00:2::2"), maca("02:00:00:00:bb:02"), ""}};
        return s;
    }
    // `workers` workers (worker w polls queue w of both ports), FIFO egress, burst 32.
    static DataplaneOptions options(uint16_t workers = 1) {
        DataplaneOptions o;
        o.name = unique_name("t");
        o.workers = workers;
        o.burst = 32;
        o.egress = fifo_egress_factory(64);
        return o;
    }

    uint64_t drops(uint16_t port, DropReason r) const {
        return counters->ports[port].drops[size_t(r)].load();
    }
    uint64_t total_drops(uint16_t port) const {
        uint64_t s = 0;
        for (auto &c : counters->ports[port].drops) s += c.load();
        return s;
    }

    bool compact_fib = false;          // RIB-only tables
    const QosPlan *qos_plan = nullptr;  // null: no traffic manager, every packet in TC 0
    std::unique_ptr<TestPorts> ports;
    std::unique_ptr<Dataplane> dp;
    // dp's parts.
    Fib *fib = nullptr;
    Rib *rib = nullptr;
    WorkerCounters *counters = nullptr;
    Egress *egress = nullptr;
    Worker *worker = nullptr;
    unsigned baseline_mbufs = 0;
    uint64_t now_ns = 1'000'000;
};

}  // namespace rocesw::test
