#include "telemetry/control_server.h"

#include <rte_telemetry.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "common/unix_socket.h"
#include "telemetry/control_protocol.h"

namespace rocesw {

namespace {

using nlohmann::json;

// Bytes read from one client per poll round, so one fast writer cannot starve the others.
constexpr size_t kReadBudgetBytes = 256 * 1024;

std::string errno_str(int e) {
    return std::strerror(e);
}

// Dumps JSON as one line; invalid UTF-8 in strings is replaced rather than thrown on.
std::string dump_line(const json &j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool valid_command_name(const std::string &cmd) {
    if (cmd.empty()) return false;
    for (char c : cmd) {
        bool ok =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (!ok) return false;
    }
    return true;
}

// mkdir -p with mode 0755 for each directory it creates.
bool make_dirs(const std::string &dir, std::string *err) {
    if (dir.empty()) return true;
    std::string prefix;
    size_t pos = 0;
    while (pos != std::string::npos) {
        size_t next = dir.find('/', pos + 1);
        prefix = dir.substr(0, next);
        pos = next;
        if (prefix.empty() || prefix == "/") continue;
        if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
            *err = "cannot create directory " + prefix + ": " + errno_str(errno);
            return false;
        }
    }
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        *err = dir + " is not a directory";
        return false;
    }
    return true;
}

bool fill_sockaddr(const std::string &path, sockaddr_un *addr) {
    std::memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof(addr->sun_path)) return false;
    std::memcpy(addr->sun_path, path.data(), path.size());
    return true;
}

std::string reply_ok(const json &data) {
    return "{\"ok\":true,\"data\":" + dump_line(data) + "}\n";
}

std::string reply_error(const std::string &msg) {
    return "{\"ok\":false,\"error\":" + dump_line(json(msg)) + "}\n";
}

// ---- telemetry bridge state ----
// DPDK calls a plain function pointer, so the bridged server is process-global. The mutex also
// keeps a ControlServer from being destroyed while the telemetry thread runs one of its handlers.
std::mutex g_bridge_mutex;
ControlServer *g_bridged = nullptr;
// Names registered with DPDK (it has no unregister) and the help text handed to it.
std::map<std::string, std::string> g_registered;

constexpr const char *kTelemetryPrefix = "/rocesw/";
constexpr size_t kTelemetryMaxCmdLen = 56;  // MAX_CMD_LEN in DPDK 22.11's telemetry.c

}  // namespace

struct ControlServer::Client {
    int fd = -1;
    std::string in;   // bytes received, not yet dispatched
    std::string out;  // reply bytes not yet written, starting at out_off
    size_t out_off = 0;
    uint64_t progress_ms = 0;  // last time a reply byte left, or nothing waited, or accepted
    bool read_closed = false;        // peer shut down its side: answer what is complete, then close
    bool close_after_write = false;  // protocol error: flush the error reply, then close
    size_t queued() const { return out.size() - out_off; }
};

ControlServer::ControlServer() {
    add("help", "list the commands with a line of help each",
        [this](const std::vector<std::string> &) {
            json list = json::array();
            for (const auto &c : commands()) list.push_back({{"cmd", c.name}, {"help", c.help}});
            return list;
        });
    add("control_clients", "control socket connections: now, accepted, refused, disconnected",
        [this](const std::vector<std::string> &) {
            const ClientStats st = client_stats();
            return json{{"connected", st.connected},
                        {"max_clients", kMaxClients},
                        {"accepted", st.accepted},
                        {"refused_over_limit", st.refused},
                        {"disconnected",
                         {{"stalled", st.stalled}, {"request_too_long", st.request_too_long}}},
                        {"stall_timeout_ms", kClientStallMs},
                        {"max_queued_out_bytes", kMaxQueuedOutBytes}};
        });
}

ControlServer::ClientStats ControlServer::client_stats() const {
    ClientStats st;
    st.accepted = accepted_.load(std::memory_order_relaxed);
    st.refused = refused_.load(std::memory_order_relaxed);
    st.stalled = stalled_.load(std::memory_order_relaxed);
    st.request_too_long = too_long_.load(std::memory_order_relaxed);
    st.connected = connected_.load(std::memory_order_relaxed);
    return st;
}

