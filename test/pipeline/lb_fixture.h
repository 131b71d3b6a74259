// A switch with one ingress port and N member ports, in virtual time, for load-balancing tests.
//   p0: 10.0.0.1/24, host 10.0.0.2                       (traffic enters here)
//   pk: 10.0.k.1/24, gateway 10.0.k.2 / 02:00:00:00:0k:02  (k = 1..N)
//   10.99.0.0/16 multipath via every gateway (policy and weights per test)
// Frames are RoCEv2 (UDP 4791 + BTH + ICRC); a flow is its UDP source port unless a test varies
// more, and the BTH PSN numbers its packets, so order per flow can be checked on the way out.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "support/fifo_egress.h"
#include "fixture.h"
#include "frames.h"
#include "lb/flow_hash.h"
#include "pipeline/dataplane.h"
#include "pipeline/worker.h"
#include "pkt/parser.h"
#include "route/fib.h"
#include "route/rib.h"
#include "test_ports.h"

namespace rocesw::test {

inline const Mac kLbP0{0x02, 0, 0, 0, 0, 0x20}, kLbHost{0x02, 0, 0, 0, 0, 0x02};

// UDP/RoCEv2 payload: BTH (opcode RC SEND-only, dest QP, PSN), 16 bytes, ICRC.
inline Bytes roce_l4(uint16_t sport, uint32_t qp, uint32_t psn) {
    Bytes bth = {0x04,
                 0x40,
                 0xff,
                 0xff,
                 0,
                 uint8_t(qp >> 16),
                 uint8_t(qp >> 8),
                 uint8_t(qp),
                 0,
                 uint8_t(psn >> 16),
                 uint8_t(psn >> 8),
                 uint8_t(psn)};
    Bytes l4;
    put16(l4, sport);
    put16(l4, 4791);
    put16(l4, uint16_t(8 + bth.size() + 16 + 4));
    put16(l4, 0);
    l4.insert(l4.end(), bth.begin(), bth.end());
    l4.resize(l4.size() + 16 + 4, 0);
    return l4;
}

struct LbFlow {
    uint32_t src = v4(10, 0, 0, 2), dst = v4(10, 99, 0, 1);
    uint16_t sport = 49152;
    uint32_t qp = 17;
};

inline Bytes roce_frame(const LbFlow &f, uint32_t psn) {
    return cat(eth(kLbP0, kLbHost, kEtherTypeIpv4),
               ipv4(f.src, f.dst, kProtoUdp, roce_l4(f.sport, f.qp, psn)));
}

// What left a port: (sport, psn) per frame, from the fixed offsets of the frames above.
struct OutPkt {
    uint16_t port;
    uint16_t sport;
    uint32_t psn;
    uint32_t src, dst;
};

class LbSwitch {
  public:
    // `members`: number of member ports; `cfg`: LB settings; `route`: the multipath route.
    // `plan`: a QoS plan for every port: the real egress (QosEgress) instead of FIFOs, whose
    // queue depths the Dataplane binds as the adaptive policy's load signal.
    LbSwitch(uint16_t members, const LbConfig &cfg, const MultipathRouteConfig &route,
             bool resolve_all = true, rte_rcu_qsbr *qsbr = nullptr,
             const QosPlan *plan = nullptr)
        : n_(members) {
        DataplaneSpec spec;
        spec.fib.ipv4_max_routes = 1024;
        spec.fib.ipv4_tbl8s = 64;
        spec.fib.ipv6_max_routes = 1024;
        spec.fib.ipv6_tbl8s = 256;
        spec.fib.max_nexthops = 1024;
        spec.lb = cfg;
        spec.ports.push_back(
            {"p0", maca("02:00:00:00:00:20"), 1500, {ifa("10.0.0.1/24"), ifa("fd00::1/64")}});
        for (uint16_t k = 1; k <= n_; k++) {
            std::string a = "10.0." + std::to_string(k) + ".1/24";
            std::string a6 = "fd00:" + std::to_string(k) + "::1/64";
            MacAddr mac = maca("02:00:00:00:00:20");
            mac.b[5] = uint8_t(0x20 + k);
            spec.ports.push_back(
                {numbered("p", k), mac, 1500, {*parse_if_addr(a), *parse_if_addr(a6)}});
        }
        route_ = route;
        spec.neighbours = {{ipa("10.0.0.2"), maca("02:00:00:00:00:02"), "p0"},
                           {ipa("fd00::2"), maca("02:00:00:00:00:02"), "p0"}};
        spec.multipath_routes = {route_};
        ports = std::make_unique<TestPorts>(unique_name("lbtp"), uint16_t(n_ + 1), 8192);
        DataplaneOptions o;
        o.name = unique_name("lb");
        o.qsbr = qsbr;
        o.burst = 32;
        o.egress_burst = 64;
        o.rx = {{{0, 0}}};  // traffic enters on p0 only
        if (!plan) o.egress = fifo_egress_factory(4096);
        dp = std::make_unique<Dataplane>(spec, plan, *ports, std::move(o));
        EXPECT_EQ(dp->refused_routes(), 0u);
        fib = &dp->fib();
        rib = &dp->rib();
        counters = &dp->counters(0);
        worker = &dp->worker(0);
        // The gateways as the kernel's neighbours (as ARP/ND learn them), so that a test can
        // take one away: a configured neighbour stays until the config changes.
        if (resolve_all) {
            for (uint16_t k = 1; k <= n_; k++) {
                rib->add_neighbour(uint8_t(k), gw_ip(k), gw_mac(k));
                rib->add_neighbour(uint8_t(k), gw_ip6(k), gw_mac(k));
            }
            EXPECT_EQ(rib->sync(), 0u);
        }
    }
    ~LbSwitch() {
        dp.reset();
        for (uint16_t p = 0; p <= n_; p++) ports->take_tx(p);
    }

