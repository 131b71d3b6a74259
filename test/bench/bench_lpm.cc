// IPv4 route lookup through rocesw::Fib (reader() + fib_lookup4_bulk + next-hop table, as the
// worker does it) against the primitive it wraps, rte_fib_lookup_bulk, on the same table, and
// against a raw rte_lpm for reference (what the Fib used before, doc/performance.md). Bursts of
// 32 destinations drawn from 4096 spread over 32.0.0.0/4, i.e. over the 4 MiB of tbl24 a table
// of 1 M /24 routes (32.0.0.0 .. 47.255.255.0) fills: every lookup touches its own tbl24 line.
//
// Installed routes: ROCESW_BENCH_LPM_ROUTES /24s (default 1048576), evenly spaced over that
// range, and the destinations fall in them. The raw rte_lpm holds at most
// ROCESW_BENCH_LPM_REF_ROUTES of them (default 65536, same spacing rule): rte_lpm_add scans
// the rules of the same prefix length, so N adds cost O(N^2) (1 M /24s: tens of minutes). For
// prefixes up to /24 a lookup reads tbl24 only, so its cost depends on the spread of the
// destinations, not on the number of rules.
//
// Add rates ("adds/s" counters): the Fib's commit of all routes (both copies, so every route
// is added twice), a raw rte_fib with the same configuration (one copy; built, timed and freed
// first so that EAL memory holds one 1 M-route table at a time) and the raw rte_lpm.
#include <benchmark/benchmark.h>
#include <rte_errno.h>
#include <rte_fib.h>
#include <rte_lpm.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "bench_common.h"
#include "route/fib.h"

namespace rocesw::bench {
namespace {

constexpr uint32_t kSpan = 1u << 20;  // /24s in 32.0.0.0/4
constexpr uint32_t kDests = 4096;
constexpr uint32_t kBurst = 32;

uint32_t env_count(const char *name, uint32_t dflt) {
    const char *e = std::getenv(name);
    uint32_t n = e ? uint32_t(std::strtoul(e, nullptr, 10)) : dflt;
    if (n < 1 || n > kSpan || (kSpan % n) != 0)
        throw std::runtime_error(std::string(name) + ": a power of two up to 1048576");
    return n;
}

uint32_t route_addr(uint32_t i, uint32_t routes) {
    return (32u << 24) + ((i * (kSpan / routes)) << 8);
}

FibParams bench_params(uint32_t routes) {
    FibParams p;
    p.ipv4_max_routes = routes + 64;
    p.ipv4_tbl8s = 1u << 10;
    p.ipv6_max_routes = 64;  // no IPv6 here; its tbl24 is the same 64 MiB whatever the size
    p.ipv6_tbl8s = 64;
    p.max_nexthops = 1024;
    return p;
}

// `routes` /24s spaced evenly over 32.0.0.0/4, all to next hop 1 = `nh`, in one commit.
void add_routes(Fib &fib, uint32_t routes, const NextHop &nh) {
    std::vector<FibOp> ops;
    ops.reserve(routes + 1);
    FibOp set{};
    set.type = FibOp::Type::set_nexthop;
    set.nexthop = 1;
    set.nh = nh;
    ops.push_back(set);
    for (uint32_t i = 0; i < routes; i++) {
        FibOp op{};
        op.type = FibOp::Type::add_route;
        op.prefix.addr.v4 = route_addr(i, routes);
        op.prefix.len = 24;
        op.nexthop = 1;
        ops.push_back(op);
    }
    for (bool b : fib.commit(ops))
        if (!b) throw std::runtime_error("Fib refused a route");
}

// kDests destinations (host order) inside the /24s add_routes installs.
std::vector<uint32_t> route_destinations(uint32_t routes) {
    const uint32_t stride = kSpan / routes;
    std::vector<uint32_t> dests = destinations(kDests, kSpan, 7);
    for (auto &d : dests) {
        uint32_t k = ((d >> 8) - (32u << 16)) / stride;
        d = route_addr(k, routes) + (d & 0xFF);
    }
    return dests;
}

struct Tables {
    std::unique_ptr<Fib> fib;
    rte_lpm *raw_lpm = nullptr;
    std::vector<uint32_t> dests;
    uint32_t routes = env_count("ROCESW_BENCH_LPM_ROUTES", kSpan);
    uint32_t lpm_routes = std::min(routes, env_count("ROCESW_BENCH_LPM_REF_ROUTES", 1u << 16));
    double fib_adds_per_s = 0, raw_fib_adds_per_s = 0, lpm_adds_per_s = 0;

