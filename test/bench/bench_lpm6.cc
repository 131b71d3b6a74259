// IPv6 route lookup through rocesw::Fib (reader() + fib_lookup6_bulk + next-hop table, as the
// worker does it) against the primitive it wraps, rte_lpm6_lookup_bulk_func, on the same table,
// and against rte_fib6's TRIE on the same routes: the alternative doc/architecture.md weighs
// ("FIB updates while traffic flows"). BM_Ipv6TableChurn is that comparison's other half: what
// each table still takes after add/delete churn.
//
// Routes: ROCESW_BENCH_LPM6_ROUTES (default 16384) prefixes drawn with a fixed seed from
// 2000::/4, three in four /48 and the rest /64, all to one next hop; destinations: 4096
// addresses inside them, bursts of 32. Each lookup reads its own tbl24 entry and a chain of
// tbl8 groups (3 for a /48, 5 for a /64, mostly not shared at this spread).
#include <benchmark/benchmark.h>
#include <rte_errno.h>
#include <rte_fib6.h>
#include <rte_lpm6.h>
#include <rte_memory.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.h"
#include "route/fib.h"

namespace rocesw::bench {
namespace {

using Addr6 = std::array<uint8_t, 16>;
constexpr uint32_t kDests6 = 4096;
constexpr uint32_t kBurst6 = 32;

struct Route6 {
    Addr6 addr;
    uint8_t len;
};

Addr6 masked(Addr6 a, unsigned len) {
    for (unsigned i = 0; i < 16; i++) {
        const int bits = int(len) - int(8 * i);
        a[i] &= bits >= 8 ? 0xFF : bits <= 0 ? 0 : uint8_t(0xFF << (8 - bits));
    }
    return a;
}

struct Tables6 {
    uint32_t routes = 16384;
    std::unique_ptr<Fib> fib;
    rte_fib6 *trie = nullptr;
    std::vector<Route6> set;
    std::vector<std::array<uint8_t, 16>> dests;
    double fib_adds_per_s = 0, trie_adds_per_s = 0;