ControlServer::~ControlServer() {
    {
        std::lock_guard<std::mutex> lk(g_bridge_mutex);
        if (g_bridged == this) g_bridged = nullptr;
    }
    close();
}

void ControlServer::add(CommandSpec c) {
    if (!valid_command_name(c.name))
        throw std::invalid_argument("invalid command name '" + c.name +
                                    "' (allowed: [A-Za-z0-9_]+)");
    if (!c.handler) throw std::invalid_argument("command '" + c.name + "' has no handler");
    auto p = std::make_shared<const CommandSpec>(std::move(c));
    std::lock_guard<std::mutex> lk(commands_mutex_);
    commands_[p->name] = std::move(p);
}

void ControlServer::allow(const std::string &cmd, bool allowed, std::string refusal) {
    std::lock_guard<std::mutex> lk(commands_mutex_);
    allowed_[cmd] = {allowed, std::move(refusal)};
}

std::vector<ControlServer::CommandInfo> ControlServer::commands() const {
    std::lock_guard<std::mutex> lk(commands_mutex_);
    std::vector<CommandInfo> v;
    v.reserve(commands_.size());
    for (const auto &[name, c] : commands_) v.push_back({name, c->help, c->access});
    return v;
}

std::shared_ptr<const CommandSpec> ControlServer::resolve(const std::string &cmd,
                                                          std::vector<std::string> &args) const {
    std::lock_guard<std::mutex> lk(commands_mutex_);
    if (!args.empty() && valid_command_name(args[0])) {
        auto sub = commands_.find(cmd + "_" + args[0]);
        if (sub != commands_.end()) {
            args.erase(args.begin());
            return sub->second;
        }
    }
    auto it = commands_.find(cmd);
    return it != commands_.end() ? it->second : nullptr;
}

json ControlServer::call(const std::string &cmd, const std::vector<std::string> &args,
                         Access max_access) {
    std::vector<std::string> a = args;
    std::shared_ptr<const CommandSpec> c = resolve(cmd, a);
    if (!c) throw CommandError("unknown command '" + cmd + "'; try 'help'");
    if (c->access == Access::mutating) {
        if (max_access == Access::read_only)
            throw CommandError(c->name + ": changes state; served only on the control socket");
        std::lock_guard<std::mutex> lk(commands_mutex_);
        auto it = allowed_.find(c->name);
        if (it == allowed_.end() || !it->second.first)
            throw CommandError(it != allowed_.end() && !it->second.second.empty()
                                   ? it->second.second
                                   : c->name + ": mutating command not enabled");
    }
    std::lock_guard<std::recursive_mutex> lk(handler_mutex_);
    return c->handler(a);
}

json ControlServer::dispatch(const std::string &cmd, const std::vector<std::string> &args,
                             Access max_access) {
    try {
        return json{{"ok", true}, {"data", call(cmd, args, max_access)}};
    } catch (const CommandError &e) {
        return json{{"ok", false}, {"error", e.what()}};
    } catch (const std::exception &e) {
        spdlog::error("control command '{}' failed: {}", cmd, e.what());
        return json{{"ok", false}, {"error", std::string("internal error: ") + e.what()}};
    } catch (...) {
        spdlog::error("control command '{}' failed with a non-standard exception", cmd);
        return json{{"ok", false}, {"error", "internal error"}};
    }
}