    static IpAddr gw_ip(uint16_t k) { return ipa(("10.0." + std::to_string(k) + ".2").c_str()); }
    static IpAddr gw_ip6(uint16_t k) { return ipa(("fd00:" + std::to_string(k) + "::2").c_str()); }
    // The IPv6 multipath route fd00:99::/32 over gateways 1..n.
    static MultipathRouteConfig route6(uint16_t n, const std::string &policy = "") {
        MultipathRouteConfig r{*parse_prefix("fd00:99::/32"), {}, policy};
        for (uint16_t k = 1; k <= n; k++) r.paths.push_back({gw_ip6(k), numbered("p", k), 1});
        return r;
    }
    static MacAddr gw_mac(uint16_t k) {
        MacAddr m = maca("02:00:00:00:00:02");
        m.b[4] = uint8_t(k);
        return m;
    }
    static NeighbourConfig gateway(uint16_t k) { return {gw_ip(k), gw_mac(k), numbered("p", k)}; }
    // The multipath route over gateways 1..n (in the given order), equal weights.
    static MultipathRouteConfig route(uint16_t n, const std::string &policy = "",
                                      std::vector<uint16_t> order = {}) {
        if (order.empty())
            for (uint16_t k = 1; k <= n; k++) order.push_back(k);
        MultipathRouteConfig r{*parse_prefix("10.99.0.0/16"), {}, policy};
        for (uint16_t k : order) r.paths.push_back({gw_ip(k), numbered("p", k), 1});
        return r;
    }

