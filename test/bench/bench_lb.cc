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
#include <string>

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

// The two flow hash functions (lb.hash_function) and DPDK's CRC32 hash of the same IPv4 fields
// (rte_hash_crc_8byte + _4byte, the usual DPDK flow hash: one 32-bit chain) over the same
// packets. Per burst, an untimed pass brings the packets' mbuf and metadata lines into cache,
// then the three run one after the other, in an order that rotates each burst. The hashes are
// the instantiations LoadBalancer::hash_burst runs (flow_hash_t, parameters fixed per burst;
// flow_hash() adds a per-packet dispatch on them). cyc/pkt is
// crc32c (the default); "mix64" and "dpdk_crc" are the others, "ratio" is crc32c / dpdk_crc.
void BM_LbFlowHash(benchmark::State &st) {
    LbBench b(0);
    const FlowHashParams crc{0x5eed, false, false, FlowHashFn::crc32c};
    const FlowHashParams mix{0x5eed, false, false, FlowHashFn::mix64};
    uint64_t cyc[3] = {0, 0, 0}, n = 0, sink = 0;
    uint32_t next = 0, turn = 0;
    auto run = [&](int which) {
        const uint64_t t0 = rte_rdtsc();
        for (uint16_t i = 0; i < kBurst; i++) {
            rte_mbuf *m = b.pkts[(next + i) & (kFlows - 1)];
            const PacketMeta *meta = meta_of(m);
            if (which == 2) {
                uint32_t h = rte_hash_crc_8byte(uint64_t(meta->src_ip4) << 32 | meta->dst_ip4,
                                                uint32_t(crc.seed));
                sink += rte_hash_crc_4byte(uint32_t(meta->src_port) << 16 | meta->dst_port,
                                           h ^ meta->ip_proto);
            } else {
                const uint8_t *l3 = rte_pktmbuf_mtod(m, const uint8_t *) + meta->l3_offset;
                sink += which == 0
                            ? flow_hash_t<FlowHashFn::crc32c, false, false>(*meta, l3, crc.seed)
                            : flow_hash_t<FlowHashFn::mix64, false, false>(*meta, l3, mix.seed);
            }
        }
        cyc[which] += rte_rdtsc() - t0;
    };
    for (auto _ : st) {
        for (uint16_t i = 0; i < kBurst; i++) {
            rte_mbuf *m = b.pkts[(next + i) & (kFlows - 1)];
            sink += m->data_off + meta_of(m)->src_port;
        }
        for (int k = 0; k < 3; k++) run(int((turn + k) % 3));
        turn++;
        next += kBurst;
        n += kBurst;
    }
    benchmark::DoNotOptimize(sink);
    report_cycles(st, cyc[0], n);
    st.counters["mix64"] = n ? double(cyc[1]) / double(n) : 0.0;
    st.counters["dpdk_crc"] = n ? double(cyc[2]) / double(n) : 0.0;
    st.counters["ratio"] = cyc[2] ? double(cyc[0]) / double(cyc[2]) : 0.0;
}
BENCHMARK(BM_LbFlowHash);

// The timed resolve calls of BM_LbResolve*, out of line so that callgrind can count exactly
// these (--toggle-collect='*timed_resolve*': warm-up excluded, one call per 32-packet burst).
[[gnu::noinline]] void timed_resolve(LoadBalancer &lb, rte_mbuf *const *pkts, const uint32_t *ids,
                                     uint64_t now, const LbMember **out) {
    lb.resolve(pkts, ids, kBurst, now, out);
}

// Args: policy, flow hash function (0 crc32c, the default; 1 mix64).
void BM_LbResolve(benchmark::State &st) {
    LbBench b(uint8_t(st.range(0)));
    const FlowHashFn fn = st.range(1) ? FlowHashFn::mix64 : FlowHashFn::crc32c;
    LbSettings settings;
    settings.hash_function = fn;
    b.groups.set_settings(settings);
    LoadBalancer lb(0, b.groups);
    const LbMember *out[kBurst];
    uint64_t now = 1'000'000, cycles = 0, n = 0;
    uint32_t next = 0;
    for (int i = 0; i < 64; i++, next += kBurst, now += 1000)  // warm: every flow has an entry
        lb.resolve(&b.pkts[next & (kFlows - 1)], b.group_ids.data(), kBurst, now, out);
    for (auto _ : st) {
        uint64_t t0 = rte_rdtsc();
        timed_resolve(lb, &b.pkts[next & (kFlows - 1)], b.group_ids.data(), now, out);
        cycles += rte_rdtsc() - t0;
        benchmark::DoNotOptimize(out[0]);
        next += kBurst;
        now += 1000;
        n += kBurst;
    }
    report_cycles(st, cycles, n);
    st.SetLabel(std::string(lb_policy_name(uint8_t(st.range(0)))) + "/" + flow_hash_fn_name(fn));
}
BENCHMARK(BM_LbResolve)
    ->Args({int(LbPolicyId::hash), 0})
    ->Args({int(LbPolicyId::hash), 1})
    ->Args({int(LbPolicyId::flowlet), 0})
    ->Args({int(LbPolicyId::flowlet), 1})
    ->Args({int(LbPolicyId::adaptive), 0})
    ->Args({int(LbPolicyId::spray), 0});

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
        timed_resolve(lb, &b.pkts[next & (kFlows - 1)], b.group_ids.data(), now, out);
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
