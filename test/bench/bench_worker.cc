// Worker::poll_once over in-memory ports: the whole pipeline (parse, L2 checks, bulk LPM,
// next hop, TTL and checksum, MAC rewrite, egress FIFO, flush) per 32-packet burst.
// RX allocates mbufs and copies 1024 RoCEv2 frames round-robin into them, TX frees them: the
// same work net_pcap (infinite_rx) and net_null do, so BM_IoFloor is the testpmd-like floor and
// the difference is what the pipeline costs per packet.
//
// BM_EgressQosVsFifo: the same pipeline (with classification) and the same traffic through the
// QoS egress (QosEgress, the built-in SONiC default profile, 800G ports as tools/bench
// configures them) and through the one-FIFO egress, interleaved in blocks of polls so that both
// see the same machine; reports both cycles/packet and the difference (the QoS stage's cost).
//
// BM_EgressQosCongested: the same, plus a third switch whose output port runs at 2/3 of the
// offered load, so its queues sit at their limit: WRED draws, ECN marks and drops per packet.
#include <benchmark/benchmark.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_sched.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.h"
#include "config/config.h"
#include "support/fifo_egress.h"
#include "lb/ecmp_group.h"
#include "pipeline/dataplane.h"
#include "pipeline/worker.h"
#include "pkt/mbuf_meta.h"
#include "qos/qos_config.h"
#include "qos/qos_egress.h"
#include "route/fib.h"

namespace rocesw::bench {
namespace {

constexpr uint16_t kBurst = 32;
const uint8_t kP0Mac[6] = {0x02, 0, 0, 0, 0x01, 0x01};

class BenchPorts final : public PortIo {
  public:
    // `mix`: tools/bench's class mix (gen_bench_pcaps.py): of every 10 frames, 8 RoCEv2 WRITEs
    // (DSCP 26, ECT(0)), 1 CNP (DSCP 48, Not-ECT), 1 plain UDP (DSCP 0, Not-ECT). Otherwise all
    // RoCEv2 WRITEs.
    // `mbufs`: the pool's size (RX returns nothing while it is empty: the back-pressure that
    // bounds a congested switch's queues).
    BenchPorts(uint32_t frame_len, const std::vector<uint32_t> &dests, bool mix = false,
               uint32_t mbufs = 8192) {
        static int seq = 0;
        std::string name = "bench_wpool";
        name += std::to_string(seq++);
        // Packed, as roceswd's pool for copying ports without hugepages: DPDK's default puts
        // one 2 KB-room mbuf per 4 KB page, all on the same cache sets (lib/pkt/mbuf_meta.h).
        // Room for one frame in one segment (4 KB frames need more than the default 2 KB).
        const uint32_t room =
            std::max<uint32_t>(RTE_MBUF_DEFAULT_BUF_SIZE, RTE_PKTMBUF_HEADROOM + frame_len);
        pool_ = create_mbuf_pool(name, mbufs, 256, uint16_t(room), SOCKET_ID_ANY, true);
        if (!pool_) throw std::runtime_error("bench pool");
        if (mix) {
            frames_ = mix_frames(1024, frame_len, dests, kP0Mac);
        } else {
            for (uint32_t i = 0; i < 1024; i++)
                frames_.push_back(
                    roce_frame(dests[i % dests.size()], uint16_t(0xC000 | i), frame_len, kP0Mac));
        }
    }
    ~BenchPorts() override { rte_mempool_free(pool_); }
    uint16_t rx_burst(uint16_t, uint16_t, rte_mbuf **pkts, uint16_t n) override {
        if (rte_pktmbuf_alloc_bulk(pool_, pkts, n) != 0) return 0;
        for (uint16_t i = 0; i < n; i++) {
            const auto &f = frames_[next_++ & 1023];
            std::memcpy(rte_pktmbuf_mtod(pkts[i], uint8_t *), f.data(),
                        header_copy ? std::min<size_t>(f.size(), 64) : f.size());
            pkts[i]->data_len = uint16_t(f.size());
            pkts[i]->pkt_len = uint32_t(f.size());
        }
        rx_ += n;
        return n;
    }
    uint16_t tx_burst(uint16_t, uint16_t, rte_mbuf **pkts, uint16_t n) override {
        rte_pktmbuf_free_bulk(pkts, n);
        tx_ += n;
        return n;
    }
    // The frames RX copies from now on (1024 of them).
    void use_frames(std::vector<std::vector<uint8_t>> frames) { frames_ = std::move(frames); }
    uint64_t rx_ = 0, tx_ = 0;
    // Copy only each frame's first cache line (its headers; lengths as the frame's): the
    // pipeline at a frame size without the copy emptying the caches (doc/performance.md,
    // "Memory per packet").
    bool header_copy = false;

