// roceswd: the rocesw switch daemon.
#include <rte_eal.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "common/log.h"
#include "config/config.h"
#include "afxdp/af_xdp.h"
#include "ethdev/eal_args.h"
#include "lb/plugin.h"
#include "lb/policy.h"
#include "qos/qos_config.h"
#include "route/fib.h"
#include "switch.h"

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) {
    g_stop = true;
}

void usage(FILE *out) {
    std::fprintf(
        out,
        "usage: roceswd --config FILE [--log-level LEVEL] [--print-eal-args]\n"
        "       roceswd --check-config FILE\n"
        "       roceswd --help | --version\n"
        "\n"
        "  --config FILE        run the switch described by FILE (YAML, see doc/config.md)\n"
        "  --check-config FILE  validate FILE and exit: 0 valid, 1 invalid\n"
        "  --log-level LEVEL    trace|debug|info|warn|error|critical|off (overrides the config)\n"
        "  --print-eal-args     print the EAL arguments derived from the config and exit\n"
        "\n"
        "Stop with SIGINT or SIGTERM: workers stop, queues drain, ports close.\n");
}

// The QoS profile named by switch.qos (or the built-in SONiC default), validated against the
// ports. Throws ConfigError naming the QoS file and field.
rocesw::QosPlan load_qos_plan(const rocesw::Config &c) {
    std::vector<rocesw::QosPortInfo> ports;
    for (const auto &p : c.ports)
        ports.push_back({p.name, p.speed_mbps, p.mtu, uint16_t(c.sw.burst)});
    rocesw::QosConfig q = c.sw.qos_file.empty() ? rocesw::default_qos_config()
                                                : rocesw::load_qos_file(c.sw.qos_file);
    return rocesw::build_qos_plan(q, ports);
}

}  // namespace

int main(int argc, char **argv) {
    std::string config_path, check_path, log_level;
    bool print_eal = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&](const char *opt) -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "roceswd: %s needs a value\n", opt);
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        } else if (a == "--version") {
            std::printf("roceswd %s\n", ROCESW_VERSION);
            return 0;
        } else if (a == "--config" || a == "-c") {
            config_path = value("--config");
        } else if (a == "--check-config") {
            check_path = value("--check-config");
        } else if (a == "--log-level") {
            log_level = value("--log-level");
        } else if (a == "--print-eal-args") {
            print_eal = true;
        } else {
            std::fprintf(stderr, "roceswd: unknown argument '%s'\n", a.c_str());
            usage(stderr);
            return 2;
        }
    }
    if (!check_path.empty()) {
        try {
            rocesw::Config c = rocesw::load_config_file(check_path);
            rocesw::load_lb_plugins(c);
            rocesw::check_lb_policy_names(c);
            for (const auto &w : load_qos_plan(c).warnings)
                std::fprintf(stderr, "%s: warning: %s\n", check_path.c_str(), w.c_str());
            std::printf(
                "%s: valid: %zu port(s), %zu route(s) (%zu multipath), %zu neighbour(s), "
                "%u worker(s)\n",
                check_path.c_str(), c.ports.size(), c.routes.size() + c.multipath_routes.size(),
                c.multipath_routes.size(), c.neighbours.size(), c.sw.workers);
            return 0;
        } catch (const rocesw::ConfigError &e) {
            std::fprintf(stderr, "%s\n", e.what());
            return 1;
        }
    }
    if (config_path.empty()) {
        usage(stderr);
        return 2;
    }

    rocesw::Config cfg;
    rocesw::QosPlan qos_plan;
    try {
        cfg = rocesw::load_config_file(config_path);
        rocesw::load_lb_plugins(cfg);
        rocesw::check_lb_policy_names(cfg);
        qos_plan = load_qos_plan(cfg);
    } catch (const rocesw::ConfigError &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    std::string level = log_level.empty() ? cfg.sw.log_level : log_level;
    auto lvl = rocesw::parse_log_level(level);
    if (!lvl) {
        std::fprintf(stderr,
                     "roceswd: --log-level: '%s' is not one of trace, debug, info, warn, error, "
                     "critical, off\n",
                     level.c_str());
        return 2;
    }
    spdlog::set_level(*lvl);
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");

    const uint64_t need_mb =
        rocesw::required_memory_mb(cfg, rocesw::fib_memory_bytes(rocesw::fib_params_for(cfg)));
    std::string huge_why;
    unsigned long huge = rocesw::usable_hugepages(rocesw::hugepage_state(), need_mb, huge_why);
    if (cfg.sw.memory_mb == 0) cfg.sw.memory_mb = uint32_t(need_mb);
    rocesw::EalPlan plan = rocesw::plan_eal(cfg, rocesw::allowed_cpus(), huge);
    if (print_eal) {
        for (size_t i = 1; i < plan.args.size(); i++) std::printf("%s\n", plan.args[i].c_str());
        return 0;
    }
    if (plan.no_huge) {
        const uint64_t need = need_mb;
        if (cfg.sw.memory_mb < need) {
            std::fprintf(stderr,
                         "%s: switch.memory_mb: %u MiB is too small for this switch: the FIB and "
                         "%u mbufs need about %llu MiB; set memory_mb to at least %llu or reserve "
                         "hugepages\n",
                         cfg.source.c_str(), cfg.sw.memory_mb, cfg.sw.mbufs,
                         (unsigned long long)need, (unsigned long long)need);
            return 1;
        }
    }
    if (plan.no_huge && !huge_why.empty())
        spdlog::warn("hugepages not used: {}; running with --no-huge -m {} (dpdk-hugepages.py "
                     "--mount --setup 2G reserves and mounts them)",
                     huge_why, cfg.sw.memory_mb);
    else if (plan.no_huge)
        spdlog::info(
            "no hugepages reserved: running with --no-huge -m {} (reserve hugepages for "
            "production: dpdk-hugepages.py --setup 2G)",
            cfg.sw.memory_mb);

    try {  // AF_XDP interfaces: present, enough queues, stale programs replaced (doc/ports.md)
        rocesw::afxdp_preflight(cfg);
        rocesw::file_prefix_preflight(cfg);
        rocesw::memif_preflight(cfg);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }

    std::vector<char *> eal_argv;
    for (auto &s : plan.args) eal_argv.push_back(s.data());
    if (rte_eal_init(int(eal_argv.size()), eal_argv.data()) < 0) {
        spdlog::critical(
            "EAL initialisation failed: {} (EAL arguments: see roceswd --print-eal-args)",
            rte_strerror(rte_errno));
        return 3;
    }
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);

    int rc = 0;
    try {
        rocesw::Switch sw(cfg, qos_plan);
        sw.run(g_stop);
    } catch (const std::exception &e) {
        spdlog::critical("{}", e.what());
        rc = 3;
    }
    rte_eal_cleanup();
    // What the EAL leaves in its runtime directory (config, fbarray_*): gone after a clean exit,
    // so that files found there at start-up mean a process that died (file_prefix_preflight).
    rocesw::remove_runtime_files(cfg);
    spdlog::info("stopped");
    return rc;
}