    // Injects one packet per (flow, psn) pair in order, runs the worker until the input is empty,
    // and returns what left, in order of departure per port.
    std::vector<OutPkt> run(const std::vector<std::pair<LbFlow, uint32_t>> &pkts, uint64_t now_ns) {
        for (const auto &[f, psn] : pkts) ports->inject(0, roce_frame(f, psn));
        while (worker->poll_once(now_ns) > 0) {
        }
        return collect();
    }
    std::vector<OutPkt> collect() {
        std::vector<OutPkt> out;
        for (uint16_t p = 0; p <= n_; p++)
            for (const auto &fr : ports->take_tx(p)) {
                OutPkt o{p, rd16(&fr[34]), rd24(&fr[42 + 9]), rd32(&fr[26]), rd32(&fr[30])};
                out.push_back(o);
            }
        return out;
    }
    // One packet of each flow at `now_ns`; returns flow index -> member port.
    std::vector<uint16_t> ports_of(const std::vector<LbFlow> &flows, uint64_t now_ns,
                                   uint32_t psn = 0) {
        std::vector<std::pair<LbFlow, uint32_t>> pk;
        for (const auto &f : flows) pk.emplace_back(f, psn);
        auto out = run(pk, now_ns);
        std::map<std::tuple<uint32_t, uint32_t, uint16_t>, uint16_t> by;
        for (const auto &o : out) by[{o.src, o.dst, o.sport}] = o.port;
        std::vector<uint16_t> r;
        for (const auto &f : flows) {
            auto it = by.find({f.src, f.dst, f.sport});
            r.push_back(it == by.end() ? 0 : it->second);
        }
        return r;
    }

    // One IPv6 RoCE packet of each of `flows` flows (UDP source ports 49152 + i) to fd00:99::1
    // at `now_ns`; returns flow index -> member port (0: none left). `each(port, frame)`, when
    // given, sees every frame that left.
    std::vector<uint16_t> ports_of6(uint16_t flows, uint64_t now_ns,
                                    const std::function<void(uint16_t, const Frame &)> &each = {}) {
        for (uint16_t i = 0; i < flows; i++)
            ports->inject(0, cat(eth(kLbP0, kLbHost, kEtherTypeIpv6),
                                 ipv6(ip6(0xfd00, 0, 2), ip6(0xfd00, 0x99, 1), kProtoUdp,
                                      roce_l4(uint16_t(49152 + i), 17, i))));
        while (worker->poll_once(now_ns) > 0) {
        }
        std::vector<uint16_t> port_of(flows, 0);
        for (uint16_t p = 1; p <= n_; p++)
            for (const auto &fr : ports->take_tx(p)) {
                port_of[rd16(&fr[54]) - 49152] = p;
                if (each) each(p, fr);
            }
        return port_of;
    }

    uint64_t drops_total() const {
        uint64_t s = 0;
        for (uint16_t p = 0; p <= n_; p++)
            for (auto &c : counters->ports[p].drops) s += c.load();
        return s;
    }
    const LbWorkerCounters &lbc() const { return worker->balancer().counters(); }
    uint16_t group_id() const { return rib->groups().at(0).id; }

    uint16_t n_;
    MultipathRouteConfig route_;
    std::unique_ptr<TestPorts> ports;
    std::unique_ptr<Dataplane> dp;
    // dp's parts.
    Fib *fib = nullptr;
    Rib *rib = nullptr;
    WorkerCounters *counters = nullptr;
    Worker *worker = nullptr;
};

// Flows that differ only in the UDP source port (RoCEv2 entropy).
inline std::vector<LbFlow> sport_flows(size_t n, uint16_t base = 49152) {
    std::vector<LbFlow> v;
    for (size_t i = 0; i < n; i++) {
        LbFlow f;
        f.sport = uint16_t(base + i);
        v.push_back(f);
    }
    return v;
}

// The flow hash the switch computes for a flow (parse the frame as the worker does).
inline uint64_t lb_hash_of(const LbFlow &f, const LbConfig &cfg) {
    Bytes fr = roce_frame(f, 0);
    PacketMeta m{};
    ParseOptions po;
    po.max_l3_len = 1500;
    EXPECT_FALSE(parse_frame(fr.data(), uint32_t(fr.size()), po, &m).has_value());
    return flow_hash(m, fr.data() + m.l3_offset,
                     {cfg.seed, cfg.symmetric, cfg.hash_dest_qp, cfg.hash_function});
}

}  // namespace rocesw::test
