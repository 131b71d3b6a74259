// parse_frame (lib/pkt/parser.h) on a 64 B RoCEv2 frame and on a 1 KB one.
#include <benchmark/benchmark.h>

#include "bench_common.h"
#include "pkt/parser.h"

namespace rocesw::bench {
namespace {

void BM_ParseRoce(benchmark::State &st) {
    const uint8_t mac[6] = {0x02, 0, 0, 0, 0x01, 0x01};
    auto f = roce_frame((32u << 24) | 0x010203, 0xC001, uint32_t(st.range(0)), mac);
    ParseOptions opt;
    opt.max_l3_len = 9000;
    PacketMeta meta{};
    constexpr int kBatch = 32;
    uint64_t cycles = 0, pkts = 0;
    for (auto _ : st) {
        uint64_t t0 = rte_rdtsc();
        for (int i = 0; i < kBatch; i++) {
            auto r = parse_frame(f.data(), uint32_t(f.size()), opt, &meta);
            benchmark::DoNotOptimize(r);
            benchmark::DoNotOptimize(meta);
        }
        cycles += rte_rdtsc() - t0;
        pkts += kBatch;
    }
    report_cycles(st, cycles, pkts);
}
BENCHMARK(BM_ParseRoce)->Arg(60)->Arg(1020);

}  // namespace
}  // namespace rocesw::bench
