// Egress cut-through (doc/qos.md, "Cut-through") is an optimisation, never a behaviour: the same
// packet sequences go through two switches that differ only in ROCESW.cut_through, and what
// leaves (every frame, in order, per port, in which poll) and every counter (the full scrape of
// the port, drop, worker, queue, pool, PG, PFC and accounting families) must be identical.
// Uncongested, congested, shaped, paused (PFC received), mixed classes, device refusals, and
// random sequences with fixed seeds; with one worker, with two workers (each port's owner
// receives packets for it from the other through the handoff ring) and with host interfaces
// (frames injected into the handoff rings); the runs with cut-through on must have used it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "common/strings.h"
#include "exposition.h"
#include "fixture.h"
#include "pfc/frame.h"
#include "pkt/mbuf_meta.h"
#include "pkt/parser.h"
#include "pipeline/accounting.h"
#include "pipeline/dataplane_metrics.h"
#include "qos/pfc_views.h"
#include "qos/qos_config.h"
#include "qos/qos_metrics.h"
#include "qos_fixture.h"

namespace rocesw::test {
namespace {

// DSCP d -> TC d % 8 -> queue d % 8. Queue 6-7 strict, 0 and 3 DWRR 50, the rest DWRR 1; queue 3
// lossless (PG 3, PFC) and marking at dequeue from 3000 bytes; queue 1 marks ECT and drops
// Not-ECT (WRED) at enqueue from 2000 bytes; lossy queues share a small dynamic pool.
const std::string kTables =
    "SCHEDULER:\n  ets_50: {type: DWRR, weight: 50}\n  ets_1: {type: DWRR, weight: 1}\n"
    "  strict: {type: STRICT}\n"
    "WRED_PROFILE:\n"
    "  deq: {ecn: ecn_all, wred_green_enable: false, green_min_threshold: 3000,"
    " green_max_threshold: 30000, green_drop_probability: 100, ecn_mark_point: dequeue}\n"
    "  enq: {ecn: ecn_all, wred_green_enable: true, green_min_threshold: 2000,"
    " green_max_threshold: 20000, green_drop_probability: 50, ecn_mark_point: enqueue}\n"
    "BUFFER_POOL:\n"
    "  ingress_lossless_pool: {type: ingress, mode: dynamic, size: 1000000, xoff: 200000}\n"
    "  egress_lossless_pool: {type: egress, mode: static, size: 1000000}\n"
    "  egress_lossy_pool: {type: egress, mode: dynamic, size: 120000}\n"
    "BUFFER_PROFILE:\n"
    "  ingress_lossless_profile: {pool: ingress_lossless_pool, size: 0, dynamic_th: -2,"
    " xoff: 40000, xon_offset: 5000}\n"
    "  egress_lossless_profile: {pool: egress_lossless_pool, size: 0, static_th: 1000000}\n"
    "  egress_lossy_profile: {pool: egress_lossy_pool, size: 1518, dynamic_th: 0}\n"
    "QUEUE:\n  default|0: {scheduler: ets_50}\n  default|1: {scheduler: ets_1, wred_profile: enq}\n"
    "  default|2: {scheduler: ets_1}\n  default|3: {scheduler: ets_50, wred_profile: deq}\n"
    "  default|4-5: {scheduler: ets_1}\n  default|6-7: {scheduler: strict}\n"
    "BUFFER_PG:\n  default|3: {profile: ingress_lossless_profile}\n"
    "BUFFER_QUEUE:\n  default|0-2: {profile: egress_lossy_profile}\n"
    "  default|3: {profile: egress_lossless_profile}\n"
    "  default|4-7: {profile: egress_lossy_profile}\n";

// A UDP frame from h1 (port 0) or h2 (port 1) to the host on port `to` (h2 or h1; the sender's
// own host: routed back out of the port it came in on).
Bytes udp(uint16_t from, uint8_t dscp, uint8_t ecn, uint32_t frame_len, uint16_t seq, int to = -1) {
    const bool h1 = from == 0;
    const uint16_t out = to < 0 ? uint16_t(1 - from) : uint16_t(to);
    return cat(eth(h1 ? kP0 : kP1, h1 ? kH1 : kH2, kEtherTypeIpv4),
               ipv4(h1 ? v4(10, 0, 1, 2) : v4(10, 0, 2, 2), out == 0 ? v4(10, 0, 1, 2) : v4(10, 0, 2, 2),
                    kProtoUdp, udp_payload(seq, 2000, frame_len - 42), 64,
                    uint8_t(dscp << 2 | ecn)));
}

// PFC from the peer on `port`: priority 3 paused for `quanta` (0: XON).
Bytes pfc3(uint16_t quanta) {
    Bytes b(kMacControlFrameLen);
    std::array<uint16_t, 8> q{};
    q[3] = quanta;
    build_pfc_frame(b.data(), {0x02, 0, 0, 0, 0xBB, 0x02}, uint8_t(1u << 3), q);
    return b;
}

// What the test does before one poll: frames into each port's RX, frames from the port's host
// interface (TrafficManager::inject: Topology::host_interfaces), a TX budget for port 1
// (UINT32_MAX: none), then the poll at now + step_ns (each worker, in turn).
struct Step {
    std::vector<Bytes> rx[2];
    // Per frame of rx[0], when not empty: the length of its first segment, 0 for one segment.
    std::vector<uint16_t> first0;
    std::vector<Bytes> host[2];
    uint32_t tx_budget1 = UINT32_MAX;
    uint64_t step_ns = 10'000;
    int pause0 = -1;  // >= 0: TrafficManager::set_paused(0, pause0) before the poll
    int pause1 = -1;  // the same for port 1
    int down1 = -1;   // >= 0: TrafficManager::set_link_down(1, down1 != 0) before the poll
    int clear_wm = -1;  // >= 0: TrafficManager::clear_watermarks(clear_wm) before the poll
};
using Script = std::vector<Step>;

// How the switch is built: one worker polling both ports (owning both), or two workers, worker
// w polling and owning port w (packets for the other port go through its handoff ring); with
// host interfaces or not (TrafficManager::enable_inject: a handoff ring on every port).
struct Topology {
    uint16_t workers = 1;
    bool host_interfaces = false;
    bool reverse_polls = false;  // two workers: worker 1 polls first
};

struct NullCommands final : CommandTable {
    void add(CommandSpec) override {}
};

// One switch (two ports, one worker, QosEgress) and everything it sent.
struct Outcome {
    using Sent = std::tuple<uint64_t, uint16_t, Bytes>;  // poll time, port, frame
    std::vector<Sent> sent;
    std::string scrape;  // without rocesw_port_cut_through_packets_total
    // Both ports' TX ring gauges (PortQosStats::tx_ring_bytes) after every poll: what a scrape
    // in between would read (the final scrape sees the rings drained).
    std::vector<uint64_t> ring_gauges;
    // Both ports' queue watermark gauges (bytes, packets) after every poll: a watermark clear
    // applied at another poll shows here even when later frames hide it from the final scrape.
    std::vector<uint64_t> wm_gauges;
    // Both ports' PG watermarks (as ingress ports) after every poll, the same way: a PG
    // watermark clear at a poll's flush reads the PGs' bytes then.
    std::vector<uint64_t> pg_wm_gauges;
    std::vector<uint64_t> paused_gauges;  // PfcPortStats::paused_queues, the same way
    uint64_t cut_through_packets = 0;
    uint64_t cut_through_scraped = 0;  // rocesw_port_cut_through_packets_total, all ports
    uint64_t sum_admissions = 0;       // bursts admitted in sums (QosEgress::admit_in_sums)
    uint64_t runs_tested = 0, runs_untested = 0;  // QosEgress::dequeue_runs
    uint64_t runs_whole = 0;  // of runs_untested, whole queues (QosEgress::whole_runs)
    uint64_t idle_skips = 0;  // QosEgress::idle_skips
    uint64_t summed = 0;  // bursts cut through on their summary (QosEgress::summed_cut_throughs)
    uint64_t mixed = 0;   // bursts cut through by QosEgress::cut_through_mixed
    bool balanced = false;
};

class CutThrough : public SwitchFixture {
  protected:
    uint32_t queue_packets_ = 0;  // non-zero: the plan's ROCESW.queue_packets
    // Set: the profile is qos_profile(*tables_, port_fields) instead of kTables with PFC on
    // priority 3 (port_fields then without the leading ", ").
    const std::string *tables_ = nullptr;
    // Set: the whole QoS file (tables_ and port_fields unused).
    const std::string *profile_ = nullptr;

    void SetUp() override {}
    void TearDown() override {}

    Outcome run(const Script &script, bool cut_through, uint64_t speed_mbps,
                const std::string &port_fields, const Topology &setup, bool sum_admission = true,
                bool run_tests_once = true, bool pfc_skip = true, bool plain_skip = true,
                bool burst_summary = true, bool mixed_cut_through = true) {
        Outcome r;
        std::vector<QosPortInfo> info = {{"p0", speed_mbps}, {"p1", speed_mbps}};
        const std::string profile =
            profile_  ? *profile_
            : tables_ ? qos_profile(*tables_, port_fields)
                      : qos_profile(kTables, "pfc_enable: \"3\"" + port_fields);
        QosPlan plan = build_qos_plan(load_qos_string(profile, "t.yaml"), info);
        plan.cut_through = cut_through;
        plan.sum_admission = sum_admission;
        plan.run_tests_once = run_tests_once;
        plan.pfc_skip = pfc_skip;
        plan.plain_skip = plain_skip;
        plan.burst_summary = burst_summary;
        plan.mixed_cut_through = mixed_cut_through;
        if (queue_packets_) plan.queue_packets = queue_packets_;
        TestPorts tp(unique_name("ct"), 2, 32768);
        {
            const uint16_t nw = setup.workers;
            DataplaneOptions o = options(nw);
            o.egress = nullptr;  // QosEgress
            o.pfc_pool = tp.pool();
            if (nw == 2) o.rx = {{{0, 0}}, {{1, 0}}};  // worker w polls port w (and owns it)
            Dataplane d(spec(), &plan, tp, std::move(o));
            if (setup.host_interfaces) d.tm().enable_inject();
            uint64_t now = 1'000'000;
            auto poll = [&] {
                for (uint16_t i = 0; i < nw; i++) {
                    d.poll(setup.reverse_polls ? uint16_t(nw - 1 - i) : i, now);
                    for (uint16_t p = 0; p < 2; p++) {
                        for (auto &f : tp.take_tx(p)) r.sent.emplace_back(now, p, std::move(f));
                        r.ring_gauges.push_back(d.tm().stats(p).tx_ring_bytes.load());
                        for (const QueueStats &q : d.tm().stats(p).queues) {
                            r.wm_gauges.push_back(q.watermark_bytes.load());
                            r.wm_gauges.push_back(q.watermark_packets.load());
                        }
                        r.paused_gauges.push_back(d.tm().pfc().stats(p).paused_queues.load());
                        for (uint8_t pg = 0; pg < kNumPg; pg++)
                            r.pg_wm_gauges.push_back(d.tm().pg_watermark(p, pg));
                    }
                }
            };
            auto backlog = [&] {
                uint32_t b = 0;
                for (uint16_t w = 0; w < nw; w++) b += d.egress(w).backlog();
                return b;
            };
            for (const Step &s : script) {
                for (uint16_t p = 0; p < 2; p++)
                    for (size_t i = 0; i < s.rx[p].size(); i++) {
                        if (p == 0 && i < s.first0.size() && s.first0[i])
                            tp.inject_two_segments(p, s.rx[p][i], s.first0[i]);
                        else
                            tp.inject(p, s.rx[p][i]);
                    }
                for (uint16_t p = 0; p < 2; p++)
                    for (const Bytes &f : s.host[p]) host_frame(d, tp, p, f);
                tp.set_tx_budget(1, s.tx_budget1);
                if (s.pause0 >= 0) d.tm().set_paused(0, uint8_t(s.pause0));
                if (s.pause1 >= 0) d.tm().set_paused(1, uint8_t(s.pause1));
                if (s.down1 >= 0) d.tm().set_link_down(1, s.down1 != 0);
                if (s.clear_wm >= 0) d.tm().clear_watermarks(uint16_t(s.clear_wm));
                now += s.step_ns;
                poll();
            }
            // Everything held leaves: no budget, pauses expire.
            tp.set_tx_budget(1, UINT32_MAX);
            d.tm().set_paused(0, 0);
            d.tm().set_paused(1, 0);
            d.tm().set_link_down(1, false);
            for (int i = 0; i < 2000 && backlog(); i++) {
                now += 20'000;
                poll();
            }
            EXPECT_EQ(backlog(), 0u);
            now += 20'000;
            poll();

            const std::vector<std::string> names = {"p0", "p1"};
            MetricRegistry reg;
            NullCommands cmds;
            ViewRegistry views{cmds, reg};
            register_dataplane_metrics(reg, {names, d.counters(), nw});
            register_qos_metrics(reg, names, d.tm());
            register_pfc_views(views, {names, {"pfc", "pfc"}, &d.tm(), [now] { return now; }});
            register_accounting_metrics(reg, accounting_sources(d, names));
            // The one family that must differ: what cut through, per port (summed here).
            const std::string family = "rocesw_port_cut_through_packets_total";
            std::istringstream lines(reg.render());
            for (std::string line; std::getline(lines, line);) {
                if (line.find(family) == std::string::npos) {
                    r.scrape += line + "\n";
                    continue;
                }
                if (line.rfind(family + "{", 0) == 0)
                    r.cut_through_scraped += std::stoull(line.substr(line.rfind(' ') + 1));
            }
            r.balanced = check_accounting(take_accounting(accounting_sources(d, names))).balanced;
            for (uint16_t w = 0; w < nw; w++) {
                r.cut_through_packets += d.qos_egress(w)->cut_through_packets();
                r.sum_admissions += d.qos_egress(w)->sum_admissions();
                r.runs_tested += d.qos_egress(w)->dequeue_runs(true);
                r.runs_untested += d.qos_egress(w)->dequeue_runs(false);
                r.runs_whole += d.qos_egress(w)->whole_runs();
                r.idle_skips += d.qos_egress(w)->idle_skips();
                r.summed += d.qos_egress(w)->summed_cut_throughs();
                r.mixed += d.qos_egress(w)->mixed_cut_throughs();
            }
        }
        return r;
    }

