// Emulated RoCEv2 hosts (roce::HostSet) through the switch (Worker + QosEgress) in virtual time:
// no clock, no tick for the hosts. Three hosts, one per switch port:
//   h0 10.0.1.2 on p0 (10.0.1.1/24), h1 10.0.2.2 on p1, h2 10.0.3.2 on p2; 10 Gb/s everywhere.
// Links are in-memory queues with no propagation delay: a frame a host hands to its port is in
// the switch's RX queue at the same instant and vice versa, so serialisation happens only in
// the hosts' pacers and the switch's egress shaper (both at the port rate, counting a frame's
// wire bytes as max(frame, 60) + 24). The driver below is a small discrete-event loop: at time
// t it polls the switch and the hosts until no frame moves, then jumps to the hosts' next event
// (HostSet::next_event_ns) or, while the switch's egress holds frames its shaper has not
// released, to t + 1 ns.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cmath>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "fixture.h"
#include "pfc/frame.h"
#include "pkt/mbuf_meta.h"
#include "qos/qos_config.h"
#include "qos/qos_egress.h"
#include "qos_fixture.h"
#include "roce/host_results.h"
#include "roce/host_set.h"
#include "roce/packet.h"
#include "roce/qp.h"

namespace rocesw::test {
namespace {

constexpr uint16_t kPorts = 3;

// Host ports and switch ports joined back to back: host port i is switch port i.
class Wire {
  public:
    class Side final : public PortIo {
      public:
        Side(std::vector<std::deque<rte_mbuf *>> &in, std::vector<std::deque<rte_mbuf *>> &out)
            : in_(in), out_(out) {}
        uint16_t rx_burst(uint16_t port, uint16_t, rte_mbuf **pkts, uint16_t n) override {
            uint16_t k = 0;
            for (auto &q = in_[port]; k < n && !q.empty(); k++) {
                pkts[k] = q.front();
                q.pop_front();
            }
            return k;
        }
        uint16_t tx_burst(uint16_t port, uint16_t, rte_mbuf **pkts, uint16_t n) override {
            for (uint16_t i = 0; i < n; i++) out_[port].push_back(pkts[i]);
            return n;
        }

      private:
        std::vector<std::deque<rte_mbuf *>> &in_, &out_;
    };
    explicit Wire(uint16_t n) : to_switch_(n), to_host_(n) {}
    ~Wire() {
        for (auto *qs : {&to_switch_, &to_host_})
            for (auto &q : *qs)
                for (auto *m : q) rte_pktmbuf_free(m);
    }
    bool empty() const {
        for (auto *qs : {&to_switch_, &to_host_})
            for (auto &q : *qs)
                if (!q.empty()) return false;
        return true;
    }
    Side &switch_side() { return sw_; }
    Side &host_side() { return host_; }

