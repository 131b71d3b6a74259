// ControlServer: the switch's management surface.
//
// Commands are named functions that return JSON ("ports", "routes", "drops", ...), each
// read-only or mutating (views/registry.h: modules add them through CommandTable). They are
// reachable three ways:
//   - over a Unix socket (rocectl; protocol in telemetry/control_protocol.h), served by
//     poll_once() from the control thread's loop: read-only commands always, a mutating one
//     only once allow() enabled it (TESTPLAN S1: read-only unless explicitly enabled);
//   - through rte_telemetry as "/rocesw/<cmd>" after register_telemetry_commands(), answered
//     on DPDK's telemetry thread: read-only commands only;
//   - in-process through call(), under the control socket's rule (tests, other code).
// "a b ..." runs command "a_b ..." when one is registered (views/registry.h).
//
// Threading. Handlers may run on the control thread (poll_once, call) and on DPDK's telemetry
// thread. The server runs at most one handler at a time: every dispatch holds handler_mutex().
// Code that changes state the handlers read (tables owned by the control thread) and cannot make
// that change safe for a concurrent reader otherwise holds the same mutex while it does. Workers
// never take it; handlers read worker counters, which are single-writer and tear-free.
// Read-only handlers must not change state; mutating ones run only on the control thread.
//
// Errors. A handler throws CommandError for a user error (bad argument, unknown port); the
// client sees {"ok":false,"error":<what()>}. Any other exception is reported as
// "internal error: <what()>" and logged.
#pragma once

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "views/registry.h"

struct rte_tel_data;

namespace rocesw {

class ControlServer final : public CommandTable {
  public:
    using Handler = CommandHandler;

    struct CommandInfo {
        std::string name, help;
        Access access;
    };

    // Registers the built-in "help" (read-only): [{"cmd":..,"help":..}, ...] sorted by name.
    ControlServer();
    ~ControlServer();
    ControlServer(const ControlServer &) = delete;
    ControlServer &operator=(const ControlServer &) = delete;

    // Adds or replaces a command. Names are [A-Za-z0-9_]+ so that they are also valid
    // rte_telemetry command names; anything else throws std::invalid_argument.
    void add(CommandSpec c) override;
    // A read-only command.
    void add(const std::string &cmd, const std::string &help, Handler h) {
        add(CommandSpec{cmd, help, Access::read_only, std::move(h)});
    }

    // Whether the control socket and call() serve the mutating command `cmd` (by default
    // not). While not, a call fails with CommandError(`refusal`), by default
    // "<cmd>: mutating command not enabled". May precede the command's add().
    void allow(const std::string &cmd, bool allowed, std::string refusal = {});

    // Creates the parent directory (mode 0755), refuses a path where a live server answers
    // ("another roceswd is using <path>") or that exists and is not a socket, removes a stale
    // socket, then binds, sets mode 0660 and listens, non-blocking. False with *err on failure.
    bool listen(const std::string &path, std::string *err);

    // One round of socket work: accept, read, dispatch complete requests, write replies. Waits
    // at most timeout_ms for activity (0: do not wait); the time spent in handlers comes on top.
    // now_ms: a monotonic clock, for the stall rule: a client whose replies wait unsent (its
    // socket buffer full: it does not read) with no progress for kClientStallMs is
    // disconnected, counted and logged. Meanwhile the server reads no further request from it
    // past kMaxQueuedOutBytes of unsent output, so it costs a bounded amount of memory.
    void poll_once(int timeout_ms, uint64_t now_ms);

    // Closes every client and the listening socket and unlinks the socket path (only if it is
    // still the socket this server created). Idempotent; the destructor calls it.
    void close();

    // Runs a command in-process. Throws CommandError for an unknown command, a mutating one
    // that is not allowed (or above `max_access`), or a user error.
    nlohmann::json call(const std::string &cmd, const std::vector<std::string> &args,
                        Access max_access = Access::mutating);