  private:
    rte_mempool *pool_;
    std::vector<std::vector<uint8_t>> frames_;
    uint32_t next_ = 0;
};

IfAddr if_addr(const char *s) {
    auto a = parse_if_addr(s);
    if (!a) throw std::runtime_error("bad address");
    return *a;
}

// A Fib named `name` with 8 routes covering 32.0.0.0/4 as /7s and 2001:db8::/32 (roce_frame6's
// destinations), all to next hop 1 = `nh`; `prepare` runs before the routes go in. Never
// destroyed: it must outlive nothing but EAL.
Fib *make_small_fib(const char *name, const NextHop &nh, void (*prepare)(Fib &) = nullptr) {
    FibParams p;
    p.ipv4_max_routes = 1024;
    p.ipv4_tbl8s = 64;
    p.ipv6_max_routes = 1024;
    p.ipv6_tbl8s = 64;
    p.max_nexthops = 1024;
    auto *f = new Fib(name, p, nullptr);
    if (prepare) prepare(*f);
    std::vector<FibOp> ops;
    FibOp set{};
    set.type = FibOp::Type::set_nexthop;
    set.nexthop = 1;
    set.nh = nh;
    ops.push_back(set);
    for (uint32_t i = 0; i < 8; i++) {
        FibOp op{};
        op.type = FibOp::Type::add_route;
        op.prefix.addr.v4 = (32u + 2 * i) << 24;
        op.prefix.len = 7;
        op.nexthop = 1;
        ops.push_back(op);
    }
    FibOp v6{};
    v6.type = FibOp::Type::add_route;
    v6.prefix.addr.is_v6 = true;
    v6.prefix.addr.v6 = {0x20, 0x01, 0x0d, 0xb8};
    v6.prefix.len = 32;
    v6.nexthop = 1;
    ops.push_back(v6);
    for (bool ok : f->commit(ops))
        if (!ok) throw std::runtime_error(std::string(name) + ": a route was refused");
    return f;
}

// make_small_fib's routes to port 1.
const Fib &fib_small() {
    static Fib *fib = make_small_fib(
        "bench_fib_small", NextHop{NextHopKind::forward, 1, MacAddr{{0x02, 0, 0, 0, 0x02, 0x02}}});
    return *fib;
}

enum class EgressKind { fifo, qos, sched };

// DPDK's hierarchical scheduler as an Egress (issue 20's reference for the QoS stage): per port
// one rte_sched port with one subport and one pipe, all at the port's 800G (rates never hold).
// The 8 TCs use 8 of its queues: TC 4..7 the strict traffic classes 11..8 (TC 7 first, as the
// QoS egress's strict queue 7), TC 0..3 the four WRR queues of the best-effort class (weights
// `wrr`: the profile's DWRR weights of queues 0..3). enqueue: rte_sched_port_pkt_write +
// rte_sched_port_enqueue; flush: rte_sched_port_dequeue until it returns nothing, then tx_burst
// (no WRED/ECN, no buffer pools, no PFC: enqueue + dequeue only).
// Shaped ports (`shaped_mbps` non-zero for the port): rte_sched times its token buckets with the
// TSC, which cannot follow the time argument the benchmarks advance 1 us per poll, so the port's
// output is held to the same rate by a byte budget of the argument instead (`shaped_mbps` / 8
// bytes per us of `now`, wire bytes = frame + `wire_overhead`, as the QoS shaper counts them;
// each dequeue asks for what the budget covers at `wire_len` bytes a packet). Its own buckets
// stay at 800G and never hold: the dequeue does the same grinder work over deep queues.
struct SchedParams {
    std::array<uint8_t, 4> wrr{1, 1, 1, 1};
    uint16_t qsize = 1024;                 // per queue, power of 2
    std::vector<uint64_t> shaped_mbps;     // per port; 0 or absent: unshaped
    uint32_t wire_len = 84;                // the bench's frame + overhead (dequeue sizing)
    uint32_t wire_overhead = 24;
};

class SchedEgress final : public Egress {
  public:
    SchedEgress(PortIo &io, uint16_t n_ports, WorkerCounters &counters, uint16_t burst,
                const SchedParams &sp_in = {})
        : io_(io), ctr_(counters), burst_(burst), params_(sp_in) {
        static int seq = 0;
        const uint64_t rate = 800'000'000'000ull / 8;  // bytes per second
        rte_sched_subport_profile_params sp{};
        sp.tb_rate = rate;
        sp.tb_size = 1'000'000;
        for (auto &r : sp.tc_rate) r = rate;
        sp.tc_period = 10;
        rte_sched_pipe_params pipe{};
        pipe.tb_rate = rate;
        pipe.tb_size = 1'000'000;
        for (auto &r : pipe.tc_rate) r = rate;
        pipe.tc_period = 40;
        pipe.tc_ov_weight = 1;
        for (size_t i = 0; i < 4; i++) pipe.wrr_weights[i] = params_.wrr[i];
        for (uint16_t p = 0; p < n_ports; p++) {
            std::string name = "bench_sched";
            name += std::to_string(seq++);
            rte_sched_port_params pp{};
            pp.name = name.c_str();
            pp.socket = std::max(int(rte_socket_id()), 0);
            pp.rate = rate;
            pp.mtu = 9000;
            pp.frame_overhead = RTE_SCHED_FRAME_OVERHEAD_DEFAULT;
            pp.n_subports_per_port = 1;
            pp.subport_profiles = &sp;
            pp.n_subport_profiles = 1;
            pp.n_max_subport_profiles = 1;
            pp.n_pipes_per_subport = 1;
            rte_sched_port *port = rte_sched_port_config(&pp);
            if (!port) throw std::runtime_error("rte_sched_port_config");
            rte_sched_subport_params sub{};
            sub.n_pipes_per_subport_enabled = 1;
            for (auto &q : sub.qsize) q = params_.qsize;
            sub.pipe_profiles = &pipe;
            sub.n_pipe_profiles = 1;
            sub.n_max_pipe_profiles = 1;
            if (rte_sched_subport_config(port, 0, &sub, 0) != 0 ||
                rte_sched_pipe_config(port, 0, 0, 0) != 0)
                throw std::runtime_error("rte_sched subport/pipe config");
            ports_.push_back(port);
        }
        held_.resize(n_ports);
        params_.shaped_mbps.resize(n_ports);
        credit_.resize(n_ports);
        last_.resize(n_ports);
    }
    ~SchedEgress() override {
        discard_all(DropReason::port_stopped);
        for (auto *p : ports_) rte_sched_port_free(p);
    }
    void enqueue(uint16_t port, rte_mbuf **pkts, uint16_t n, uint64_t) override {
        for (uint16_t i = 0; i < n; i++) {
            const unsigned tc = meta_of(pkts[i])->tc & 7;
            if (tc >= 4)
                rte_sched_port_pkt_write(ports_[port], pkts[i], 0, 0, 15 - tc, 0, RTE_COLOR_GREEN);
            else
                rte_sched_port_pkt_write(ports_[port], pkts[i], 0, 0, RTE_SCHED_TRAFFIC_CLASS_BE,
                                         tc, RTE_COLOR_GREEN);
        }
        const int k = rte_sched_port_enqueue(ports_[port], pkts, n);  // frees what it drops
        held_[port] += uint32_t(k);
        if (k < n) ctr_.ports[port].drops[size_t(DropReason::tx_full)].add(uint64_t(n - k));
    }
    uint32_t flush(uint64_t now) override {
        uint32_t total = 0;
        rte_mbuf *out[256];
        for (uint16_t port = 0; port < ports_.size(); port++) {
            const uint64_t mbps = params_.shaped_mbps[port];
            if (mbps) {  // budget: mbps / 8 bytes per us of `now`, at most one burst's worth
                const double cap = double(burst_) * params_.wire_len;
                if (last_[port]) credit_[port] += double(now - last_[port]) * double(mbps) / 8000.0;
                credit_[port] = std::min(credit_[port], cap);
                last_[port] = now;
            }
            while (held_[port]) {
                uint32_t want = burst_;
                if (mbps) {
                    if (credit_[port] <= 0) break;
                    want = std::min<uint32_t>(
                        burst_, uint32_t((credit_[port] + params_.wire_len - 1) / params_.wire_len));
                }
                const int k = rte_sched_port_dequeue(ports_[port], out, want);
                if (k <= 0) break;
                held_[port] -= uint32_t(k);
                uint64_t bytes = 0;
                for (int i = 0; i < k; i++) bytes += out[i]->pkt_len;
                if (mbps) credit_[port] -= double(bytes + uint64_t(k) * params_.wire_overhead);
                const uint16_t sent = io_.tx_burst(port, 0, out, uint16_t(k));
                // BenchPorts takes everything; a refusal would be freed, not counted.
                if (sent < k) rte_pktmbuf_free_bulk(out + sent, unsigned(k - sent));
                ctr_.ports[port].tx_packets.add(sent);
                ctr_.ports[port].tx_bytes.add(bytes);
                total += sent;
            }
        }
        return total;
    }
    uint32_t backlog() const override {
        uint32_t n = 0;
        for (auto h : held_) n += h;
        return n;
    }
    uint32_t queued(uint16_t port) const override { return port < held_.size() ? held_[port] : 0; }
    void discard_all(DropReason reason) override {
        rte_mbuf *out[256];
        for (uint16_t port = 0; port < ports_.size(); port++) {
            for (int spins = 0; held_[port] && spins < 1'000'000; spins++) {
                const int k = rte_sched_port_dequeue(ports_[port], out, 256);
                if (k <= 0) continue;
                held_[port] -= uint32_t(k);
                ctr_.ports[port].drops[size_t(reason)].add(uint64_t(k));
                rte_pktmbuf_free_bulk(out, unsigned(k));
            }
        }
    }

