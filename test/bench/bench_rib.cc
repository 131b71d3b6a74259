// Rib::sync against the size of the table (doc/control-plane.md, "Incremental sync"): a table of
// ROCESW_BENCH_RIB_ROUTES learned /24s (default 1048576, spread over 32.0.0.0/4 as in
// bench_lpm.cc) over a two-port switch, then
// - BM_RibInitialSync: the first sync of the whole table (Rib and Fib built, routes set, one
//   sync timed);
// - BM_RibSyncOneRoute: one learned route changes its next hop (single-path table: its gateway
//   moves between the two ports; multipath table: one path's weight moves between 1 and 2), then
//   one sync; time per sync;
// - BM_RibSyncNeighbour: an unrelated host neighbour appears or goes away, then one sync;
// - BM_RibSyncNeighbourMac: the gateway 10.0.2.2 changes its MAC (a BGP peer's NIC replaced,
//   a VRRP failover), then one sync: every route through it (arg 0) or its group (arg 1);
// - BM_RibSyncFirstOfGroupFlaps: the first route of a group whose next route is the whole table
//   away is withdrawn and announced again (two syncs).
// Arg 0: single-path routes via 10.0.2.2; arg 1: two-path routes (an ECMP group). The initial
// sync also with the routes as config (a route file at start-up: set_static and set_multipath,
// then one sync, all timed, as Dataplane does): arg 2 single-path, arg 3 two-path.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "bench_common.h"
#include "route/rib.h"

namespace rocesw::bench {
namespace {

uint32_t rib_routes() {
    const char *e = std::getenv("ROCESW_BENCH_RIB_ROUTES");
    uint32_t n = e ? uint32_t(std::strtoul(e, nullptr, 10)) : (1u << 20);
    if (n < 1 || n > (1u << 20)) throw std::runtime_error("ROCESW_BENCH_RIB_ROUTES: 1..1048576");
    return n;
}

IpAddr v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
    return IpAddr{false, (uint32_t(a) << 24) | (uint32_t(b) << 16) | (uint32_t(c) << 8) | d, {}};
}

IpPrefix route_prefix(uint32_t i, uint32_t routes) {
    return IpPrefix{IpAddr{false, (32u << 24) + ((i * ((1u << 20) / routes)) << 8), {}}, 24};
}

LearnedRoute route(bool multipath, uint32_t weight, bool moved) {
    if (multipath) return LearnedRoute{"bgp", {{0, v4(10, 0, 1, 2), 1}, {1, v4(10, 0, 2, 2), weight}}};
    return moved ? LearnedRoute{"bgp", {{0, v4(10, 0, 1, 2), 1}}}
                 : LearnedRoute{"bgp", {{1, v4(10, 0, 2, 2), 1}}};
}

struct Table {
    std::unique_ptr<Fib> fib;
    std::unique_ptr<Rib> rib;
    uint32_t routes = rib_routes();
    double initial_sync_s = 0;