    // A frame the kernel sent on port `port`'s host interface, as HostInterfaces::from_kernel
    // hands it to the port's owner.
    static void host_frame(Dataplane &d, TestPorts &tp, uint16_t port, const Bytes &f) {
        rte_mbuf *m = rte_pktmbuf_alloc(tp.pool());
        ASSERT_NE(m, nullptr);
        auto *b = reinterpret_cast<uint8_t *>(rte_pktmbuf_append(m, uint16_t(f.size())));
        std::memcpy(b, f.data(), f.size());
        PacketMeta *meta = meta_of(m);
        ASSERT_FALSE(parse_frame(b, uint32_t(f.size()), ParseOptions{}, meta));
        meta->tc = d.tm().plan().switch_tc;
        meta->in_port = meta->out_port = uint8_t(port);
        ASSERT_EQ(d.tm().inject(port, &m, 1), 1u);
    }

    // The script through both switches: identical output and counters; returns the packets
    // that cut through.
    uint64_t same(const Script &script, uint64_t speed_mbps = 10000,
                  const std::string &port_fields = "", const Topology &setup = {}) {
        const Outcome on = run(script, true, speed_mbps, port_fields, setup);
        const Outcome off = run(script, false, speed_mbps, port_fields, setup);
        EXPECT_EQ(off.cut_through_packets, 0u);
        EXPECT_EQ(off.cut_through_scraped, 0u);
        EXPECT_EQ(on.cut_through_scraped, on.cut_through_packets);
        compare(on, off, "cut-through", "queued");
        return on.cut_through_packets;
    }

    // The script through a switch that admits in sums where it can and one that admits every
    // burst per packet (QosPlan::sum_admission): identical output and counters. Returns the
    // bursts admitted in sums.
    uint64_t same_admission(const Script &script, uint64_t speed_mbps = 10000,
                            const std::string &port_fields = "", const Topology &setup = {}) {
        // (The mixed cut-through off: it admits the bursts this compares in sums too.)
        const Outcome sums = run(script, true, speed_mbps, port_fields, setup, true, true, true,
                                 true, true, false);
        const Outcome each = run(script, true, speed_mbps, port_fields, setup, false, true, true,
                                 true, true, false);
        EXPECT_EQ(each.sum_admissions, 0u);
        EXPECT_EQ(sums.cut_through_packets, each.cut_through_packets);
        compare(sums, each, "in sums", "per packet");
        return sums.sum_admissions;
    }

    // The script through a switch that skips a dequeue run's per-frame tests when bounds allow
    // (QosPlan::run_tests_once) and one that tests every frame: identical output (frames, ECN
    // marks, order, poll) and counters (marks, depths, watermarks, pools, PGs, PFC). Returns
    // the runs taken without the tests and adds the runs that needed them to *tested.
    // `whole`: adds the runs that took a whole queue without the length sum.
    uint64_t same_runs(const Script &script, uint64_t speed_mbps, const std::string &port_fields,
                       const Topology &setup = {}, uint64_t *tested = nullptr,
                       uint64_t *whole = nullptr) {
        // (The mixed cut-through off: it takes the mixed bursts' runs this compares.)
        const Outcome once = run(script, true, speed_mbps, port_fields, setup, true, true, true,
                                 true, true, false);
        const Outcome each = run(script, true, speed_mbps, port_fields, setup, true, false, true,
                                 true, true, false);
        EXPECT_EQ(each.runs_untested, 0u);
        EXPECT_EQ(each.runs_whole, 0u);
        EXPECT_LE(once.runs_whole, once.runs_untested);
        EXPECT_EQ(once.runs_tested + once.runs_untested, each.runs_tested);
        compare(once, each, "runs tested once", "every frame tested");
        if (tested) *tested += once.runs_tested;
        if (whole) *whole += once.runs_whole;
        return once.runs_untested;
    }

    // The script through a switch whose PFC generation skips PGs and ports with the inputs of
    // their last XOFF-off evaluation (QosPlan::pfc_skip) and one that evaluates every lossless
    // PG at every flush: identical output (PFC frames included) and counters (PG thresholds,
    // headroom use and watermarks, XOFF gauges, PFC frames and pause times).
    void same_pfc(const Script &script, uint64_t speed_mbps, const std::string &port_fields,
                  const Topology &setup = {}) {
        const Outcome skip = run(script, true, speed_mbps, port_fields, setup, true, true, true);
        const Outcome each = run(script, true, speed_mbps, port_fields, setup, true, true, false);
        compare(skip, each, "PFC skip", "every PG evaluated");
    }

    // The script through a switch that skips the checks of features that are off
    // (QosPlan::plain_skip: TrafficManager::Port::ct_plain, pfc_inert) and one that runs them
    // all: identical output and counters, and the same packets cut through.
    // Returns the idle flushes whose steps were skipped (TrafficManager::Port::idle_still).
    uint64_t same_plain(const Script &script, uint64_t speed_mbps, const std::string &port_fields,
                        const Topology &setup = {}) {
        const Outcome skip =
            run(script, true, speed_mbps, port_fields, setup, true, true, true, true);
        const Outcome all =
            run(script, true, speed_mbps, port_fields, setup, true, true, true, false);
        EXPECT_EQ(skip.cut_through_packets, all.cut_through_packets);
        EXPECT_EQ(all.idle_skips, 0u);
        compare(skip, all, "plain skipped", "every check run");
        return skip.idle_skips;
    }

    // The script through a switch whose cut-through takes a burst's class and bytes from the
    // worker's BurstSummary (QosPlan::burst_summary) and one that reads them from every packet:
    // identical output and counters, the same packets cut through. Returns the bursts that cut
    // through on their summary.
    uint64_t same_summary(const Script &script, uint64_t speed_mbps, const Topology &setup = {}) {
        const Outcome sum =
            run(script, true, speed_mbps, "", setup, true, true, true, true, true);
        const Outcome read =
            run(script, true, speed_mbps, "", setup, true, true, true, true, false);
        EXPECT_EQ(read.summed, 0u);
        EXPECT_EQ(sum.cut_through_packets, read.cut_through_packets);
        compare(sum, read, "summary", "every packet read");
        return sum.summed;
    }

    // The script through a switch that cuts a final burst of several queues for an idle port
    // through in the order service() would send it (QosPlan::mixed_cut_through,
    // QosEgress::cut_through_mixed) and one that leaves such a burst queued for the flush:
    // identical output and counters. Returns the bursts that took the mixed path.
    uint64_t same_mixed(const Script &script, uint64_t speed_mbps,
                        const std::string &port_fields, const Topology &setup = {}) {
        const Outcome mixed =
            run(script, true, speed_mbps, port_fields, setup, true, true, true, true, true, true);
        const Outcome queued =
            run(script, true, speed_mbps, port_fields, setup, true, true, true, true, true, false);
        EXPECT_EQ(queued.mixed, 0u);
        EXPECT_GE(mixed.cut_through_packets, queued.cut_through_packets);
        compare(mixed, queued, "mixed cut-through", "queued");
        return mixed.mixed;
    }

