// rocehost: a RoCEv2 endpoint emulator (RC RDMA WRITE, DCQCN NP and RP, PFC honoring, flow
// completion times). See doc/rocehost.md.
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "ethdev/ethdev_ports.h"
#include "host_config.h"
#include "roce/host_results.h"
#include "roce/host_set.h"

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) {
    g_stop = true;
}

void usage(FILE *out) {
    std::fprintf(
        out,
        "usage: rocehost --config FILE [options]\n"
        "       rocehost --check-config FILE | --print-flows FILE\n"
        "\n"
        "  --config FILE        run the hosts and workload described by FILE (YAML)\n"
        "  --check-config FILE  validate FILE and exit: 0 valid, 1 invalid\n"
        "  --print-flows FILE   print the workload's flows (CSV) and exit\n"
        "  --out DIR            results directory (overrides rocehost.out_dir)\n"
        "  --dcqcn on|off       DCQCN reaction and notification (overrides dcqcn.enabled)\n"
        "  --duration-ms N      hard stop after N ms (overrides rocehost.duration_ms)\n"
        "  --seed N             workload seed (overrides workload.seed)\n"
        "  --file-prefix P      EAL file prefix (default rocehost-<name>-<pid>)\n"
        "  --print-eal-args     print the EAL arguments and exit\n"
        "\n"
        "Outputs in the results directory: flows.csv, qp_rates.csv, receivers.csv,\n"
        "hosts.csv, pauses.csv, summary.json (with collective jobs: jobs.csv,\n"
        "job_flows.csv). SIGINT/SIGTERM stop the run and write them.\n");
}

std::vector<std::string> eal_args(const rocesw::rocehost::HostRunConfig &c) {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::string cpus;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        for (int i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &set)) {
                if (!cpus.empty()) cpus += ',';  // not ("" or ",") + string: GCC 12's bogus
                cpus += std::to_string(i);       // -Wrestrict at -O3
            }
    if (cpus.empty()) cpus = "0";
    std::vector<std::string> a = {"rocehost",
                                  "--lcores=0@(" + cpus + ")",
                                  "--file-prefix=" + c.run.file_prefix,
                                  "--proc-type=primary",
                                  "--no-pci",
                                  "--no-huge",
                                  "-m",
                                  std::to_string(c.run.memory_mb),
                                  "--no-telemetry",
                                  "--log-level=lib.eal:warning"};
    for (const auto &h : c.hosts)
        if (h.local()) {
            a.push_back("--vdev");
            a.push_back(h.device);
        }
    return a;
}

// The local hosts' ports, set up the way the switch sets up its own (drivers/ethdev): one RX
// and one TX queue each, the device MTU room for a path-MTU frame, the host's MAC, promiscuous,
// device flow control off so that PFC frames reach the hosts. The pool is the ports' pool.
rocesw::Config port_config(const rocesw::rocehost::HostRunConfig &c) {
    rocesw::Config sc;
    sc.sw.name = c.run.name;
    sc.sw.mbufs = c.run.mbufs;
    for (const auto &h : c.hosts)
        if (h.local()) {
            rocesw::PortConfig p;
            p.name = h.name;
            p.device = h.device;
            p.mac = h.mac;
            p.mtu = std::max<uint32_t>(1500, c.run.mtu + 100);  // headers + ICRC over the path MTU
            for (const auto &u : c.udp_flows)  // and the largest UDP flow frame
                p.mtu = std::max<uint32_t>(
                    p.mtu, rocesw::roce::udp_flow_frame_len(u.frame_bytes) - 14);
            p.speed_mbps = h.line_rate_bps / 1'000'000;
            sc.ports.push_back(p);
        }
    return sc;
}