    Tables6() {
        if (const char *e = std::getenv("ROCESW_BENCH_LPM6_ROUTES")) {
            routes = uint32_t(std::strtoul(e, nullptr, 10));
            if (routes < 1 || routes > (1u << 20))
                throw std::runtime_error("ROCESW_BENCH_LPM6_ROUTES: 1 to 1048576");
        }
        std::mt19937_64 rng(6);
        std::vector<Addr6> full;  // a host address inside each route
        for (uint32_t i = 0; i < routes; i++) {
            Addr6 a;
            for (auto &b : a) b = uint8_t(rng());
            a[0] = uint8_t(0x20 | (a[0] & 0x0F));
            const uint8_t len = i % 4 == 3 ? 64 : 48;
            set.push_back({masked(a, len), len});
            full.push_back(a);
        }
        // Up to 5 tbl8 groups a route (a /64 past the tbl24), none shared: room for all.
        const uint32_t tbl8s = 5 * routes + 64;
        FibParams p;
        p.single_copy = true;  // one table: the lookup is the same, the memory half
        p.ipv4_max_routes = 64;
        p.ipv4_tbl8s = 64;
        p.ipv6_max_routes = routes + 64;
        p.ipv6_tbl8s = tbl8s;
        p.max_nexthops = 1024;
        fib = std::make_unique<Fib>("bench_fib6", p, nullptr);
        std::vector<FibOp> ops;
        FibOp set_nh{};
        set_nh.type = FibOp::Type::set_nexthop;
        set_nh.nexthop = 1;
        set_nh.nh = NextHop{NextHopKind::forward, 1, MacAddr{{0x02, 0, 0, 0, 0x02, 0x02}}};
        ops.push_back(set_nh);
        for (const Route6 &r : set) {
            FibOp op{};
            op.type = FibOp::Type::add_route;
            op.prefix.addr.is_v6 = true;
            op.prefix.addr.v6 = r.addr;
            op.prefix.len = r.len;
            op.nexthop = 1;
            ops.push_back(op);
        }
        auto t0 = std::chrono::steady_clock::now();
        for (bool b : fib->commit(ops))
            if (!b) throw std::runtime_error("Fib refused an IPv6 route");
        fib_adds_per_s = routes / seconds_since(t0);

        rte_fib6_conf c{};
        c.type = RTE_FIB6_TRIE;
        c.default_nh = kNoRouteNh;
        c.max_routes = int(routes + 64);
        c.trie.nh_sz = RTE_FIB6_TRIE_4B;
        c.trie.num_tbl8 = tbl8s;
        trie = rte_fib6_create("bench_trie6", SOCKET_ID_ANY, &c);
        if (!trie)
            throw std::runtime_error(std::string("rte_fib6_create: ") + rte_strerror(rte_errno));
        t0 = std::chrono::steady_clock::now();
        for (const Route6 &r : set)
            if (rte_fib6_add(trie, r.addr.data(), r.len, 1) != 0)
                throw std::runtime_error("rte_fib6_add");
        trie_adds_per_s = routes / seconds_since(t0);

        for (uint32_t i = 0; i < kDests6; i++) dests.push_back(full[rng() % routes]);
    }
};

// Never destroyed: static destructors would run after rte_eal_cleanup().
Tables6 &tables6() {
    static Tables6 *t = new Tables6;
    return *t;
}

const uint8_t (*dest_at(Tables6 &t, uint32_t off))[16] {
    return reinterpret_cast<const uint8_t(*)[16]>(t.dests[off].data());
}

template <typename Lookup>
void run_lookups(benchmark::State &st, Tables6 &t, Lookup lookup) {
    uint32_t off = 0;
    uint64_t cycles = 0, pkts = 0, hits = 0;
    for (auto _ : st) {
        const uint64_t t0 = rte_rdtsc();
        hits += lookup(dest_at(t, off));
        cycles += rte_rdtsc() - t0;
        pkts += kBurst6;
        off = (off + kBurst6) % kDests6;
    }
    if (hits != pkts) st.SkipWithError("lookup missed");
    report_cycles(st, cycles, pkts);
    st.counters["routes"] = t.routes;
}

// The worker's IPv6 route stage: the reader, fib_lookup6_bulk (rte_lpm6, a miss to "::/0"), the
// next hop.
void BM_Fib6Lookup(benchmark::State &st) {
    Tables6 &t = tables6();
    run_lookups(st, t, [&](const uint8_t(*dst)[16]) {
        const FibTables *ft = t.fib->reader();
        uint32_t ids[kBurst6];
        fib_lookup6_bulk(ft, dst, ids, kBurst6);
        uint64_t fwd = 0;
        for (uint32_t i = 0; i < kBurst6; i++)
            fwd += ft->nexthops[ids[i]].kind == NextHopKind::forward;
        return fwd;
    });
    st.counters["adds/s"] = t.fib_adds_per_s;
}
BENCHMARK(BM_Fib6Lookup);

// rte_lpm6_lookup_bulk_func on the table the Fib publishes: its primitive.
void BM_RawLpm6LookupBulk(benchmark::State &st) {
    Tables6 &t = tables6();
    rte_lpm6 *lpm6 = t.fib->reader()->lpm6;
    run_lookups(st, t, [&](const uint8_t(*dst)[16]) {
        int32_t nh[kBurst6];
        rte_lpm6_lookup_bulk_func(lpm6, const_cast<uint8_t(*)[16]>(dst), nh, kBurst6);
        uint64_t sum = 0;
        for (uint32_t i = 0; i < kBurst6; i++) sum += nh[i] == 1;
        return sum;
    });
}
BENCHMARK(BM_RawLpm6LookupBulk);

// rte_fib6 TRIE (4-byte entries) on the same routes: the alternative.
void BM_RawFib6TrieLookupBulk(benchmark::State &st) {
    Tables6 &t = tables6();
    run_lookups(st, t, [&](const uint8_t(*dst)[16]) {
        uint64_t nh[kBurst6];
        rte_fib6_lookup_bulk(t.trie, const_cast<uint8_t(*)[16]>(dst), nh, kBurst6);
        uint64_t sum = 0;
        for (uint32_t i = 0; i < kBurst6; i++) sum += nh[i] == 1;
        return sum;
    });
    st.counters["adds/s"] = t.trie_adds_per_s;
}
BENCHMARK(BM_RawFib6TrieLookupBulk);

// What rte_lpm6 and rte_fib6's TRIE still take after churn. A small table (256 tbl8 groups)
// gets 20 000 random adds and deletes of 116 nested routes (/32, /48, /64 and /128 under four
// /32s, next hops shared between a route and its cover), then every route is deleted and it is
// offered 100 /128s elsewhere; `fresh_*` is what the same table took before the churn. A table
// that keeps its accounting takes as many after as before.
void BM_Ipv6TableChurn(benchmark::State &st) {
    struct Ops {
        std::function<int(const Addr6 &, uint8_t, uint32_t)> add;
        std::function<int(const Addr6 &, uint8_t)> del;
    };
    const auto probes = [](const Ops &t) {
        int ok = 0;
        for (int i = 0; i < 100; i++) {
            Addr6 a{0x20, 0x01, 0x0d, 0xb9, uint8_t(i >> 8), uint8_t(i)};
            a[15] = 1;
            ok += t.add(a, 128, 7) == 0;
        }
        for (int i = 0; i < 100; i++) {
            Addr6 a{0x20, 0x01, 0x0d, 0xb9, uint8_t(i >> 8), uint8_t(i)};
            a[15] = 1;
            t.del(a, 128);
        }
        return ok;
    };
    struct Nested {
        Addr6 a;
        uint8_t len;
        uint32_t nh;
    };
    std::vector<Nested> set;
    for (uint8_t i = 0; i < 4; i++) {
        const Addr6 a{0x20, 0x01, 0x0d, uint8_t(0xb0 + i)};
        set.push_back({a, 32, 1u + i % 2});
        for (uint8_t j = 0; j < 4; j++) {
            Addr6 b = a;
            b[5] = j;
            set.push_back({b, 48, 1u + j % 2});
            for (uint8_t k = 0; k < 3; k++) {
                Addr6 c = b;
                c[7] = k;
                set.push_back({c, 64, 1u + k % 2});
                c[15] = uint8_t(9 + k);
                set.push_back({c, 128, 1u + (k + 1) % 2});
            }
        }
    }
    int fresh_lpm6 = 0, after_lpm6 = 0, fresh_trie = 0, after_trie = 0;
    for (auto _ : st) {
        rte_lpm6_config lc{4096, 256, 0};
        rte_lpm6 *l = rte_lpm6_create("bench_churn_lpm6", SOCKET_ID_ANY, &lc);
        rte_fib6_conf fc{};
        fc.type = RTE_FIB6_TRIE;
        fc.default_nh = kNoRouteNh;
        fc.max_routes = 4096;
        fc.trie.nh_sz = RTE_FIB6_TRIE_4B;
        fc.trie.num_tbl8 = 256;
        rte_fib6 *f = rte_fib6_create("bench_churn_trie", SOCKET_ID_ANY, &fc);
        if (!l || !f) {
            rte_lpm6_free(l);
            rte_fib6_free(f);
            st.SkipWithError("cannot create the tables");
            return;
        }
        const Ops lpm6{[&](const Addr6 &a, uint8_t d, uint32_t nh) {
                           return rte_lpm6_add(l, a.data(), d, nh);
                       },
                       [&](const Addr6 &a, uint8_t d) { return rte_lpm6_delete(l, a.data(), d); }};
        const Ops trie{[&](const Addr6 &a, uint8_t d, uint32_t nh) {
                           return rte_fib6_add(f, a.data(), d, nh);
                       },
                       [&](const Addr6 &a, uint8_t d) { return rte_fib6_delete(f, a.data(), d); }};
        for (const Ops *t : {&lpm6, &trie}) {
            const int fresh = probes(*t);
            std::mt19937 rng(1);
            std::vector<bool> in(set.size());
            for (int op = 0; op < 20000; op++) {
                const size_t i = rng() % set.size();
                if (!in[i])
                    t->add(set[i].a, set[i].len, set[i].nh);
                else
                    t->del(set[i].a, set[i].len);
                in[i] = !in[i];
            }
            for (size_t i = 0; i < set.size(); i++)
                if (in[i]) t->del(set[i].a, set[i].len);
            const int after = probes(*t);
            (t == &lpm6 ? fresh_lpm6 : fresh_trie) = fresh;
            (t == &lpm6 ? after_lpm6 : after_trie) = after;
        }
        rte_lpm6_free(l);
        rte_fib6_free(f);
    }
    st.counters["fresh_lpm6"] = fresh_lpm6;
    st.counters["after_lpm6"] = after_lpm6;
    st.counters["fresh_trie"] = fresh_trie;
    st.counters["after_trie"] = after_trie;
}
BENCHMARK(BM_Ipv6TableChurn)->Iterations(1);

}  // namespace
}  // namespace rocesw::bench