    static void compare(const Outcome &on, const Outcome &off, const char *a, const char *b) {
        EXPECT_TRUE(on.balanced);
        EXPECT_TRUE(off.balanced);
        EXPECT_FALSE(on.sent.empty());
        EXPECT_EQ(on.sent.size(), off.sent.size());
        for (size_t i = 0; i < std::min(on.sent.size(), off.sent.size()); i++) {
            if (on.sent[i] == off.sent[i]) continue;
            ADD_FAILURE() << "frame " << i << " differs: " << a << " at " << std::get<0>(on.sent[i])
                          << " ns on p" << std::get<1>(on.sent[i]) << ", " << b << " at "
                          << std::get<0>(off.sent[i]) << " ns on p" << std::get<1>(off.sent[i]);
            break;
        }
        EXPECT_EQ(on.ring_gauges, off.ring_gauges) << "TX ring gauges after each poll";
        EXPECT_TRUE(on.wm_gauges == off.wm_gauges) << "queue watermarks after each poll";
        EXPECT_TRUE(on.pg_wm_gauges == off.pg_wm_gauges) << "PG watermarks after each poll";
        EXPECT_EQ(on.paused_gauges, off.paused_gauges) << "paused queues after each poll";
        EXPECT_EQ(on.scrape, off.scrape);
        if (on.scrape != off.scrape) {
            auto x = parse_exposition(on.scrape), y = parse_exposition(off.scrape);
            for (auto &[k, v] : x)
                if (!y.count(k) || y[k] != v)
                    ADD_FAILURE() << k << ": " << v << " " << a << ", "
                                  << (y.count(k) ? std::to_string(y[k]) : "absent") << " " << b;
        }
    }
};

// One class, well below the port's rate: every burst cuts through.
TEST_F(CutThrough, UncongestedSingleClassAllCutThrough) {
    Script s;
    uint16_t seq = 0;
    for (int i = 0; i < 50; i++) {
        Step st;
        for (int k = 0; k < 1 + i % 32; k++) st.rx[0].push_back(udp(0, 0, 0, 64 + 13 * k, seq++));
        s.push_back(st);
    }
    EXPECT_EQ(same(s), uint64_t(seq)) << "every packet cut through";
}

// Both ports receive, 8 frames each per poll. Each for the other: each RX burst is the only one
// of its poll for its egress port, so both cut through. Both for port 1 (2:1): the first burst
// is queued (the second reaches the same port before the flush), the second finds the port
// busy; nothing cuts through.
TEST_F(CutThrough, TwoIngressPorts) {
    for (const int to : {0, 1}) {  // port 1's frames to port `to`
        Script s;
        uint16_t seq = 0;
        for (int i = 0; i < 40; i++) {
            Step st;
            for (int k = 0; k < 8; k++) st.rx[0].push_back(udp(0, 3, 1, 200, seq++));
            for (int k = 0; k < 8; k++)
                st.rx[1].push_back(udp(1, 3, uint8_t(i % 2), 300, seq++, to));
            s.push_back(st);
        }
        SCOPED_TRACE(to == 0 ? "each to the other" : "both to port 1");
        EXPECT_EQ(same(s), to == 0 ? uint64_t(seq) : 0u);
    }
}

// One ingress burst of lossless (PG 3) frames split over both egress ports: both cut through,
// and the PG's bytes and watermark count the two halves together, as queued.
TEST_F(CutThrough, OneBurstToBothPorts) {
    Script s;
    uint16_t seq = 0;
    for (int i = 0; i < 40; i++) {
        Step st;
        for (int k = 0; k < 16; k++) st.rx[0].push_back(udp(0, 3, 0, 700, seq++, k % 2));
        s.push_back(st);
    }
    EXPECT_EQ(same(s), uint64_t(seq));
}

// Port 0's six lossy queues, paused, hold most of the shared lossy pool; bursts to idle port 1
// then meet the dynamic threshold part-way (buffer_full per packet, as queued).
TEST_F(CutThrough, SharedPoolNearlyFull) {
    Script s;
    uint16_t seq = 0;
    const uint8_t dscps[] = {0, 2, 4, 5, 6, 7};
    for (int i = 0; i < 30; i++) {
        Step st;
        if (i == 0) st.pause0 = 0xFF;
        if (i == 20) st.pause0 = 0;
        if (i < 10)
            for (int k = 0; k < 32; k++) st.rx[1].push_back(udp(1, dscps[k % 6], 0, 1000, seq++));
        for (int k = 0; k < 24; k++) st.rx[0].push_back(udp(0, 0, 0, 1000, seq++));
        st.step_ns = 30'000;
        s.push_back(st);
    }
    same(s);
}

// 30 polls of `n` frames of `len` bytes from port 0 (ECT(0)), frame k with DSCP dscp(k).
// 60 steps whose port-0 bursts `add(step, i, seq)` fills while port 1's peer pauses queue 3
// (step 10), releases it (step 30) and pauses it for 200 quanta (step 40).
template <typename Add>
Script pfc_pause_script(Add add) {
    Script s;
    uint16_t seq = 0;
    for (int i = 0; i < 60; i++) {
        Step st;
        if (i == 10) st.rx[1].push_back(pfc3(0xFFFF));
        if (i == 30) st.rx[1].push_back(pfc3(0));
        if (i == 40) st.rx[1].push_back(pfc3(200));
        add(st, i, seq);
        s.push_back(st);
    }
    return s;
}

Script mixed_bursts(int n, uint32_t len, uint8_t (*dscp)(int k)) {
    Script s;
    uint16_t seq = 0;
    for (int i = 0; i < 30; i++) {
        Step st;
        for (int k = 0; k < n; k++) st.rx[0].push_back(udp(0, dscp(k), 2, len, seq++));
        s.push_back(st);
    }
    return s;
}

// Mixed classes in a burst (strict and DWRR queues): the scheduler orders them, no cut-through.
TEST_F(CutThrough, MixedClassesAreScheduled) {
    const Script s =
        mixed_bursts(24, 500, [](int k) { return uint8_t(k % 3 == 0 ? 6 : k % 3 == 1 ? 3 : 0); });
    EXPECT_EQ(same(s), 0u);
}

// Mixed bursts and one-class bursts in turns of three: after a burst that went to several
// queues (QosEgress::enqueue, TrafficManager::Port::ct_mixed) the next idle burst skips
// admit_cut_through()'s scan and is admitted in sums; a one-class burst there still cuts
// through (cut_through()), and the one after it takes admit_cut_through() again. Every
// one-class packet cuts through; the bursts admitted in sums are the mixed ones and the first
// one-class burst of each turn - exactly, so that neither the skip nor its end can go missing.
TEST_F(CutThrough, OneClassAfterMixedBursts) {
    Script s;
    uint16_t seq = 0;
    uint64_t one_class = 0, mixed = 0, first_after_mixed = 0;
    for (int i = 0; i < 60; i++) {
        Step st;
        const bool mix = (i / 3) % 2 == 0;
        for (int k = 0; k < 16; k++)
            st.rx[0].push_back(
                udp(0, uint8_t(mix ? (k % 3 == 0 ? 6 : k % 3 == 1 ? 3 : 0) : 0), uint8_t(k % 3),
                    300 + 20 * (k % 5), seq++));
        if (!mix) one_class += 16;
        mixed += mix;
        first_after_mixed += !mix && i % 3 == 0;
        s.push_back(st);
    }
    // The mixed cut-through off (QosEgress::cut_through_mixed takes the bursts after a mixed one).
    const Outcome on = run(s, true, 10000, "", {}, true, true, true, true, true, false);
    EXPECT_EQ(on.cut_through_packets, one_class);
    EXPECT_EQ(on.sum_admissions, mixed + first_after_mixed);
    // On: the bursts after a mixed one may cut through by cut_through_mixed() (not those whose
    // ECT frames of queue 3 reach its marking depth with the TX ring's bytes ahead).
    const Outcome mixed_on = run(s, true, 10000, "", {});
    EXPECT_GT(mixed_on.mixed, 5u);
    EXPECT_EQ(same(s), mixed_on.cut_through_packets);
    same_mixed(s, 10000, "");
}

// A 1G port with a small shaper bucket and TX ring: queues build, ECN marks and drops happen;
// bursts that find the port idle and the shaper in credit still cut through.
TEST_F(CutThrough, ShapedAndCongested) {
    Script s;
    uint16_t seq = 0;
    for (int i = 0; i < 300; i++) {
        // Per 100 polls: 6 bursts of 24 frames 5 us apart (the queues build), 84 empty polls
        // 20 us apart (about 2.7 frames each: the shaper's bucket), 10 polls of 2 frames.
        Step st;
        const int j = i % 100;
        const int n = j < 6 ? 24 : j < 90 ? 0 : 2;
        for (int k = 0; k < n; k++)
            st.rx[0].push_back(udp(0, uint8_t(i % 4 == 0 ? 1 : 3), uint8_t(k % 3), 900, seq++));
        st.step_ns = j < 6 ? 5'000 : j < 90 ? 20'000 : 50'000;
        s.push_back(st);
    }
    EXPECT_GT(same(s, 1000, ", shaper_burst_bytes: 3000, tx_ring_bytes: 6000"), 0u);
}

// PFC from the peer pauses queue 3 of port 1, then releases it; bursts meanwhile queue.
TEST_F(CutThrough, PausedByPfc) {
    const Script s = pfc_pause_script([](Step &st, int i, uint16_t &seq) {
        for (int k = 0; k < 6; k++) st.rx[0].push_back(udp(0, 3, uint8_t(i % 3 ? 0 : 1), 1000, seq++));
    });
    EXPECT_GT(same(s), 0u);
}

// The device refuses part of a burst (TX budget): the rest is staged and retried.
TEST_F(CutThrough, DeviceRefusals) {
    Script s;
    uint16_t seq = 0;
    for (int i = 0; i < 40; i++) {
        Step st;
        for (int k = 0; k < 10; k++) st.rx[0].push_back(udp(0, 0, 0, 128, seq++));
        if (i % 7 == 3) st.tx_budget1 = 4;
        if (i % 7 == 4) st.tx_budget1 = 0;
        s.push_back(st);
    }
    EXPECT_GT(same(s), 0u);
}

// A random sequence (fixed seed): sizes, classes (mostly one per burst, as flows arrive,
// sometimes mixed), ECN codepoints, both ingress ports, PFC frames, TX budgets and poll
// intervals. Destinations per packet (mostly the other port) or, with `per_burst`, mostly one
// per burst; `host`: frames from the host interfaces too.
Script random_script(uint32_t seed, int steps, bool per_burst, bool host) {
    std::mt19937 rng(seed);
    auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
    Script s;
    uint16_t seq = 0;
    const uint8_t dscps[] = {0, 0, 0, 1, 2, 3, 3, 3, 3, 6, 7};
    for (int i = 0; i < steps; i++) {
        Step st;
        for (uint16_t p = 0; p < 2; p++) {
            if (pick(3) == 0) continue;
            const uint32_t n = 1 + pick(40);
            const bool mixed = pick(4) == 0, spread = !per_burst || pick(4) == 0;
            uint8_t dscp = dscps[pick(sizeof dscps)];
            uint16_t to = uint16_t(pick(2) == 0 ? p : 1 - p);
            for (uint32_t k = 0; k < n; k++) {
                if (mixed) dscp = dscps[pick(sizeof dscps)];
                if (spread) to = uint16_t(per_burst ? pick(2) : pick(4) == 0 ? p : 1 - p);
                st.rx[p].push_back(udp(p, dscp, uint8_t(pick(4)), 60 + pick(1400), seq++, to));
            }
            if (host && pick(6) == 0)
                st.host[p].push_back(udp(uint16_t(1 - p), 0, 0, 60 + pick(200), seq++, p));
        }
        if (pick(40) == 0) st.rx[1].push_back(pfc3(uint16_t(pick(3) == 0 ? 0 : pick(3000))));
        if (pick(25) == 0) st.tx_budget1 = pick(20);
        st.step_ns = 500 + pick(40'000);
        s.push_back(st);
    }
    return s;
}

// Random sequences on an unshaped 10G port and a shaped 1G port.
TEST_F(CutThrough, RandomSequences) {
    uint64_t total = 0;
    for (uint32_t seed : {1u, 2u, 3u, 4u, 5u, 6u}) {
        const Script s = random_script(seed, 300, false, false);
        SCOPED_TRACE("seed " + std::to_string(seed));
        total += same(s, seed % 2 ? 10000 : 1000,
                      seed % 2 ? "" : ", shaper_burst_bytes: 4000, tx_ring_bytes: 8000");
    }
    EXPECT_GT(total, 0u);
}

// Two workers, each polling and owning one port. Traffic back out of its own ingress port cuts
// through while the handoff ring is empty; traffic for the other port goes through the ring and
// is admitted at the owner's next flush (then the port is not idle).
TEST_F(CutThrough, TwoWorkersHandoff) {
    for (const bool reverse : {false, true}) {
        Script s;
        uint16_t seq = 0;
        for (int i = 0; i < 60; i++) {
            Step st;
            // 0: own port only; 1: the other port only; 2: alternately (a port's ring is then
            // empty when its owner polls every other step)
            const int phase = i / 20;
            const bool own = phase == 0 || (phase == 2 && i % 2);
            for (uint16_t p = 0; p < 2; p++)
                for (int k = 0; k < 6 + p; k++)
                    st.rx[p].push_back(udp(p, 3, 0, 300 + 50 * p, seq++,
                                           own ? p : 1 - p));
            s.push_back(st);
        }
        SCOPED_TRACE(reverse ? "worker 1 polls first" : "worker 0 polls first");
        // Phase 0: every burst; phase 1: none (the other worker's burst is in the ring at
        // each enqueue); phase 2: the own-port bursts that find the ring empty.
        const uint64_t ct = same(s, 10000, "", {2, false, reverse});
        EXPECT_GT(ct, 20u * 13);
        EXPECT_LT(ct, uint64_t(seq));
    }
}

// Host interfaces: every port has a handoff ring for the kernel's frames. Bursts to a port whose
// ring is empty cut through; a poll with frames from the kernel for that port takes the
// queued path (the flush schedules them together).
TEST_F(CutThrough, HostInterfaces) {
    Script s;
    uint16_t seq = 0;
    for (int i = 0; i < 60; i++) {
        Step st;
        for (int k = 0; k < 10; k++) st.rx[0].push_back(udp(0, 3, 0, 400, seq++));
        if (i % 5 == 2) st.host[1].push_back(udp(0, 0, 0, 90, seq++));
        if (i % 7 == 3) st.host[0].push_back(udp(1, 0, 0, 90, seq++));
        s.push_back(st);
    }
    const uint64_t ct = same(s, 10000, "", {1, true, false});
    EXPECT_GT(ct, 0u);
    EXPECT_LT(ct, 600u) << "polls with a kernel frame for port 1 are queued";
}

// Random sequences with two workers and with host interfaces.
TEST_F(CutThrough, RandomSequencesTwoWorkersAndHostInterfaces) {
    uint64_t total = 0;
    for (uint32_t seed : {11u, 12u, 13u, 14u}) {
        const Script s = random_script(seed, 200, true, true);
        SCOPED_TRACE("seed " + std::to_string(seed));
        const Topology setup{uint16_t(seed % 2 ? 2 : 1), true, seed % 4 == 3};
        total += same(s, seed % 4 < 2 ? 10000 : 1000,
                      seed % 4 < 2 ? "" : ", shaper_burst_bytes: 4000, tx_ring_bytes: 8000", setup);
    }
    EXPECT_GT(total, 0u);
}

// One-class bursts to an idle port whose cut-through (QosEgress::admit_cut_through) is decided
// from the burst's sums, or per packet when a sum reaches a limit: bursts that cross queue 1's
// enqueue WRED band (2000 bytes: Not-ECT drawn for a drop, ECT for a mark), queue 3's dequeue
// marking depth (3000 bytes, ECT frames), a small TX ring (the burst's wire bytes beyond its
// room, one frame larger than the ring), frames shorter than the minimum wire frame, a second
// ingress port's frames of the same class in the burst. Frames and counters as queued.
Script one_class_near_limits(uint32_t seed, int steps) {
    std::mt19937 rng(seed);
    auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
    Script s;
    uint16_t seq = 0;
    const uint8_t dscps[] = {0, 1, 3, 6};
    for (int i = 0; i < steps; i++) {
        Step st;
        const uint8_t dscp = dscps[pick(sizeof dscps)];
        const uint32_t n = 1 + pick(32);
        // Small frames (many below 60 bytes on the wire), mid-sized or large ones.
        const uint32_t kind = pick(3);
        const uint8_t ecn = uint8_t(pick(4));
        const bool mixed_ecn = pick(2) == 0;
        for (uint32_t k = 0; k < n; k++) {
            const uint32_t len = kind == 0 ? 42 + pick(40) : kind == 1 ? 60 + pick(200)
                                                                     : 200 + pick(1300);
            st.rx[0].push_back(
                udp(0, dscp, mixed_ecn ? uint8_t(pick(4)) : ecn, len, seq++, 1));
        }
        if (pick(6) == 0)  // port 1's own frames of the class back out of port 1
            for (uint32_t k = 0; k < 1 + pick(4); k++)
                st.rx[1].push_back(udp(1, dscp, ecn, 60 + pick(400), seq++, 1));
        // Mostly idle between polls; sometimes soon after (the ring still holds bytes).
        st.step_ns = pick(3) == 0 ? 300 + pick(3'000) : 50'000;
        s.push_back(st);
    }
    return s;
}

TEST_F(CutThrough, OneClassNearLimits) {
    uint64_t total = 0;
    for (uint32_t seed : {31u, 32u, 33u, 34u}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        const Script s = one_class_near_limits(seed, 250);
        // Every other seed with a TX ring of a few frames (and one larger than it).
        total += same(s, 10000, seed % 2 ? "" : ", shaper_burst_bytes: 20000, tx_ring_bytes: 1200");
    }
    EXPECT_GT(total, 1000u);
}

// Admission in sums (QosEgress::admit_in_sums) against per-packet admission: bursts of mixed
// classes (rsw-full's shape) near every limit - queues at the lossy pool's dynamic threshold,
// in the WRED band (queue 1 drops Not-ECT and marks ECT at enqueue), PG 3 beyond its XOFF
// threshold (PFC frames sent) and at its headroom limit, full queues (ROCESW.queue_packets),
// a TX ring and shaper that hold frames back. Both paths must leave the same frames and
// counters; the bursts near a limit take the per-packet path, the others the sum path.
Script mixed_near_limits(uint32_t seed, int steps) {
    std::mt19937 rng(seed);
    auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
    Script s;
    uint16_t seq = 0;
    const uint8_t dscps[] = {0, 1, 1, 3, 3, 3, 6, 2};
    for (int i = 0; i < steps; i++) {
        Step st;
        // Load in waves: 20 polls of heavy mixed bursts from both ports (queues, the pool and
        // PG 3 fill), then 20 light polls (they drain below the limits again).
        const bool heavy = (i / 20) % 2 == 0;
        for (uint16_t p = 0; p < 2; p++) {
            const uint32_t n = heavy ? 24 + pick(9) : pick(6);
            for (uint32_t k = 0; k < n; k++)
                st.rx[p].push_back(udp(p, dscps[pick(sizeof dscps)], uint8_t(pick(4)),
                                       heavy ? 600 + pick(900) : 60 + pick(200), seq++,
                                       pick(5) == 0 ? p : 1 - p));
        }
        if (i % 37 == 5) st.pause0 = 0x0F;  // port 0's queues 0-3 held: the shared pool fills
        if (i % 37 == 25) st.pause0 = 0;
        if (pick(30) == 0) st.tx_budget1 = pick(16);
        st.step_ns = heavy ? 2'000 + pick(4'000) : 20'000 + pick(40'000);
        s.push_back(st);
    }
    return s;
}

// Port 0's queues 0-3 paused while small mixed bursts for it arrive: queue 1 climbs through its
// WRED band (Not-ECT drawn for a drop, ECT for a mark at enqueue) one burst at a time, the
// lossy queues towards the dynamic threshold.
Script held_through_wred_band() {
    Script s;
    uint16_t seq = 0;
    const uint8_t dscps[] = {1, 0, 3, 1, 6, 2};
    for (int i = 0; i < 90; i++) {
        Step st;
        if (i == 0) st.pause0 = 0x0F;
        if (i == 70) st.pause0 = 0;
        for (int k = 0; k < 6; k++)
            st.rx[1].push_back(udp(1, dscps[k], uint8_t(i % 4 == 0 ? 0 : k % 3), 300 + 50 * (i % 7),
                                   seq++, 0));
        st.step_ns = 10'000;
        s.push_back(st);
    }
    return s;
}

// rsw-full's shape: 32 small frames, 80 % lossless (queue 3), 10 % strict, 10 % queue 0.
TEST_F(CutThrough, AdmissionInSumsMixedUncongested) {
    const Script s =
        mixed_bursts(32, 60, [](int k) { return uint8_t(k % 10 == 0 ? 6 : k % 10 == 1 ? 0 : 3); });
    EXPECT_EQ(same_admission(s), 30u) << "every burst in sums";
}

TEST_F(CutThrough, AdmissionInSumsNearLimits) {
    EXPECT_GT(same_admission(held_through_wred_band()), 5u);
    for (uint32_t seed : {1u, 2u, 3u, 4u}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        const Script s = mixed_near_limits(seed, 160);
        queue_packets_ = seed > 2 ? 64 : 0;  // 64 slots: queue_full within a burst
        // 1G ports (the queues build), every other seed shaped with a small TX ring.
        const uint64_t sums = same_admission(
            s, 1000, seed % 2 ? "" : ", shaper_burst_bytes: 4000, tx_ring_bytes: 8000");
        EXPECT_GT(sums, 20u);
        EXPECT_LT(sums, 300u) << "bursts near a limit are admitted per packet";
    }
}

// The scripts of the other tests, in both admissions: random classes, two workers (handoff
// rings: bursts of several ingress ports), host interfaces, PFC pauses.
TEST_F(CutThrough, AdmissionInSumsRandomSequences) {
    uint64_t total = 0;
    for (uint32_t seed : {21u, 22u, 23u, 24u}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        const Script s = random_script(seed, 200, seed % 2 == 0, seed >= 23);
        const Topology setup{uint16_t(seed >= 23 ? 2 : 1), seed >= 23, seed == 24};
        total += same_admission(s, seed % 2 ? 10000 : 1000,
                                seed % 2 ? "" : ", shaper_burst_bytes: 4000, tx_ring_bytes: 8000",
                                setup);
    }
    EXPECT_GT(total, 0u);
}

// Admission in sums writes a burst's slots from each queue's tail on, past the end of the
// queue's slots into scratch slots, and then copies what went past the end to the start
// (QosEgress::admit_in_sums, TrafficManager::kSlack): queues of 64 and 128 slots, whose tails
// wrap every few bursts at every offset, against per-packet admission - rsw-full's mixed
// bursts of 32 and of 29 frames, and random scripts with two workers and host interfaces
// (handoff bursts of up to 64 frames).
TEST_F(CutThrough, AdmissionInSumsAcrossTheEndOfTheSlots) {
    for (uint32_t slots : {64u, 128u}) {
        SCOPED_TRACE(std::to_string(slots) + " slots");
        queue_packets_ = slots;
        for (int n : {32, 29}) {
            const Script s = mixed_bursts(n, 60 + uint32_t(n), [](int k) {
                return uint8_t(k % 10 == 0 ? 6 : k % 10 == 1 ? 0 : 3);
            });
            EXPECT_EQ(same_admission(s), 30u) << "every burst in sums";
        }
        uint64_t total = 0;
        for (uint32_t seed : {41u, 42u}) {
            const Script s = random_script(seed, 200, seed % 2 == 0, true);
            total += same_admission(s, 10000, "", {2, true, seed == 42});
        }
        EXPECT_GT(total, 100u);
    }
}

// Dequeue runs without per-frame tests (QosEgress::take_run, QosPlan::run_tests_once) against
// runs that test every frame for the deficit, the shaper, the TX ring model and the dequeue
// marking depth: rsw-full's mixed bursts uncongested (every run untested); congested and shaped
// (queue 3 marks at dequeue from 3000 bytes, the shaper and a small TX ring stop runs, DWRR
// deficits run short); PFC pauses; device refusals; random sequences with two workers and host
// interfaces; mixed bursts near every buffer limit. The runs near a limit are tested per frame.
TEST_F(CutThrough, DequeueRunsWithoutTestsMatchEveryFrameTested) {
    uint64_t tested = 0, untested = 0, whole = 0;
    EXPECT_GE(same_runs(mixed_bursts(32, 60,
                                     [](int k) {
                                         return uint8_t(k % 10 == 0 ? 6 : k % 10 == 1 ? 0 : 3);
                                     }),
                        10000, "", {}, &tested, &whole),
              60u) << "uncongested: the strict and queue 0 runs at least";
    {
        SCOPED_TRACE("shaped and congested");
        Script s;
        uint16_t seq = 0;
        for (int i = 0; i < 300; i++) {  // as ShapedAndCongested, with mixed classes
            Step st;
            const int j = i % 100;
            const int n = j < 6 ? 24 : j < 90 ? 0 : 2;
            for (int k = 0; k < n; k++)
                st.rx[0].push_back(udp(0, uint8_t(k % 5 == 0 ? 6 : k % 2 ? 3 : 0),
                                       uint8_t(k % 3), 200 + 37 * (k % 11), seq++));
            st.step_ns = j < 6 ? 5'000 : j < 90 ? 20'000 : 50'000;
            s.push_back(st);
        }
        untested += same_runs(s, 1000, ", shaper_burst_bytes: 3000, tx_ring_bytes: 6000", {},
                              &tested, &whole);
        untested += same_runs(s, 1000, "", {}, &tested, &whole);
    }
    {
        SCOPED_TRACE("PFC pause");
        const Script s = pfc_pause_script([](Step &st, int i, uint16_t &seq) {
            for (int k = 0; k < 12; k++)
                st.rx[0].push_back(udp(0, uint8_t(k % 4 ? 3 : 0), uint8_t(i % 3 ? 2 : 1), 700, seq++));
            if (i % 9 == 4) st.tx_budget1 = 5;
        });
        untested += same_runs(s, 10000, "", {}, &tested, &whole);
    }
    {
        // Strict queues of one PG key held by a pause, then released: runs that end at the
        // burst's end with frames left (no whole-queue run) and the whole queue after.
        SCOPED_TRACE("strict queues released");
        Script s;
        uint16_t seq = 0;
        for (int i = 0; i < 60; i++) {
            Step st;
            for (int k = 0; k < 20; k++)
                st.rx[1].push_back(udp(1, uint8_t(k % 5 == 0 ? 0 : k % 2 ? 6 : 7),
                                       uint8_t(k % 3), 60 + 13 * (k % 7), seq++));
            if (i % 10 == 0) st.pause0 = 0xC0;  // port 0's queues 6 and 7 held
            if (i % 10 == 4) st.pause0 = 0;
            s.push_back(st);
        }
        untested += same_runs(s, 10000, "", {}, &tested, &whole);
    }
    for (uint32_t seed : {31u, 32u, 33u, 34u}) {
        SCOPED_TRACE("random seed " + std::to_string(seed));
        const Script s = random_script(seed, 200, seed % 2 == 0, seed >= 33);
        const Topology setup{uint16_t(seed == 34 ? 2 : 1), seed >= 33, false};
        untested += same_runs(s, seed % 2 ? 10000 : 1000,
                              seed % 2 ? "" : ", shaper_burst_bytes: 4000, tx_ring_bytes: 8000",
                              setup, &tested, &whole);
    }
    for (uint32_t seed : {5u, 6u}) {
        SCOPED_TRACE("near limits seed " + std::to_string(seed));
        untested += same_runs(mixed_near_limits(seed, 160), 1000,
                              seed % 2 ? "" : ", shaper_burst_bytes: 4000, tx_ring_bytes: 8000",
                              {}, &tested, &whole);
    }
    EXPECT_GT(untested, 100u);
    EXPECT_GT(tested, 100u) << "congestion, shaping and marking need the per-frame tests";
    EXPECT_GT(whole, 100u) << "whole queues of one PG key, without the length sum";
}

// The copy loop of a run without per-frame tests (take_run) takes a stretch of slots with one
// PG key and no frame shorter than the minimum wire frame in sums; a stretch with either is
// taken again frame by frame. Mixed bursts from both ingress ports to port 1 (queue 3 holds two
// PGs' frames, in runs that change key, sometimes more than once) with frames of 42-99 bytes
// (padded to 60 on the wire: the shaper's and the TX ring's charge), uncongested and shaped:
// the same frames and counters (PG bytes, the TX ring gauge) as every frame tested.
TEST_F(CutThrough, DequeueRunsOfShortFramesAndSeveralPgs) {
    for (uint32_t seed : {41u, 42u, 43u}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        std::mt19937 rng(seed);
        auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
        Script s;
        uint16_t seq = 0;
        for (int i = 0; i < 60; i++) {
            Step st;
            // Which ingress ports send this poll: both (two PGs in queue 3), or one (one PG).
            const uint32_t from = pick(3);
            for (uint16_t p = 0; p < 2; p++) {
                if (from != 2 && from != p) continue;
                const uint32_t n = 4 + pick(12);
                // Every other poll long frames only: its runs are taken in sums.
                const bool short_ok = i % 2 == 0;
                for (uint32_t k = 0; k < n; k++)
                    st.rx[p].push_back(udp(p, uint8_t(pick(4) == 0 ? 6 : pick(3) == 0 ? 0 : 3),
                                           uint8_t(pick(3)),
                                           short_ok ? 42 + pick(58) : 60 + pick(100), seq++, 1));
            }
            st.step_ns = 20'000;
            s.push_back(st);
        }
        uint64_t tested = 0;
        EXPECT_GT(same_runs(s, 10000, "", {}, &tested), 60u);
        EXPECT_GT(same_runs(s, 10000, ", shaper_burst_bytes: 2000, tx_ring_bytes: 3000", {},
                            &tested),
                  20u);
    }
}

// Dequeue runs without per-frame tests (take_run) over the end of a queue's slots: the run's
// slots in two pieces, each copied (and, with a frame under the minimum or a second PG, the
// whole run taken again frame by frame over both pieces). Queues of 64 and 128 slots, mixed
// bursts of 1-40 frames from one or both ingress ports (queue 3 then holds two PGs' frames),
// long frames or some under the minimum, uncongested (every queue emptied at each flush: the
// deficit forfeited) and shaped (runs that stop short, DWRR deficits carried): the same frames
// and counters as every frame tested.
TEST_F(CutThrough, DequeueRunsAcrossTheEndOfTheSlots) {
    for (uint32_t slots : {64u, 128u}) {
        queue_packets_ = slots;
        for (uint32_t seed : {51u, 52u}) {
            SCOPED_TRACE(std::to_string(slots) + " slots, seed " + std::to_string(seed));
            std::mt19937 rng(seed);
            auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
            Script s;
            uint16_t seq = 0;
            for (int i = 0; i < 120; i++) {
                Step st;
                const uint32_t from = pick(4);  // 0, 1: that port; else both
                const bool short_ok = i % 3 == 0;
                for (uint16_t p = 0; p < 2; p++) {
                    if (from < 2 && from != p) continue;
                    const uint32_t n = 1 + pick(from < 2 ? 40 : 20);
                    for (uint32_t k = 0; k < n; k++)
                        st.rx[p].push_back(udp(p, uint8_t(pick(5) == 0 ? 6 : pick(3) == 0 ? 0 : 3),
                                               uint8_t(pick(3)),
                                               short_ok ? 42 + pick(80) : 60 + pick(200), seq++,
                                               1));
                }
                st.step_ns = 20'000;
                s.push_back(st);
            }
            uint64_t tested = 0, whole = 0;
            EXPECT_GT(same_runs(s, 10000, "", {}, &tested, &whole), 150u);
            EXPECT_GT(same_runs(s, 10000, ", shaper_burst_bytes: 2500, tx_ring_bytes: 4000", {},
                                &tested, &whole),
                      20u);
            EXPECT_GT(tested, 20u);
            EXPECT_GT(whole, 50u) << "whole queues, some over the end of the slots";
        }
    }
}

// A QoS file with qos_maps_yaml()'s DSCP and PCP maps, TC_TO_QUEUE_MAP M {tc_to_queue},
// TC_TO_PRIORITY_GROUP_MAP G {tc_to_pg}, `tables` and PFC on the priorities `pfc_enable`.
std::string profile_with_maps(const std::string &tc_to_queue, const std::string &tc_to_pg,
                              const std::string &tables, const std::string &pfc_enable) {
    std::string maps = qos_maps_yaml();
    const std::string identity =
        "TC_TO_QUEUE_MAP:\n  M: {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7}\n";
    const size_t at = maps.find(identity);
    EXPECT_NE(at, std::string::npos);
    maps.replace(at, identity.size(),
                 "TC_TO_QUEUE_MAP:\n  M: {" + tc_to_queue + "}\nTC_TO_PRIORITY_GROUP_MAP:\n  G: {" +
                     tc_to_pg + "}\n");
    return maps + tables +
           "PORT_QOS_MAP:\n  default: {dscp_to_tc_map: M, dot1p_to_tc_map: M, tc_to_queue_map: M,"
           " tc_to_pg_map: G, pfc_enable: \"" + pfc_enable + "\"}\n";
}

// TCs 0 and 5 to queue 0 in PGs 0 and 5, PFC on priority 3.
const char kQueue0TwoTcs[] = "0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 0, 6: 6, 7: 7";
const char kPg5OfTc5[] = "0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 5, 6: 6, 7: 7";

// Queue::one_key (admit_in_sums: every frame queued has one PG key; the dequeue run's copy then
// tests no key) where one burst holds two PGs' frames for one queue: TC 5 (PG 5) and TC 0 (PG 0)
// both to queue 0, with both ingress ports' bursts in some polls (two keys from two bursts),
// against every frame tested and against admission per packet.
TEST_F(CutThrough, DequeueRunsOfOneQueueWithTwoPgsInOneBurst) {
    const std::string profile = profile_with_maps(kQueue0TwoTcs, kPg5OfTc5, kTables, "3");
    profile_ = &profile;
    for (uint32_t seed : {61u, 62u}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        std::mt19937 rng(seed);
        auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
        Script s;
        uint16_t seq = 0;
        for (int i = 0; i < 80; i++) {
            Step st;
            const uint32_t from = pick(3);  // 0, 1: that port; 2: both
            // Some polls TC 0 alone in queue 0 (one key), some TC 5 too (two).
            const bool two = i % 2 == 0;
            for (uint16_t p = 0; p < 2; p++) {
                if (from != 2 && from != p) continue;
                const uint32_t n = 2 + pick(20);
                for (uint32_t k = 0; k < n; k++) {
                    const uint32_t c = pick(6);
                    const uint8_t dscp = c == 0 ? 6 : c == 1 ? 3 : c == 2 && two ? 5 : 0;
                    st.rx[p].push_back(udp(p, dscp, uint8_t(pick(3)), 60 + pick(100), seq++, 1));
                }
            }
            st.step_ns = 20'000;
            s.push_back(st);
        }
        uint64_t tested = 0;
        EXPECT_GT(same_runs(s, 10000, "", {}, &tested), 100u);
        EXPECT_GT(same_admission(s, 10000, ""), 40u);
        same_runs(s, 1000, "", {}, &tested);
    }
    profile_ = nullptr;
}

// An idle port's service() steps inline in the flush (QosEgress::service_idle with PFC honoring:
// a port whose PFC is not inert, rsw-full's ingress port) against service() itself
// (QosPlan::plain_skip off): PFC pauses received while port 1 is idle and busy, mixed bursts,
// PFC frames sent, random scripts with two workers and host interfaces, shaped and not.
TEST_F(CutThrough, IdlePortsServiceStepsInline) {
    uint64_t skips = 0;
    {
        // Idle stretches of both ports between mixed bursts, one-class bursts that cut
        // through, PFC pauses received by the idle port 0, watermark clears of an idle port
        // (the last one after the traffic): the skipped idle flushes (Port::idle_still) and
        // their ends.
        SCOPED_TRACE("idle stretches");
        Script s;
        uint16_t seq = 0;
        for (int i = 0; i < 120; i++) {
            Step st;
            const int j = i % 12;
            if (j < 3)
                for (int k = 0; k < 8; k++)
                    st.rx[1].push_back(udp(1, uint8_t(k % 3 == 0 ? 6 : k % 3 == 1 ? 3 : 0), 2,
                                           100 + 20 * uint32_t(k), seq++));
            if (j == 6 || j == 7)
                for (int k = 0; k < 8; k++)
                    st.rx[0].push_back(udp(0, uint8_t(j == 6 ? 3 : k % 2 ? 6 : 0), 2, 300, seq++));
            if (j == 5) st.clear_wm = 0;
            if (j == 10) st.clear_wm = 1;
            if (i == 52) st.rx[0].push_back(pfc3(0xFFFF));  // port 0 idle since i == 51
            if (i == 64) st.rx[0].push_back(pfc3(0));
            if (i == 88) st.rx[0].push_back(pfc3(300));
            if (i == 119) st.clear_wm = 0;
            s.push_back(st);
        }
        skips += same_plain(s, 10000, "");
    }
    const Script paused = pfc_pause_script([](Step &st, int i, uint16_t &seq) {
        if (i % 4 == 0) return;  // idle polls between
        for (int k = 0; k < 10; k++)
            st.rx[0].push_back(
                udp(0, uint8_t(k % 4 ? 3 : k % 8 ? 0 : 6), uint8_t(i % 3), 300, seq++));
    });
    skips += same_plain(paused, 10000, "");
    {
        // Port 1's queue 3 paused while port 0 sends it lossless bursts: port 0's PG 3 goes
        // past XOFF and the idle port 0 sends PFC frames, in flushes that skipped its idle
        // steps, 50 ns apart (a frame's wire time is 67 ns: its TX ring model still holds it
        // at the next flush, drained from the clocks the send brought to now).
        SCOPED_TRACE("PFC frames from an idle port");
        Script s;
        uint16_t seq = 0;
        for (int i = 0; i < 60; i++) {
            Step st;
            if (i == 0) st.rx[1].push_back(pfc3(0xFFFF));
            if (i == 40) st.rx[1].push_back(pfc3(0));
            if (i >= 1 && i < 30)
                for (int k = 0; k < 24; k++)
                    st.rx[0].push_back(udp(0, 3, 1, 1000, seq++));
            st.step_ns = i < 40 ? 50 : 10'000;
            s.push_back(st);
        }
        skips += same_plain(s, 10000, "");
    }
    skips += same_plain(mixed_near_limits(5, 160), 1000, "");
    for (uint32_t seed : {21u, 22u, 23u}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        const Topology setup{uint16_t(seed == 22 ? 2 : 1), seed >= 22, false};
        skips += same_plain(random_script(seed, 200, true, seed >= 22), seed == 21 ? 10000 : 1000,
                            seed == 21 ? "" : ", shaper_burst_bytes: 4000, tx_ring_bytes: 8000",
                            setup);
    }
    EXPECT_GT(skips, 200u) << "idle flushes skipped";
}

// PFC generation's skips (PfcEngine::generate: a port whose every lossless PG has the inputs of
// its last XOFF-off evaluation and no frame pending; a PG with them) against evaluating every
// PG at every flush: PG 3 (dynamic threshold on the shared ingress pool) past XOFF and back
// (mixed bursts near the limits, PFC frames on both ports, some refused by port 1's device and
// retried), PFC pauses received, random scripts with two workers and host interfaces. The
// uncongested polls between take the skip.
TEST_F(CutThrough, PfcSkipMatchesEveryPgEvaluated) {
    for (uint32_t seed : {7u, 8u}) {
        SCOPED_TRACE("near limits seed " + std::to_string(seed));
        same_pfc(mixed_near_limits(seed, 160), 1000,
                 seed % 2 ? "" : ", shaper_burst_bytes: 4000, tx_ring_bytes: 8000");
    }
    {
        SCOPED_TRACE("PFC pause");
        same_pfc(pfc_pause_script([](Step &st, int i, uint16_t &seq) {
                     for (int k = 0; k < 12; k++)
                         st.rx[0].push_back(
                             udp(0, uint8_t(k % 4 ? 3 : 0), uint8_t(i % 3 ? 2 : 1), 700, seq++));
                     if (i % 9 == 4) st.tx_budget1 = 5;
                 }),
                 10000, "");
    }
    {
        // Port 1's PG 3 past XOFF (port 0's queue 3 held), then drained: its XON refused by
        // port 1's device for several polls in a row, the PG's inputs unchanged meanwhile - the
        // frame pending must be retried at every flush until the device takes it.
        SCOPED_TRACE("XON refused");
        Script s;
        uint16_t seq = 0;
        for (int i = 0; i < 70; i++) {
            Step st;
            if (i == 0) st.pause0 = 0x08;
            if (i == 30) st.pause0 = 0;
            if (i < 30)
                for (int k = 0; k < 24; k++) st.rx[1].push_back(udp(1, 3, 0, 1000, seq++, 0));
            if (i >= 30 && i < 60) st.tx_budget1 = 0;
            st.step_ns = i < 30 ? 10'000 : 50'000;
            s.push_back(st);
        }
        same_pfc(s, 10000, "");
    }
    for (uint32_t seed : {35u, 36u}) {
        SCOPED_TRACE("random seed " + std::to_string(seed));
        same_pfc(random_script(seed, 200, true, true), 1000,
                 ", shaper_burst_bytes: 4000, tx_ring_bytes: 8000",
                 {uint16_t(seed == 36 ? 2 : 1), true, false});
    }
}

// The precomputed "nothing to check" state of a port and its queues (TrafficManager::Port
// ct_plain and pfc_inert: admit_cut_through() and the flush skip the checks of features that
// are off). rsw-pass's configuration - one class, no PFC or PAUSE, no WRED/ECN, no shaper, no TX
// ring cap, no buffer pools - with each feature switched on alone, under traffic that makes the
// feature act on bursts that find the port idle: cut-through on and off must still agree, so a
// flag left set for a feature that is on (the checks skipped) fails here; and the same scripts
// with the flags (QosPlan::plain_skip) and without, where every check runs.
Script one_class_features(uint32_t seed, int steps, int storm_from = -1, int storm_to = -1,
                          int pfc_prio = -1, bool pause = false) {
    std::mt19937 rng(seed);
    auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
    Script s;
    uint16_t seq = 0;
    for (int i = 0; i < steps; i++) {
        Step st;
        const uint32_t n = pick(5) == 0 ? 1 + pick(4) : 8 + pick(25);
        for (uint32_t k = 0; k < n; k++)
            st.rx[0].push_back(udp(0, 0, uint8_t(pick(4)), 60 + pick(1400), seq++));
        Bytes f(kMacControlFrameLen);
        const bool storm = i >= storm_from && i < storm_to;
        if (pfc_prio >= 0 && (storm || pick(12) == 0)) {
            std::array<uint16_t, 8> q{};
            q[size_t(pfc_prio)] = uint16_t(storm ? 0xFFFF : pick(3) == 0 ? 0 : pick(2000));
            build_pfc_frame(f.data(), {0x02, 0, 0, 0, 0xBB, 0x02}, uint8_t(1u << pfc_prio), q);
            st.rx[1].push_back(f);
        }
        if (pause && pick(12) == 0) {
            build_pause_frame(f.data(), {0x02, 0, 0, 0, 0xBB, 0x02},
                              uint16_t(pick(3) == 0 ? 0 : pick(2000)));
            st.rx[1].push_back(f);
        }
        if (pick(30) == 0) st.tx_budget1 = pick(20);
        st.step_ns = storm ? 1'000'000 : pick(3) == 0 ? 1'000 + pick(5'000) : 20'000 + pick(40'000);
        s.push_back(st);
    }
    return s;
}

