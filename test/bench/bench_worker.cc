// Worker::poll_once over in-memory ports: the whole pipeline (parse, L2 checks, bulk LPM,
// next hop, TTL and checksum, MAC rewrite, egress FIFO, flush) per 32-packet burst.
// RX allocates mbufs and copies 1024 RoCEv2 frames round-robin into them, TX frees them: the
// same work net_pcap (infinite_rx) and net_null do, so BM_IoFloor is the testpmd-like floor and
// the difference is what the pipeline costs per packet.
#include <benchmark/benchmark.h>
#include <rte_mbuf.h>

#include <cstring>
#include <memory>
#include <stdexcept>

#include "bench_common.h"
#include "config/config.h"
#include "egress/egress.h"
#include "pipeline/worker.h"
#include "pkt/mbuf_meta.h"
#include "route/fib.h"

namespace rocesw::bench {
namespace {

constexpr uint16_t kBurst = 32;
const uint8_t kP0Mac[6] = {0x02, 0, 0, 0, 0x01, 0x01};

class BenchPorts final : public PortIo {
  public:
    BenchPorts(uint32_t frame_len, const std::vector<uint32_t> &dests) {
        pool_ = rte_pktmbuf_pool_create("bench_wpool", 8192, 256, kMbufPrivSize,
                                        RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
        if (!pool_) throw std::runtime_error("bench pool");
        for (uint32_t i = 0; i < 1024; i++)
            frames_.push_back(
                roce_frame(dests[i % dests.size()], uint16_t(0xC000 | i), frame_len, kP0Mac));
    }
    ~BenchPorts() override { rte_mempool_free(pool_); }
    uint16_t rx_burst(uint16_t, uint16_t, rte_mbuf **pkts, uint16_t n) override {
        if (rte_pktmbuf_alloc_bulk(pool_, pkts, n) != 0) return 0;
        for (uint16_t i = 0; i < n; i++) {
            const auto &f = frames_[next_++ & 1023];
            std::memcpy(rte_pktmbuf_mtod(pkts[i], uint8_t *), f.data(), f.size());
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
    uint64_t rx_ = 0, tx_ = 0;

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

// 8 routes covering 32.0.0.0/4 as /7s, next hop 1 = port 1.
const Fib &fib_small() {
    static Fib *fib = [] {  // never destroyed: it must outlive nothing but EAL
        FibParams p;
        p.ipv4_max_routes = 1024;
        p.ipv4_tbl8s = 64;
        p.ipv6_max_routes = 1024;
        p.ipv6_tbl8s = 64;
        p.max_nexthops = 1024;
        auto *f = new Fib("bench_fib_small", p, nullptr);
        std::vector<FibOp> ops;
        FibOp nh{};
        nh.type = FibOp::Type::set_nexthop;
        nh.nexthop = 1;
        nh.nh = NextHop{NextHopKind::forward, 1, MacAddr{{0x02, 0, 0, 0, 0x02, 0x02}}};
        ops.push_back(nh);
        for (uint32_t i = 0; i < 8; i++) {
            FibOp op{};
            op.type = FibOp::Type::add_route;
            op.prefix.addr.v4 = (32u + 2 * i) << 24;
            op.prefix.len = 7;
            op.nexthop = 1;
            ops.push_back(op);
        }
        f->commit(ops);
        return f;
    }();
    return *fib;
}

struct Switch {
    DataplaneContext ctx;
    BenchPorts ports;
    WorkerCounters counters;
    FifoEgress egress;
    Worker worker;
    Switch(const Fib &fib, uint32_t frame_len, const std::vector<uint32_t> &dests)
        : ctx(make_ctx(fib)),
          ports(frame_len, dests),
          egress(ports, 2, 0, counters, 1024, kBurst),
          worker(0, ctx, ports, egress, counters, std::vector<RxAssignment>{{0, 0}}, kBurst) {}
    static DataplaneContext make_ctx(const Fib &fib) {
        DataplaneContext c;
        const char *addrs[2] = {"10.0.1.1/24", "10.0.2.1/24"};
        for (int p = 0; p < 2; p++) {
            PortRuntime rt;
            rt.mac = MacAddr{{0x02, 0, 0, 0, uint8_t(p + 1), 0x01}};
            rt.mtu = 9000;
            rt.parse.max_l3_len = 9000;
            rt.addrs = {if_addr(addrs[p])};
            c.ports.push_back(rt);
            c.all_addrs.push_back(rt.addrs[0]);
        }
        c.fib = &fib;
        return c;
    }
};

void run_worker(benchmark::State &st, const Fib &fib, const std::vector<uint32_t> &dests) {
    Switch sw(fib, uint32_t(st.range(0)), dests);
    uint64_t now = 1'000'000, cycles = 0;
    for (int i = 0; i < 100; i++) sw.worker.poll_once(now);  // warm caches and the pool
    uint64_t rx0 = sw.ports.rx_, tx0 = sw.ports.tx_;
    for (auto _ : st) {
        uint64_t t0 = rte_rdtsc();
        sw.worker.poll_once(now);
        cycles += rte_rdtsc() - t0;
        now += 1000;
    }
    uint64_t rx = sw.ports.rx_ - rx0, tx = sw.ports.tx_ - tx0;
    if (tx + 2 * kBurst < rx) st.SkipWithError("packets dropped: check the frames and routes");
    report_cycles(st, cycles, rx);
}

void BM_WorkerPoll8Routes(benchmark::State &st) {
    run_worker(st, fib_small(), destinations(1024, 1u << 20, 3));
}
BENCHMARK(BM_WorkerPoll8Routes)->Arg(60)->Arg(1020);

void BM_WorkerPollBigFib(benchmark::State &st) {
    run_worker(st, fib_1m(), fib_1m_destinations());
}
BENCHMARK(BM_WorkerPollBigFib)->Arg(60)->Arg(1020);

// RX (alloc + copy) and TX (free) without the pipeline: the I/O floor of the above.
void BM_IoFloor(benchmark::State &st) {
    BenchPorts ports(uint32_t(st.range(0)), destinations(1024, 1u << 20, 3));
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
BENCHMARK(BM_IoFloor)->Arg(60)->Arg(1020);

}  // namespace
}  // namespace rocesw::bench
