// rocesim: the rocesw switch pipeline and hosts in virtual time (doc/rocesim.md).
//   rocesim --topology F [--flows F] [--scenario F.yaml] --out DIR [--seed N] [--until TIME]
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "sim/engine.h"
#include "sim/lab.h"

using namespace rocesw::sim;

static const char *kUsage =
    "usage: rocesim --topology FILE [--flows FILE] [--scenario FILE.yaml] --out DIR\n"
    "               [--seed N] [--until TIME] [--write-topology FILE]\n"
    "       rocesim --scenario FILE.yaml --emit-lab FILE.json\n"
    "\n"
    "Runs the rocesw switch pipeline on a simulated fabric in virtual time.\n"
    "  --topology FILE   HPCC ns-3 topology.txt (or give a topology in the scenario)\n"
    "  --flows FILE      HPCC flow.txt: RoCE WRITE flows on the lib/roce hosts\n"
    "  --scenario FILE   YAML scenario: topology generator, QoS profile, host profile\n"
    "                    (DCQCN, traffic classes), RoCE flows and workloads (cdf, incast,\n"
    "                    collectives), UDP flows, link and host events, sampling\n"
    "                    (doc/rocesim.md)\n"
    "  --out DIR         output directory (created): fct.txt, pfc_events.csv,\n"
    "                    queue_depth.csv, udp_flows.csv, udp_delays.csv,\n"
    "                    switch_latency.csv, summary.json;\n"
    "                    RoCE runs: hosts/ (rocehost's flows.csv, qp_rates.csv, ...,\n"
    "                    summary.json) and jobs.csv\n"
    "  --seed N          random seed (default 1, or the scenario's)\n"
    "  --until TIME      stop at this simulated time (e.g. 10ms; default: when idle)\n"
    "  --write-topology FILE  also write the topology (e.g. a generated fat-tree) as an\n"
    "                    HPCC topology.txt, for another simulator (tools/ns3)\n"
    "  --emit-lab FILE   write the scenario expanded for a lab of real processes (switches,\n"
    "                    ports, addresses, ECMP routes, flows, events; JSON, doc/rocelab.md)\n"
    "                    and exit without simulating (tools/rocelab reads it)\n";

struct Progress {
    std::chrono::steady_clock::time_point start;
};

static void progress(const Engine &e, void *arg) {
    auto *p = static_cast<Progress *>(arg);
    double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - p->start).count();
    std::fprintf(stderr, "\r%.3f ms simulated, %lu frame-hops, %.0f frame-hops/s   ",
                 double(e.now()) / double(kPsPerMs), (unsigned long)e.stats().frame_hops,
                 wall > 0 ? double(e.stats().frame_hops) / wall : 0.0);
}

int main(int argc, char **argv) {
    std::string topo, flows, scenario, out, seed, until, write_topo, emit_lab;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&](std::string &dst) {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "rocesim: %s needs a value\n%s", a.c_str(), kUsage);
                std::exit(2);
            }
            dst = argv[++i];
        };
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (a == "--topology")
            value(topo);
        else if (a == "--flows")
            value(flows);
        else if (a == "--scenario")
            value(scenario);
        else if (a == "--out")
            value(out);
        else if (a == "--seed")
            value(seed);
        else if (a == "--until")
            value(until);
        else if (a == "--write-topology")
            value(write_topo);
        else if (a == "--emit-lab")
            value(emit_lab);
        else {
            std::fprintf(stderr, "rocesim: unknown argument '%s'\n%s", a.c_str(), kUsage);
            return 2;
        }
    }
    if ((out.empty() && emit_lab.empty()) || (topo.empty() && scenario.empty())) {
        std::fprintf(stderr,
                     "rocesim: --out and a topology (--topology or --scenario) are "
                     "required\n%s",
                     kUsage);
        return 2;
    }
    spdlog::set_level(spdlog::level::warn);
    Scenario s;
    try {
        if (!topo.empty()) {
            s.topo = load_topology(topo);
            s.has_topology = true;
        }
        if (!scenario.empty()) load_scenario(scenario, s);
        if (!s.has_topology) throw InputError(scenario + ": topology: missing");
        if (!flows.empty())
            for (const FlowRecord &f : load_flows(flows, s.topo)) s.flows.push_back(f);
        if (!seed.empty()) {
            size_t pos = 0;
            s.seed = std::stoull(seed, &pos, 0);
            if (pos != seed.size()) throw InputError("--seed: '" + seed + "' is not a number");
        }
        if (!until.empty()) {
            try {
                s.until = parse_delay_ps(until);
            } catch (const std::exception &e) {
                throw InputError("--until: '" + until + "' is not a time (e.g. 10ms): " + e.what());
            }
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "rocesim: %s\n", e.what());
        return 1;
    }
    if (!write_topo.empty()) {
        FILE *f = std::fopen(write_topo.c_str(), "w");
        const std::string text = s.topo.to_hpcc();
        if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f)) {
            std::fprintf(stderr, "rocesim: cannot write %s\n", write_topo.c_str());
            return 1;
        }
    }
    if (!emit_lab.empty()) {
        std::string text;
        try {
            text = lab_description(s).dump(1) + "\n";
        } catch (const std::exception &e) {
            std::fprintf(stderr, "rocesim: --emit-lab: %s\n", e.what());
            return 1;
        }
        FILE *f = emit_lab == "-" ? stdout : std::fopen(emit_lab.c_str(), "w");
        if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() ||
            (f != stdout && std::fclose(f))) {
            std::fprintf(stderr, "rocesim: cannot write %s\n", emit_lab.c_str());
            return 1;
        }
        if (out.empty()) return 0;
    }
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec) {
        std::fprintf(stderr, "rocesim: cannot create %s: %s\n", out.c_str(), ec.message().c_str());
        return 1;
    }
    if (!sim_eal_init(argv[0], sim_eal_memory_mb(s))) return 1;
    int rc = 0;
    try {
        Progress p{std::chrono::steady_clock::now()};
        const bool tty = isatty(STDERR_FILENO);
        Engine e(s, out);
        const auto built = std::chrono::steady_clock::now();
        const double setup = std::chrono::duration<double>(built - p.start).count();
        p.start = built;
        e.run(tty ? &progress : nullptr, &p);
        if (tty) std::fprintf(stderr, "\n");
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - p.start).count();
        rusage ru{};
        getrusage(RUSAGE_SELF, &ru);
        e.finish(setup, wall, ru.ru_maxrss);
        if (tty)
            std::fprintf(
                stderr,
                "done: %.3f ms simulated, %lu events, %lu frame-hops in %.2f s (+%.2f s set-up)\n",
                double(e.now()) / double(kPsPerMs), (unsigned long)e.stats().events,
                (unsigned long)e.stats().frame_hops, wall, setup);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "rocesim: %s\n", e.what());
        rc = 1;
    }
    sim_eal_cleanup();
    return rc;
}