TEST_F(CutThrough, PlainFlagsEachFeatureOnAlone) {
    const std::string kPass = "shaper: false, tx_ring_bytes: 0";
    const std::string kWredQ0 = "QUEUE:\n  default|0: {wred_profile: w}\n";
    struct Feature {
        const char *name;
        std::string tables, port_fields;
        uint64_t speed_mbps = 10000;
        int pfc_prio = -1;
        bool pause = false;
        int storm_from = -1, storm_to = -1;
    };
    const std::vector<Feature> features = {
        {"none", "", kPass},
        {"PFC", "", kPass + ", pfc_enable: \"0\"", 10000, 0},
        {"PAUSE", "", kPass + ", pause: honor", 10000, -1, true},
        {"WRED",
         "WRED_PROFILE:\n  w: {ecn: ecn_none, wred_green_enable: true, "
         "green_min_threshold: 2000, green_max_threshold: 20000, "
         "green_drop_probability: 50}\n" +
             kWredQ0,
         kPass},
        {"ECN at enqueue",
         "WRED_PROFILE:\n  w: {ecn: ecn_all, wred_green_enable: false, "
         "green_min_threshold: 2000, green_max_threshold: 20000, "
         "green_drop_probability: 50, ecn_mark_point: enqueue}\n" +
             kWredQ0,
         kPass},
        {"ECN at dequeue",
         "WRED_PROFILE:\n  w: {ecn: ecn_all, wred_green_enable: false, "
         "green_min_threshold: 2000, green_max_threshold: 20000, "
         "green_drop_probability: 50, ecn_mark_point: dequeue}\n" +
             kWredQ0,
         kPass},
        {"shaper", "", "shaper: true, shaper_burst_bytes: 3000, tx_ring_bytes: 0", 1000},
        {"TX ring cap", "", "shaper: false, tx_ring_bytes: 3000", 1000},
        {"static pool",
         "BUFFER_POOL:\n  e: {type: egress, mode: static, size: 1000000}\n"
         "BUFFER_PROFILE:\n  p: {pool: e, size: 1518, static_th: 6000}\n"
         "BUFFER_QUEUE:\n  default|0-7: {profile: p}\n",
         kPass},
        {"dynamic pool",
         "BUFFER_POOL:\n  e: {type: egress, mode: dynamic, size: 20000}\n"
         "BUFFER_PROFILE:\n  p: {pool: e, size: 0, dynamic_th: -1}\n"
         "BUFFER_QUEUE:\n  default|0-7: {profile: p}\n",
         kPass},
        {"storm drop",
         "PFC_WD:\n  default: {detection_time: 10, restoration_time: 20, "
         "action: drop}\n",
         kPass + ", pfc_enable: \"0\"", 10000, 0, false, 60, 90},
    };
    for (const Feature &f : features) {
        SCOPED_TRACE(f.name);
        tables_ = &f.tables;
        uint64_t total = 0;
        for (uint32_t seed : {51u, 52u}) {
            const Script s =
                one_class_features(seed, 200, f.storm_from, f.storm_to, f.pfc_prio, f.pause);
            total += same(s, f.speed_mbps, f.port_fields);
            same_plain(s, f.speed_mbps, f.port_fields);
        }
        EXPECT_GT(total, 0u) << "some bursts cut through";
        // A flag that skips PFC honoring (Port::pfc_inert) would skip it with cut-through on
        // and off alike: that the pause and the watchdog act is checked on its own. A pause of
        // 0xFFFF quanta (3.4 ms at 10G) received with the first burst holds every frame of ten
        // polls 10 us apart, in both switches.
        if (f.pfc_prio >= 0 || f.pause) {
            Script p;
            uint16_t seq = 0;
            for (int i = 0; i < 10; i++) {
                Step st;
                if (i == 0) {
                    Bytes b(kMacControlFrameLen);
                    std::array<uint16_t, 8> q{};
                    q[size_t(std::max(f.pfc_prio, 0))] = 0xFFFF;
                    if (f.pause)
                        build_pause_frame(b.data(), {0x02, 0, 0, 0, 0xBB, 0x02}, 0xFFFF);
                    else
                        build_pfc_frame(b.data(), {0x02, 0, 0, 0, 0xBB, 0x02},
                                        uint8_t(1u << f.pfc_prio), q);
                    st.rx[1].push_back(b);
                }
                for (int k = 0; k < 8; k++) st.rx[0].push_back(udp(0, 0, 0, 200, seq++));
                st.step_ns = 10'000;
                p.push_back(st);
            }
            for (const bool cut : {true, false}) {
                const Outcome o = run(p, cut, f.speed_mbps, f.port_fields, {});
                size_t early = 0, out1 = 0;
                for (const auto &[t, port, frame] : o.sent)
                    if (port == 1) {
                        out1++;
                        early += t <= 1'000'000 + 10 * 10'000;
                    }
                EXPECT_EQ(early, 0u) << "sent while paused, cut-through " << cut;
                EXPECT_EQ(out1, size_t(seq)) << "all sent after the pause";
            }
        }
        if (f.storm_from >= 0) {
            const Outcome o =
                run(one_class_features(51, 200, f.storm_from, f.storm_to, f.pfc_prio, f.pause),
                    true, f.speed_mbps, f.port_fields, {});
            double storms = 0;
            for (const auto &[k, v] : parse_exposition(o.scrape))
                if (k.rfind("rocesw_pfc_watchdog_storms_total", 0) == 0) storms += v;
            EXPECT_GT(storms, 0) << "the watchdog saw the storm";
        }
    }
    tables_ = nullptr;
}

