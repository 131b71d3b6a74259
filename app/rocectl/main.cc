// rocectl: asks a running roceswd over its control socket and prints the answer.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include "config/config.h"
#include "config/yaml_doc.h"  // parse_speed_mbps
#include "pfc/headroom.h"
#include "telemetry/control_client.h"
#include "watch.h"

#ifndef ROCESW_VERSION
#define ROCESW_VERSION "unknown"
#endif

namespace {

// Exit codes, stable for scripts.
constexpr int kExitOk = 0;
constexpr int kExitCommandError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoServer = 3;

constexpr const char *kUsage =
    "usage: rocectl [--socket PATH | --name NAME] [--json] show WHAT [--all]\n"
    "       rocectl [--socket PATH | --name NAME] [--json] call CMD [ARGS...]\n"
    "       rocectl [--socket PATH | --name NAME] [--json] watch [--interval S] [--count N]\n"
    "               [--all] [PORT...]\n"
    "       rocectl [--socket PATH | --name NAME] clear watermarks [PORT...] | latency\n"
    "       rocectl headroom --speed RATE [--cable M] [--mtu B] [--peer-mtu B]\n"
    "               [--response-quanta Q] [--tx-ring B] [--burst N] [--poll-us U] [--json]\n"
    "       rocectl --help | --version\n"
    "\n"
    "WHAT: ports | routes | neighbours | drops [--all] | queues [PORT...] | workers | info | help\n"
    "      lb [events]   ECMP groups, members, policy counters (or the path-change records)\n"
    "      pfc [PORT...] PFC per port and priority: pauses received/sent, PG buffers, watchdog\n"
    "      ecn [PORT...] WRED/ECN per queue: marking and drop curves, CE marks, WRED drops\n"
    "      punt          control-plane policing per punt class, host interface counters\n"
    "      control       routes by source (connected, static, bird, ...), netlink sync, FIB latency\n"
    "      control clients  control socket connections: now, accepted, refused, disconnected\n"
    "      accounting    every frame received and sent, by term, per port and total, with the\n"
    "                    verdict (balanced, or the differences); doc/accounting.md\n"
    "      latency       RX->TX latency per traffic class: p50/p99/p99.9/max in us\n"
    "                    (needs telemetry.latency: true)\n"
    "\n"
    "  --socket PATH  control socket of the switch (default: $ROCESW_SOCKET, else\n"
    "                 /run/rocesw/rocesw.sock)\n"
    "  --name NAME    the switch named NAME: /run/rocesw/NAME.sock\n"
    "  --json         print the reply's data as JSON instead of a table\n"
    "  --all          drops: list every counter, zeros included\n"
    "\n"
    "call sends CMD with ARGS as they are; 'rocectl call help' lists the commands.\n"
    "watch redraws per-port rates, queue depths, ECN marks and drops every --interval seconds\n"
    "  (default 1) until Ctrl-C or --count frames; --all shows idle queues too; with --json or\n"
    "  when stdout is not a terminal it prints one frame per interval instead of redrawing.\n"
    "headroom computes (no switch needed) the PFC headroom a lossless PG needs: BUFFER_PROFILE\n"
    "  xoff and xon_offset for a port of RATE (e.g. 100G), a cable of M metres (100) and MTUs\n"
    "  (9216); --tx-ring is the port's TX ring cap (default 20 us of RATE), --burst and\n"
    "  --poll-us the worker's RX burst (32) and longest poll gap (10). doc/pfc.md explains.\n"
    "clear watermarks restarts queue and PG watermarks; the switch refuses it unless its\n"
    "  config sets telemetry.allow_clear: true. Counters are never reset.\n"
    "clear latency starts the latency view's window afresh (same rule; Prometheus keeps counting).\n"
    "\n"
    "exit status: 0 ok, 1 the switch reported an error, 2 usage error,\n"
    "             3 no switch answered (cannot connect, connection lost, 5 s timeout)\n";

int usage_error(const std::string &msg);

// `show pfc`: per port its mode, one line per lossless priority, one per lossless PG.
std::string format_pfc(const nlohmann::json &d) {
    char line[320];
    std::string out;
    for (const auto &p : d.at("ports")) {
        snprintf(line, sizeof line, "%s: %s; quanta %u; 802.3x pause %s (%llu honored, %llu ignored)",
                 p.at("port").get<std::string>().c_str(), p.at("mode").get<std::string>().c_str(),
                 p.at("pause_quanta").get<unsigned>(),
                 p.at("pause_8023x").get<std::string>().c_str(),
                 (unsigned long long)p.at("rx_pause_8023x").get<uint64_t>(),
                 (unsigned long long)p.at("rx_pause_8023x_ignored").get<uint64_t>());
        out += line;
        if (!p.at("rx_malformed").empty()) out += "; malformed " + p.at("rx_malformed").dump();
        out += "\n";
        if (!p.at("priorities").empty()) {
            snprintf(line, sizeof line, "  %-4s %-8s %10s %8s %8s %12s %10s %8s %12s %6s\n", "PRIO",
                     "LOSSLESS", "RX_PAUSE", "RX_XON", "IGNORED", "RX_PAUSE_US", "TX_PAUSE",
                     "TX_XON", "TX_PAUSE_US", "NOW");
            out += line;
        }
        for (const auto &r : p.at("priorities")) {
            std::string now = r.at("rx_paused_now").get<bool>()    ? "paused"
                              : r.at("tx_pausing_now").get<bool>() ? "xoff"
                                                                   : "-";
            snprintf(line, sizeof line, "  %-4u %-8s %10llu %8llu %8llu %12llu %10llu %8llu %12llu %6s\n",
                     r.at("priority").get<unsigned>(), r.at("lossless").get<bool>() ? "yes" : "no",
                     (unsigned long long)r.at("rx_pause").get<uint64_t>(),
                     (unsigned long long)r.at("rx_xon").get<uint64_t>(),
                     (unsigned long long)r.at("rx_ignored").get<uint64_t>(),
                     (unsigned long long)r.at("rx_pause_us").get<uint64_t>(),
                     (unsigned long long)r.at("tx_pause").get<uint64_t>(),
                     (unsigned long long)r.at("tx_xon").get<uint64_t>(),
                     (unsigned long long)r.at("tx_pause_us").get<uint64_t>(), now.c_str());
            out += line;
        }
        if (!p.at("pgs").empty()) {
            snprintf(line, sizeof line, "  %-4s %-9s %10s %10s %10s %10s %10s %10s %9s %5s\n", "PG",
                     "PROFILE", "BYTES", "WATERMARK", "XOFF_AT", "HEADROOM", "HR_NEEDED",
                     "HR_USED", "HR_DROPS", "XOFF");
            out += line;
        }
        for (const auto &g : p.at("pgs")) {
            snprintf(line, sizeof line, "  %-4u %-9s %10llu %10llu %10llu %10llu %10llu %10llu %9llu %5s\n",
                     g.at("pg").get<unsigned>(), g.at("profile").get<std::string>().c_str(),
                     (unsigned long long)g.at("bytes").get<uint64_t>(),
                     (unsigned long long)g.at("watermark_bytes").get<uint64_t>(),
                     (unsigned long long)g.at("xoff_threshold_bytes").get<uint64_t>(),
                     (unsigned long long)g.at("headroom_bytes").get<uint64_t>(),
                     (unsigned long long)g.at("headroom_needed_bytes").get<uint64_t>(),
                     (unsigned long long)g.at("headroom_used_bytes").get<uint64_t>(),
                     (unsigned long long)g.at("headroom_drops").get<uint64_t>(),
                     g.at("xoff").get<bool>() ? "yes" : "no");
            out += line;
        }
        const auto &wd = p.at("watchdog");
        if (wd.at("enabled").get<bool>()) {
            out += "  watchdog: action " + wd.at("action").get<std::string>() + ", detect " +
                   std::to_string(wd.at("detection_ms").get<uint64_t>()) + " ms, restore " +
                   std::to_string(wd.at("restoration_ms").get<uint64_t>()) + " ms;";
            for (const auto &q : wd.at("queues"))
                out += " q" + std::to_string(q.at("queue").get<unsigned>()) + " " +
                       (q.at("stormed").get<bool>() ? "STORMED" : "ok") + " (storms " +
                       std::to_string(q.at("storms").get<uint64_t>()) + ")";
            out += "\n";
        }
    }
    return out;
}

// `rocectl headroom`: the headroom calculator of lib/pfc, no switch needed.
int headroom_command(const std::vector<std::string> &args, size_t i, bool json_out) {
    rocesw::HeadroomInput in;
    bool have_speed = false, tx_ring_set = false;
    auto number = [](const std::string &v, double lo, double hi, double *out) {
        char *end = nullptr;
        double x = std::strtod(v.c_str(), &end);
        if (end == v.c_str() || *end || !(x >= lo && x <= hi)) return false;
        *out = x;
        return true;
    };
    for (; i < args.size(); i++) {
        const std::string &a = args[i];
        if (a == "--json" || a == "-j") {
            json_out = true;
            continue;
        }
        if (i + 1 >= args.size()) return usage_error("headroom: " + a + " needs a value");
        const std::string v = args[++i];
        double x = 0;
        if (a == "--speed") {
            auto rate = rocesw::parse_speed_mbps(v);
            if (!rate) return usage_error("headroom: --speed '" + v + "' is not a rate like 100G");
            in.speed_bps = *rate * 1'000'000ull;
            have_speed = true;
        } else if (a == "--cable" && number(v, 0, 100000, &x)) {
            in.cable_m = x;
        } else if (a == "--mtu" && number(v, 68, 65535, &x)) {
            in.mtu = uint32_t(x);
        } else if (a == "--peer-mtu" && number(v, 68, 65535, &x)) {
            in.peer_mtu = uint32_t(x);
        } else if (a == "--response-quanta" && number(v, 0, 65535, &x)) {
            in.peer_response_quanta = uint32_t(x);
        } else if (a == "--tx-ring" && number(v, 0, 1e9, &x)) {
            in.tx_ring_bytes = uint64_t(x);
            tx_ring_set = true;
        } else if (a == "--burst" && number(v, 1, 256, &x)) {
            in.burst = uint32_t(x);
        } else if (a == "--poll-us" && number(v, 0, 1e6, &x)) {
            in.poll_ns = uint64_t(x * 1000);
        } else {
            return usage_error("headroom: bad option or value '" + a + " " + v + "'");
        }
    }
    if (!have_speed) return usage_error("headroom: --speed is required (e.g. --speed 100G)");
    if (!tx_ring_set) in.tx_ring_bytes = rocesw::default_port_burst_bytes(in.speed_bps);
    rocesw::HeadroomResult r = rocesw::compute_headroom(in);
    if (json_out) {
        nlohmann::json j = {{"detection_bytes", r.detection}, {"egress_bytes", r.egress},
                            {"link_bytes", r.link},           {"peer_bytes", r.peer},
                            {"headroom_bytes", r.headroom_bytes},
                            {"xon_offset_bytes", r.xon_offset_bytes}};
        std::cout << j.dump(2) << "\n";
    } else {
        std::cout << r.explain();
        std::cout << "BUFFER_PROFILE: {..., xoff: " << r.headroom_bytes
                  << ", xon_offset: " << r.xon_offset_bytes << "}\n";
    }
    return kExitOk;
}

// `show lb`: one line per group member, then the policy counters.
std::string format_lb(const nlohmann::json &d) {
    char line[256];
    std::string out;
    snprintf(line, sizeof line, "%-5s %-20s %-9s %-4s %-16s %-8s %-6s %-5s %12s %14s %10s\n",
             "GROUP", "PREFIX", "POLICY", "SLOT", "VIA", "PORT", "WEIGHT", "ALIVE", "PACKETS",
             "BYTES", "FLOWLETS");
    out += line;
    for (const auto &g : d.value("groups", nlohmann::json::array()))
        for (const auto &m : g.value("members", nlohmann::json::array())) {
            snprintf(line, sizeof line,
                     "%-5u %-20s %-9s %-4u %-16s %-8s %-6u %-5s %12llu %14llu %10llu\n",
                     g.value("id", 0u), g.value("prefix", "").c_str(),
                     g.value("policy", "").c_str(), m.value("slot", 0u), m.value("via", "").c_str(),
                     m.value("port", "").c_str(), m.value("weight", 0u),
                     m.value("alive", false) ? "yes" : "no",
                     (unsigned long long)m.value("packets", 0ull),
                     (unsigned long long)m.value("bytes", 0ull),
                     (unsigned long long)m.value("flowlets", 0ull));
            out += line;
        }
    out += "\n";
    snprintf(line, sizeof line, "%-10s %12s %12s %12s %12s %12s\n", "POLICY", "PACKETS",
             "DECISIONS", "PATH_CHANGES", "FALLBACKS", "AGED");
    out += line;
    for (const auto &p : d.value("policies", nlohmann::json::array())) {
        snprintf(line, sizeof line, "%-10s %12llu %12llu %12llu %12llu %12llu\n",
                 p.value("name", "").c_str(), (unsigned long long)p.value("packets", 0ull),
                 (unsigned long long)p.value("decisions", 0ull),
                 (unsigned long long)p.value("path_changes", 0ull),
                 (unsigned long long)p.value("fallbacks", 0ull),
                 (unsigned long long)p.value("aged", 0ull));
        out += line;
    }
    const auto ft = d.value("flowlet_table", nlohmann::json::object());
    snprintf(line, sizeof line,
             "\nflowlet table: %llu of %llu entries in use; %llu flowlets carried over to a "
             "route's new group; %llu drops (no member alive)\n",
             (unsigned long long)ft.value("occupancy", 0ull),
             (unsigned long long)ft.value("entries", 0ull),
             (unsigned long long)ft.value("carried", 0ull),
             (unsigned long long)d.value("no_member_drops", 0ull));
    out += line;
    return out;
}

// `show latency`: one line per traffic class that has seen a packet since the window began.
std::string format_latency(const nlohmann::json &d) {
    if (!d.value("enabled", false))
        return "latency measurement is off (telemetry.latency: false in the switch config)\n";
    char line[200];
    std::string out;
    snprintf(line, sizeof line, "window %.1f s, %llu packets; percentiles to %.1f %%\n",
             d.value("since_s", 0.0), (unsigned long long)d.value("packets", 0ull),
             100 * d.value("bucket_precision", 0.0) / 2);
    out += line;
    snprintf(line, sizeof line, "%-5s %14s %10s %10s %10s %10s %10s\n", "CLASS", "PACKETS",
             "P50_US", "P99_US", "P99.9_US", "MAX_US", "MEAN_US");
    out += line;
    for (const auto &c : d.value("classes", nlohmann::json::array())) {
        if (!c.value("packets", 0ull)) continue;
        snprintf(line, sizeof line, "%-5u %14llu %10.3f %10.3f %10.3f %10.3f %10.3f\n",
                 c.value("tc", 0u), (unsigned long long)c.value("packets", 0ull),
                 c.value("p50_us", 0.0), c.value("p99_us", 0.0), c.value("p999_us", 0.0),
                 c.value("max_us", 0.0), c.value("mean_us", 0.0));
        out += line;
    }
    return out;
}

int usage_error(const std::string &msg) {
    std::cerr << "rocectl: " << msg << "\n" << kUsage;
    return kExitUsage;
}

// Takes the value of "--opt VALUE" or "--opt=VALUE" at argv[*i]; false if the option is not opt.
bool option_value(const std::vector<std::string> &argv, size_t *i, const std::string &opt,
                  std::string *value, std::string *err) {
    const std::string &a = argv[*i];
    if (a == opt) {
        if (*i + 1 >= argv.size()) {
            *err = opt + " needs a value";
            return true;
        }
        *value = argv[++*i];
        if (value->empty()) *err = opt + " needs a non-empty value";
        return true;
    }
    if (a.compare(0, opt.size() + 1, opt + "=") == 0) {
        *value = a.substr(opt.size() + 1);
        if (value->empty()) *err = opt + " needs a non-empty value";
        return true;
    }
    return false;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    std::string socket_path, name, err;
    bool json_out = false;
    size_t i = 0;
    // Global options come before the verb.
    for (; i < args.size(); i++) {
        const std::string &a = args[i];
        if (a == "--help" || a == "-h") {
            std::cout << kUsage;
            return kExitOk;
        }
        if (a == "--version" || a == "-V") {
            std::cout << "rocectl " << ROCESW_VERSION << "\n";
            return kExitOk;
        }
        if (a == "--json" || a == "-j") {
            json_out = true;
            continue;
        }
        std::string v;
        if (option_value(args, &i, "--socket", &v, &err)) {
            if (!err.empty()) return usage_error(err);
            socket_path = v;
            continue;
        }
        if (option_value(args, &i, "--name", &v, &err)) {
            if (!err.empty()) return usage_error(err);
            if (v.find('/') != std::string::npos) return usage_error("--name must not contain '/'");
            name = v;
            continue;
        }
        if (!a.empty() && a[0] == '-') return usage_error("unknown option '" + a + "'");
        break;
    }
    if (!socket_path.empty() && !name.empty())
        return usage_error("give --socket or --name, not both");
    if (i >= args.size()) return usage_error("missing command");

    std::string cmd;
    std::vector<std::string> cmd_args;
    rocesw::WatchOptions watch;
    bool is_watch = false;
    const std::string verb = args[i++];
    if (verb == "show") {
        if (i >= args.size()) return usage_error("show: missing what to show");
        cmd = args[i++];
        if (cmd == "neighbors") cmd = "neighbours";
        static const std::vector<std::string> known = {
            "ports", "routes", "neighbours", "drops", "workers", "info", "help", "queues", "lb",
            "pfc", "ecn", "punt", "control", "latency", "accounting"};
        if (std::find(known.begin(), known.end(), cmd) == known.end())
            return usage_error("show: unknown '" + cmd + "'");
        for (; i < args.size(); i++) {
            if (args[i] == "--json" || args[i] == "-j") {
                json_out = true;
            } else if (args[i] == "--all" && cmd == "drops") {
                cmd_args.push_back("all");
            } else if ((cmd == "lb" && args[i] == "events") ||
                       (cmd == "control" && args[i] == "clients")) {
                cmd_args.push_back(args[i]);
            } else if ((cmd == "queues" || cmd == "pfc" || cmd == "ecn") && args[i][0] != '-') {
                cmd_args.push_back(args[i]);  // port names
            } else {
                return usage_error("show " + cmd + ": unexpected '" + args[i] + "'");
            }
        }
    } else if (verb == "headroom") {
        return headroom_command(args, i, json_out);
    } else if (verb == "watch") {
        for (; i < args.size(); i++) {
            std::string v;
            if (args[i] == "--json" || args[i] == "-j") {
                watch.json = true;
            } else if (args[i] == "--all") {
                watch.all_queues = true;
            } else if (option_value(args, &i, "--interval", &v, &err)) {
                if (!err.empty()) return usage_error(err);
                char *end = nullptr;
                watch.interval_s = std::strtod(v.c_str(), &end);
                if (*end || !(watch.interval_s >= 0.05 && watch.interval_s <= 3600))
                    return usage_error("watch: --interval must be 0.05..3600 seconds");
            } else if (option_value(args, &i, "--count", &v, &err)) {
                if (!err.empty()) return usage_error(err);
                char *end = nullptr;
                watch.count = std::strtol(v.c_str(), &end, 10);
                if (*end || watch.count < 1) return usage_error("watch: --count must be >= 1");
            } else if (args[i][0] != '-') {
                watch.ports.push_back(args[i]);
            } else {
                return usage_error("watch: unexpected '" + args[i] + "'");
            }
        }
        watch.json = watch.json || json_out;
        watch.clear_screen = !watch.json && isatty(STDOUT_FILENO);
        is_watch = true;
    } else if (verb == "clear") {
        if (i >= args.size() || (args[i] != "watermarks" && args[i] != "latency"))
            return usage_error("clear: what? (clear watermarks [PORT...] | clear latency)");
        cmd = "clear";
        cmd_args.assign(args.begin() + static_cast<long>(i), args.end());
    } else if (verb == "call") {
        if (i >= args.size()) return usage_error("call: missing command");
        cmd = args[i++];
        cmd_args.assign(args.begin() + static_cast<long>(i), args.end());
    } else {
        return usage_error("unknown command '" + verb + "'");
    }

    if (socket_path.empty())
        socket_path =
            name.empty() ? rocesw::default_control_socket() : rocesw::control_socket_for_name(name);

    rocesw::ControlClient client;
    rocesw::ControlReply reply;
    bool no_server = false;
    // watch: the switch's name first, then the frames on the same connection.
    if (is_watch) {
        cmd = "info";
        cmd_args.clear();
    }
    // A switch at its client limit (a burst of rocectl calls) is asked again for up to 5 s.
    if (client.call(socket_path, cmd, cmd_args, &reply, &err, &no_server) !=
        rocesw::ControlStatus::kOk) {
        std::cerr << "rocectl: " << err << (no_server ? "; is roceswd running?" : "") << "\n";
        return kExitNoServer;
    }
    if (!reply.ok) {
        std::cerr << "rocectl: " << reply.error << "\n";
        return kExitCommandError;
    }
    if (is_watch) return rocesw::run_watch(client, watch, reply.data.value("name", "?"));
    if (json_out) {
        std::cout << reply.data.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                  << "\n";
    } else if (cmd == "lb" && cmd_args.empty()) {
        std::cout << format_lb(reply.data);
    } else if (cmd == "pfc") {
        std::cout << format_pfc(reply.data);
    } else if (cmd == "latency") {
        std::cout << format_latency(reply.data);
    } else {
        // "control clients" is the command control_clients (printed as indented JSON).
        const bool sub = cmd == "control" && !cmd_args.empty();
        std::cout << rocesw::format_table(sub ? "control_" + cmd_args[0] : cmd, reply.data);
    }
    std::cout.flush();
    return std::cout ? kExitOk : kExitCommandError;
}
