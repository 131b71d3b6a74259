// IPv4 route lookup through rocesw::Fib (reader() + rte_lpm_lookup_bulk + next-hop table, as the
// worker does it) against a raw rte_lpm with the same routes. Bursts of 32 destinations drawn
// from 4096 spread over 32.0.0.0/4, i.e. over the 4 MiB of tbl24 a table of 1 M /24 routes
// (32.0.0.0 .. 47.255.255.0) fills: every lookup touches its own tbl24 line, as with 1 M routes.
//
// Installed routes: ROCESW_BENCH_LPM_ROUTES /24s (default 65536), evenly spaced over that range,
// and the destinations fall in them. Not 1 M by default because rte_lpm_add searches the rules
// of the same prefix length linearly: N adds of one length cost O(N^2) (1 M /24s take tens of
// minutes, twice for the Fib's two copies). For prefixes up to /24 a lookup reads tbl24 only,
// so its cost depends on the spread of the destinations, not on the number of rules; set the
// variable to 1048576 to check. The add rate is reported as the "adds/s" counter.
#include <benchmark/benchmark.h>
#include <rte_lpm.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "bench_common.h"
#include "route/fib.h"

namespace rocesw::bench {
namespace {

constexpr uint32_t kSpan = 1u << 20;  // /24s in 32.0.0.0/4
constexpr uint32_t kDests = 4096;
constexpr uint32_t kBurst = 32;

uint32_t route_count() {
    const char *e = std::getenv("ROCESW_BENCH_LPM_ROUTES");
    uint32_t n = e ? uint32_t(std::strtoul(e, nullptr, 10)) : 65536;
    if (n < 1 || n > kSpan || (kSpan % n) != 0)
        throw std::runtime_error("ROCESW_BENCH_LPM_ROUTES: a power of two up to 1048576");
    return n;
}

IpPrefix v4_prefix(uint32_t a, uint8_t len) {
    IpPrefix p;
    p.addr.v4 = a;
    p.len = len;
    return p;
}

struct Tables {
    std::unique_ptr<Fib> fib;
    rte_lpm *raw = nullptr;
    std::vector<uint32_t> dests;
    uint32_t routes = route_count();
    double fib_adds_per_s = 0, lpm_adds_per_s = 0;

    Tables() {
        const uint32_t stride = kSpan / routes;
        auto t0 = std::chrono::steady_clock::now();
        fib = std::make_unique<Fib>("bench_fib", FibParams{}, nullptr);
        std::vector<FibOp> ops;
        ops.reserve(routes + 1);
        FibOp nh{};
        nh.type = FibOp::Type::set_nexthop;
        nh.nexthop = 1;
        nh.nh = NextHop{NextHopKind::forward, 1, MacAddr{{0x02, 0, 0, 0, 0x02, 0x02}}};
        ops.push_back(nh);
        for (uint32_t i = 0; i < routes; i++) {
            FibOp op{};
            op.type = FibOp::Type::add_route;
            op.prefix = v4_prefix((32u << 24) + ((i * stride) << 8), 24);
            op.nexthop = 1;
            ops.push_back(op);
        }
        for (bool b : fib->commit(ops))
            if (!b) throw std::runtime_error("Fib refused a route");
        auto t1 = std::chrono::steady_clock::now();
        rte_lpm_config c{};
        c.max_rules = kSpan;
        c.number_tbl8s = 1u << 12;
        raw = rte_lpm_create("bench_raw_lpm", SOCKET_ID_ANY, &c);
        if (!raw) throw std::runtime_error("rte_lpm_create");
        for (uint32_t i = 0; i < routes; i++)
            if (rte_lpm_add(raw, (32u << 24) + ((i * stride) << 8), 24, 1) != 0)
                throw std::runtime_error("rte_lpm_add");
        auto t2 = std::chrono::steady_clock::now();
        fib_adds_per_s = routes / std::chrono::duration<double>(t1 - t0).count();
        lpm_adds_per_s = routes / std::chrono::duration<double>(t2 - t1).count();
        dests = destinations(kDests, kSpan, 7);
        for (auto &d : dests) {  // into the installed /24s
            uint32_t k = ((d >> 8) - (32u << 16)) / stride;
            d = (32u << 24) + ((k * stride) << 8) + (d & 0xFF);
        }
    }
    ~Tables() { rte_lpm_free(raw); }
};

// Never destroyed: static destructors would run after rte_eal_cleanup().
Tables &tables() {
    static Tables *t = new Tables;
    return *t;
}

}  // namespace

const Fib &fib_1m() {
    return *tables().fib;
}

const std::vector<uint32_t> &fib_1m_destinations() {
    return tables().dests;
}

namespace {

void BM_FibLookup(benchmark::State &st) {
    Tables &t = tables();
    const Fib &fib = *t.fib;
    uint32_t hops[kBurst];
    uint32_t off = 0;
    uint64_t cycles = 0, pkts = 0, fwd = 0;
    for (auto _ : st) {
        uint64_t t0 = rte_rdtsc();
        const FibTables *ft = fib.reader();
        rte_lpm_lookup_bulk(ft->lpm4, &t.dests[off], hops, kBurst);
        for (uint32_t i = 0; i < kBurst; i++) {
            uint32_t id = (hops[i] & RTE_LPM_LOOKUP_SUCCESS) ? (hops[i] & 0x00FFFFFF) : 0;
            fwd += ft->nexthops[id].kind == NextHopKind::forward;
        }
        cycles += rte_rdtsc() - t0;
        pkts += kBurst;
        off = (off + kBurst) % kDests;
    }
    benchmark::DoNotOptimize(fwd);
    if (fwd != pkts) st.SkipWithError("lookup missed");
    report_cycles(st, cycles, pkts);
    st.counters["routes"] = t.routes;
    st.counters["adds/s"] = t.fib_adds_per_s;
}
BENCHMARK(BM_FibLookup);

void BM_RawLpmLookupBulk(benchmark::State &st) {
    Tables &t = tables();
    uint32_t hops[kBurst];
    uint32_t off = 0;
    uint64_t cycles = 0, pkts = 0, sum = 0;
    for (auto _ : st) {
        uint64_t t0 = rte_rdtsc();
        rte_lpm_lookup_bulk(t.raw, &t.dests[off], hops, kBurst);
        for (uint32_t i = 0; i < kBurst; i++) sum += hops[i] & 0x00FFFFFF;
        cycles += rte_rdtsc() - t0;
        pkts += kBurst;
        off = (off + kBurst) % kDests;
    }
    benchmark::DoNotOptimize(sum);
    report_cycles(st, cycles, pkts);
    st.counters["routes"] = t.routes;
    st.counters["adds/s"] = t.lpm_adds_per_s;
}
BENCHMARK(BM_RawLpmLookupBulk);

}  // namespace
}  // namespace rocesw::bench