    Tables() {
        const FibParams fp = bench_params(routes);
        {  // raw rte_fib: the add rate only, then freed
            rte_fib_conf c{};
            c.type = RTE_FIB_DIR24_8;
            c.default_nh = kNoRouteNh;
            c.max_routes = int(fp.ipv4_max_routes);
            c.dir24_8.nh_sz = RTE_FIB_DIR24_8_4B;
            c.dir24_8.num_tbl8 = fp.ipv4_tbl8s;
            rte_fib *raw = rte_fib_create("bench_raw_fib", SOCKET_ID_ANY, &c);
            if (!raw)
                throw std::runtime_error(std::string("rte_fib_create: ") + rte_strerror(rte_errno));
            auto t0 = std::chrono::steady_clock::now();
            for (uint32_t i = 0; i < routes; i++)
                if (rte_fib_add(raw, route_addr(i, routes), 24, 1) != 0)
                    throw std::runtime_error("rte_fib_add");
            raw_fib_adds_per_s = routes / seconds_since(t0);
            rte_fib_free(raw);
        }
        fib = std::make_unique<Fib>("bench_fib", fp, nullptr);
        auto t0 = std::chrono::steady_clock::now();
        add_routes(*fib, routes,
                   NextHop{NextHopKind::forward, 1, MacAddr{{0x02, 0, 0, 0, 0x02, 0x02}}});
        fib_adds_per_s = routes / seconds_since(t0);

        rte_lpm_config c{};
        c.max_rules = lpm_routes;
        c.number_tbl8s = 1u << 8;
        raw_lpm = rte_lpm_create("bench_raw_lpm", SOCKET_ID_ANY, &c);
        if (!raw_lpm) throw std::runtime_error("rte_lpm_create");
        t0 = std::chrono::steady_clock::now();
        for (uint32_t i = 0; i < lpm_routes; i++)
            if (rte_lpm_add(raw_lpm, route_addr(i, lpm_routes), 24, 1) != 0)
                throw std::runtime_error("rte_lpm_add");
        lpm_adds_per_s = lpm_routes / seconds_since(t0);

        dests = route_destinations(routes);
    }
    ~Tables() { rte_lpm_free(raw_lpm); }
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

std::unique_ptr<Fib> make_fib_1m(const std::string &name, const NextHop &nh,
                                 const std::function<void(Fib &)> &prepare,
                                 std::vector<uint32_t> *dests) {
    const uint32_t routes = env_count("ROCESW_BENCH_LPM_ROUTES", kSpan);
    auto fib = std::make_unique<Fib>(name, bench_params(routes), nullptr);
    if (prepare) prepare(*fib);
    add_routes(*fib, routes, nh);
    if (dests) *dests = route_destinations(routes);
    return fib;
}

namespace {

void BM_FibLookup(benchmark::State &st) {
    Tables &t = tables();
    const Fib &fib = *t.fib;
    uint32_t ids[kBurst];
    uint32_t off = 0;
    uint64_t cycles = 0, pkts = 0, fwd = 0;
    for (auto _ : st) {
        uint64_t t0 = rte_rdtsc();
        const FibTables *ft = fib.reader();
        fib_lookup4_bulk(ft, &t.dests[off], ids, kBurst);
        for (uint32_t i = 0; i < kBurst; i++)
            fwd += ft->nexthops[ids[i]].kind == NextHopKind::forward;
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

// rte_fib_lookup_bulk on the table the Fib publishes (its active copy): the same memory and
// destinations, without the narrowing to 32-bit ids and the next-hop read.
void BM_RawFibLookupBulk(benchmark::State &st) {
    Tables &t = tables();
    rte_fib *raw = t.fib->reader()->fib4;
    uint64_t hops[kBurst];
    uint32_t off = 0;
    uint64_t cycles = 0, pkts = 0, sum = 0;
    for (auto _ : st) {
        uint64_t t0 = rte_rdtsc();
        rte_fib_lookup_bulk(raw, &t.dests[off], hops, kBurst);
        for (uint32_t i = 0; i < kBurst; i++) sum += hops[i];
        cycles += rte_rdtsc() - t0;
        pkts += kBurst;
        off = (off + kBurst) % kDests;
    }
    benchmark::DoNotOptimize(sum);
    if (sum != pkts) st.SkipWithError("lookup missed");
    report_cycles(st, cycles, pkts);
    st.counters["routes"] = t.routes;
    st.counters["adds/s"] = t.raw_fib_adds_per_s;
}
BENCHMARK(BM_RawFibLookupBulk);

// Reference: raw rte_lpm_lookup_bulk, the same destinations over a table of lpm_routes /24s
// spread over the same range (a tbl24 read per lookup, hit or miss).
void BM_RawLpmLookupBulk(benchmark::State &st) {
    Tables &t = tables();
    uint32_t hops[kBurst];
    uint32_t off = 0;
    uint64_t cycles = 0, pkts = 0, sum = 0;
    for (auto _ : st) {
        uint64_t t0 = rte_rdtsc();
        rte_lpm_lookup_bulk(t.raw_lpm, &t.dests[off], hops, kBurst);
        for (uint32_t i = 0; i < kBurst; i++) sum += hops[i] & 0x00FFFFFF;
        cycles += rte_rdtsc() - t0;
        pkts += kBurst;
        off = (off + kBurst) % kDests;
    }
    benchmark::DoNotOptimize(sum);
    report_cycles(st, cycles, pkts);
    st.counters["routes"] = t.lpm_routes;
    st.counters["adds/s"] = t.lpm_adds_per_s;
}
BENCHMARK(BM_RawLpmLookupBulk);

}  // namespace
}  // namespace rocesw::bench