  private:
    std::vector<std::deque<rte_mbuf *>> to_switch_, to_host_;
    Side sw_{to_switch_, to_host_}, host_{to_host_, to_switch_};
};

// Queue 3 (DSCP 3, priority 3) is lossless and marks ECT packets at dequeue by a WRED/ECN curve
// from `kmin` to `kmax` bytes at Pmax 100%; Kmin = Kmax = 0 marks every ECT packet. The shaper
// bucket holds 2000 bytes (one MTU frame: the port sends at its rate from the first frame) and
// the TX ring model is off, so the shaper alone sets the departure times.
std::string switch_qos(uint32_t kmin, uint32_t kmax) {
    const std::string tables =
        "WRED_PROFILE:\n  w: {ecn: ecn_all, green_min_threshold: " + std::to_string(kmin) +
        ", green_max_threshold: " + std::to_string(kmax) +
        ", green_drop_probability: 100, ecn_mark_point: dequeue}\n"
        "QUEUE:\n  default|3: {wred_profile: w}\n"
        "BUFFER_POOL:\n  ip: {type: ingress, mode: static, size: 10000000}\n"
        "BUFFER_PROFILE:\n  pg: {pool: ip, static_th: 2000000, xoff: 100000}\n"
        "BUFFER_PG:\n  default|3: {profile: pg}\n";
    return qos_profile(tables, "pfc_enable: \"3\", shaper_burst_bytes: 2000, tx_ring_bytes: 0");
}

class RoceHosts : public ::testing::Test {
  protected:
    void SetUp() override {
        spec.fib.ipv4_max_routes = 1024;
        spec.fib.ipv4_tbl8s = 64;
        spec.fib.ipv6_max_routes = 1024;
        spec.fib.ipv6_tbl8s = 256;
        spec.fib.max_nexthops = 1024;
        for (int i = 0; i < kPorts; i++) {
            const std::string n = std::to_string(i + 1);
            spec.ports.push_back(
                {numbered("p", i), switch_mac(i), 1500, {ifa(("10.0." + n + ".1/24").c_str())}});
            spec.neighbours.push_back(
                {ipa(("10.0." + n + ".2").c_str()), host_mac(i), numbered("p", i)});
        }
        // The hosts' frames go into the Worker as they are: the pool has the PacketMeta area.
        pool = rte_pktmbuf_pool_create(unique_name("rhpool").c_str(), 16383, 256, kMbufPrivSize,
                                       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
        ASSERT_NE(pool, nullptr);
        baseline = rte_mempool_in_use_count(pool);
    }
    void TearDown() override {
        hosts.reset();
        dp.reset();
        wire.reset();
        if (pool) {
            EXPECT_EQ(rte_mempool_in_use_count(pool), baseline) << "mbufs leaked";
            rte_mempool_free(pool);
        }
    }

    static MacAddr switch_mac(int i) {
        return maca(("02:00:00:00:00:1" + std::to_string(i)).c_str());
    }
    static MacAddr host_mac(int i) {
        return maca(("02:00:00:00:aa:0" + std::to_string(i)).c_str());
    }

    // Hosts h0..h2 at 10 Gb/s, gateway = their switch port (static MAC, no ARP), data on DSCP 3
    // / priority 3 (lossless), ACKs on DSCP 3, CNPs on DSCP 6. Flows start 10 us into the run;
    // the pacers' slack is 1 ns, so that a pacer polled at the ns its next packet is due keeps
    // its picosecond schedule instead of losing the fraction of a ns each packet.
    static roce::HostRunConfig host_config() {
        roce::HostRunConfig c;
        c.run.mtu = 1024;
        c.run.start_delay_ns = 10'000;
        c.run.linger_ns = 0;
        c.run.pacer_slack_ns = 1;
        c.run.sample_ns = 0;
        c.traffic.data_dscp = 3;
        c.traffic.ack_dscp = 3;
        c.traffic.cnp_dscp = 6;
        c.traffic.cnp_priority = 6;
        c.traffic.data_priority = 3;
        c.traffic.pfc_mask = 1 << 3;
        for (int i = 0; i < kPorts; i++) {
            roce::HostConfig h;
            const std::string n = std::to_string(i + 1);
            h.name = numbered("h", i);
            h.device = numbered("wire", i);
            h.mac = host_mac(i);
            h.ip = ifa(("10.0." + n + ".2/24").c_str());
            h.gateway = ipa(("10.0." + n + ".1").c_str());
            h.gateway_mac = switch_mac(i);
            h.line_rate_bps = 10'000'000'000;
            c.hosts.push_back(h);
        }
        c.workload.spec.n_hosts = kPorts;
        return c;
    }

    void start(const roce::HostRunConfig &c, const std::string &qos_yaml) {
        cfg = c;
        std::vector<QosPortInfo> info;
        for (int i = 0; i < kPorts; i++) info.push_back({numbered("p", i), 10000});
        plan = build_qos_plan(load_qos_string(qos_yaml, "rh.yaml"), info);
        wire = std::make_unique<Wire>(kPorts);
        DataplaneOptions o;
        o.name = unique_name("rh");
        o.burst = 32;
        o.pfc_pool = pool;
        dp = std::make_unique<Dataplane>(spec, &plan, wire->switch_side(), std::move(o));
        EXPECT_EQ(dp->refused_routes(), 0u);
        shared = &dp->tm();
        worker = &dp->worker(0);
        egress = &dp->egress(0);
        counters = &dp->counters(0);
        hosts = std::make_unique<roce::HostSet>(cfg, kPorts, wire->host_side(), pool);
    }

    // Runs until every flow is done (or `limit_ns`). Returns the time reached.
    uint64_t run(uint64_t limit_ns) {
        uint64_t t = 0;
        for (;;) {
            // Everything that happens at t, until no frame moves.
            for (int i = 0;; i++) {
                EXPECT_LT(i, 100000) << "no quiescence at t=" << t;
                const uint32_t sw = worker->poll_once(t);
                const uint32_t h = hosts->poll(t);
                if (!sw && !h && wire->empty()) break;
            }
            if (hosts->done_flows() == hosts->local_flows() || t >= limit_ns) return t;
            uint64_t next = hosts->next_event_ns();
            if (egress->backlog()) next = std::min(next, t + 1);
            t = std::max(next, t + 1);
        }
    }

    uint64_t total_drops() const {
        uint64_t s = 0;
        for (int p = 0; p < kPorts; p++)
            for (auto &c : counters->ports[p].drops) s += c.load();
        return s;
    }

    DataplaneSpec spec;  // the three ports and their hosts as neighbours
    rte_mempool *pool = nullptr;
    unsigned baseline = 0;
    roce::HostRunConfig cfg;
    QosPlan plan;
    std::unique_ptr<Wire> wire;
    std::unique_ptr<Dataplane> dp;
    // dp's parts.
    TrafficManager *shared = nullptr;
    WorkerCounters *counters = nullptr;
    Egress *egress = nullptr;
    Worker *worker = nullptr;
    std::unique_ptr<roce::HostSet> hosts;
};

// Wire bytes of the RDMA WRITE packets of a 1024-byte MTU over IPv4: Ethernet 14 + IPv4 20 +
// UDP 8 + BTH 12 (+ RETH 16 on the first) + payload 1024 + ICRC 4, plus preamble/SFD 8, IFG 12
// and FCS 4 = 1122 for the first packet, 1106 for the others.
constexpr uint64_t kWireFirst = 1122, kWireNext = 1106;

// One flow h0 -> h2 of 10 packets (10240 bytes), nothing else on the switch; marking from 5000
// bytes of queue. The sender's pacer (10 Gb/s) and the switch's shaper (10 Gb/s) run at the same
// rate over the same wire bytes, so the switch never queues: every frame leaves p2 the instant
// it arrives, nothing is marked, no CNP is sent. Packet k leaves h0 at the wire time of packets
// 0..k-1 (0.8 ns a byte at 10 Gb/s) after the pacer's origin, rounded up to the ns. That origin
// is start - 1 ns: an idle pacer books its first packet up to its slack (1 ns here) in the past
// (roce/pacer.h). The last ACK comes back the instant the last data packet arrives (no
// propagation delay), so
//   FCT = (1122 + 8 x 1106) x 0.8 ns - 1 ns = 9970 x 0.8 - 1 = 7975 ns exactly,
// the ideal FCT (all 10 packets at line rate: 11076 x 0.8 = 8860.8 ns, roce::ideal_fct_ns) less
// the last packet's own 884.8 ns of serialisation, which this delay-free model does not charge,
// and less the slack.
TEST_F(RoceHosts, UncongestedFlowCompletesAtTheComputedTimeWithoutCnps) {
    roce::HostRunConfig c = host_config();
    c.workload.spec.pattern = roce::Pattern::pairs;
    c.workload.spec.pairs = {{0, 2}};
    c.workload.spec.size_bytes = 10 * 1024;
    start(c, switch_qos(5000, 200000));
    EXPECT_EQ(hosts->next_event_ns(), 10'000u);  // the flow's start: the first thing to do
    run(10'000'000);

    ASSERT_EQ(hosts->flows().size(), 1u);
    const roce::Flow &f = hosts->flows()[0];
    ASSERT_TRUE(f.done);
    EXPECT_EQ(f.start_ns, 10'000u);
    const uint64_t expected_fct = (kWireFirst + 8 * kWireNext) * 8 / 10 - 1;  // ns at 10 Gb/s
    EXPECT_EQ(expected_fct, 7975u);
    EXPECT_EQ(f.finish_ns - f.start_ns, expected_fct);
    EXPECT_EQ(roce::write_wire_bytes(1024, true), kWireFirst);
    EXPECT_EQ(roce::write_wire_bytes(1024, false), kWireNext);
    auto rs = roce::flow_results(*hosts);
    ASSERT_EQ(rs.size(), 1u);
    EXPECT_EQ(rs[0].ideal_ns, (kWireFirst + 9 * kWireNext) * 8 / 10);  // 8860 (8860.8, floored)
    EXPECT_EQ(rs[0].fct_ns(), expected_fct);

    EXPECT_EQ(f.packets_tx, 10u);
    EXPECT_EQ(f.cnps_rx, 0u);
    EXPECT_EQ(f.qp.retransmitted(), 0u);
    EXPECT_EQ(f.rp.stats().decreases, 0u);
    const auto rx = roce::receiver_totals(*hosts);
    EXPECT_EQ(rx.packets, 10u);
    EXPECT_EQ(rx.bytes, 10u * 1024);
    EXPECT_EQ(rx.messages, 1u);
    EXPECT_EQ(rx.ce, 0u);
    EXPECT_EQ(rx.cnps, 0u);
    EXPECT_EQ(shared->queue(2, 3).ecn_marked, 0u);
    EXPECT_EQ(total_drops(), 0u);
    EXPECT_EQ(hosts->next_event_ns(), roce::kNeverNs);  // done: only a frame could wake a host
}

// 2:1 incast: h0 and h1 each send one 64 KiB message (64 packets) to h2 at the same time,
// through p2 at 10 Gb/s, whose queue 3 marks every ECT packet (Kmin = Kmax = 0). The receiver's
// NP sends a CNP for every CE packet (cnp_interval_ns = 0) and each sender's RP applies at most
// one rate decrease per 50 us (rate_reduce_period_ns, as NVIDIA NICs): a CNP inside the period is
// applied when the period ends. Every 50 us of a flow's life therefore sees exactly one cut, at
// start + k x 50 us.
//
//  - CNPs: every data packet is marked, none is lost or resent: 2 x 64 = 128 CE packets and
//    128 CNPs at h2, 64 at each sender.
//  - Rates (DCQCN, alpha0 = 0.5, g = 1/16): a cut sets Rc = Rc x (1 - alpha/2) (above the
//    min_dec_factor floor here) and then alpha = (1 - g) alpha + g:
//      t0          Rc = 10G x (1 - 0.25)          = 7 500 000 000   alpha -> 0.53125
//      t0 + 50 us  Rc = 7.5G x (1 - 0.265625)     = 5 507 812 500   alpha -> 0.560546875
//      t0 + 100 us Rc = 5.5078125G x (1 - 0.28027...) = 3 964 118 958 (rounded)
//    The alpha and increase timers (55 us) never fire: each cut restarts them 50 us before.
//  - Three cuts and no fourth: the first is at t0 (the first packets reach h2 at once, and
//    their CNPs come back at once); p2 then carries both flows' 2 x (1122 + 63 x 1106) = 141 600
//    wire bytes back to back (the senders offer 15 then 11 Gb/s, more than 10 Gb/s, until they
//    have sent everything), which takes 113.28 us at 10 Gb/s: CNPs keep arriving through the
//    periods ending at t0 + 50 and t0 + 100 us, and the flows end before t0 + 150 us.
//  - Completion: both messages complete, every byte delivered in order, no lossless drop.
TEST_F(RoceHosts, IncastWithForcedMarkingCutsRatesByTheDcqcnFormula) {
    roce::HostRunConfig c = host_config();
    c.workload.spec.pattern = roce::Pattern::incast;
    c.workload.spec.receiver = 2;
    c.workload.spec.senders = {0, 1};
    c.workload.spec.size_bytes = 64 * 1024;
    c.dcqcn.initial_alpha = 0.5;
    c.dcqcn.g = 1.0 / 16;
    c.dcqcn.cnp_interval_ns = 0;
    c.dcqcn.rate_reduce_period_ns = 50'000;
    c.dcqcn.byte_counter_bytes = 0;
    start(c, switch_qos(0, 0));
    const uint64_t end = run(10'000'000);
    const uint64_t t0 = 10'000;

    // The DCQCN formula, written out independently of roce::DcqcnRp.
    std::vector<uint64_t> rates;
    double rc = 10e9, alpha = 0.5;
    for (int k = 0; k < 3; k++) {
        rc = double(std::llround(rc * (1 - alpha / 2)));
        alpha = (1 - 1.0 / 16) * alpha + 1.0 / 16;
        rates.push_back(uint64_t(rc));
    }
    EXPECT_EQ(rates[0], 7'500'000'000u);
    EXPECT_EQ(rates[1], 5'507'812'500u);
    EXPECT_EQ(rates[2], 3'964'118'958u);

    ASSERT_EQ(hosts->flows().size(), 2u);
    for (const roce::Flow &f : hosts->flows()) {
        SCOPED_TRACE(f.spec.id);
        ASSERT_TRUE(f.done);
        EXPECT_EQ(f.start_ns, t0);
        EXPECT_EQ(f.packets_tx, 64u);
        EXPECT_EQ(f.qp.retransmitted(), 0u);
        EXPECT_EQ(f.cnps_rx, 64u);
        EXPECT_EQ(f.rp.stats().decreases, 3u);
        std::vector<roce::RateChange> cuts;
        for (const auto &e : f.trace)
            if (e.event == roce::RpEvent::cnp_decrease) cuts.push_back(e);
        ASSERT_EQ(cuts.size(), 3u);
        for (size_t k = 0; k < 3; k++) {
            EXPECT_EQ(cuts[k].t_ns, t0 + k * 50'000) << k;
            EXPECT_EQ(cuts[k].rc_bps, rates[k]) << k;
        }
        EXPECT_EQ(f.rp.rate_bps(), rates[2]);
        // Finished after the third cut and before a fourth would fall due.
        EXPECT_GT(f.finish_ns, t0 + 100'000);
        EXPECT_LT(f.finish_ns, t0 + 150'000);
    }
    // The run ends when the last frame leaves p2 (its ACK is back the same instant). p2 is
    // never idle from t0 to then, and its shaper releases a frame while its credit is positive:
    // it starts with the 2000-byte bucket full and earns 1.25 bytes a ns. Every frame but the
    // last (141 600 - 1106 = 140 494 wire bytes) has been charged when the last leaves, at the
    // first ns where 2000 + 1.25 x (t - t0) - 140 494 > 0: t - t0 > 110 795.2, so 110 796.
    EXPECT_EQ(end, t0 + 110'796);
    const auto rx = roce::receiver_totals(*hosts);
    EXPECT_EQ(rx.packets, 128u);
    EXPECT_EQ(rx.bytes, 2u * 64 * 1024);
    EXPECT_EQ(rx.messages, 2u);
    EXPECT_EQ(rx.psn_gaps, 0u);
    EXPECT_EQ(rx.ce, 128u);
    EXPECT_EQ(rx.cnps, 128u);
    EXPECT_EQ(hosts->hosts()[2].c.cnps_tx, 128u);
    EXPECT_EQ(shared->queue(2, 3).ecn_marked, 128u);
    EXPECT_EQ(shared->queue(2, 3).drops_total(), 0u);
    EXPECT_EQ(total_drops(), 0u);
}

// --- Control-frame classes (ACK/NAK, CNP) under PFC, at one host -----------------------------
//
// Receiver h2 alone (local host 0 of its HostSet, on a port that records what it sends and can
// refuse it). Frames are pushed with on_rx: a PFC frame pausing priority 3 (data) for 0xFFFF
// quanta (3.36 ms at 10 Gb/s), then a CE-marked WRITE-only packet from h0 asking for an ACK.
class CapturePort final : public PortIo {
  public:
    uint16_t rx_burst(uint16_t, uint16_t, rte_mbuf **, uint16_t) override { return 0; }
    uint16_t tx_burst(uint16_t, uint16_t, rte_mbuf **pkts, uint16_t n) override {
        if (refuse) return 0;
        for (uint16_t i = 0; i < n; i++) {
            const uint8_t *f = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
            sent.emplace_back(f, f + pkts[i]->data_len);
            rte_pktmbuf_free(pkts[i]);
        }
        return n;
    }
    bool refuse = false;
    std::vector<Bytes> sent;
};

struct Sent {
    uint8_t opcode = 0, dscp = 0;
};
std::vector<Sent> decode(const std::vector<Bytes> &frames) {
    std::vector<Sent> out;
    for (const Bytes &f : frames) {
        roce::ParsedRoce p;
        EXPECT_EQ(roce::parse_packet(f.data(), uint32_t(f.size()), true, &p),
                  roce::ParseResult::ok);
        out.push_back({p.bth.opcode, p.dscp});
    }
    return out;
}

class RoceHostClasses : public RoceHosts {
  protected:
    // h2 local, h0 and h1 peers.
    void start_h2(roce::HostRunConfig c) {
        std::swap(c.hosts[0], c.hosts[2]);
        for (size_t i = 1; i < c.hosts.size(); i++) c.hosts[i].device.clear();
        c.workload.spec.n_hosts = 0;
        c.dcqcn.cnp_interval_ns = 0;
        cfg = c;
        hosts = std::make_unique<roce::HostSet>(cfg, 1, port, pool);
    }
    void push(const Bytes &f, uint64_t t) {
        rte_mbuf *m = rte_pktmbuf_alloc(pool);
        ASSERT_NE(m, nullptr);
        std::memcpy(rte_pktmbuf_append(m, uint16_t(f.size())), f.data(), f.size());
        hosts->on_rx(0, &m, 1, t);
    }
    void pause_priority_3(uint64_t t) {
        Bytes f(kMacControlFrameLen);
        std::array<uint16_t, kNumPriorities> q{};
        q[3] = 0xFFFF;
        build_pfc_frame(f.data(), switch_mac(2).b, 1 << 3, q);
        push(f, t);
    }
    // A WRITE-only packet of QP kQpnBase from h0 to h2, CE-marked, asking for an ACK.
    void write_ce(uint64_t t) {
        roce::PacketSpec s;
        s.l.src_mac = switch_mac(2).b;
        s.l.dst_mac = host_mac(2).b;
        s.l.src_ip4 = ipa("10.0.1.2").v4;
        s.l.dst_ip4 = ipa("10.0.3.2").v4;
        s.l.dscp = 3;
        s.l.ecn = roce::Ecn::ce;
        s.bth.opcode = uint8_t(roce::Opcode::write_only);
        s.bth.dest_qp = roce::kQpnBase;
        s.bth.psn = roce::initial_psn(roce::kQpnBase);
        s.bth.ack_req = true;
        s.reth = {0x1000, 1, 100};
        s.payload_len = 100;
        Bytes f(roce::packet_len(s));
        roce::build_packet(f.data(), uint32_t(f.size()), s);
        push(f, t);
    }
    // At t = 1000 ns: priority 3 paused, then the CE-marked WRITE; returns what h2 sent.
    std::vector<Sent> write_while_paused(const roce::HostRunConfig &c) {
        start_h2(c);
        pause_priority_3(1000);
        write_ce(1000);
        hosts->poll(1000);
        return decode(port.sent);
    }
    CapturePort port;
};

constexpr uint8_t kCnp = 0x81, kAck = 0x11;

TEST_F(RoceHostClasses, APausedDataPriorityHoldsTheAckButNotTheCnp) {
    // ACK: DSCP 3 on the data priority 3; CNP: DSCP 6, priority 6.
    auto s = write_while_paused(host_config());
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].opcode, kCnp);
    EXPECT_EQ(s[0].dscp, 6);
    // The ACK leaves when the pause ends: 0xFFFF quanta x 51.2 ns, rounded up.
    const uint64_t until = 1000 + pause_quanta_to_ns(0xFFFF, 10'000'000'000);
    EXPECT_EQ(hosts->next_event_ns(), until);
    hosts->poll(until - 1);
    EXPECT_EQ(port.sent.size(), 1u);
    hosts->poll(until);
    s = decode(port.sent);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[1].opcode, kAck);
    EXPECT_EQ(s[1].dscp, 3);
}

TEST_F(RoceHostClasses, AnAckClassOfItsOwnLeavesWhileDataIsPaused) {
    roce::HostRunConfig c = host_config();
    c.traffic.ack_dscp = 6;  // HPCC's hosts: ACKs with the CNPs
    c.traffic.ack_priority = 6;
    auto s = write_while_paused(c);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].opcode, kCnp);
    EXPECT_EQ(s[1].opcode, kAck);
    EXPECT_EQ(s[0].dscp, 6);
    EXPECT_EQ(s[1].dscp, 6);
}

// A control frame the device refused keeps its class: a pause that arrives before the retry
// holds the ACK (it was requeued as priority 0 before) and not the CNP.
TEST_F(RoceHostClasses, ARefusedControlFrameKeepsItsClass) {
    start_h2(host_config());
    write_ce(1000);
    port.refuse = true;
    hosts->poll(1000);
    EXPECT_TRUE(port.sent.empty());
    EXPECT_EQ(hosts->hosts()[0].c.tx_retries, 1u);
    port.refuse = false;
    pause_priority_3(2000);
    hosts->poll(2000);
    auto s = decode(port.sent);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].opcode, kCnp);
}

// A UDP flow from h2 (roce/udp_flow.h, rocesim's udp_flows in rocehost): 1 Gb/s of
// 1000-byte frames (1024 wire bytes: 8192 ns each) from 10 us (the start delay) for 50 us, on
// DSCP 8 / priority 0, which the hosts do not treat as lossless (pfc_mask: 3): seven frames,
// each stamped with its schedule time. A PFC pause of priority 0 still holds them (UDP flows
// honour every priority, as rocesim's UdpHost); what was owed leaves after it, at line rate.
TEST_F(RoceHostClasses, AUdpFlowKeepsItsScheduleAndHonoursPfcOnItsPriority) {
    roce::HostRunConfig c = host_config();
    roce::UdpFlowConfig u;
    u.src = 2;  // h2: start_h2 swaps it to index 0
    u.dst = 0;  // h0: swapped to index 2
    u.rate_bps = 1'000'000'000;
    u.frame_bytes = 1000;
    u.start_ns = 0;
    u.stop_ns = 50'000;
    u.dscp = 8;
    u.priority = 0;
    c.udp_flows.push_back(u);
    std::swap(c.udp_flows[0].src, c.udp_flows[0].dst);  // indexes after the swap
    start_h2(c);
    hosts->poll(10'000);
    ASSERT_EQ(port.sent.size(), 1u);
    roce::UdpFlowStamp st;
    ASSERT_TRUE(
        roce::parse_udp_flow_frame(port.sent[0].data(), uint32_t(port.sent[0].size()), &st));
    EXPECT_EQ(port.sent[0].size(), 1000u);
    EXPECT_EQ(port.sent[0][15] >> 2, 8);  // DSCP
    EXPECT_EQ(st.flow, 0u);
    EXPECT_EQ(st.seq, 0u);
    EXPECT_EQ(st.sent_ps, 10'000'000u);
    EXPECT_EQ(hosts->next_event_ns(), 18'192u);
    hosts->poll(18'191);
    EXPECT_EQ(port.sent.size(), 1u);
    hosts->poll(18'192);
    ASSERT_EQ(port.sent.size(), 2u);
    // Priority 0 paused at 20 us for 0xFFFF quanta at 10 Gb/s (3.36 ms): nothing leaves.
    Bytes f(kMacControlFrameLen);
    std::array<uint16_t, kNumPriorities> q{};
    q[0] = 0xFFFF;
    build_pfc_frame(f.data(), switch_mac(2).b, 1 << 0, q);
    push(f, 20'000);
    hosts->poll(30'000);
    EXPECT_EQ(port.sent.size(), 2u);
    const uint64_t until = 20'000 + pause_quanta_to_ns(0xFFFF, 10'000'000'000);
    EXPECT_EQ(hosts->next_event_ns(), until);
    for (uint64_t t = until; t < until + 10'000; t += 100) hosts->poll(t);
    ASSERT_EQ(port.sent.size(), 7u);  // k = 0..6: 6 x 8192 ns < 50 us
    for (size_t k = 0; k < 7; k++) {
        ASSERT_TRUE(
            roce::parse_udp_flow_frame(port.sent[k].data(), uint32_t(port.sent[k].size()), &st));
        EXPECT_EQ(st.seq, k);
        EXPECT_EQ(st.sent_ps, (10'000 + 8'192 * k) * 1000);
    }
    EXPECT_EQ(hosts->udp().sent(), 7u);
    EXPECT_EQ(hosts->hosts()[0].c.udp_tx, 7u);
    // A UDP flow's frame that reaches a host is counted, its delay from its stamp.
    push(port.sent[6], until + 20'000);
    const roce::UdpFlowStats &s0 = hosts->udp().stats()[0];
    EXPECT_EQ(s0.received, 1u);
    EXPECT_EQ(s0.min_delay, (until + 20'000 - 10'000 - 6 * 8'192) * 1000);
}

// A run of UDP flows alone (no RoCE flow: tools/bench's lossless sweep) ends once they have
// stopped, after the linger, as a run with RoCE flows does; it used to run to duration_ms. A
// process with no local flow of either kind (a receiver) runs on.
TEST_F(RoceHostClasses, ARunOfUdpFlowsAloneEndsOnceTheyHaveStopped) {
    roce::HostRunConfig c = host_config();
    c.run.linger_ns = 1'000'000;
    start_h2(c);
    for (uint64_t t = 0; t <= 100'000; t += 100) hosts->poll(t);
    EXPECT_FALSE(hosts->finished(10'000'000'000));  // nothing of its own to finish

    roce::UdpFlowConfig u;
    u.src = 0;  // h2 (indexes after start_h2's swap)
    u.dst = 2;  // h0
    u.rate_bps = 1'000'000'000;
    u.frame_bytes = 1000;
    u.stop_ns = 50'000;  // 7 frames from 10 us (the start delay), 8192 ns apart (the test above)
    c.udp_flows.push_back(u);
    start_h2(c);
    EXPECT_FALSE(hosts->finished(0));
    for (uint64_t t = 0; t <= 59'100; t += 100) hosts->poll(t);
    EXPECT_EQ(hosts->udp().sent(), 6u);
    EXPECT_FALSE(hosts->finished(59'100 + 10'000'000));  // frame 6 is still due
    hosts->poll(59'200);  // frame 6, due at 59 152 ns: the last
    ASSERT_EQ(hosts->udp().sent(), 7u);
    EXPECT_FALSE(hosts->finished(59'200 + 1'000'000 - 1));
    EXPECT_TRUE(hosts->finished(59'200 + 1'000'000));
}

// A PFC storm from h2 (HostFault) keeps its schedule when the loop comes back late, as a broken
// NIC at line rate would: every 100 us from the start (start delay 10 us), polled on time for
// 1 ms (10 frames), then one poll 10 ms late owes exactly 100 frames.
class RoceHostStorm : public RoceHostClasses {
  protected:
    static constexpr uint64_t kT0 = 10'000, kIv = 100'000, kUntil = 50'000'000;
    void start_storm(uint32_t max_catch_up) {
        roce::HostRunConfig c = host_config();
        roce::HostFault f;
        f.kind = roce::HostFault::pfc_storm;
        f.host = 0;  // h2: start_h2 swaps it to index 0, its one local host
        f.at_ns = 0;
        f.until_ns = kUntil;
        f.priority = 3;
        f.interval_ns = kIv;
        f.max_catch_up = max_catch_up;
        c.faults.push_back(f);
        start_h2(c);
        for (uint64_t k = 0; k < 10; k++) hosts->poll(kT0 + k * kIv);
        ASSERT_EQ(port.sent.size(), 10u);
    }
    // The PFC frames h2 sent: XOFF (0xFFFF) or XON (0) for priority 3 only.
    std::pair<size_t, size_t> xoff_xon() const {
        size_t xoff = 0, xon = 0;
        for (const Bytes &b : port.sent) {
            MacControlFrame m;
            EXPECT_EQ(parse_mac_control(b.data(), uint32_t(b.size()), &m), MacControlError::none);
            EXPECT_EQ(m.enable, 1 << 3);
            (m.quanta[3] == 0xFFFF ? xoff : xon)++;
            if (m.quanta[3] != 0xFFFF) {
                EXPECT_EQ(m.quanta[3], 0);
            }
        }
        return {xoff, xon};
    }
    const roce::HostCounters &c() const { return hosts->hosts()[0].c; }
};

TEST_F(RoceHostStorm, ALatePollSendsTheFramesTheScheduleOwes) {
    start_storm(256);
    // Slots at 1.0 ms .. 10.9 ms after the start are due at 10.9 ms: 100 frames.
    hosts->poll(kT0 + 9 * kIv + 10'000'000);
    EXPECT_EQ(port.sent.size(), 110u);
    EXPECT_EQ(c().storm_frames, 110u);
    EXPECT_EQ(c().storm_frames_skipped, 0u);
    // Back on time: the schedule kept its phase (the next slot is 11.0 ms, not 10.9 + 0.1 late).
    hosts->poll(kT0 + 110 * kIv - 1);
    EXPECT_EQ(port.sent.size(), 110u);
    hosts->poll(kT0 + 110 * kIv);
    EXPECT_EQ(port.sent.size(), 111u);
    // The end: the remaining slots before until (111 .. 499), then one XON; then nothing.
    hosts->poll(kT0 + 300 * kIv);
    hosts->poll(kT0 + kUntil);
    hosts->poll(kT0 + kUntil + 10 * kIv);
    EXPECT_EQ(xoff_xon(), std::make_pair(size_t(500), size_t(1)));
    EXPECT_EQ(c().storm_frames, 501u);
    EXPECT_EQ(c().storm_frames_skipped, 0u);
    EXPECT_EQ(c().pfc_xoff_tx, 500u);
    EXPECT_EQ(c().pfc_xon_tx, 1u);
}

TEST_F(RoceHostStorm, ALongStallSendsAtMostMaxCatchUpAndCountsTheRestSkipped) {
    start_storm(32);
    hosts->poll(kT0 + 9 * kIv + 10'000'000);  // owes 100: the newest 32 leave, 68 skipped
    EXPECT_EQ(port.sent.size(), 42u);
    EXPECT_EQ(c().storm_frames, 42u);
    EXPECT_EQ(c().storm_frames_skipped, 68u);
    // A refused frame stays owed: the device takes nothing at 11.0 ms, everything at 11.1 ms.
    port.refuse = true;
    hosts->poll(kT0 + 110 * kIv);
    EXPECT_EQ(c().storm_frames, 42u);
    port.refuse = false;
    hosts->poll(kT0 + 111 * kIv);
    EXPECT_EQ(c().storm_frames, 44u);
    // Sent + skipped is the schedule: 500 XOFF and the XON, as rocesim's storm_frames.
    for (uint64_t t = kT0 + 112 * kIv; t <= kT0 + kUntil; t += kIv) hosts->poll(t);
    EXPECT_EQ(c().storm_frames + c().storm_frames_skipped, 501u);
    EXPECT_EQ(c().storm_frames_skipped, 68u);
    EXPECT_EQ(xoff_xon(), std::make_pair(size_t(432), size_t(1)));
}

// --- The QP pacer follows every DCQCN rate change, the byte counter's included ---------------
//
// Sender h0 alone (local host 0; h1 and h2 are peers): one 32 KB WRITE to h2 (32 packets of
// 1106 wire bytes after the first 1122) at 10 Gb/s, pacer slack 0 and polled exactly at every
// next_event_ns(), so packet k leaves at the whole ns its pacer allows: t(k+1) = t(k) +
// ceil(1106 x 8 / R ns) with R the QP's rate once packet k has left. A CNP pushed at 12 us cuts
// R to 5 Gb/s (alpha 1: Rc x (1 - 1/2)); from then the byte counter (2000 bytes) fires on every
// second packet, each time a fast recovery step Rc = (Rt + Rc) / 2 towards Rt = 10 Gb/s:
// 7.5, 8.75, 9.375 Gb/s ..., from the sixth additive increase (Rt stays at the line rate). The
// gap after the packet that fired it is the new rate's (1180 ns at 7.5 Gb/s), not the 1770 ns
// that packet had reserved at 5 Gb/s. The increase timer (55 us after the cut) does not fire
// before the message is sent; no ACK comes back, so nothing but the pacer holds the QP.
class TimedPort final : public PortIo {
  public:
    uint16_t rx_burst(uint16_t, uint16_t, rte_mbuf **, uint16_t) override { return 0; }
    uint16_t tx_burst(uint16_t, uint16_t, rte_mbuf **pkts, uint16_t n) override {
        for (uint16_t i = 0; i < n; i++) {
            roce::ParsedRoce p;
            const uint8_t *f = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
            if (roce::parse_packet(f, pkts[i]->data_len, true, &p) == roce::ParseResult::ok &&
                p.payload_len)
                data_ns.push_back(now);
            rte_pktmbuf_free(pkts[i]);
        }
        return n;
    }
    uint64_t now = 0;
    std::vector<uint64_t> data_ns;  // when each data packet left
};

class RoceHostPacing : public RoceHosts {
  protected:
    // Runs h0 to `end_ns`, the CNP to QP kQpnBase pushed at `cnp_ns`.
    void run_sender(const roce::HostRunConfig &c, uint64_t cnp_ns, uint64_t end_ns) {
        cfg = c;
        for (size_t i = 1; i < cfg.hosts.size(); i++) cfg.hosts[i].device.clear();
        hosts = std::make_unique<roce::HostSet>(cfg, 1, port, pool);
        bool cnp_sent = false;
        for (uint64_t t = 0; t <= end_ns;) {
            port.now = t;
            if (!cnp_sent && t == cnp_ns) {
                push_cnp(t);
                cnp_sent = true;
            }
            while (hosts->poll(t)) {
            }
            uint64_t next = hosts->next_event_ns();
            if (!cnp_sent) next = std::min(next, cnp_ns);
            if (next == roce::kNeverNs) break;
            t = std::max(next, t + 1);
        }
    }
    void push_cnp(uint64_t t) {
        roce::L2L3 l;
        l.src_mac = switch_mac(0).b;
        l.dst_mac = host_mac(0).b;
        l.src_ip4 = ipa("10.0.3.2").v4;
        l.dst_ip4 = ipa("10.0.1.2").v4;
        l.dscp = 6;
        l.ecn = roce::Ecn::not_ect;
        const roce::PacketSpec s = roce::cnp_spec(l, roce::kQpnBase);
        rte_mbuf *m = rte_pktmbuf_alloc(pool);
        ASSERT_NE(m, nullptr);
        const uint32_t len = roce::packet_len(s);
        roce::build_packet(rte_pktmbuf_mtod(m, uint8_t *), len, s);
        rte_pktmbuf_append(m, uint16_t(len));
        hosts->on_rx(0, &m, 1, t);
    }
    TimedPort port;
};

TEST_F(RoceHostPacing, AByteCounterIncreaseRetimesThePacketWaiting) {
    roce::HostRunConfig c = host_config();
    c.run.pacer_slack_ns = 0;
    c.workload.spec.pattern = roce::Pattern::pairs;
    c.workload.spec.pairs = {{0, 2}};
    c.workload.spec.size_bytes = 32 * 1024;
    c.dcqcn.initial_alpha = 1.0;
    c.dcqcn.byte_counter_bytes = 2000;
    c.dcqcn.rate_increase_timer_ns = 55'000;
    c.dcqcn.alpha_timer_ns = 55'000;
    c.dcqcn.rate_reduce_period_ns = 0;
    constexpr uint64_t kCnp = 12'000;
    run_sender(c, kCnp, 60'000);
    ASSERT_EQ(hosts->flows().size(), 1u);
    const roce::Flow &f = hosts->flows()[0];
    const auto &t = port.data_ns;
    ASSERT_EQ(t.size(), 32u);
    EXPECT_EQ(f.rp.stats().decreases, 1u);
    EXPECT_EQ(f.rp.stats().hyper, 0u);

    // The rates, written out: the cut, then fast recovery halfway to 10 Gb/s (rounded up).
    auto gap = [](uint64_t wire, uint64_t bps) {  // ns, rounded up
        return (wire * 8 * 1'000'000'000 + bps - 1) / bps;
    };
    constexpr uint64_t kLine = 10'000'000'000;
    const uint64_t r_cut = kLine / 2;
    EXPECT_EQ(gap(kWireNext, r_cut), 1770u);
    EXPECT_EQ(gap(kWireNext, (kLine + r_cut + 1) / 2), 1180u);

    // Before the CNP: line rate (10 us start, the first packet 1122 wire bytes).
    EXPECT_EQ(t[0], 10'000u);
    EXPECT_EQ(t[1], 10'000u + gap(kWireFirst, kLine));
    size_t k = 0;
    while (k < t.size() && t[k] < kCnp) k++;
    ASSERT_GT(k, 1u);
    ASSERT_LT(k + 8, t.size());
    // The cut at the CNP (Rt = Rc, Rc / 2, the byte count restarts) re-times packet k, which
    // waited for 10 Gb/s's gap after packet k - 1: it leaves 5 Gb/s's gap after it.
    uint64_t rc = kLine / 2, rt = kLine, bytes = 0;
    uint32_t bc = 0;
    EXPECT_EQ(t[k], t[k - 1] + gap(kWireNext, rc));
    // From packet k on, every gap is that of the rate after the packet before it left, the
    // byte counter's increases included. The QCN rule with T = 0: BC <= F (5) fast recovery,
    // then additive increase, whose Rt + R_AI is capped at the line rate Rt already has.
    std::vector<uint64_t> increases;
    for (size_t j = k; j < t.size(); j++) {
        bytes += kWireNext;
        if (bytes >= 2000) {
            bytes -= 2000;
            bc++;
            rc = (rt + rc + 1) / 2;
            increases.push_back(t[j]);
        }
        SCOPED_TRACE(j);
        if (j + 1 < t.size()) {
            EXPECT_EQ(t[j + 1] - t[j], gap(kWireNext, rc)) << "rate " << rc;
        }
    }
    EXPECT_EQ(f.rp.stats().fast_recovery, 5u);
    EXPECT_EQ(f.rp.stats().additive, bc - 5);
    EXPECT_EQ(f.rp.rate_bps(), rc);
    // The trace agrees: the increases at the packets above.
    std::vector<uint64_t> inc;
    for (const roce::RateChange &e : f.trace)
        if (e.event == roce::RpEvent::fast_recovery || e.event == roce::RpEvent::additive)
            inc.push_back(e.t_ns);
    EXPECT_EQ(inc, increases);
    ASSERT_GE(increases.size(), 6u);
    EXPECT_EQ(t[k + 2] - t[k + 1], 1180u);  // the packet that fired the first step: 7.5 Gb/s
}

}  // namespace
}  // namespace rocesw::test