    Table(const std::string &name, bool multipath, bool config = false) {
        FibParams p;
        p.ipv4_max_routes = routes + 1024;
        p.ipv4_tbl8s = 1u << 10;
        p.ipv6_max_routes = 64;
        p.ipv6_tbl8s = 64;
        p.max_nexthops = 1024;
        fib = std::make_unique<Fib>(name, p, nullptr);
        std::vector<RibPort> ports = {
            {"p0", MacAddr{{0x02, 0, 0, 0, 0, 0x10}}, {IfAddr{v4(10, 0, 1, 1), 24}}},
            {"p1", MacAddr{{0x02, 0, 0, 0, 0, 0x11}}, {IfAddr{v4(10, 0, 2, 1), 24}}}};
        rib = std::make_unique<Rib>(*fib, ports);
        if (config) {
            std::vector<RouteConfig> single;
            std::vector<MultipathRouteConfig> mp;
            for (uint32_t i = 0; i < routes; i++) {
                if (multipath)
                    mp.push_back({route_prefix(i, routes),
                                  {{v4(10, 0, 1, 2), "p0", 1}, {v4(10, 0, 2, 2), "p1", 1}},
                                  ""});
                else
                    single.push_back({route_prefix(i, routes), v4(10, 0, 2, 2), "p1"});
            }
            const std::vector<NeighbourConfig> neigh = {
                {v4(10, 0, 1, 2), MacAddr{{0x02, 0, 0, 0, 0xaa, 0x01}}, "p0"},
                {v4(10, 0, 2, 2), MacAddr{{0x02, 0, 0, 0, 0xbb, 0x02}}, "p1"}};
            auto t0 = std::chrono::steady_clock::now();
            rib->set_static(single, neigh);
            rib->set_multipath(mp);
            if (rib->sync() != 0) throw std::runtime_error("Fib refused routes");
            initial_sync_s = seconds_since(t0);
            return;
        }
        rib->add_neighbour(0, v4(10, 0, 1, 2), MacAddr{{0x02, 0, 0, 0, 0xaa, 0x01}});
        rib->add_neighbour(1, v4(10, 0, 2, 2), MacAddr{{0x02, 0, 0, 0, 0xbb, 0x02}});
        for (uint32_t i = 0; i < routes; i++)
            rib->set_learned(route_prefix(i, routes), route(multipath, 1, false));
        auto t0 = std::chrono::steady_clock::now();
        if (rib->sync() != 0) throw std::runtime_error("Fib refused routes");
        initial_sync_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    ~Table() {
        rib.reset();
        fib.reset();
    }
};

void BM_RibInitialSync(benchmark::State &st) {
    int k = 0;
    for (auto _ : st) {
        Table t("bm_rib_init" + std::to_string(k++), st.range(0) % 2 != 0, st.range(0) >= 2);
        st.SetIterationTime(t.initial_sync_s);
        st.counters["routes"] = t.routes;
    }
}
BENCHMARK(BM_RibInitialSync)->Arg(0)->Arg(1)->Arg(2)->Arg(3)->UseManualTime()->Iterations(1)
    ->Unit(benchmark::kMillisecond);

void BM_RibSyncOneRoute(benchmark::State &st) {
    const bool multipath = st.range(0) != 0;
    Table t(multipath ? "bm_rib_one_mp" : "bm_rib_one", multipath);
    const IpPrefix p = route_prefix(t.routes / 2, t.routes);
    bool moved = false;
    for (auto _ : st) {
        moved = !moved;
        t.rib->set_learned(p, route(multipath, moved ? 2 : 1, moved));
        benchmark::DoNotOptimize(t.rib->sync());
    }
    st.counters["routes"] = t.routes;
    st.counters["initial_sync_s"] = t.initial_sync_s;
}
BENCHMARK(BM_RibSyncOneRoute)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_RibSyncNeighbour(benchmark::State &st) {
    const bool multipath = st.range(0) != 0;
    Table t(multipath ? "bm_rib_nb_mp" : "bm_rib_nb", multipath);
    bool present = false;
    for (auto _ : st) {
        present = !present;
        if (present)
            t.rib->add_neighbour(0, v4(10, 0, 1, 77), MacAddr{{0x02, 0, 0, 0, 0xaa, 0x77}});
        else
            t.rib->del_neighbour(0, v4(10, 0, 1, 77));
        benchmark::DoNotOptimize(t.rib->sync());
    }
    st.counters["routes"] = t.routes;
}
BENCHMARK(BM_RibSyncNeighbour)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_RibSyncNeighbourMac(benchmark::State &st) {
    const bool multipath = st.range(0) != 0;
    Table t(multipath ? "bm_rib_mac_mp" : "bm_rib_mac", multipath);
    bool other = false;
    size_t ops = 0, evaluated = 0, syncs = 0;
    for (auto _ : st) {
        other = !other;
        t.rib->add_neighbour(1, v4(10, 0, 2, 2),
                             MacAddr{{0x02, 0, 0, 0, 0xbb, uint8_t(other ? 0x03 : 0x02)}});
        benchmark::DoNotOptimize(t.rib->sync());
        ops += t.rib->last_sync().ops;
        evaluated += t.rib->last_sync().evaluated;
        syncs++;
    }
    st.counters["routes"] = t.routes;
    st.counters["fib_ops_per_sync"] = double(ops) / double(syncs ? syncs : 1);
    st.counters["evaluated_per_sync"] = double(evaluated) / double(syncs ? syncs : 1);
}
BENCHMARK(BM_RibSyncNeighbourMac)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// A group's first route flaps: the two-path table (one group) plus a group of two routes of
// their own paths, one before the table (31.0.0.0/24) and one after it (48.0.0.0/24). The first
// is withdrawn and announced again, a sync after each: the group's first moves to the route
// after the table and back, whose distance is the whole table.
void BM_RibSyncFirstOfGroupFlaps(benchmark::State &st) {
    Table t("bm_rib_flap", true);
    const LearnedRoute other{"bgp", {{0, v4(10, 0, 1, 3), 1}, {1, v4(10, 0, 2, 3), 1}}};
    const IpPrefix first{v4(31, 0, 0, 0), 24}, last{v4(48, 0, 0, 0), 24};
    t.rib->set_learned(first, other);
    t.rib->set_learned(last, other);
    if (t.rib->sync() != 0) throw std::runtime_error("Fib refused routes");
    for (auto _ : st) {
        t.rib->del_learned(first);
        benchmark::DoNotOptimize(t.rib->sync());
        t.rib->set_learned(first, other);
        benchmark::DoNotOptimize(t.rib->sync());
    }
    st.counters["routes"] = t.routes;
}
BENCHMARK(BM_RibSyncFirstOfGroupFlaps)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace rocesw::bench