// Collective jobs (roce/collective.h, the simulator's code): after every poll, the flows that
// completed at their sender and the messages the local hosts received whole go to the
// JobRunner, and the steps they make startable become flows. The jobs run on the workload's
// clock (0 = start_delay after the loop started).
class Jobs {
  public:
    Jobs(rocesw::roce::HostSet &hs, const rocesw::rocehost::HostRunConfig &cfg)
        : hs_(hs), cfg_(cfg), t0_(cfg.run.start_delay_ns) {
        for (const auto &j : cfg.jobs) runner_.add(j.spec, j.start_ns);
        add(runner_.initial());
    }
    void after_poll() {
        done_.clear();
        hs_.take_completed(done_);
        rx_.clear();
        hs_.take_received(rx_);
        if (!runner_.size()) return;
        for (uint32_t id : done_) add(runner_.on_sent(id, clock(hs_.flows()[id].finish_ns)));
        for (const auto &r : rx_) add(runner_.on_received(r.flow, clock(r.t_ns)));
    }
    bool done() const { return runner_.done(); }
    const rocesw::roce::JobRunner &runner() const { return runner_; }

  private:
    uint64_t clock(uint64_t t) const { return t > t0_ ? t - t0_ : 0; }
    void add(const std::vector<rocesw::roce::JobRunner::Start> &starts) {
        for (const auto &st : starts) {
            const auto &f = runner_.job(st.job).flows[st.flow];
            rocesw::roce::FlowSpec spec;
            spec.src = f.src;
            spec.dst = f.dst;
            spec.size_bytes = f.size_bytes;
            spec.start_ns = st.at_ns;
            spec.cls = cfg_.jobs[st.job].class_of(f.src);  // jobs added in cfg.jobs' order
            runner_.bind(hs_.add_flow(spec), st.job, st.flow);
        }
    }
    rocesw::roce::HostSet &hs_;
    const rocesw::rocehost::HostRunConfig &cfg_;
    uint64_t t0_;
    rocesw::roce::JobRunner runner_;
    std::vector<uint32_t> done_;
    std::vector<rocesw::roce::HostSet::Received> rx_;
};

// The wall-clock loop: TSC time since the start, until done, the duration or a signal; naps
// when idle for a while (shared cores). Returns the run's duration in ns.
uint64_t run_hosts(rocesw::roce::HostSet &hs, Jobs &jobs,
                   const rocesw::rocehost::HostRunConfig &cfg, rocesw::roce::LoopStats &loop) {
    const uint64_t tsc0 = rte_rdtsc();
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    loop.start_monotonic_ns = uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
    const double ns_per_tsc = 1e9 / double(rte_get_tsc_hz());
    uint64_t idle_loops = 0, now = 0, prev = 0;
    bool was_active = false;
    for (;;) {
        now = uint64_t(double(rte_rdtsc() - tsc0) * ns_per_tsc);
        if (was_active) loop.on_gap(now - prev);
        prev = now;
        if (g_stop.load(std::memory_order_relaxed) || now >= cfg.run.duration_ns ||
            (hs.finished(now) && jobs.done()))
            break;
        const bool moved = hs.poll(now) > 0;
        jobs.after_poll();
        was_active = hs.active();
        if (moved || was_active) {
            idle_loops = 0;
        } else if (++idle_loops > 1000 && cfg.run.idle_sleep_us) {
            usleep(useconds_t(cfg.run.idle_sleep_us));
        }
    }
    hs.release();
    return now;
}

}  // namespace