bool ControlServer::listen(const std::string &path, std::string *err) {
    std::string local_err;
    if (!err) err = &local_err;
    if (listen_fd_ >= 0) {
        *err = "already listening on " + path_;
        return false;
    }
    sockaddr_un addr;
    if (!fill_sockaddr(path, &addr)) {
        *err = "invalid socket path '" + path + "' (empty or longer than " +
               std::to_string(sizeof(addr.sun_path) - 1) + " bytes)";
        return false;
    }
    size_t slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0 && !make_dirs(path.substr(0, slash), err))
        return false;

    bool stale = false;
    if (!claim_unix_socket(path, "another roceswd", err, &stale)) return false;
    if (stale) spdlog::info("removed stale control socket {}", path);

    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *err = "socket: " + errno_str(errno);
        return false;
    }
    if (::bind(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof(addr)) != 0) {
        *err = "cannot bind " + path + ": " + errno_str(errno);
        ::close(fd);
        return false;
    }
    struct stat st;
    if (::chmod(path.c_str(), 0660) != 0 || ::listen(fd, 16) != 0 ||
        ::stat(path.c_str(), &st) != 0) {
        *err = "cannot set up " + path + ": " + errno_str(errno);
        ::close(fd);
        ::unlink(path.c_str());
        return false;
    }
    listen_fd_ = fd;
    path_ = path;
    sock_dev_ = st.st_dev;
    sock_ino_ = st.st_ino;
    return true;
}

void ControlServer::close() {
    for (auto &c : clients_) ::close(c->fd);
    clients_.clear();
    connected_.store(0, std::memory_order_relaxed);
    if (listen_fd_ >= 0) {
        ::close(listen_fd_);
        listen_fd_ = -1;
        // Unlink only our own socket: a successor may already have replaced a path we lost.
        struct stat st;
        if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == sock_dev_ && st.st_ino == sock_ino_)
            ::unlink(path_.c_str());
    }
    path_.clear();
}

void ControlServer::poll_once(int timeout_ms, uint64_t now_ms) {
    if (timeout_ms < 0) timeout_ms = 0;
    // Clients that do not read: replies waiting, none sent for kClientStallMs.
    {
        size_t kept = 0;
        for (size_t i = 0; i < clients_.size(); i++) {
            Client &c = *clients_[i];
            if (c.queued() == 0) c.progress_ms = now_ms;
            if (c.queued() > 0 && now_ms - c.progress_ms >= kClientStallMs) {
                spdlog::warn(
                    "control client disconnected: {} bytes of replies unsent for {} ms (it does "
                    "not read)",
                    c.queued(), now_ms - c.progress_ms);
                stalled_.fetch_add(1, std::memory_order_relaxed);
                ::close(c.fd);
                continue;
            }
            clients_[kept++] = std::move(clients_[i]);
        }
        clients_.resize(kept);
        connected_.store(kept, std::memory_order_relaxed);
    }
    std::vector<pollfd> fds;
    fds.reserve(clients_.size() + 1);
    if (listen_fd_ >= 0) fds.push_back({listen_fd_, POLLIN, 0});
    const size_t first_client = fds.size();
    for (auto &c : clients_) {
        short ev = 0;
        if (!c->read_closed && !c->close_after_write && c->queued() < ControlServer::kMaxQueuedOutBytes)
            ev |= POLLIN;
        if (c->queued() > 0) ev |= POLLOUT;
        fds.push_back({c->fd, ev, 0});
    }
    int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0) {
        if (errno != EINTR) spdlog::warn("control socket poll: {}", errno_str(errno));
        return;
    }
    if (n == 0) return;

    std::vector<bool> drop(clients_.size(), false);
    for (size_t i = 0; i < clients_.size(); i++) {
        Client &c = *clients_[i];
        short re = fds[first_client + i].revents;
        if (re & POLLNVAL) {
            drop[i] = true;
            continue;
        }
        if ((re & (POLLIN | POLLHUP | POLLERR)) && (fds[first_client + i].events & POLLIN)) {
            if (!read_client(c)) {
                drop[i] = true;
                continue;
            }
        }
        // Dispatch and write until the socket pushes back or no complete request is left, so
        // that no request waits in the buffer for an event that will not come.
        for (;;) {
            process_requests(c);
            const size_t before = c.queued();
            if (before > 0 && !write_client(c)) {
                drop[i] = true;
                break;
            }
            if (c.queued() < before) c.progress_ms = now_ms;
            if (c.queued() > 0 || c.close_after_write) break;
            if (c.in.find('\n') == std::string::npos) break;
        }
        if (!drop[i] && c.queued() == 0 && (c.read_closed || c.close_after_write)) drop[i] = true;
    }
    size_t kept = 0;
    for (size_t i = 0; i < clients_.size(); i++) {
        if (drop[i]) {
            ::close(clients_[i]->fd);
        } else {
            clients_[kept++] = std::move(clients_[i]);
        }
    }
    clients_.resize(kept);

    if (!fds.empty() && listen_fd_ >= 0 && (fds[0].revents & POLLIN)) accept_clients(now_ms);
    connected_.store(clients_.size(), std::memory_order_relaxed);
}