// A UDP frame as udp() makes it, with IP TTL `ttl`.
Bytes udp_ttl(uint16_t from, uint8_t dscp, uint8_t ecn, uint32_t frame_len, uint16_t seq, int to,
              uint8_t ttl) {
    const bool h1 = from == 0;
    const uint16_t out = to < 0 ? uint16_t(1 - from) : uint16_t(to);
    return cat(eth(h1 ? kP0 : kP1, h1 ? kH1 : kH2, kEtherTypeIpv4),
               ipv4(h1 ? v4(10, 0, 1, 2) : v4(10, 0, 2, 2), out == 0 ? v4(10, 0, 1, 2) : v4(10, 0, 2, 2),
                    kProtoUdp, udp_payload(seq, 2000, frame_len - 42), ttl,
                    uint8_t(dscp << 2 | ecn)));
}

// A profile whose DSCP map sends every DSCP to TC `tc` (the worker's BurstSummary needs one TC
// for the whole table), with `rest` (tables and the PORT_QOS_MAP entry's other fields).
std::string uniform_profile(int tc, const std::string &tables, const std::string &port_fields) {
    std::string y = "DSCP_TO_TC_MAP:\n  U: {" + join_n(64, ", ", [tc](int d) {
        return std::to_string(d) + ": " + std::to_string(tc);
    });
    y += "}\nTC_TO_QUEUE_MAP:\n  Q: {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7}\n";
    return y + tables + "PORT_QOS_MAP:\n  default: {trust: dscp, dscp_to_tc_map: U, tc_to_queue_map: Q" +
           (port_fields.empty() ? "" : ", " + port_fields) + "}\n";
}