int main(int argc, char **argv) {
    using namespace rocesw;
    std::string config_path, check_path, flows_path, out_dir, dcqcn, file_prefix;
    long long duration_ms = -1, seed = -1;
    bool print_eal = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&](const char *opt) -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "rocehost: %s needs a value\n", opt);
                std::exit(2);
            }
            return argv[++i];
        };
        auto number = [&](const char *opt) -> long long {
            std::string v = value(opt);
            char *end = nullptr;
            long long n = std::strtoll(v.c_str(), &end, 10);
            if (v.empty() || *end || n < 0) {
                std::fprintf(stderr, "rocehost: %s: '%s' is not a non-negative integer\n", opt,
                             v.c_str());
                std::exit(2);
            }
            return n;
        };
        if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        } else if (a == "--version") {
            std::printf("rocehost %s\n", ROCESW_VERSION);
            return 0;
        } else if (a == "--config" || a == "-c") {
            config_path = value("--config");
        } else if (a == "--check-config") {
            check_path = value("--check-config");
        } else if (a == "--print-flows") {
            flows_path = value("--print-flows");
        } else if (a == "--out") {
            out_dir = value("--out");
        } else if (a == "--dcqcn") {
            dcqcn = value("--dcqcn");
            if (dcqcn != "on" && dcqcn != "off") {
                std::fprintf(stderr, "rocehost: --dcqcn: '%s' is not on or off\n", dcqcn.c_str());
                return 2;
            }
        } else if (a == "--duration-ms") {
            duration_ms = number("--duration-ms");
        } else if (a == "--seed") {
            seed = number("--seed");
        } else if (a == "--file-prefix") {
            file_prefix = value("--file-prefix");
        } else if (a == "--print-eal-args") {
            print_eal = true;
        } else {
            std::fprintf(stderr, "rocehost: unknown argument '%s'\n", a.c_str());
            usage(stderr);
            return 2;
        }
    }
    std::string path = !check_path.empty()   ? check_path
                       : !flows_path.empty() ? flows_path
                                             : config_path;
    if (path.empty()) {
        usage(stderr);
        return 2;
    }
    rocehost::HostRunConfig cfg;
    try {
        cfg = rocehost::load_host_config_file(path);
        if (seed >= 0) {
            cfg.workload.spec.seed = uint64_t(seed);
        }
    } catch (const ConfigError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    if (!check_path.empty()) {
        size_t local = 0;
        for (auto &h : cfg.hosts) local += h.local();
        std::printf("%s: valid: %zu local host(s), %zu peer(s), %zu flow(s), %zu job(s)\n",
                    path.c_str(), local, cfg.hosts.size() - local,
                    roce::generate_workload(cfg.workload.spec).size(), cfg.jobs.size());
        return 0;
    }
    if (!flows_path.empty()) {
        std::printf("flow,src,dst,size_bytes,start_ns\n");
        for (auto &f : roce::generate_workload(cfg.workload.spec))
            std::printf("%u,%s,%s,%llu,%llu\n", f.id, cfg.hosts[f.src].name.c_str(),
                        cfg.hosts[f.dst].name.c_str(), (unsigned long long)f.size_bytes,
                        (unsigned long long)f.start_ns);
        return 0;
    }
    if (!out_dir.empty()) cfg.run.out_dir = out_dir;
    if (!dcqcn.empty()) cfg.dcqcn_enabled = dcqcn == "on";
    if (duration_ms >= 0) cfg.run.duration_ns = uint64_t(duration_ms) * 1'000'000;
    if (!file_prefix.empty()) cfg.run.file_prefix = file_prefix;
    if (cfg.run.file_prefix.empty())
        cfg.run.file_prefix = "rocehost-" + cfg.run.name + "-" + std::to_string(getpid());

    auto args = eal_args(cfg);
    if (print_eal) {
        for (size_t i = 1; i < args.size(); i++) std::printf("%s\n", args[i].c_str());
        return 0;
    }
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [rocehost] %v");
    std::vector<char *> argvv;
    for (auto &s : args) argvv.push_back(s.data());
    if (rte_eal_init(int(argvv.size()), argvv.data()) < 0) {
        spdlog::critical("EAL initialisation failed: {}", rte_strerror(rte_errno));
        return 3;
    }
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    int rc = 0;
    try {
        EthdevPorts ports(port_config(cfg), 1);
        size_t n_local = 0;
        for (const auto &h : cfg.hosts)
            if (h.local()) {
                n_local++;
                spdlog::info("host {}: {} on {}, {} Gb/s", h.name, h.ip.str(), h.device,
                             double(h.line_rate_bps) / 1e9);
            }
        roce::HostSet hosts(cfg, n_local, ports, ports.pool());
        Jobs jobs(hosts, cfg);
        spdlog::info("running: {} flow(s) in the workload, {} collective job(s), dcqcn {}",
                     roce::generate_workload(cfg.workload.spec).size(), cfg.jobs.size(),
                     cfg.dcqcn_enabled ? "on" : "off");
        roce::LoopStats loop;
        const uint64_t run_ns = run_hosts(hosts, jobs, cfg, loop);
        if (!roce::write_host_results(hosts, cfg.run.out_dir, run_ns, loop, &jobs.runner())) rc = 1;
    } catch (const std::exception &e) {
        spdlog::critical("{}", e.what());
        rc = 3;
    }
    rte_eal_cleanup();
    return rc;
}
