// What a module registers at start-up: its control commands, each declared read-only or
// mutating, and its Prometheus metric families. A module exposes one function,
//     void register_<module>_views(ViewRegistry &r, <its sources>);
// that adds both; the process (app/roceswd) only wires modules to the registry. The control
// socket and the rte_telemetry bridge (lib/telemetry/control_server.h) serve the commands, the
// Prometheus exporter the families. This header knows neither: modules below telemetry include
// it without seeing the socket or DPDK.
//
// Access classes (doc/observability.md, "Commands"):
//   read_only  reads state and nothing else: answering twice gives the same view. Served by the
//              control socket and bridged to rte_telemetry as /rocesw/<name>; the handler may
//              run on the control thread or on DPDK's telemetry thread.
//   mutating   changes state, including a destructive read (draining a ring). Served by the
//              control socket only, and only once the process allowed it
//              (ControlServer::allow); never registered with rte_telemetry. Runs on the
//              control thread.
// Handlers of either class run one at a time (the server's handler lock).
//
// Names are [A-Za-z0-9_]+ (also valid rte_telemetry names). A command "a_b" is also reachable
// on the control socket as "a" with first argument "b" ("lb events 10" runs "lb_events 10"),
// which is how a view keeps its mutating verbs apart: "lb" is read-only, "lb_policy" and
// "lb_events" are mutating.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "metrics/metrics.h"

namespace rocesw {

// A user error (bad argument, unknown port): the client sees {"ok":false,"error":<what()>}.
class CommandError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

enum class Access : uint8_t { read_only, mutating };

inline const char *access_name(Access a) {
    return a == Access::read_only ? "read_only" : "mutating";
}

using CommandArgs = std::vector<std::string>;
using CommandHandler = std::function<nlohmann::json(const CommandArgs &args)>;

struct CommandSpec {
    std::string name;  // [A-Za-z0-9_]+
    std::string help;  // one line
    Access access = Access::read_only;
    CommandHandler handler;
};

// Where commands are added. Implemented by the control server (and by test doubles).
class CommandTable {
  public:
    // Adds or replaces a command; throws std::invalid_argument on a bad name or no handler.
    virtual void add(CommandSpec c) = 0;

    void read_only(std::string name, std::string help, CommandHandler h) {
        add({std::move(name), std::move(help), Access::read_only, std::move(h)});
    }
    void mutating(std::string name, std::string help, CommandHandler h) {
        add({std::move(name), std::move(help), Access::mutating, std::move(h)});
    }

  protected:
    ~CommandTable() = default;
};

// The two registries a module's register_<module>_views() fills. Whatever a registration
// captures (tables, counters, the TrafficManager) must outlive every call and every scrape.
struct ViewRegistry {
    CommandTable &commands;
    MetricRegistry &metrics;
};

// Port-name filter shared by the per-port views ("queues p1 p2"): true when `name` is wanted.
inline bool port_selected(const CommandArgs &args, const std::string &name) {
    if (args.empty()) return true;
    for (const auto &a : args)
        if (a == name) return true;
    return false;
}

}  // namespace rocesw
