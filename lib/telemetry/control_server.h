// ControlServer: the switch's read-only management surface.
//
// Commands are named functions that return JSON ("ports", "routes", "drops", ...). They are
// reachable three ways:
//   - over a Unix socket (rocectl; protocol in telemetry/control_protocol.h), served by
//     poll_once() from the control thread's loop;
//   - through rte_telemetry as "/rocesw/<cmd>" after register_telemetry_commands(), answered
//     on DPDK's telemetry thread;
//   - in-process through call() (tests, other code).
//
// Threading. Handlers may run on the control thread (poll_once, call) and on DPDK's telemetry
// thread. The server runs at most one handler at a time: every dispatch holds handler_mutex().
// Code that changes state the handlers read (tables owned by the control thread) and cannot make
// that change safe for a concurrent reader otherwise holds the same mutex while it does. Workers
// never take it; handlers read worker counters, which are single-writer and tear-free.
// Handlers must not change state: there are no mutating commands.
//
// Errors. A handler throws CommandError for a user error (bad argument, unknown port); the
// client sees {"ok":false,"error":<what()>}. Any other exception is reported as
// "internal error: <what()>" and logged.
#pragma once

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

struct rte_tel_data;

namespace rocesw {

class CommandError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class ControlServer {
  public:
    using Handler = std::function<nlohmann::json(const std::vector<std::string> &args)>;

    // Registers the built-in "help": [{"cmd":..,"help":..}, ...] sorted by name.
    ControlServer();
    ~ControlServer();
    ControlServer(const ControlServer &) = delete;
    ControlServer &operator=(const ControlServer &) = delete;

    // Adds or replaces a command. Names are [A-Za-z0-9_]+ so that they are also valid
    // rte_telemetry command names; anything else throws std::invalid_argument.
    void add(const std::string &cmd, const std::string &help, Handler h);

    // Creates the parent directory (mode 0755), refuses a path where a live server answers
    // ("another roceswd is using <path>") or that exists and is not a socket, removes a stale
    // socket, then binds, sets mode 0660 and listens, non-blocking. False with *err on failure.
    bool listen(const std::string &path, std::string *err);

    // One round of socket work: accept, read, dispatch complete requests, write replies. Waits
    // at most timeout_ms for activity (0: do not wait); the time spent in handlers comes on top.
    void poll_once(int timeout_ms);

    // Closes every client and the listening socket and unlinks the socket path (only if it is
    // still the socket this server created). Idempotent; the destructor calls it.
    void close();

    // Runs a command in-process. Throws CommandError for an unknown command or a user error.
    nlohmann::json call(const std::string &cmd, const std::vector<std::string> &args);

    // Runs a command and wraps the result in the wire format: {"ok":true,"data":...} or
    // {"ok":false,"error":...}. Never throws.
    nlohmann::json dispatch(const std::string &cmd, const std::vector<std::string> &args);

    // (name, help) of every command, sorted by name.
    std::vector<std::pair<std::string, std::string>> commands() const;

    std::recursive_mutex &handler_mutex() { return handler_mutex_; }
    const std::string &path() const { return path_; }
    size_t client_count() const { return clients_.size(); }

    // Connections beyond this are answered with an error and closed.
    static constexpr size_t kMaxClients = 64;

  private:
    struct Command {
        std::string help;
        Handler handler;
    };
    struct Client;

    void accept_clients();
    // Reads what is available; false when the client is to be dropped now.
    bool read_client(Client &c);
    // Dispatches complete request lines while the client's output queue is short.
    void process_requests(Client &c);
    // Writes what the socket takes; false on a write error.
    bool write_client(Client &c);
    void handle_line(Client &c, const std::string &line);

    mutable std::mutex commands_mutex_;  // guards commands_ (add vs. lookups on two threads)
    std::map<std::string, std::shared_ptr<const Command>> commands_;
    std::recursive_mutex handler_mutex_;

    int listen_fd_ = -1;
    std::string path_;
    dev_t sock_dev_ = 0;
    ino_t sock_ino_ = 0;
    std::vector<std::unique_ptr<Client>> clients_;
};

// Registers every command added so far as rte_telemetry command "/rocesw/<cmd>", whose
// telemetry parameter is split on ',' into args. Commands added later are not registered;
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