  private:
    PortIo &io_;
    WorkerCounters &ctr_;
    uint16_t burst_;
    SchedParams params_;
    std::vector<rte_sched_port *> ports_;
    std::vector<uint32_t> held_;
    std::vector<double> credit_;   // shaped ports: wire bytes they may still send
    std::vector<uint64_t> last_;   // shaped ports: `now` of the last flush (0: none yet)
};

// The QoS plan roceswd builds without a QoS file (SONiC default), for two 800G ports.
const QosPlan &bench_qos_plan() {
    static const QosPlan plan = [] {
        std::vector<QosPortInfo> info = {{"p0", 800'000, 9000, kBurst}, {"p1", 800'000, 9000, kBurst}};
        return build_qos_plan(default_qos_config(), info);
    }();
    return plan;
}

// One worker on port 0's queue 0 over the shared `fib` (Dataplane with a borrowed FIB).
struct Switch {
    BenchPorts ports;
    Dataplane dp;
    Worker &worker;
    TrafficManager *qos;  // with the QoS egress; else null
    // `classify`: the worker classifies (DataplaneContext::qos), as roceswd does; always with
    // the QoS egress.
    // `plan`: the QoS plan (classification and QosEgress); default bench_qos_plan().
    // `pfc_pool`: PFC frames the switch sends come from it (roceswd's rx pool); null: none.
    // `sched`: SchedEgress's parameters (EgressKind::sched). `mbufs`: the RX pool's size.
    Switch(const Fib &fib, uint32_t frame_len, const std::vector<uint32_t> &dests,
           EgressKind kind = EgressKind::fifo, bool classify = false, bool mix = false,
           const QosPlan *plan = nullptr, rte_mempool *pfc_pool = nullptr,
           const SchedParams &sched = {}, uint32_t mbufs = 8192)
        : ports(frame_len, dests, mix, mbufs),
          dp(spec(), classify || kind == EgressKind::qos ? (plan ? plan : &bench_qos_plan()) : nullptr,
             ports, options(fib, kind, pfc_pool, sched)),
          worker(dp.worker(0)),
          qos(kind == EgressKind::qos ? &dp.tm() : nullptr) {}
    static DataplaneSpec spec() {
        DataplaneSpec s;
        const char *addrs[2] = {"10.0.1.1/24", "10.0.2.1/24"};
        for (int p = 0; p < 2; p++) {
            // Appended piece by piece: GCC 12 at -O3 + LTO reports a bogus -Wrestrict /
            // -Wstringop-overflow in literal + std::string (as drivers/ethdev/eal_args.cc).
            std::string name = "p";
            name += std::to_string(p);
            s.ports.push_back({name, MacAddr{{0x02, 0, 0, 0, uint8_t(p + 1), 0x01}},
                               9000, {if_addr(addrs[p])}});
        }
        return s;
    }
    static DataplaneOptions options(const Fib &fib, EgressKind kind, rte_mempool *pfc_pool,
                                    const SchedParams &sched) {
        static int seq = 0;
        DataplaneOptions o;
        o.pfc_pool = pfc_pool;
        o.name = "bench";
        o.name += std::to_string(seq++);
        o.burst = kBurst;
        o.rx = {{{0, 0}}};
        o.borrowed_fib = &fib;
        if (kind == EgressKind::fifo) o.egress = fifo_egress_factory(1024);
        if (kind == EgressKind::sched)
            o.egress = [sched](const EgressArgs &a) -> std::unique_ptr<Egress> {
                return std::make_unique<SchedEgress>(a.io, a.n_ports, a.counters, a.burst, sched);
            };
        return o;
    }
};

// The timed poll of the single-switch benchmarks, out of line so that callgrind can count
// exactly these (--toggle-collect='*timed_poll*'): warm-up polls and set-up excluded, one call
// per 32-packet burst.
[[gnu::noinline]] uint32_t timed_poll(Worker &w, uint64_t now) {
    return w.poll_once(now);
}

// 100 polls to warm caches and the pool (`step_ns` apart with `advance_warmup`, else at one
// time), then the timed polls, `step_ns` apart; reports cycles per received packet. Returns the
// packets received in the timed polls.
uint64_t time_polls(benchmark::State &st, Switch &sw, bool advance_warmup,
                    uint64_t step_ns = 1000) {
    uint64_t now = 1'000'000, cycles = 0;
    for (int i = 0; i < 100; i++) sw.worker.poll_once(advance_warmup ? now += step_ns : now);
    uint64_t rx0 = sw.ports.rx_, tx0 = sw.ports.tx_;
    for (auto _ : st) {
        uint64_t t0 = rte_rdtsc();
        timed_poll(sw.worker, now);
        cycles += rte_rdtsc() - t0;
        now += step_ns;
    }
    uint64_t rx = sw.ports.rx_ - rx0, tx = sw.ports.tx_ - tx0;
    if (tx + 2 * kBurst < rx) st.SkipWithError("packets dropped: check the frames and routes");
    report_cycles(st, cycles, rx);
    return rx;
}

void run_worker(benchmark::State &st, const Fib &fib, const std::vector<uint32_t> &dests) {
    Switch sw(fib, uint32_t(st.range(0)), dests);
    time_polls(st, sw, false);
}

void BM_WorkerPoll8Routes(benchmark::State &st) {
    run_worker(st, fib_small(), destinations(1024, 1u << 20, 3));
}
BENCHMARK(BM_WorkerPoll8Routes)->Arg(60)->Arg(1020);

void BM_WorkerPollBigFib(benchmark::State &st) {
    run_worker(st, fib_1m(), fib_1m_destinations());
}
BENCHMARK(BM_WorkerPollBigFib)->Arg(60)->Arg(1020);

// ECMP group 1 of `f`: the flowlet policy over 10.0.2.2 and 10.0.2.3, both on port 1 with
// different gateway MACs (rsw-full's group).
void publish_flowlet_group(Fib &f) {
    std::vector<LbMember> mem(2);
    for (uint32_t s = 0; s < 2; s++) {
        IpAddr via;
        via.v4 = 0x0a000202 + s;  // 10.0.2.2, 10.0.2.3
        mem[s].key = lb_member_key(via);
        mem[s].alive = true;
        mem[s].port = 1;
        mem[s].dst_mac = MacAddr{{0x02, 0, 0, 0, 0x02, uint8_t(0x02 + s)}};
    }
    std::vector<std::pair<uint16_t, std::unique_ptr<EcmpGroup>>> ch;
    ch.emplace_back(1, build_ecmp_group(1, uint8_t(LbPolicyId::flowlet), mem));
    f.groups().publish(std::move(ch));
}

// The routes of fib_small() through a 2-member ECMP group with the flowlet policy (both members
// on port 1, different gateway MACs), as tools/bench's rsw-full has them. Every flow is
// revisited every 32 polls of 1 us, within flowlet_gap_us (50 us): the flowlet-table hit path.
const Fib &fib_flowlet() {
    static Fib *fib = make_small_fib("bench_fl", NextHop{NextHopKind::ecmp_group, 0, MacAddr{}, 1},
                                     publish_flowlet_group);
    return *fib;
}

// BM_WorkerPoll8Routes through the flowlet group instead of a single next hop: the difference
// is the load-balancing stage in the worker (flow hash, flowlet table, member counters).
void BM_WorkerPollFlowlet(benchmark::State &st) {
    run_worker(st, fib_flowlet(), destinations(1024, 1u << 20, 3));
}
BENCHMARK(BM_WorkerPollFlowlet)->Arg(60)->Arg(1020);

// QoS egress against the FIFO egress, same pipeline (both classify) and traffic (the class mix
// of tools/bench: queues 1 and 6 of the SONiC default profile, both DWRR). Each iteration runs
// kBlock polls of one switch, then kBlock of the other (the order alternates), so both see the
// same interference. Reported per switch: the median over blocks of the block's cycles/packet
// (robust to a block in which the thread was preempted; the TSC counts that time too) and the
// mean over all packets; "qos-fifo" is the difference of the medians, "d-mean" of the means.
void BM_EgressQosVsFifo(benchmark::State &st) {
    constexpr int kBlock = 16;
    const auto dests = destinations(1024, 1u << 20, 3);
    Switch fifo(fib_small(), uint32_t(st.range(0)), dests, EgressKind::fifo, true, true);
    Switch qos(fib_small(), uint32_t(st.range(0)), dests, EgressKind::qos, true, true);
    Switch *sw[2] = {&fifo, &qos};
    uint64_t now = 1'000'000, cycles[2] = {0, 0};
    for (int i = 0; i < 100; i++) {
        fifo.worker.poll_once(now);
        qos.worker.poll_once(now);
        now += 1000;
    }
    uint64_t rx0[2] = {fifo.ports.rx_, qos.ports.rx_}, tx0[2] = {fifo.ports.tx_, qos.ports.tx_};
    std::vector<double> blocks[2];
    unsigned turn = 0;
    for (auto _ : st) {
        for (unsigned j = 0; j < 2; j++) {
            const unsigned k = (turn + j) & 1;
            Switch &s = *sw[k];
            const uint64_t rx_before = s.ports.rx_;
            uint64_t c = 0;
            for (int i = 0; i < kBlock; i++) {
                uint64_t t0 = rte_rdtsc();
                s.worker.poll_once(now + uint64_t(i) * 1000);
                c += rte_rdtsc() - t0;
            }
            cycles[k] += c;
            if (uint64_t got = s.ports.rx_ - rx_before) blocks[k].push_back(double(c) / double(got));
        }
        now += kBlock * 1000;
        turn ^= 1;
    }
    double med[2] = {0, 0}, mean[2] = {0, 0};
    for (unsigned k = 0; k < 2; k++) {
        uint64_t rx = sw[k]->ports.rx_ - rx0[k], tx = sw[k]->ports.tx_ - tx0[k];
        if (tx + 2 * kBurst < rx) st.SkipWithError("packets dropped: check the frames and routes");
        mean[k] = rx ? double(cycles[k]) / double(rx) : 0.0;
        if (!blocks[k].empty()) {
            auto mid = blocks[k].begin() + std::ptrdiff_t(blocks[k].size() / 2);
            std::nth_element(blocks[k].begin(), mid, blocks[k].end());
            med[k] = *mid;
        }
    }
    st.counters["fifo"] = med[0];
    st.counters["qos"] = med[1];
    st.counters["qos-fifo"] = med[1] - med[0];
    st.counters["d-mean"] = mean[1] - mean[0];
    st.SetItemsProcessed(int64_t(qos.ports.rx_ - rx0[1]));
}
BENCHMARK(BM_EgressQosVsFifo)->Arg(60)->Arg(1020);

// Block-interleaved polls of several switches (as BM_EgressQosVsFifo): per switch the median
// over blocks of the block's cycles per received packet.
std::vector<double> interleave_polls(benchmark::State &st, std::vector<Switch *> sw,
                                     uint64_t &now) {
    constexpr int kBlock = 16;
    const size_t n = sw.size();
    std::vector<std::vector<double>> blocks(n);
    unsigned turn = 0;
    for (auto _ : st) {
        for (size_t j = 0; j < n; j++) {
            const size_t k = (turn + j) % n;
            Switch &s = *sw[k];
            const uint64_t rx_before = s.ports.rx_;
            uint64_t c = 0;
            for (int i = 0; i < kBlock; i++) {
                uint64_t t0 = rte_rdtsc();
                s.worker.poll_once(now + uint64_t(i) * 1000);
                c += rte_rdtsc() - t0;
            }
            if (uint64_t got = s.ports.rx_ - rx_before) blocks[k].push_back(double(c) / double(got));
        }
        now += kBlock * 1000;
        turn++;
    }
    std::vector<double> med(n, 0.0);
    for (size_t k = 0; k < n; k++)
        if (!blocks[k].empty()) {
            auto mid = blocks[k].begin() + std::ptrdiff_t(blocks[k].size() / 2);
            std::nth_element(blocks[k].begin(), mid, blocks[k].end());
            med[k] = *mid;
        }
    return med;
}

// PFC frames the benchmarks' switches send (roceswd's rx pool in roceswd).
rte_mempool *bench_pfc_pool() {
    static rte_mempool *pool = rte_pktmbuf_pool_create("bench_pfc", 511, 0, kMbufPrivSize,
                                                       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    if (!pool) throw std::runtime_error("bench pfc pool");
    return pool;
}

// config/qos/nvidia-roce.yaml on two ports, p0 at 800G, p1 at `p1_mbps`.
const QosPlan &nvidia_plan(uint64_t p1_mbps = 800'000) {
    static std::map<uint64_t, QosPlan> plans;
    auto it = plans.find(p1_mbps);
    if (it != plans.end()) return it->second;
    std::vector<QosPortInfo> info = {{"p0", 800'000, 9000, kBurst}, {"p1", p1_mbps, 9000, kBurst}};
    return plans
        .emplace(p1_mbps, build_qos_plan(load_qos_file(ROCESW_SOURCE_ROOT
                                                       "/config/qos/nvidia-roce.yaml"),
                                         info))
        .first->second;
}

// Issue 20: the QoS stage against DPDK's rte_sched (SchedEgress above: enqueue + dequeue, one
// subport, one pipe, the 8 TCs on 8 of its queues, WRR weights 50/1/1/50 as the profile's
// DWRR queues 0..3) on the same pipeline and packets (tools/bench's class mix: TC 3, 6 and 0
// with the NVIDIA profile), with the FIFO as the floor both are measured from. The three
// switches run in turn, kBlock polls each, the order rotating every iteration.
// Range 0: frame length. Range 1: 0 = uncongested (800G ports: every poll's packets leave in
// it), 1 = congested: port 1 at 2/3 of the offered load (QoS: the profile's shaper; rte_sched:
// the same rate as a byte budget, see SchedEgress) and RX pools of 4096 mbufs, so the queues
// stay deep (queue 3 holds most of the pool, inside the profile's ECN range at 64 B, above it
// at 1 KB) and RX takes only what leaves: no drops, no PFC (the pool empties before the
// lossless PG's XOFF).
// Reported: each switch's median cycles/packet over blocks, the stages' costs above the FIFO in
// cycles and ns ("qos-fifo", "sched-fifo", "*_ns"), their ratio "qos/sched" (the target:
// <= 1), and the packets each of the QoS and rte_sched switches received and sent in the timed
// polls ("qos_in" ...) and the share of the QoS switch's packets it ECN-marked (work rte_sched
// does not do): the run fails if either lost a packet (received != sent + held) or if
// the two did not carry the same packets (uncongested: equal; congested: within 1 %).
// Figures only (no timed pass/fail).
void BM_EgressQosVsSched(benchmark::State &st) {
    const uint32_t len = uint32_t(st.range(0));
    const bool congested = st.range(1) != 0;
    const auto dests = destinations(1024, 1u << 20, 3);
    const uint32_t wire = std::max(len, 60u) + 24;
    const uint64_t offered_mbps = uint64_t(kBurst) * wire * 8;  // 32 frames per us of `now`
    const uint64_t p1_mbps = congested ? offered_mbps * 2 / 3 : 800'000;
    const QosPlan &plan = nvidia_plan(p1_mbps);
    SchedParams sp;
    sp.wrr = {50, 1, 1, 50};
    sp.wire_len = wire;
    sp.wire_overhead = plan.wire_overhead_bytes;
    sp.qsize = congested ? 8192 : 1024;  // never the limit: the RX pool is
    if (congested) sp.shaped_mbps = {0, p1_mbps};
    const uint32_t mbufs = congested ? 4096 : 8192;
    Switch fifo(fib_small(), len, dests, EgressKind::fifo, true, true, &plan, nullptr, {}, mbufs);
    Switch qos(fib_small(), len, dests, EgressKind::qos, true, true, &plan, bench_pfc_pool(), {},
               mbufs);
    Switch sched(fib_small(), len, dests, EgressKind::sched, true, true, &plan, nullptr, sp, mbufs);
    Switch *sw[3] = {&fifo, &qos, &sched};
    uint64_t now = 1'000'000;
    for (int i = 0; i < (congested ? 2000 : 100); i++) {  // congested: fill the queues
        for (Switch *s : sw) s->worker.poll_once(now);
        now += 1000;
    }
    uint64_t rx0[3], tx0[3], held0[3];
    for (unsigned k = 0; k < 3; k++) {
        rx0[k] = sw[k]->ports.rx_;
        tx0[k] = sw[k]->ports.tx_;
        held0[k] = sw[k]->worker.egress().backlog();
    }
    auto marks = [&] {
        uint64_t m = 0;
        for (uint16_t p = 0; p < 2; p++)
            for (uint8_t q = 0; q < 8; q++) m += qos.qos->queue(p, q).ecn_marked;
        return m;
    };
    const uint64_t marks0 = marks();
    const std::vector<double> med = interleave_polls(st, {&fifo, &qos, &sched}, now);
    uint64_t in[3], out[3];
    for (unsigned k = 0; k < 3; k++) {
        in[k] = sw[k]->ports.rx_ - rx0[k];
        out[k] = sw[k]->ports.tx_ - tx0[k];
        const uint64_t held = sw[k]->worker.egress().backlog();
        if (in[k] + held0[k] != out[k] + held)
            st.SkipWithError("a switch lost (or made) packets: received != sent + held");
    }
    const double tol = congested ? 0.01 * double(out[1]) : 0.0;
    if (in[1] != in[2] && !congested) st.SkipWithError("QoS and rte_sched received different counts");
    if (std::abs(double(out[1]) - double(out[2])) > tol)
        st.SkipWithError("QoS and rte_sched sent different counts");
    const double ns = 1e9 / double(rte_get_tsc_hz());
    st.counters["fifo"] = med[0];
    st.counters["qos"] = med[1];
    st.counters["sched"] = med[2];
    st.counters["qos-fifo"] = med[1] - med[0];
    st.counters["sched-fifo"] = med[2] - med[0];
    st.counters["qos-fifo_ns"] = (med[1] - med[0]) * ns;
    st.counters["sched-fifo_ns"] = (med[2] - med[0]) * ns;
    st.counters["qos/sched"] = med[2] > med[0] ? (med[1] - med[0]) / (med[2] - med[0]) : 0.0;
    st.counters["qos_in"] = double(in[1]);
    st.counters["qos_out"] = double(out[1]);
    st.counters["sched_in"] = double(in[2]);
    st.counters["sched_out"] = double(out[2]);
    st.counters["qos_marked/pkt"] = out[1] ? double(marks() - marks0) / double(out[1]) : 0.0;
    if (congested) {
        QueueSnapshot q3 = qos.qos->queue(1, 3);
        st.counters["q3_depth_KB"] = double(q3.depth_bytes) / 1024.0;
        st.counters["sched_held"] = double(sched.worker.egress().backlog());
    }
    st.SetItemsProcessed(int64_t(in[1]));
}
BENCHMARK(BM_EgressQosVsSched)->Args({60, 0})->Args({1020, 0})->Args({60, 1})->Args({1020, 1});

// Egress cut-through (doc/qos.md): the QoS egress with ROCESW.cut_through on and off (and the
// FIFO as the floor), interleaved as above. Range 0: frame length; range 1: 0 = one class (all
// RoCEv2 WRITEs, one queue: every burst cuts through), 1 = tools/bench's class mix (three queues
// per burst: none does). Reported: each switch's median cycles/packet, "ct-queued" (the saving
// is its negative) and the share of packets that cut through.
const QosPlan &bench_qos_plan_queued() {
    static const QosPlan plan = [] {
        QosPlan p = bench_qos_plan();
        p.cut_through = false;
        return p;
    }();
    return plan;
}

void BM_EgressCutThrough(benchmark::State &st) {
    const auto dests = destinations(1024, 1u << 20, 3);
    const uint32_t len = uint32_t(st.range(0));
    const bool mix = st.range(1) != 0;
    Switch fifo(fib_small(), len, dests, EgressKind::fifo, true, mix);
    Switch ct(fib_small(), len, dests, EgressKind::qos, true, mix, &bench_qos_plan());
    Switch queued(fib_small(), len, dests, EgressKind::qos, true, mix, &bench_qos_plan_queued());
    uint64_t now = 1'000'000;
    for (int i = 0; i < 100; i++, now += 1000)
        for (Switch *s : {&fifo, &ct, &queued}) s->worker.poll_once(now);
    const uint64_t rx0 = ct.ports.rx_;
    const uint64_t ct0 = ct.dp.qos_egress(0)->cut_through_packets();
    const std::vector<double> med = interleave_polls(st, {&fifo, &ct, &queued}, now);
    for (Switch *s : {&fifo, &ct, &queued})
        if (s->ports.tx_ + 2 * kBurst < s->ports.rx_)
            st.SkipWithError("packets dropped: check the frames and routes");
    st.counters["fifo"] = med[0];
    st.counters["ct"] = med[1];
    st.counters["queued"] = med[2];
    st.counters["ct-queued"] = med[1] - med[2];
    const uint64_t rx = ct.ports.rx_ - rx0;
    st.counters["ct-share"] =
        rx ? double(ct.dp.qos_egress(0)->cut_through_packets() - ct0) / double(rx) : 0.0;
    st.SetItemsProcessed(int64_t(rx));
}
BENCHMARK(BM_EgressCutThrough)->Args({60, 0})->Args({1020, 0})->Args({60, 1})->Args({1020, 1});

// A DSCP_TO_TC_MAP table `name` with every DSCP d to tc(d), as QoS-file YAML.
std::string dscp_to_tc_yaml(const char *name, int (*tc)(int)) {
    std::string y = "DSCP_TO_TC_MAP:\n  ";
    y += name;
    y += ": {";
    for (int d = 0; d < 64; d++) {
        // Appended piece by piece: GCC 12 at -O3 + LTO reports a bogus -Wrestrict /
        // -Wstringop-overflow in literal + std::string (as drivers/ethdev/eal_args.cc).
        if (d) y += ", ";
        y += '"';
        y += std::to_string(d);
        y += "\": ";
        y += std::to_string(tc(d));
    }
    y += "}\n";
    return y;
}

// A QoS profile for congestion: the bench's class mix (DSCP 26 -> TC3, 48 -> TC6, the rest ->
// TC0), queue 3 ECN-marked at dequeue (Kmin 32 KB, Kmax 1 MB, 20 %), queue 0 with a WRED drop
// curve for its Not-ECT packets (16 KB .. 1 MB, 20 %), queue 6 strict, every queue limited to
// 128 KB (static pool), so a congested queue sits at 128 KB, inside both curves: every ECT
// packet leaving queue 3 and every packet entering queue 0 draws a random number. No PFC (lossy).
// Port 1 runs at 2/3 of the offered load (32 frames per microsecond of `now`).
const QosPlan &congested_plan(uint32_t frame_len) {
    static std::map<uint32_t, QosPlan> plans;
    auto it = plans.find(frame_len);
    if (it != plans.end()) return it->second;
    const std::string dscp =
        dscp_to_tc_yaml("B", [](int d) { return d == 26 ? 3 : d == 48 ? 6 : 0; });
    const std::string yaml = dscp + R"(TC_TO_QUEUE_MAP:
  Q: {"0": 0, "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7}
SCHEDULER:
  dwrr: {type: DWRR, weight: 50}
  strict: {type: STRICT}
WRED_PROFILE:
  ECN: {ecn: ecn_all, wred_green_enable: false, green_min_threshold: 32768,
        green_max_threshold: 1048576, green_drop_probability: 20, ecn_mark_point: dequeue}
  DROP: {ecn: ecn_none, wred_green_enable: true, green_min_threshold: 16384,
         green_max_threshold: 1048576, green_drop_probability: 20}
BUFFER_POOL:
  egress_pool: {type: egress, mode: static, size: 8388608}
BUFFER_PROFILE:
  q_profile: {pool: egress_pool, size: 0, static_th: 131072}
PORT_QOS_MAP:
  default: {trust: dscp, dscp_to_tc_map: B, tc_to_queue_map: Q}
QUEUE:
  default|0: {scheduler: dwrr, wred_profile: DROP}
  default|1-2: {scheduler: dwrr}
  default|3: {scheduler: dwrr, wred_profile: ECN}
  default|4-5: {scheduler: dwrr}
  default|6-7: {scheduler: strict}
BUFFER_QUEUE:
  default|0-7: {profile: q_profile}
)";
    const uint64_t offered_mbps = uint64_t(kBurst) * (std::max(frame_len, 60u) + 24) * 8;  // per us
    std::vector<QosPortInfo> info = {{"p0", 800'000, 9000, kBurst},
                                     {"p1", offered_mbps * 2 / 3, 9000, kBurst}};
    return plans.emplace(frame_len, build_qos_plan(load_qos_string(yaml, "congested"), info))
        .first->second;
}

// Enqueue/dequeue with ECN under congestion: the same pipeline and traffic through the FIFO
// egress, the uncongested QoS egress (as BM_EgressQosVsFifo) and the QoS egress with port 1 at
// 2/3 of the offered load (congested_plan: queues at their limit, WRED draws, ECN marks, WRED and
// tail drops), interleaved. Reports each switch's cycles per received packet, the differences
// to the FIFO, and per received packet the congested switch's ECN marks and drops.
void BM_EgressQosCongested(benchmark::State &st) {
    const uint32_t len = uint32_t(st.range(0));
    const auto dests = destinations(1024, 1u << 20, 3);
    Switch fifo(fib_small(), len, dests, EgressKind::fifo, true, true);
    Switch qos(fib_small(), len, dests, EgressKind::qos, true, true);
    Switch cong(fib_small(), len, dests, EgressKind::qos, true, true, &congested_plan(len));
    uint64_t now = 1'000'000;
    for (int i = 0; i < 2000; i++, now += 1000) {  // fill the congested queues to their limit
        fifo.worker.poll_once(now);
        qos.worker.poll_once(now);
        cong.worker.poll_once(now);
    }
    auto snap = [&] {
        uint64_t marks = 0, drops = 0;
        for (uint8_t q = 0; q < 8; q++) {
            QueueSnapshot s = cong.qos->queue(1, q);
            marks += s.ecn_marked;
            drops += s.drops_total();
        }
        return std::pair{marks, drops};
    };
    const auto [m0, d0] = snap();
    const uint64_t rx0 = cong.ports.rx_;
    auto med = interleave_polls(st, {&fifo, &qos, &cong}, now);
    const auto [m1, d1] = snap();
    const double rx = double(cong.ports.rx_ - rx0);
    st.counters["fifo"] = med[0];
    st.counters["qos"] = med[1];
    st.counters["congested"] = med[2];
    st.counters["qos-fifo"] = med[1] - med[0];
    st.counters["cong-fifo"] = med[2] - med[0];
    st.counters["marked/pkt"] = rx > 0 ? double(m1 - m0) / rx : 0.0;
    st.counters["dropped/pkt"] = rx > 0 ? double(d1 - d0) / rx : 0.0;
    st.counters["q3_depth_KB"] = double(cong.qos->queue(1, 3).depth_bytes) / 1024.0;
    if (m1 == m0) st.SkipWithError("no ECN marks: the queue is not in the marking range");
    st.SetItemsProcessed(int64_t(rx));
}
BENCHMARK(BM_EgressQosCongested)->Arg(60)->Arg(1020);

// The same pipeline as roceswd runs it: classification and the QoS egress.
void BM_WorkerPollQos(benchmark::State &st) {
    const auto dests = destinations(1024, 1u << 20, 3);
    Switch sw(fib_small(), uint32_t(st.range(0)), dests, EgressKind::qos, true, true);
    time_polls(st, sw, true);
}
BENCHMARK(BM_WorkerPollQos)->Arg(60)->Arg(1020);

// The same with one class (every frame a RoCEv2 WRITE: one queue), as rsw-pass has it: every
// burst cuts through (doc/qos.md, "Cut-through").
void BM_WorkerPollQosOneClass(benchmark::State &st) {
    const auto dests = destinations(1024, 1u << 20, 3);
    Switch sw(fib_small(), uint32_t(st.range(0)), dests, EgressKind::qos, true, false);
    time_polls(st, sw, true);
    if (sw.dp.qos_egress(0)->cut_through_packets() != sw.ports.rx_)  // warm-up polls included
        st.SkipWithError("not every packet cut through");
}
BENCHMARK(BM_WorkerPollQosOneClass)->Arg(60)->Arg(1020);

// tools/bench's rsw-pass in one worker (doc/performance.md, "Method"): its QoS file (every DSCP
// to TC 0, no PFC, WRED/ECN, shaper, TX ring cap or buffer pools; the 8 queues and the
// scheduler run) on two 800G ports, fib_small()'s 8 routes to one next hop on port 1 (as
// rsw-pass's 8 routes: tbl24 hits, no tbl8), one class of traffic. Every burst cuts through.
const QosPlan &pass_plan() {
    static const QosPlan plan = [] {
        std::string yaml = dscp_to_tc_yaml("PASS", [](int) { return 0; });
        yaml += "PORT_QOS_MAP:\n  default: {trust: dscp, dscp_to_tc_map: PASS, shaper: false, "
                "tx_ring_bytes: 0}\n";
        std::vector<QosPortInfo> info = {{"p0", 800'000, 9000, kBurst},
                                         {"p1", 800'000, 9000, kBurst}};
        return build_qos_plan(load_qos_string(yaml, "pass"), info);
    }();
    return plan;
}

// rsw-pass's worker over `frame(dst, sport, len)`'s 1024 frames (null: BenchPorts' own RoCEv2
// WRITEs), every packet cut through.
using PassFrame = std::vector<uint8_t> (*)(uint32_t dst, uint16_t sport, uint32_t len);
void run_pass(benchmark::State &st, PassFrame frame = nullptr) {
    const auto dests = destinations(1024, 1u << 20, 3);
    const uint32_t len = uint32_t(st.range(0));
    Switch sw(fib_small(), len, dests, EgressKind::qos, true, false, &pass_plan());
    if (frame) {
        std::vector<std::vector<uint8_t>> frames;
        for (uint32_t i = 0; i < 1024; i++)
            frames.push_back(frame(dests[i % dests.size()], uint16_t(0xC000 | i), len));
        sw.ports.use_frames(std::move(frames));
    }
    time_polls(st, sw, true);
    if (sw.dp.qos_egress(0)->cut_through_packets() != sw.ports.rx_)  // warm-up polls included
        st.SkipWithError("not every packet cut through");
}

void BM_WorkerPollPass(benchmark::State &st) { run_pass(st); }
BENCHMARK(BM_WorkerPollPass)->Arg(60)->Arg(1020);

// The same over IPv6: RoCEv2 WRITEs to 2001:db8:D:D::2 (the D:D of BM_WorkerPollPass's
// destinations) through fib_small()'s IPv6 route (rte_lpm6, a tbl24 hit), 20 bytes longer than
// BM_WorkerPollPass's for the same payload (/80 against /60, /1040 against /1020). IPv6 takes
// the general parser (the port's fast path is untagged IPv4's).
void BM_WorkerPollPass6(benchmark::State &st) {
    run_pass(st, [](uint32_t dst, uint16_t sport, uint32_t len) {
        return roce_frame6(dst, sport, len, kP0Mac);
    });
}
BENCHMARK(BM_WorkerPollPass6)->Arg(80)->Arg(1040);

// The same over IPv4 with an 802.1Q tag (PCP 3, VID 100; forwarding strips it), 4 bytes longer
// than BM_WorkerPollPass's frames (/64 against /60): tagged frames, as dot1p trust has them,
// take the general parser too.
void BM_WorkerPollPassTagged(benchmark::State &st) {
    run_pass(st, [](uint32_t dst, uint16_t sport, uint32_t len) {
        std::vector<uint8_t> f = roce_frame(dst, sport, len - 4, kP0Mac);
        const uint8_t tag[4] = {0x81, 0x00, uint8_t(3 << 5), 100};
        f.insert(f.begin() + 12, tag, tag + 4);
        return f;
    });
}
BENCHMARK(BM_WorkerPollPassTagged)->Arg(64)->Arg(1024);

// tools/bench's rsw-full in one worker (doc/performance.md, "Method"): the 1 M /24 routes of
// fib_1m() (ROCESW_BENCH_LPM_ROUTES), every one through one 2-member flowlet ECMP group on port
// 1; config/qos/nvidia-roce.yaml on two 800G ports (DSCP 26 -> TC3 lossless with PFC priority 3
// and dequeue ECN, DSCP 48 -> TC6 strict, the rest TC0; SP + DWRR, shaper at 800G; PFC frames
// from a pool of their own); tools/bench's class mix to 4096 destinations. The benchmark the
// per-stage instruction counts of doc/performance.md come from (tools/callgrind-stages).
const Fib &fib_full(std::vector<uint32_t> *dests_out) {
    static std::vector<uint32_t> dests;
    static Fib *fib = [] {
        return make_fib_1m("bench_full", NextHop{NextHopKind::ecmp_group, 0, MacAddr{}, 1},
                           publish_flowlet_group, &dests)
            .release();  // never destroyed: it must outlive nothing but EAL
    }();
    *dests_out = dests;
    return *fib;
}

void BM_WorkerPollFull(benchmark::State &st) {
    std::vector<uint32_t> dests;
    const Fib &fib = fib_full(&dests);
    Switch sw(fib, uint32_t(st.range(0)), dests, EgressKind::qos, true, true, &nvidia_plan(),
              bench_pfc_pool());
    time_polls(st, sw, true);
}
BENCHMARK(BM_WorkerPollFull)->Arg(60)->Arg(1020);

// The same at the rate roceswd runs rsw-full in tools/bench (229 cycles/packet at TSC 2.6 GHz:
// 88 ns/packet, 2.8 us per 32-packet poll; tools/callgrind-real). The bench's 1024 flows come
// round-robin, so a flow's packets are 90 us apart, above flowlet_gap_us (50): every packet
// starts a new flowlet and the policy chooses (BM_WorkerPollFull's 1 us polls revisit a flow
// after 32 us: flowlet-table hits). What the real switch pays in the bench until it runs
// faster than ~50 ns/packet, and always at 4 KB: /4092 is tools/bench's 4 KB frame, whose
// RoCE share of a burst (~26 x 4 KB) is more than queue 3's DWRR quantum (50 x 1024 B), so
// the scheduler splits it over two turns.
void full_bench_rate(benchmark::State &st, bool header_copy) {
    std::vector<uint32_t> dests;
    const Fib &fib = fib_full(&dests);
    Switch sw(fib, uint32_t(st.range(0)), dests, EgressKind::qos, true, true, &nvidia_plan(),
              bench_pfc_pool());
    sw.ports.header_copy = header_copy;
    time_polls(st, sw, true, 2800);
}
void BM_WorkerPollFullBenchRate(benchmark::State &st) { full_bench_rate(st, false); }
BENCHMARK(BM_WorkerPollFullBenchRate)->Arg(60)->Arg(4092);

// The same with only each frame's headers copied: at 4 KB, what the pipeline costs when the
// port's copy (32 x 4 KB a burst) has not pushed its state out of the caches first. Against
// BM_IoFloorHeaderCopy, its pipeline; BM_WorkerPollFullBenchRate/4092 against BM_IoFloor/4092,
// the same with the copy.
void BM_WorkerPollFullBenchRateHeaderCopy(benchmark::State &st) { full_bench_rate(st, true); }
BENCHMARK(BM_WorkerPollFullBenchRateHeaderCopy)->Arg(4092);

// RX (alloc + copy) and TX (free) without the pipeline: the I/O floor of the above.
void io_floor(benchmark::State &st, bool header_copy) {
    BenchPorts ports(uint32_t(st.range(0)), destinations(1024, 1u << 20, 3));
    ports.header_copy = header_copy;
    rte_mbuf *pkts[kBurst];
    uint64_t cycles = 0, n = 0;
    for (auto _ : st) {
        uint64_t t0 = rte_rdtsc();
        uint16_t k = ports.rx_burst(0, 0, pkts, kBurst);
        ports.tx_burst(1, 0, pkts, k);
        cycles += rte_rdtsc() - t0;
        n += k;
    }
    report_cycles(st, cycles, n);
}
void BM_IoFloor(benchmark::State &st) { io_floor(st, false); }
BENCHMARK(BM_IoFloor)->Arg(60)->Arg(1020)->Arg(4092);
void BM_IoFloorHeaderCopy(benchmark::State &st) { io_floor(st, true); }
BENCHMARK(BM_IoFloorHeaderCopy)->Arg(4092);

}  // namespace
}  // namespace rocesw::bench
