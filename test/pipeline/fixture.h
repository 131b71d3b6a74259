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

#include "config/config.h"
#include "support/fifo_egress.h"
#include "frames.h"
#include "pipeline/worker.h"
#include "route/fib.h"
#include "route/rib.h"
#include "test_ports.h"

namespace rocesw::test {

inline std::string unique_name(const char *base) {
    static std::atomic<int> n{0};
    return std::string(base) + std::to_string(n++);
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

inline const Mac kP0{0x02, 0, 0, 0, 0, 0x10}, kP1{0x02, 0, 0, 0, 0, 0x11};
inline const Mac kH1{0x02, 0, 0, 0, 0xAA, 0x01}, kH2{0x02, 0, 0, 0, 0xBB, 0x02};

class SwitchFixture : public ::testing::Test {
  protected:
    void SetUp() override {
        FibParams fp;
        fp.ipv4_max_routes = 1024;
        fp.ipv4_tbl8s = 64;
        fp.ipv6_max_routes = 1024;
        fp.ipv6_tbl8s = 256;
        fp.max_nexthops = 1024;
        fp.compact = compact_fib;
        fib = std::make_unique<Fib>(unique_name("tfib"), fp, nullptr);
        std::vector<RibPort> rp = {
            {"p0", maca("02:00:00:00:00:10"), {ifa("10.0.1.1/24"), ifa("fd00:1::1/64")}},
            {"p1", maca("02:00:00:00:00:11"), {ifa("10.0.2.1/24"), ifa("fd00:2::1/64")}}};
        rib = std::make_unique<Rib>(*fib, rp);
        std::vector<RouteConfig> routes = {{*parse_prefix("10.9.0.0/16"), ipa("10.0.2.2"), ""},
                                           {*parse_prefix("10.8.0.0/16"), ipa("10.0.2.99"), ""},
                                           {*parse_prefix("fd00:9::/32"), ipa("fd00:2::2"), "p1"}};
        std::vector<NeighbourConfig> neigh = {{ipa("10.0.1.2"), maca("02:00:00:00:aa:01"), "p0"},
                                              {ipa("10.0.2.2"), maca("02:00:00:00:bb:02"), "p1"},
                                              {ipa("fd00:1::2"), maca("02:00:00:00:aa:01"), ""},
                                              {ipa("fd00:2::2"), maca("02:00:00:00:bb:02"), ""}};
        rib->set_static(routes, neigh);
        ASSERT_EQ(rib->sync(), 0u);
        for (const auto &p : rp) {
            PortRuntime rt;
            rt.mac = p.mac;
            rt.mtu = 1500;
            rt.parse.max_l3_len = 1500;
            rt.addrs = p.addrs;
            ctx.ports.push_back(rt);
            ctx.all_addrs.insert(ctx.all_addrs.end(), p.addrs.begin(), p.addrs.end());
        }
        ctx.fib = fib.get();
        ports = std::make_unique<TestPorts>(unique_name("tp"), 2);
        counters = std::make_unique<WorkerCounters>();
        egress = std::make_unique<FifoEgress>(*ports, 2, 0, *counters, 64, 32);
        worker = std::make_unique<Worker>(0, ctx, *ports, *egress, *counters,
                                          std::vector<RxAssignment>{{0, 0}, {1, 0}}, 32);
        baseline_mbufs = ports->mbufs_in_use();
    }
    void TearDown() override {
        worker.reset();
        egress.reset();
        ports->take_tx(0);
        ports->take_tx(1);
        EXPECT_EQ(ports->mbufs_in_use(), baseline_mbufs) << "mbufs leaked";
    }

    uint64_t drops(uint16_t port, DropReason r) const {
        return counters->ports[port].drops[size_t(r)].load();
    }
    uint64_t total_drops(uint16_t port) const {
        uint64_t s = 0;
        for (auto &c : counters->ports[port].drops) s += c.load();
        return s;
    }

    bool compact_fib = false;  // set by a derived fixture's constructor: RIB-only tables
    std::unique_ptr<Fib> fib;
    std::unique_ptr<Rib> rib;
    DataplaneContext ctx;
    std::unique_ptr<TestPorts> ports;
    std::unique_ptr<WorkerCounters> counters;
    std::unique_ptr<FifoEgress> egress;
    std::unique_ptr<Worker> worker;
    unsigned baseline_mbufs = 0;
    uint64_t now_ns = 1'000'000;
};

}  // namespace rocesw::test
