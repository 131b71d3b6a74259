// DPDK primitives measured in this binary (Debian 12 does not package dpdk-test, so
// ring_perf_autotest cannot run beside us) and the roceswd stages that wrap them:
//
// Figures are medians over timed blocks (robust to preemption on a shared VM).
//
// BM_RawRingBulk32: rte_ring bulk enqueue then bulk dequeue of 32 pointers on an empty ring,
//   one thread, as ring_perf_autotest's "bulk enq/dequeue (size: 32)"; cycles per element for
//   the pair and for each half. Arg 0: SP/SC ring; 1: MP/SC ring (the handoff ring's flags,
//   RING_F_SC_DEQ, 4096 slots).
// BM_HandoffVsRing: roceswd's handoff ring (lib/qos: a worker hands packets for a port another
//   worker owns to that owner, QosEgress::enqueue -> rte_ring_mp_enqueue_burst) against the raw
//   rte_ring_mp_enqueue_burst into the same ring, interleaved; 8 bursts of 32 per timed block.
//   The owner's flush empties the ring outside the timing in both cases. Reports both, cycles
//   per packet, and the ratio.
// BM_Classify: classify_mbufs (the worker's classification: trust DSCP, DSCP -> TC) over bursts
//   of 32 of tools/bench's class mix (built-in SONiC default maps: DSCP 26 and 0 -> TC1, 48 ->
//   TC6). No DPDK primitive to compare with.
#include <benchmark/benchmark.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.h"
#include "common/counters.h"
#include "port/port_io.h"
#include "pkt/mbuf_meta.h"
#include "pkt/parser.h"
#include "qos/classifier.h"
#include "qos/qos_config.h"
#include "qos/qos_egress.h"