    // Runs a command and wraps the result in the wire format: {"ok":true,"data":...} or
    // {"ok":false,"error":...}. Never throws. The telemetry bridge passes read_only.
    nlohmann::json dispatch(const std::string &cmd, const std::vector<std::string> &args,
                            Access max_access = Access::mutating);

    // Every command, sorted by name.
    std::vector<CommandInfo> commands() const;

    std::recursive_mutex &handler_mutex() { return handler_mutex_; }
    const std::string &path() const { return path_; }
    size_t client_count() const { return clients_.size(); }

    // Connections beyond this are answered with an error and closed.
    static constexpr size_t kMaxClients = 64;
    static constexpr uint64_t kClientStallMs = 5000;
    static constexpr size_t kMaxQueuedOutBytes = 1 << 20;

    // Connection counters, readable from any thread (the "control_clients" command).
    struct ClientStats {
        uint64_t accepted = 0;          // connections taken
        uint64_t refused = 0;           // over kMaxClients: error reply, closed
        uint64_t stalled = 0;           // disconnected: replies unsent for kClientStallMs
        uint64_t request_too_long = 0;  // a request line over kControlMaxRequestBytes
        uint64_t connected = 0;         // now
    };
    ClientStats client_stats() const;

  private:
    struct Client;
    // The command `cmd args` runs: "a_b" for "a b ..." when registered (then args lose "b").
    std::shared_ptr<const CommandSpec> resolve(const std::string &cmd,
                                               std::vector<std::string> &args) const;

    void accept_clients(uint64_t now_ms);
    // Reads what is available; false when the client is to be dropped now.
    bool read_client(Client &c);
    // Dispatches complete request lines while the client's output queue is short.
    void process_requests(Client &c);
    // Writes what the socket takes; false on a write error.
    bool write_client(Client &c);
    void handle_line(Client &c, const std::string &line);

    mutable std::mutex commands_mutex_;  // guards commands_, allowed_ (add vs. lookups)
    std::map<std::string, std::shared_ptr<const CommandSpec>> commands_;
    std::map<std::string, std::pair<bool, std::string>> allowed_;  // mutating: allowed, refusal
    std::recursive_mutex handler_mutex_;

    int listen_fd_ = -1;
    std::string path_;
    dev_t sock_dev_ = 0;
    ino_t sock_ino_ = 0;
    std::vector<std::unique_ptr<Client>> clients_;
    std::atomic<uint64_t> accepted_{0}, refused_{0}, stalled_{0}, too_long_{0}, connected_{0};
};

// Registers every read-only command added so far as rte_telemetry command "/rocesw/<cmd>",
// whose telemetry parameter is split on ',' into args; mutating commands never are, and the
// bridge refuses one reached through "a,b" ("lb,events"). Commands added later are not registered;
// calling this again registers only the new ones (DPDK has no unregister). Works before or after
// rte_eal_init(). Only one ControlServer is bridged per process: the last one passed here.
// Returns the number of commands newly registered.
int register_telemetry_commands(ControlServer &srv);

// Converts a command's JSON result into telemetry data, as far as DPDK 22.11 allows:
//   object            -> dict (keys outside [A-Za-z0-9_/] become '_'; at most 256 entries)
//   array of strings, of integers that fit int, or of non-negative integers (<= 512 entries)
//                     -> array of that type
//   any other array   -> dict keyed by index ("0", "1", ...) so objects inside stay structured
//   string            -> string (DPDK truncates values at 127 bytes inside containers)
//   unsigned / int    -> u64 / int;  bool -> int 0|1;  float, null -> string (JSON text)
// Dicts nest to any depth; arrays cannot hold containers in 22.11. A value that does not fit
// (too many entries, a rejected container) becomes its JSON text as a string. At the top level
// a scalar becomes a single string. Returns 0, or a negative errno if DPDK rejected the top.
int json_to_tel_data(const nlohmann::json &j, rte_tel_data *d);

}  // namespace rocesw