// Bursts of every length 1..32 (step i: 1 + i % 32 frames, then random lengths) from port 0,
// and some from port 1 too (two bursts in one poll: the first one's outputs held), with what
// changes whether the worker's BurstSummary holds for a port: TTL 64, 2 (forwarded), 1 and 0
// (dropped); mixed next hops (some frames back out of port 0, so neither port gets the whole
// burst); frames shorter than 60 bytes (the general parser's; sometimes the whole burst);
// local echo requests (a reply in out_[in port]); VLAN-tagged frames (the tag stripped: 4
// bytes fewer at the egress than received); IPv6 (hop limits 64, 2, 1); random DSCP, ECN and
// lengths. One burst in six has frames of two segments (a NIC's scattered RX: linearized, then
// the port's fast path), drawn from a generator of their own.
Script summary_script(uint32_t seed, int steps) {
    std::mt19937 rng(seed), seg_rng(seed ^ 0x5e65u);
    auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
    Script s;
    uint16_t seq = 0;
    const uint8_t ttls[] = {64, 64, 64, 2, 1, 0};
    for (int i = 0; i < steps; i++) {
        Step st;
        const uint32_t n = i < 64 ? 1 + uint32_t(i) % 32 : 1 + pick(32);
        // Per burst: plain (most), or with one kind of exception at random places.
        const uint32_t kind = i < 32 ? 0 : pick(8);
        const bool all = pick(3) == 0;  // every frame of the burst the odd one
        for (uint32_t k = 0; k < n; k++) {
            const bool odd = kind && (all || pick(8) == 0);
            const uint8_t ttl = odd && kind == 1 ? ttls[3 + pick(3)] : 64;
            const int to = odd && kind == 2 ? 0 : 1;
            const uint32_t len = odd && kind == 3 ? 42 + pick(18) : 66 + pick(1200);
            if (odd && kind == 6) {  // tagged
                Bytes f = udp_ttl(0, uint8_t(pick(64)), uint8_t(pick(4)), len, seq++, to, ttl);
                const Bytes tag = {0x81, 0x00, uint8_t(pick(8) << 5), 100};
                f.insert(f.begin() + 12, tag.begin(), tag.end());
                st.rx[0].push_back(f);
                continue;
            }
            if (odd && kind == 7) {  // IPv6, to h2
                const uint8_t tclass = uint8_t(pick(64) << 2 | pick(4));
                Bytes f = cat(eth(kP0, kH1, kEtherTypeIpv6),
                              ipv6(ip6(0xfd00, 1, 2), ip6(0xfd00, 2, 2), kProtoUdp,
                                   udp_payload(seq++, 2000, len - 62), ttls[2 + pick(3)]));
                f[14] = uint8_t(0x60 | tclass >> 4);
                f[15] = uint8_t((tclass & 0x0F) << 4 | (f[15] & 0x0F));
                st.rx[0].push_back(f);
                continue;
            }
            if (odd && kind == 4) {
                const Bytes echo = {8, 0, 0xf7, 0xfd, 0, 1, 0, 1};
                st.rx[0].push_back(cat(eth(kP0, kH1, kEtherTypeIpv4),
                                       ipv4(v4(10, 0, 1, 2), v4(10, 0, 1, 1), kProtoIcmp, echo)));
                continue;
            }
            st.rx[0].push_back(udp_ttl(0, uint8_t(pick(64)), uint8_t(pick(4)), len, seq++, to, ttl));
        }
        if (kind == 5)  // port 1's burst: to port 0, or hairpinned to port 1
            for (uint32_t k = 0, m = 1 + pick(8); k < m; k++)
                st.rx[1].push_back(udp_ttl(1, uint8_t(pick(64)), 0, 60 + pick(500), seq++,
                                           pick(2) ? 0 : 1, 64));
        if (pick(20) == 0) st.tx_budget1 = pick(20);
        st.step_ns = pick(4) == 0 ? 1'000 + pick(3'000) : 20'000 + pick(40'000);
        if (seg_rng() % 6 == 0) {
            const bool all = seg_rng() % 2 == 0;
            for (const Bytes &f : st.rx[0])
                st.first0.push_back(all || seg_rng() % 4 == 0
                                        ? uint16_t(1 + seg_rng() % (f.size() - 1))
                                        : uint16_t(0));
        }
        s.push_back(st);
    }
    return s;
}