namespace rocesw::bench {
namespace {

constexpr unsigned kBurst = 32;
constexpr unsigned kRingSize = 4096;  // ROCESW.handoff_ring_packets default
const uint8_t kMac[6] = {0x02, 0, 0, 0, 0x01, 0x01};

// Median of per-block cycles per packet: robust against a block in which the thread was
// preempted (the TSC counts that time too; these VMs are shared).
struct BlockMedian {
    std::vector<double> v;
    void add(uint64_t cycles, uint64_t pkts) { v.push_back(double(cycles) / double(pkts)); }
    double median() {
        if (v.empty()) return 0.0;
        auto mid = v.begin() + std::ptrdiff_t(v.size() / 2);
        std::nth_element(v.begin(), mid, v.end());
        return *mid;
    }
};

rte_ring *make_ring(const char *name, unsigned flags) {
    rte_ring *r = rte_ring_create(name, kRingSize, SOCKET_ID_ANY, flags);
    if (!r) throw std::runtime_error(std::string("ring ") + name);
    return r;
}

void BM_RawRingBulk32(benchmark::State &st) {
    const bool mp = st.range(0) == 1;
    static int seq = 0;
    const std::string name = "bench_rr" + std::to_string(seq++);
    rte_ring *r = make_ring(name.c_str(), mp ? RING_F_SC_DEQ : RING_F_SP_ENQ | RING_F_SC_DEQ);
    void *objs[kBurst], *out[kBurst];
    for (unsigned i = 0; i < kBurst; i++) objs[i] = reinterpret_cast<void *>(uintptr_t(i + 1) * 64);
    constexpr int kPairs = 64;  // per timed block: keeps rdtsc's own cost out of the figure
    BlockMedian pair, enq, deq;
    uint64_t n = 0;
    for (auto _ : st) {
        uint64_t t0 = rte_rdtsc();
        for (int i = 0; i < kPairs; i++) {
            unsigned k = mp ? rte_ring_mp_enqueue_bulk(r, objs, kBurst, nullptr)
                            : rte_ring_sp_enqueue_bulk(r, objs, kBurst, nullptr);
            benchmark::DoNotOptimize(k);
            k = rte_ring_sc_dequeue_bulk(r, out, kBurst, nullptr);
            benchmark::DoNotOptimize(k);
        }
        uint64_t t1 = rte_rdtsc();
        // the halves alone: 64 enqueues, then 64 dequeues (2048 of 4096 slots)
        for (int i = 0; i < kPairs; i++) {
            unsigned k = mp ? rte_ring_mp_enqueue_bulk(r, objs, kBurst, nullptr)
                            : rte_ring_sp_enqueue_bulk(r, objs, kBurst, nullptr);
            benchmark::DoNotOptimize(k);
        }
        uint64_t t2 = rte_rdtsc();
        for (int i = 0; i < kPairs; i++) {
            unsigned k = rte_ring_sc_dequeue_bulk(r, out, kBurst, nullptr);
            benchmark::DoNotOptimize(k);
        }
        uint64_t t3 = rte_rdtsc();
        n += kPairs * kBurst;
        pair.add(t1 - t0, kPairs * kBurst);
        enq.add(t2 - t1, kPairs * kBurst);
        deq.add(t3 - t2, kPairs * kBurst);
    }
    st.counters["cyc/pkt"] = pair.median();  // enqueue + dequeue, per element
    st.counters["enq"] = enq.median();
    st.counters["deq"] = deq.median();
    st.SetItemsProcessed(int64_t(n));
    st.SetLabel(mp ? "MP/SC" : "SP/SC");
    rte_ring_free(r);
}
BENCHMARK(BM_RawRingBulk32)->Arg(0)->Arg(1);

// Transmitted mbufs are kept, not freed, so the same packets go round again.
class SinkPorts final : public PortIo {
  public:
    uint16_t rx_burst(uint16_t, uint16_t, rte_mbuf **, uint16_t) override { return 0; }
    uint16_t tx_burst(uint16_t, uint16_t, rte_mbuf **, uint16_t n) override {
        sent += n;
        return n;
    }
    uint64_t sent = 0;
};

struct MixMbufs {
    rte_mempool *pool;
    std::vector<rte_mbuf *> pkts;
    MixMbufs(uint32_t n, uint32_t len, const PortQos *cls, uint8_t out_port) {
        static int seq = 0;
        const std::string name = "bench_mix" + std::to_string(seq++);
        pool = rte_pktmbuf_pool_create(name.c_str(), n + 64, 0, kMbufPrivSize,
                                       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
        if (!pool) throw std::runtime_error("bench pool");
        ParseOptions po;
        po.max_l3_len = 9000;
        auto frames = mix_frames(n, len, destinations(1024, 1u << 20, 3), kMac);
        for (auto &f : frames) {
            rte_mbuf *m = rte_pktmbuf_alloc(pool);
            std::memcpy(rte_pktmbuf_append(m, uint16_t(f.size())), f.data(), f.size());
            PacketMeta *meta = meta_of(m);
            if (parse_frame(f.data(), uint32_t(f.size()), po, meta))
                throw std::runtime_error("bench frame does not parse");
            meta->in_port = 0;
            meta->out_port = out_port;
            if (cls) meta->tc = classify_tc(*meta, *cls);
            pkts.push_back(m);
        }
    }
    ~MixMbufs() {
        for (auto *m : pkts) rte_pktmbuf_free(m);
        rte_mempool_free(pool);
    }
};

const QosPlan &two_port_plan() {
    static const QosPlan plan = [] {
        std::vector<QosPortInfo> info = {{"p0", 800'000, 9000, kBurst}, {"p1", 800'000, 9000, kBurst}};
        return build_qos_plan(default_qos_config(), info);
    }();
    return plan;
}

void BM_HandoffVsRing(benchmark::State &st) {
    constexpr unsigned kBursts = 16;
    const QosPlan &plan = two_port_plan();
    MixMbufs mb(kBursts * kBurst, uint32_t(st.range(0)), &plan.ports[0].cls, 1);
    // Two workers: port 1 belongs to worker 1, so worker 0's packets for it take the ring.
    static int seq = 0;
    const std::string name = "bench_hoff" + std::to_string(seq++);
    TrafficManager shared(plan, 2, name);
    SinkPorts io;
    auto counters = std::make_unique<WorkerCounters[]>(2);
    QosEgress e0(shared, io, counters[0], 0, 0, kBurst), e1(shared, io, counters[1], 1, 0, kBurst);
    // The primitive enqueues into the same ring (TrafficManager names it <name>_h<port>), so both
    // sides leave the same work to the same consumer, the owner's flush.
    rte_ring *raw = rte_ring_lookup((name + "_h1").c_str());
    if (!raw) throw std::runtime_error("no handoff ring " + name + "_h1");
    rte_mbuf **pk = mb.pkts.data();
    uint64_t now = 1'000'000, n = 0;
    BlockMedian cyc[2];
    auto drain = [&] {
        for (int guard = 0; e1.backlog() && guard < 1000; guard++) e1.flush(now += 1000);
    };
    auto wrapped = [&] {
        uint64_t t0 = rte_rdtsc();
        for (unsigned b = 0; b < kBursts; b++) e0.enqueue(1, pk + b * kBurst, kBurst, now);
        cyc[1].add(rte_rdtsc() - t0, kBursts * kBurst);
        drain();
    };
    auto primitive = [&] {
        uint64_t t0 = rte_rdtsc();
        for (unsigned b = 0; b < kBursts; b++) {
            unsigned k = rte_ring_mp_enqueue_burst(raw, reinterpret_cast<void **>(pk + b * kBurst),
                                                   kBurst, nullptr);
            benchmark::DoNotOptimize(k);
        }
        cyc[0].add(rte_rdtsc() - t0, kBursts * kBurst);
        drain();
    };
    for (int i = 0; i < 16; i++) {  // warm
        wrapped();
        primitive();
    }
    const uint64_t sent0 = io.sent;
    cyc[0].v.clear();
    cyc[1].v.clear();
    unsigned turn = 0;
    for (auto _ : st) {
        if (turn++ & 1) {
            wrapped();
            primitive();
        } else {
            primitive();
            wrapped();
        }
        n += kBursts * kBurst;
    }
    if (io.sent - sent0 != 2 * n || e1.handoff_drops(1) || e0.handoff_drops(1))
        st.SkipWithError("the owner did not transmit every handed-off packet");
    const double ring = cyc[0].median(), handoff = cyc[1].median();
    st.counters["ring"] = ring;
    st.counters["handoff"] = handoff;
    st.counters["ratio"] = ring > 0 ? handoff / ring : 0.0;
    st.SetItemsProcessed(int64_t(n));
}
BENCHMARK(BM_HandoffVsRing)->Arg(60);

void BM_Classify(benchmark::State &st) {
    const QosPlan &plan = two_port_plan();
    MixMbufs mb(1024, 60, nullptr, 1);
    const PortQos &cls = plan.ports[0].cls;
    constexpr unsigned kBlock = 8;  // bursts per timed block
    uint64_t n = 0;
    BlockMedian cyc;
    unsigned next = 0;
    for (auto _ : st) {
        uint64_t t0 = rte_rdtsc();
        for (unsigned b = 0; b < kBlock; b++, next += kBurst)
            classify_mbufs(mb.pkts.data() + (next & 1023), kBurst, cls);
        cyc.add(rte_rdtsc() - t0, kBlock * kBurst);
        n += kBlock * kBurst;
    }
    uint32_t per_tc[8] = {};
    for (auto *m : mb.pkts) per_tc[meta_of(m)->tc & 7]++;
    std::string label;
    for (unsigned t = 0; t < 8; t++)
        if (per_tc[t]) label += (label.empty() ? "TC" : " TC") + std::to_string(t) + ":" +
                                std::to_string(per_tc[t]);
    st.SetLabel(label);
    st.counters["cyc/pkt"] = cyc.median();
    st.SetItemsProcessed(int64_t(n));
}
BENCHMARK(BM_Classify);

}  // namespace
}  // namespace rocesw::bench