void ControlServer::accept_clients(uint64_t now_ms) {
    for (;;) {
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                spdlog::warn("control socket accept: {}", errno_str(errno));
            return;
        }
        if (clients_.size() >= kMaxClients) {
            std::string msg =
                reply_error(std::string(kControlBusyError) + " (limit " +
                            std::to_string(kMaxClients) + ")");
            (void)!::send(fd, msg.data(), msg.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            ::close(fd);
            refused_.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        accepted_.fetch_add(1, std::memory_order_relaxed);
        auto c = std::make_unique<Client>();
        c->fd = fd;
        c->progress_ms = now_ms;
        clients_.push_back(std::move(c));
    }
}

bool ControlServer::read_client(Client &c) {
    char buf[16384];
    size_t got = 0;
    while (got < kReadBudgetBytes) {
        ssize_t n = ::read(c.fd, buf, sizeof(buf));
        if (n > 0) {
            c.in.append(buf, static_cast<size_t>(n));
            got += static_cast<size_t>(n);
            // Stop early once a too-long line is certain; process_requests answers it.
            if (c.in.size() > kControlMaxRequestBytes && c.in.find('\n') == std::string::npos)
                break;
            continue;
        }
        if (n == 0) {
            c.read_closed = true;
            return true;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
        return false;  // ECONNRESET and friends: nobody to answer
    }
    return true;
}

void ControlServer::process_requests(Client &c) {
    size_t start = 0;
    while (!c.close_after_write && c.queued() < ControlServer::kMaxQueuedOutBytes) {
        size_t nl = c.in.find('\n', start);
        if (nl == std::string::npos) break;
        if (nl - start > kControlMaxRequestBytes) break;  // answered below
        std::string line = c.in.substr(start, nl - start);
        start = nl + 1;
        handle_line(c, line);
    }
    c.in.erase(0, start);
    if (c.close_after_write) {
        c.in.clear();
        return;
    }
    size_t first_nl = c.in.find('\n');
    size_t first_len = first_nl == std::string::npos ? c.in.size() : first_nl;
    if (first_len > kControlMaxRequestBytes) {
        c.out += reply_error("request exceeds " + std::to_string(kControlMaxRequestBytes) +
                             " bytes; closing connection");
        too_long_.fetch_add(1, std::memory_order_relaxed);
        c.close_after_write = true;
        c.in.clear();
        return;
    }
    // A peer that closed in the middle of a line will never finish it.
    if (c.read_closed && first_nl == std::string::npos) c.in.clear();
}

void ControlServer::handle_line(Client &c, const std::string &raw) {
    std::string line = raw;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) return;  // blank keep-alive line

    json req = json::parse(line, nullptr, false);
    if (req.is_discarded() || !req.is_object()) {
        c.out += reply_error(
            "malformed request: expected a JSON object like "
            "{\"cmd\":\"help\",\"args\":[]}");
        return;
    }
    auto cmd_it = req.find("cmd");
    if (cmd_it == req.end() || !cmd_it->is_string()) {
        c.out += reply_error("malformed request: 'cmd' must be a string");
        return;
    }
    std::vector<std::string> args;
    auto args_it = req.find("args");
    if (args_it != req.end() && !args_it->is_null()) {
        bool ok = args_it->is_array();
        if (ok) {
            for (const auto &a : *args_it) {
                if (!a.is_string()) {
                    ok = false;
                    break;
                }
                args.push_back(a.get<std::string>());
            }
        }
        if (!ok) {
            c.out += reply_error("malformed request: 'args' must be an array of strings");
            return;
        }
    }
    json r = dispatch(cmd_it->get<std::string>(), args);
    c.out += r["ok"].get<bool>() ? reply_ok(r["data"]) : reply_error(r["error"].get<std::string>());
}

bool ControlServer::write_client(Client &c) {
    while (c.queued() > 0) {
        ssize_t n = ::send(c.fd, c.out.data() + c.out_off, c.queued(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            c.out_off += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        return false;
    }
    if (c.queued() == 0) {
        c.out.clear();
        c.out_off = 0;
    } else if (c.out_off > ControlServer::kMaxQueuedOutBytes) {
        c.out.erase(0, c.out_off);
        c.out_off = 0;
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// rte_telemetry bridge

namespace {

std::string tel_name(const std::string &key) {
    std::string n;
    n.reserve(key.size());
    for (char c : key) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '/';
        n.push_back(ok ? c : '_');
    }
    if (n.empty()) n = "_";
    if (n.size() >= RTE_TEL_MAX_STRING_LEN) n.resize(RTE_TEL_MAX_STRING_LEN - 1);
    return n;
}

enum class ArrayKind { kString, kInt, kU64, kOther };

ArrayKind array_kind(const json &a) {
    if (a.size() > RTE_TEL_MAX_ARRAY_ENTRIES) return ArrayKind::kOther;
    bool all_string = true, all_u64 = true, all_int = true;
    for (const auto &v : a) {
        if (!v.is_string()) all_string = false;
        if (v.is_number_unsigned()) {
            if (v.get<uint64_t>() > static_cast<uint64_t>(INT_MAX)) all_int = false;
        } else if (v.is_number_integer()) {
            int64_t x = v.get<int64_t>();
            if (x < 0) all_u64 = false;
            if (x < INT_MIN || x > INT_MAX) all_int = false;
        } else if (v.is_boolean()) {
            all_u64 = false;  // flags print as 0/1 ints, not counters
        } else {
            all_u64 = all_int = false;
        }
    }
    if (all_string) return ArrayKind::kString;  // also the empty array: prints as []
    if (all_u64) return ArrayKind::kU64;
    if (all_int) return ArrayKind::kInt;
    return ArrayKind::kOther;
}

int fill_container(const json &j, rte_tel_data *d);

void add_dict_value(rte_tel_data *d, const std::string &name, const json &v) {
    const char *n = name.c_str();
    switch (v.type()) {
        case json::value_t::string:
            rte_tel_data_add_dict_string(d, n, v.get_ref<const std::string &>().c_str());
            return;
        case json::value_t::boolean:
            rte_tel_data_add_dict_int(d, n, v.get<bool>() ? 1 : 0);
            return;
        case json::value_t::number_unsigned:
            rte_tel_data_add_dict_u64(d, n, v.get<uint64_t>());
            return;
        case json::value_t::number_integer: {
            int64_t x = v.get<int64_t>();
            if (x >= 0) {
                rte_tel_data_add_dict_u64(d, n, static_cast<uint64_t>(x));
            } else if (x >= INT_MIN) {
                rte_tel_data_add_dict_int(d, n, static_cast<int>(x));
            } else {
                rte_tel_data_add_dict_string(d, n, dump_line(v).c_str());
            }
            return;
        }
        case json::value_t::object:
        case json::value_t::array: {
            rte_tel_data *child = rte_tel_data_alloc();
            if (child != nullptr) {
                if (fill_container(v, child) == 0 &&
                    rte_tel_data_add_dict_container(d, n, child, 0) >= 0)
                    return;
                rte_tel_data_free(child);
            }
            rte_tel_data_add_dict_string(d, n, dump_line(v).c_str());
            return;
        }
        default:  // float, null, binary
            rte_tel_data_add_dict_string(d, n, dump_line(v).c_str());
            return;
    }
}

// Fills d with an object or array; -ENOSPC when it has more entries than a container holds.
int fill_container(const json &j, rte_tel_data *d) {
    if (j.is_object()) {
        if (j.size() > RTE_TEL_MAX_DICT_ENTRIES) return -ENOSPC;
        rte_tel_data_start_dict(d);
        for (const auto &[k, v] : j.items()) add_dict_value(d, tel_name(k), v);
        return 0;
    }
    if (!j.is_array()) return -EINVAL;
    switch (array_kind(j)) {
        case ArrayKind::kString:
            rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
            for (const auto &v : j)
                rte_tel_data_add_array_string(d, v.get_ref<const std::string &>().c_str());
            return 0;
        case ArrayKind::kU64:
            rte_tel_data_start_array(d, RTE_TEL_U64_VAL);
            for (const auto &v : j) rte_tel_data_add_array_u64(d, v.get<uint64_t>());
            return 0;
        case ArrayKind::kInt:
            rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
            for (const auto &v : j)
                rte_tel_data_add_array_int(d,
                                           v.is_boolean() ? (v.get<bool>() ? 1 : 0) : v.get<int>());
            return 0;
        case ArrayKind::kOther:
            break;
    }
    // 22.11 arrays hold only scalars and scalar arrays; a dict keyed by index keeps the rest.
    if (j.size() > RTE_TEL_MAX_DICT_ENTRIES) return -ENOSPC;
    rte_tel_data_start_dict(d);
    for (size_t i = 0; i < j.size(); i++) add_dict_value(d, std::to_string(i), j[i]);
    return 0;
}

void tel_error(rte_tel_data *d, const std::string &msg) {
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_string(d, "error", msg.c_str());
}

int telemetry_callback(const char *cmd, const char *params, rte_tel_data *d) {
    std::string name = cmd != nullptr ? cmd : "";
    const size_t plen = std::strlen(kTelemetryPrefix);
    if (name.compare(0, plen, kTelemetryPrefix) == 0) name.erase(0, plen);
    std::vector<std::string> args;
    if (params != nullptr && *params != '\0') {
        std::string p = params;
        size_t pos = 0;
        for (;;) {
            size_t comma = p.find(',', pos);
            args.push_back(
                p.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
            if (comma == std::string::npos) break;
            pos = comma + 1;
        }
    }
    std::lock_guard<std::mutex> lk(g_bridge_mutex);
    if (g_bridged == nullptr) {
        tel_error(d, "the rocesw control server is not running");
        return 0;
    }
    json r = g_bridged->dispatch(name, args, Access::read_only);
    if (!r["ok"].get<bool>()) {
        tel_error(d, r["error"].get<std::string>());
        return 0;
    }
    try {
        return json_to_tel_data(r["data"], d) < 0 ? -1 : 0;
    } catch (const std::exception &e) {  // allocation failure while converting
        tel_error(d, std::string("internal error: ") + e.what());
        return 0;
    }
}

}  // namespace

int json_to_tel_data(const nlohmann::json &j, rte_tel_data *d) {
    if (j.is_object() || j.is_array()) {
        if (fill_container(j, d) == 0) return 0;
        return rte_tel_data_string(d, dump_line(j).c_str()) < 0 ? -EINVAL : 0;
    }
    const std::string s = j.is_string() ? j.get<std::string>() : dump_line(j);
    return rte_tel_data_string(d, s.c_str()) < 0 ? -EINVAL : 0;
}

int register_telemetry_commands(ControlServer &srv) {
    std::lock_guard<std::mutex> lk(g_bridge_mutex);
    g_bridged = &srv;
    int added = 0;
    for (const auto &[name, help, access] : srv.commands()) {
        if (access != Access::read_only) continue;  // DPDK telemetry stays read-only
        std::string tel = kTelemetryPrefix + name;
        if (g_registered.count(tel) != 0) continue;
        if (tel.size() >= kTelemetryMaxCmdLen) {
            spdlog::warn("telemetry: command name {} is too long for rte_telemetry; not registered",
                         tel);
            continue;
        }
        std::string h = help.substr(0, RTE_TEL_MAX_STRING_LEN - 1);
        auto [it, inserted] = g_registered.emplace(tel, h);
        int rc =
            rte_telemetry_register_cmd(it->first.c_str(), telemetry_callback, it->second.c_str());
        if (rc != 0) {
            spdlog::warn("telemetry: cannot register {}: {}", tel, errno_str(-rc));
            g_registered.erase(it);
            continue;
        }
        added++;
    }
    return added;
}

}  // namespace rocesw