// The worker's BurstSummary (Worker::flush_outputs, Egress::enqueue_summed) and the cut-through
// that takes a burst's class and bytes from it (QosEgress::admit_cut_through): the same
// scripts with the summary used and ignored (QosPlan::burst_summary), and with cut-through on
// and off. rsw-pass's configuration (every DSCP to TC 0, no PFC, WRED/ECN, shaper, TX ring cap
// or pools: the plain path), and every DSCP to lossless TC 3 of kTables (PFC, ECN at dequeue,
// pools, with a shaper and TX ring cap at 1G: the full checks), one worker and two.
TEST_F(CutThrough, BurstSummaryMatchesEveryPacketRead) {
    struct Config {
        const char *name;
        std::string profile;
        uint64_t speed_mbps;
    };
    const std::vector<Config> configs = {
        {"rsw-pass", uniform_profile(0, "", "shaper: false, tx_ring_bytes: 0"), 10000},
        {"lossless TC 3", uniform_profile(3, kTables, "pfc_enable: \"3\""), 10000},
        {"lossless TC 3, shaped",
         uniform_profile(3, kTables,
                         "pfc_enable: \"3\", shaper_burst_bytes: 6000, tx_ring_bytes: 12000"),
         1000},
    };
    for (const Config &c : configs) {
        SCOPED_TRACE(c.name);
        profile_ = &c.profile;
        uint64_t summed = 0;
        for (uint32_t seed : {61u, 62u}) {
            const Script s = summary_script(seed, 300);
            summed += same_summary(s, c.speed_mbps);
            same(s, c.speed_mbps);
        }
        EXPECT_GT(summed, 10u) << "bursts cut through on their summary";
        const Script s = summary_script(63, 200);
        same_summary(s, c.speed_mbps, {2, false, false});
        same_summary(s, c.speed_mbps, {1, true, false});
    }
    profile_ = nullptr;
}

// rsw-pass's summarised bursts to an idle plain queue take one path through enqueue_last
// (QosEgress::cut_through_plain), which declines (the general path then runs) whenever another
// path could apply: the summary scripts in rsw-pass's configuration with port 1's queue 0
// paused from outside, its link down and its watermarks cleared at random polls (some without
// traffic: the flush's inline idle step applies the clear), against the summary ignored,
// cut-through off and the plain paths off (QosPlan::plain_skip: service() for every port).
TEST_F(CutThrough, PlainSummaryPathDeclinesExactly) {
    const std::string profile = uniform_profile(0, "", "shaper: false, tx_ring_bytes: 0");
    profile_ = &profile;
    uint64_t summed = 0;
    for (uint32_t seed : {71u, 72u}) {
        Script s = summary_script(seed, 300);
        std::mt19937 rng(seed);
        for (Step &st : s) {
            switch (rng() % 10) {
                case 0: st.pause1 = 1; break;
                case 1: case 2: st.pause1 = 0; break;
                case 3: st.clear_wm = 1; break;
                case 4: st.down1 = 1; break;
                case 5: case 6: st.down1 = 0; break;
                case 7:  // nothing received: port 1 idle at the flush, its clear applied there
                    st.rx[0].clear();
                    st.rx[1].clear();
                    st.clear_wm = 1;
                    break;
                default: break;
            }
        }
        summed += same_summary(s, 10000);
        same(s, 10000);
        same_plain(s, 10000, "");  // against service() and no plain path at all
    }
    EXPECT_GT(summed, 10u) << "bursts cut through on their summary";
    profile_ = nullptr;
}

// Mixed bursts to port 1 that an idle port cuts through in the order service() would send them
// (QosEgress::cut_through_mixed) or that take the queued path: bursts of two or three classes
// (strict queues 6 and 7, DWRR queues 0 and 3 of weight 50 and 1, 2, 4 of weight 1, whose
// quantum a burst's bytes may exceed: a queue split over two DWRR visits), sometimes one class;
// congested phases (large bursts, polls 1-3 us apart) that leave the DWRR turn anywhere and the
// TX ring holding bytes, idle ones in between; frames shorter than the minimum wire frame; ECN
// codepoints at random (queue 3 marks ECT at dequeue from 3000 bytes, with the TX ring's bytes
// ahead; queue 1 marks and drops at enqueue from 2000); PFC pauses of queue 3 from port 1's peer,
// queues paused and the link taken down from outside, watermark clears, device refusals; port 1's
// own frames (hairpinned: two bursts for port 1 in a poll, or to port 0).
Script mixed_script(uint32_t seed, int steps) {
    std::mt19937 rng(seed);
    auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
    Script s;
    uint16_t seq = 0;
    const uint8_t dscps[] = {0, 3, 3, 3, 6, 7, 1, 2, 4, 0, 3, 6};
    for (int i = 0; i < steps; i++) {
        Step st;
        const bool congested = (i / 15) % 4 == 3;
        const uint32_t n = congested ? 20 + pick(13) : 1 + pick(32);
        // Two or three classes (most), one (some).
        const uint32_t n_classes = 1 + pick(3) + (pick(4) != 0);
        uint8_t classes[3];
        for (uint8_t &c : classes) c = dscps[pick(sizeof dscps)];
        const uint32_t kind = pick(4);  // short, small, mid-sized or large frames
        for (uint32_t k = 0; k < n; k++) {
            const uint32_t len = congested ? 600 + pick(900)
                                 : kind == 0 ? 42 + pick(40)
                                 : kind == 1 ? 60 + pick(100)
                                 : kind == 2 ? 100 + pick(400)
                                             : 300 + pick(1200);
            st.rx[0].push_back(udp(0, classes[pick(std::min<uint32_t>(n_classes, 3))],
                                   uint8_t(pick(4)), len, seq++, pick(40) == 0 ? 0 : 1));
        }
        if (pick(10) == 0)  // port 1's own frames, hairpinned or to port 0
            for (uint32_t k = 0, m = 1 + pick(5); k < m; k++)
                st.rx[1].push_back(udp(1, dscps[pick(sizeof dscps)], uint8_t(pick(4)),
                                       60 + pick(400), seq++, pick(2) ? 0 : 1));
        if (pick(30) == 0) st.rx[1].push_back(pfc3(uint16_t(pick(3) == 0 ? 0 : pick(2000))));
        switch (pick(40)) {
            case 0: st.pause1 = int(1u << pick(8)); break;
            case 1: case 2: st.pause1 = 0; break;
            case 3: st.down1 = 1; break;
            case 4: case 5: st.down1 = 0; break;
            case 6: st.clear_wm = 1; break;
            default: break;
        }
        if (pick(15) == 0) st.tx_budget1 = pick(24);
        st.step_ns = congested ? 1'000 + pick(2'000)
                     : pick(4) == 0 ? 300 + pick(4'000)
                                    : 20'000 + pick(40'000);
        s.push_back(st);
    }
    return s;
}

// rsw-full's shape (32 frames of 60 bytes: 80 % lossless queue 3, 10 % strict queue 6, 10 %
// DWRR queue 0) and other mixes: every burst cuts through in service()'s order (the first one
// handed from admit_cut_through() to cut_through_mixed()), with the frames and counters of the
// queued path and of cut-through off.
TEST_F(CutThrough, MixedBurstsInServiceOrder) {
    const Script full =
        mixed_bursts(32, 60, [](int k) { return uint8_t(k % 10 == 0 ? 6 : k % 10 == 1 ? 0 : 3); });
    EXPECT_EQ(same_mixed(full, 10000, ""), 30u);
    EXPECT_EQ(same(full), 30u * 32);
    // With the ingress port's watermarks cleared before every third poll: the flush's PG
    // watermark clear reads the PGs' bytes while the burst holds them (QosEgress::commit_deferred).
    Script cleared = full;
    for (size_t k = 0; k < cleared.size(); k += 3) cleared[k].clear_wm = 0;
    EXPECT_EQ(same_mixed(cleared, 10000, ""), 30u);
    // Strict queues only (7 and 6): the order from the masks, no DWRR turn to move.
    const Script strict = mixed_bursts(20, 200, [](int k) { return uint8_t(k % 3 ? 6 : 7); });
    EXPECT_EQ(same_mixed(strict, 10000, ""), 30u);
    EXPECT_EQ(same(strict), 30u * 20);
    // DWRR queues only (0, 2 of weight 1 and 4 of weight 1): the turn moves on every burst.
    const Script dwrr = mixed_bursts(12, 150, [](int k) {
        const uint8_t d[] = {0, 2, 4, 0};
        return d[k % 4];
    });
    EXPECT_EQ(same_mixed(dwrr, 10000, ""), 30u);
    // Strict 7 and 6, DWRR 0, 3 and 2 (weight 1: 3 frames of 300 bytes fit its quantum).
    const Script five = mixed_bursts(15, 300, [](int k) {
        const uint8_t d[] = {0, 7, 3, 6, 2};
        return d[k % 5];
    });
    // (ECN on queue 3's bytes alone: with the TX ring's bytes ahead its frames would reach the
    // marking depth, and the flush decides those.)
    EXPECT_EQ(same_mixed(five, 10000, ", ecn_depth: queue"), 30u);
    EXPECT_EQ(same(five, 10000, ", ecn_depth: queue"), 30u * 15);
    EXPECT_EQ(same_mixed(five, 10000, ""), 0u) << "queue 3 at the marking depth with the ring";
}

// Two classes in one queue (TC 5 and TC 0 both to queue 0, in PGs 5 and 0), their frames
// interleaved in the burst: the mixed cut-through sends the queue's frames of both classes in
// arrival order and charges each TC and PG its own bytes, as the queued path does - rsw-full's
// shape with TC 5 frames among queue 0's, and large frames that split queues 3 and 0 over DWRR
// turns (a quantum of 512 bytes a weight).
TEST_F(CutThrough, MixedBurstsWithTwoClassesInOneQueue) {
    const std::string profile = profile_with_maps(kQueue0TwoTcs, kPg5OfTc5, kTables, "3");
    profile_ = &profile;
    const auto dscp = [](int k) {
        const int d = k % 10;
        return uint8_t(d == 0 ? 6 : d == 1 || d == 5 ? 0 : d == 7 || d == 8 ? 5 : 3);
    };
    const Script small = mixed_bursts(32, 60, dscp);
    EXPECT_EQ(same_mixed(small, 10000, ""), 30u);
    EXPECT_EQ(same(small), 30u * 32);
    Script large;
    uint16_t seq = 0;
    for (int i = 0; i < 30; i++) {
        Step st;
        for (int k = 0; k < 32; k++)
            st.rx[0].push_back(udp(0, dscp(k), 0, 1500 - uint32_t(i % 3), seq++));
        st.step_ns = 20'000;
        large.push_back(st);
    }
    const std::string quantum_profile = profile_with_maps(
        kQueue0TwoTcs, kPg5OfTc5, kTables + "ROCESW:\n  dwrr_quantum_bytes: 512\n", "3");
    profile_ = &quantum_profile;
    EXPECT_EQ(same_mixed(large, 100000, ""), 30u);
    EXPECT_EQ(same(large, 100000, ""), 30u * 32);
    profile_ = nullptr;
}

