// Client side of the control socket (protocol in telemetry/control_protocol.h) and the
// human-readable views rocectl prints. No DPDK here: rocectl links only this and nlohmann_json.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace rocesw {

struct ControlReply {
    bool ok = false;
    nlohmann::json data;  // when ok
    std::string error;    // when !ok: the server's message
};

// Transport outcome. A command that ran and failed is kOk with reply.ok == false.
enum class ControlStatus {
    kOk,
    kIoError,   // not connected, write/read failed, or the server closed the connection
    kTimeout,   // no complete reply in time
    kBadReply,  // the reply line is not the protocol's JSON
};

class ControlClient {
  public:
    static constexpr int kDefaultTimeoutMs = 5000;

    ControlClient() = default;
    ~ControlClient();
    ControlClient(const ControlClient &) = delete;
    ControlClient &operator=(const ControlClient &) = delete;

    // Connects (waiting at most timeout_ms if the server's backlog is full). On failure *err is
    // "cannot connect to <path>: <strerror>" and errno_value() the errno.
    bool connect(const std::string &path, std::string *err, int timeout_ms = kDefaultTimeoutMs);
    bool connected() const { return fd_ >= 0; }
    void close();
    int fd() const { return fd_; }
    int errno_value() const { return errno_; }

    // Sends one request and waits up to timeout_ms (for the whole exchange) for its reply.
    ControlStatus request(const std::string &cmd, const std::vector<std::string> &args,
                          ControlReply *reply, std::string *err,
                          int timeout_ms = kDefaultTimeoutMs);

    // One request on a new connection to `path`, as rocectl makes it. A server at its client
    // limit refuses the connection with a kControlBusyError reply, a passing state (a burst of
    // clients): this connects again after 5, 10, 20 ... 200 ms (each wait a little shortened at
    // random, so a burst of clients spreads) until timeout_ms has passed, then returns that
    // reply. *no_server: the connection itself failed (*err says why). Leaves the connection
    // open.
    ControlStatus call(const std::string &path, const std::string &cmd,
                       const std::vector<std::string> &args, ControlReply *reply, std::string *err,
                       bool *no_server, int timeout_ms = kDefaultTimeoutMs);

    // Lower level, for tests and tools: send bytes as they are; read the next reply line.
    ControlStatus send_raw(std::string_view bytes, std::string *err,
                           int timeout_ms = kDefaultTimeoutMs);
    ControlStatus read_reply(ControlReply *reply, std::string *err,
                             int timeout_ms = kDefaultTimeoutMs);

  private:
    int fd_ = -1;
    int errno_ = 0;
    std::string path_;
    std::string buf_;  // received bytes after the last complete reply line
};

// The server refused the connection for being at its client limit (kControlBusyError).
bool control_busy(const ControlReply &r);

// $ROCESW_SOCKET if set and non-empty, else /run/rocesw/rocesw.sock.
std::string default_control_socket();
// /run/rocesw/<name>.sock: the socket of the roceswd whose switch name is <name>.
std::string control_socket_for_name(const std::string &name);

// Renders a command's data as aligned text columns for "ports", "routes", "neighbours",
// "drops", "workers", "info" and "help"; missing keys print as "-". Anything else, or data not
// shaped as expected, is printed as indented JSON. The result ends with a newline.
std::string format_table(const std::string &cmd, const nlohmann::json &data);

}  // namespace rocesw
