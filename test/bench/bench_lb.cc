// Load balancing per packet: the flow hash alone, then LoadBalancer::resolve over 32-packet
// bursts of 1024 RoCEv2 flows (differing in UDP source port) for a 4-member group with the
// hash, flowlet and spray policies. The flowlet case advances time 1 us per burst, so nearly
// every packet is a flowlet-table hit (the steady state); its difference to BM_LbResolve/hash is
// the flowlet path's cost (the budget: ~15 cycles/packet). BM_LbFlowHash also times
// DPDK's CRC32 hash of the same fields (the primitive a DPDK flow hash would use);
// BM_LbResolveNewFlowlet makes every packet a new flowlet (the policy's choice each time).
#include <benchmark/benchmark.h>
#include <rte_hash_crc.h>
#include <rte_mbuf.h>

#include <cstring>
#include <memory>
#include <stdexcept>

#include "bench_common.h"
#include "lb/balancer.h"
#include "lb/flow_hash.h"
#include "pkt/mbuf_meta.h"
#include "pkt/parser.h"

namespace rocesw::bench {
namespace {

constexpr uint16_t kBurst = 32;
constexpr uint32_t kFlows = 1024;
const uint8_t kMac[6] = {0x02, 0, 0, 0, 0x01, 0x01};

struct LbBench {
    rte_mempool *pool;
    std::vector<rte_mbuf *> pkts;
    EcmpGroups groups{nullptr};
    std::vector<uint32_t> group_ids = std::vector<uint32_t>(kBurst, 1);

    explicit LbBench(uint8_t policy) {
        pool = rte_pktmbuf_pool_create("bench_lbpool", 2048, 0, kMbufPrivSize,
                                       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
        if (!pool) throw std::runtime_error("bench pool");
        ParseOptions po;
        po.max_l3_len = 9000;
        for (uint32_t i = 0; i < kFlows; i++) {
            auto f = roce_frame(0x20000001, uint16_t(0xC000 | i), 1020, kMac);
            rte_mbuf *m = rte_pktmbuf_alloc(pool);
            std::memcpy(rte_pktmbuf_append(m, uint16_t(f.size())), f.data(), f.size());
            if (parse_frame(f.data(), uint32_t(f.size()), po, meta_of(m)))
                throw std::runtime_error("bench frame does not parse");
            pkts.push_back(m);
        }
        std::vector<LbMember> mem(4);
        for (uint32_t s = 0; s < 4; s++) {
            IpAddr via;
            via.v4 = 0x0a000002 + (s << 8);
            mem[s].key = lb_member_key(via);
            mem[s].alive = true;
            mem[s].port = uint8_t(s + 1);
        }
        std::vector<std::pair<uint16_t, std::unique_ptr<EcmpGroup>>> ch;
        ch.emplace_back(1, build_ecmp_group(1, policy, mem));
        groups.publish(std::move(ch));
    }
    ~LbBench() {
        for (auto *m : pkts) rte_pktmbuf_free(m);
        rte_mempool_free(pool);
    }
};

// flow_hash against DPDK's CRC32 hash (rte_hash_crc_8byte + _4byte, SSE4.2 crc32 with
// -march=corei7, the usual DPDK flow hash) of the same fields (addresses, ports, protocol read
// from the parse-once record), interleaved per burst; "ratio" is flow_hash / CRC.
void BM_LbFlowHash(benchmark::State &st) {
    LbBench b(0);
    FlowHashParams hp{0x5eed, false, false};
    uint64_t cycles = 0, crc_cycles = 0, n = 0, sink = 0;
    uint32_t next = 0;
    for (auto _ : st) {
        uint64_t t0 = rte_rdtsc();
        for (uint16_t i = 0; i < kBurst; i++) {
            rte_mbuf *m = b.pkts[(next + i) & (kFlows - 1)];
            const PacketMeta *meta = meta_of(m);
            sink += flow_hash(*meta, rte_pktmbuf_mtod(m, const uint8_t *) + meta->l3_offset, hp);
        }
        uint64_t t1 = rte_rdtsc();
        for (uint16_t i = 0; i < kBurst; i++) {
            const PacketMeta *meta = meta_of(b.pkts[(next + i) & (kFlows - 1)]);
            uint32_t h = rte_hash_crc_8byte(uint64_t(meta->src_ip4) << 32 | meta->dst_ip4,
                                            uint32_t(hp.seed));
            sink += rte_hash_crc_4byte(uint32_t(meta->src_port) << 16 | meta->dst_port,
                                       h ^ meta->ip_proto);
        }
        uint64_t t2 = rte_rdtsc();
        cycles += t1 - t0;
        crc_cycles += t2 - t1;
        next += kBurst;
        n += kBurst;
    }
    benchmark::DoNotOptimize(sink);
    report_cycles(st, cycles, n);
    st.counters["crc"] = n ? double(crc_cycles) / double(n) : 0.0;
    st.counters["ratio"] = crc_cycles ? double(cycles) / double(crc_cycles) : 0.0;
}
BENCHMARK(BM_LbFlowHash);

void BM_LbResolve(benchmark::State &st) {
    LbBench b(uint8_t(st.range(0)));
    LoadBalancer lb(0, b.groups);
    const LbMember *out[kBurst];
    uint64_t now = 1'000'000, cycles = 0, n = 0;
    uint32_t next = 0;
    for (int i = 0; i < 64; i++, next += kBurst, now += 1000)  // warm: every flow has an entry
        lb.resolve(&b.pkts[next & (kFlows - 1)], b.group_ids.data(), kBurst, now, out);
    for (auto _ : st) {
        uint64_t t0 = rte_rdtsc();
        lb.resolve(&b.pkts[next & (kFlows - 1)], b.group_ids.data(), kBurst, now, out);
        cycles += rte_rdtsc() - t0;
        benchmark::DoNotOptimize(out[0]);
        next += kBurst;
        now += 1000;
        n += kBurst;
    }
    report_cycles(st, cycles, n);
    st.SetLabel(lb_policy_name(uint8_t(st.range(0))));
}
BENCHMARK(BM_LbResolve)
    ->Arg(int(LbPolicyId::hash))
    ->Arg(int(LbPolicyId::flowlet))
    ->Arg(int(LbPolicyId::adaptive))
    ->Arg(int(LbPolicyId::spray));

// The flowlet choice itself: time advances 100 us per burst (above flowlet_gap_us, 50), so every
// packet starts a new flowlet and the policy (random, LetFlow) chooses; compare with
// BM_LbResolve/flowlet (every packet a hit) and /hash.
void BM_LbResolveNewFlowlet(benchmark::State &st) {
    LbBench b(uint8_t(LbPolicyId::flowlet));
    LoadBalancer lb(0, b.groups);
    const LbMember *out[kBurst];
    uint64_t now = 1'000'000, cycles = 0, n = 0;
    uint32_t next = 0;
    for (int i = 0; i < 64; i++, next += kBurst, now += 100'000)
        lb.resolve(&b.pkts[next & (kFlows - 1)], b.group_ids.data(), kBurst, now, out);
    for (auto _ : st) {
        uint64_t t0 = rte_rdtsc();
        lb.resolve(&b.pkts[next & (kFlows - 1)], b.group_ids.data(), kBurst, now, out);
        cycles += rte_rdtsc() - t0;
        benchmark::DoNotOptimize(out[0]);
        next += kBurst;
        now += 100'000;
        n += kBurst;
    }
    report_cycles(st, cycles, n);
}
BENCHMARK(BM_LbResolveNewFlowlet);

}  // namespace
}  // namespace rocesw::bench