// One lossless PG for two classes (TCs 3 and 4 in PG 3, PFC on priorities 3 and 4; queues 3
// and 4, both lossless): the PG's bytes are both TCs' and its XOFF pauses both priorities.
// Random bursts of both classes with others, calm and congested (a 1G egress: the PG crosses
// its XOFF threshold in the congested phases), through the mixed cut-through on and off,
// admission in sums and per packet, and cut-through on and off: the same frames and counters.
TEST_F(CutThrough, LosslessPgSharedByTwoClasses) {
    // Queue 4 lossless too (the lossless egress pool).
    std::string tables = kTables;
    const std::string lossy4 = "  default|4-7: {profile: egress_lossy_profile}\n";
    ASSERT_NE(tables.find(lossy4), std::string::npos);
    tables.replace(tables.find(lossy4), lossy4.size(),
                   "  default|4: {profile: egress_lossless_profile}\n"
                   "  default|5-7: {profile: egress_lossy_profile}\n");
    const std::string profile =
        profile_with_maps("0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7",
                          "0: 0, 1: 0, 2: 0, 3: 3, 4: 3, 5: 0, 6: 6, 7: 7", tables, "3,4");
    profile_ = &profile;
    uint64_t mixed = 0, sums = 0;
    for (uint32_t seed : {71u, 72u, 73u}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        std::mt19937 rng(seed);
        auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
        Script s;
        uint16_t seq = 0;
        const uint8_t dscps[] = {3, 4, 3, 4, 0, 6};
        for (int i = 0; i < 200; i++) {
            Step st;
            const bool congested = (i / 20) % 2 == 1;
            const uint32_t n = congested ? 20 + pick(13) : 2 + pick(16);
            for (uint32_t k = 0; k < n; k++)
                st.rx[0].push_back(udp(0, dscps[pick(sizeof dscps)], uint8_t(pick(3)),
                                       congested ? 800 + pick(700) : 60 + pick(200), seq++));
            // Calm: a burst leaves at 1 Gb/s before the next (at most 17 x 260 bytes, 36 us).
            st.step_ns = congested ? 2'000 + pick(3'000) : 40'000 + pick(40'000);
            s.push_back(st);
        }
        mixed += same_mixed(s, 1000, "");
        sums += same_admission(s, 1000, "");
        same(s, 1000, "");
        const Outcome o = run(s, true, 1000, "", {});
        // Both priorities paused from the one PG, and the PG at its limit (the senders of a
        // script do not pause): its headroom exhausted, the bursts near it declined by the
        // checks in sums with both TCs' bytes charged to it.
        double xoff3 = 0, xoff4 = 0, headroom_drops = 0;
        for (const auto &[k, v] : parse_exposition(o.scrape)) {
            if (k.rfind("rocesw_pfc_frames_sent_total", 0) == 0) {
                if (k.find("priority=\"3\"") != std::string::npos) xoff3 += v;
                if (k.find("priority=\"4\"") != std::string::npos) xoff4 += v;
            }
            if (k.rfind("rocesw_pg_headroom_drops_total", 0) == 0) headroom_drops += v;
        }
        EXPECT_GT(xoff3, 0);
        EXPECT_EQ(xoff3, xoff4);
        EXPECT_GT(headroom_drops, 0);
    }
    std::printf("mixed cut-throughs %lu, bursts admitted in sums %lu\n", (unsigned long)mixed,
                (unsigned long)sums);
    EXPECT_GT(mixed, 30u);
    EXPECT_GT(sums, 30u);
    profile_ = nullptr;
}

// Queue 3's dequeue marking depth (3000 bytes) crossed one burst at a time: four strict frames
// (queue 6), five ECT(0) frames of 600 + i bytes (queue 3), two DWRR frames (queue 0), step i.
// On the queue's bytes alone (ecn_depth: queue) the first queue-3 frame leaves 2400 + 4 i bytes
// behind: exactly the bursts of i < 150 cut through, the others would be marked and take the
// queued path. With the TX ring's bytes ahead (the default) the depth is reached earlier.
TEST_F(CutThrough, MixedBurstsAtTheMarkingDepth) {
    Script s;
    uint16_t seq = 0;
    const uint8_t dscps[] = {6, 3, 0, 3, 6, 3, 6, 3, 0, 6, 3};
    for (uint32_t i = 0; i < 200; i++) {
        Step st;
        for (const uint8_t d : dscps)
            st.rx[0].push_back(udp(0, d, d == 3 ? 2 : 0, d == 3 ? 600 + i : d == 6 ? 100 : 200,
                                   seq++));
        st.step_ns = 20'000;
        s.push_back(st);
    }
    EXPECT_EQ(same_mixed(s, 10000, ", ecn_depth: queue"), 150u);
    const uint64_t ring = same_mixed(s, 10000, "");
    EXPECT_GT(ring, 0u);
    EXPECT_LT(ring, 150u);
}

// One-class and mixed bursts in turns (one and one, then two and two), Not-ECT (no marking
// depth): a mixed burst after a one-class one is handed from admit_cut_through() to
// cut_through_mixed() at its first packet of another queue, a burst after a mixed one goes to
// cut_through_mixed() directly (Port::ct_mixed), a one-class burst after a one-class one takes
// admit_cut_through(). Every burst cuts through, and exactly those that are mixed or follow a
// mixed one by the mixed path.
TEST_F(CutThrough, MixedBurstAfterOneClassBurst) {
    Script s;
    uint16_t seq = 0;
    const int n = 48;
    uint64_t by_mixed_path = 0;
    bool prev_mix = false;
    for (int i = 0; i < n; i++) {
        Step st;
        const bool mix = i < n / 2 ? i % 2 == 1 : (i / 2) % 2 == 1;
        const uint8_t one = uint8_t(i % 3 == 0 ? 3 : i % 3 == 1 ? 0 : 6);
        for (int k = 0; k < 16; k++)
            st.rx[0].push_back(udp(0, mix ? uint8_t(k % 3 == 0 ? 6 : k % 3 == 1 ? 3 : 0) : one, 0,
                                   200 + 20 * (k % 5), seq++));
        by_mixed_path += mix || prev_mix;
        prev_mix = mix;
        s.push_back(st);
    }
    EXPECT_EQ(same_mixed(s, 10000, ""), by_mixed_path);
    EXPECT_EQ(same(s), uint64_t(n) * 16);
}

// rsw-full's shape with large frames (as tools/bench's 4 KB ones, whose ~26 lossless frames a
// burst are more than queue 3's quantum of 50 x 1024 bytes): here 1500-byte Not-ECT frames and a
// quantum of 512 bytes a weight (25 600 for queue 3), so queue 3's 26 frames (39 000 bytes) leave
// in two runs with queue 0's between them, the turn and deficits carried from burst to burst.
// Every burst cuts through, in that order.
TEST_F(CutThrough, MixedBurstsSplitOverDwrrTurns) {
    Script s;
    uint16_t seq = 0;
    for (int i = 0; i < 30; i++) {
        Step st;
        for (int k = 0; k < 32; k++) {
            const uint8_t dscp = k % 10 == 0 ? 6 : k % 10 == 1 ? 0 : 3;
            st.rx[0].push_back(udp(0, dscp, 0, 1500 - uint32_t(i % 3), seq++));
        }
        st.step_ns = 20'000;
        s.push_back(st);
    }
    const std::string quantum = kTables + "ROCESW:\n  dwrr_quantum_bytes: 512\n";
    tables_ = &quantum;
    EXPECT_EQ(same_mixed(s, 100000, "pfc_enable: \"3\""), 30u);
    EXPECT_EQ(same(s, 100000, "pfc_enable: \"3\""), 30u * 32);
    // The marking depth across the split: queue 3's first 17 frames (its first run) Not-ECT, the
    // last 9 ECT(0), marking at dequeue from 20 000 bytes of the queue's own: an ECT frame leaves
    // at most 12 000 bytes behind it (the second run's), so nothing is marked and every burst cuts
    // through - counting the second run's frames from the queue's whole share
    // (up to 37 500 bytes behind) would decline them all.
    Script ect;
    seq = 0;
    for (int i = 0; i < 30; i++) {
        Step st;
        for (int k = 0, q3 = 0; k < 32; k++) {
            const uint8_t dscp = k % 10 == 0 ? 6 : k % 10 == 1 ? 0 : 3;
            const uint8_t ecn = dscp == 3 && q3++ >= 17 ? 2 : 0;
            st.rx[0].push_back(udp(0, dscp, ecn, 1500, seq++));
        }
        st.step_ns = 20'000;
        ect.push_back(st);
    }
    std::string deeper = quantum;
    for (const auto &[from, to] : {std::pair<std::string, std::string>{
                                       "green_min_threshold: 3000", "green_min_threshold: 20000"},
                                   {"green_max_threshold: 30000", "green_max_threshold: 60000"}})
        deeper.replace(deeper.find(from), from.size(), to);
    tables_ = &deeper;
    EXPECT_EQ(same_mixed(ect, 100000, "pfc_enable: \"3\", ecn_depth: queue"), 30u);
    tables_ = nullptr;
}

// A mixed burst's summary (BurstSummary::kSeveralTcs: the ingress port's DSCP map has several
// TCs) gives cut_through_mixed its bytes, a bound below its lengths and its ingress port: the
// mixed scripts with the summary used and ignored (each packet read), and the summary used with
// the mixed path against queued, one worker, two, and host interfaces.
TEST_F(CutThrough, MixedBurstsOnTheirSummary) {
    uint64_t summed = 0;
    for (uint32_t seed : {91u, 92u, 93u}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        const Script s = mixed_script(seed, 300);
        const char *fields[] = {"", ", shaper_burst_bytes: 6000, tx_ring_bytes: 8000",
                                ", ecn_depth: queue"};
        summed += same_summary(s, seed == 92 ? 1000 : 10000);
        EXPECT_GT(same_mixed(s, seed == 92 ? 1000 : 10000, fields[seed % 3]), 10u);
    }
    EXPECT_GT(summed, 50u) << "mixed bursts cut through on their summary";
    const Script s = mixed_script(94, 200);
    same_summary(s, 10000, {2, true, true});
    same_summary(s, 10000, {1, true, false});
}

TEST_F(CutThrough, MixedBurstsNearEveryLimit) {
    uint64_t total = 0;
    for (uint32_t seed : {81u, 82u, 83u, 84u, 85u, 86u}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        const Script s = mixed_script(seed, 300);
        // 10G with the defaults; 1G shaped with a small TX ring; ECN on the queue's bytes alone.
        const char *fields[] = {"", ", shaper_burst_bytes: 6000, tx_ring_bytes: 8000",
                                ", ecn_depth: queue"};
        const uint64_t mixed = same_mixed(s, seed % 3 == 1 ? 1000 : 10000, fields[seed % 3]);
        std::printf("seed %u: %lu mixed cut-throughs\n", seed, (unsigned long)mixed);
        EXPECT_GT(mixed, 10u);
        EXPECT_LT(mixed, 250u) << "bursts near a limit are declined";
        total += mixed;
    }
    // A DWRR quantum of 64 bytes (3200 for weight 50, 64 for weight 1): most DWRR queues are
    // split over several visits and declined, some fit.
    const std::string small_quantum = kTables + "ROCESW:\n  dwrr_quantum_bytes: 64\n";
    tables_ = &small_quantum;
    for (uint32_t seed : {87u, 88u}) {
        SCOPED_TRACE("seed " + std::to_string(seed) + ", quantum 64");
        const uint64_t mixed = same_mixed(mixed_script(seed, 300), 10000, "pfc_enable: \"3\"");
        std::printf("seed %u, quantum 64: %lu mixed cut-throughs\n", seed, (unsigned long)mixed);
        total += mixed;
    }
    tables_ = nullptr;
    // Two workers (the other worker's frames through the handoff ring), host interfaces.
    for (uint32_t seed : {89u, 90u}) {
        SCOPED_TRACE("seed " + std::to_string(seed) + ", two workers");
        const Script s = mixed_script(seed, 200);
        const uint64_t two = same_mixed(s, 10000, "", {2, seed == 90, seed == 90});
        const uint64_t host = same_mixed(s, 10000, "", {1, true, false});
        std::printf("seed %u: %lu two workers, %lu host interfaces\n", seed, (unsigned long)two,
                    (unsigned long)host);
        total += two + host;
    }
    EXPECT_GT(total, 400u);
}

}  // namespace
}  // namespace rocesw::test
