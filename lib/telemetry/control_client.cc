#include "telemetry/control_client.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string_view>
#include <thread>

#include "telemetry/control_protocol.h"

namespace rocesw {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
    // Rounded up: poll() must not return before the deadline and report a timeout early.
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

std::string timeout_text(int timeout_ms) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g s", timeout_ms / 1000.0);
    return buf;
}

}  // namespace

ControlClient::~ControlClient() {
    close();
}

void ControlClient::close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    buf_.clear();
}

bool ControlClient::connect(const std::string &path, std::string *err, int timeout_ms) {
    close();
    path_ = path;
    errno_ = 0;
    sockaddr_un addr;
    std::memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
        errno_ = ENAMETOOLONG;
        if (err) *err = "cannot connect to " + path + ": " + std::strerror(errno_);
        return false;
    }
    std::memcpy(addr.sun_path, path.data(), path.size());
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        errno_ = errno;
        if (err) *err = "cannot connect to " + path + ": " + std::strerror(errno_);
        return false;
    }
    // A Unix connect blocks only while the server's backlog is full; SO_SNDTIMEO bounds that.
    timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    int rc;
    do {
        rc = ::connect(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof(addr));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        errno_ = errno;
        ::close(fd);
        if (err) *err = "cannot connect to " + path + ": " + std::strerror(errno_);
        return false;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    fd_ = fd;
    return true;
}

ControlStatus ControlClient::send_raw(std::string_view bytes, std::string *err, int timeout_ms) {
    if (fd_ < 0) {
        if (err) *err = "not connected";
        return ControlStatus::kIoError;
    }
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    size_t off = 0;
    while (off < bytes.size()) {
        ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
        if (n > 0) {
            off += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd p{fd_, POLLOUT, 0};
            int left = remaining_ms(deadline);
            if (left == 0 || ::poll(&p, 1, left) == 0) {
                if (err) *err = "timed out sending to " + path_;
                return ControlStatus::kTimeout;
            }
            continue;
        }
        if (err) *err = "cannot send to " + path_ + ": " + std::strerror(errno);
        return ControlStatus::kIoError;
    }
    return ControlStatus::kOk;
}

ControlStatus ControlClient::read_reply(ControlReply *reply, std::string *err, int timeout_ms) {
    if (fd_ < 0) {
        if (err) *err = "not connected";
        return ControlStatus::kIoError;
    }
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    size_t scanned = 0;
    size_t nl;
    while ((nl = buf_.find('\n', scanned)) == std::string::npos) {
        scanned = buf_.size();
        pollfd p{fd_, POLLIN, 0};
        int left = remaining_ms(deadline);
        int rc = left > 0 ? ::poll(&p, 1, left) : 0;
        if (rc < 0 && errno == EINTR) continue;
        if (rc == 0) {
            if (err) *err = "no reply from " + path_ + " within " + timeout_text(timeout_ms);
            return ControlStatus::kTimeout;
        }
        char chunk[65536];
        ssize_t n = ::read(fd_, chunk, sizeof(chunk));
        if (n > 0) {
            buf_.append(chunk, static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (err) {
            *err = n == 0 ? "connection closed by " + path_
                          : "cannot read from " + path_ + ": " + std::strerror(errno);
        }
        return ControlStatus::kIoError;
    }
    std::string line = buf_.substr(0, nl);
    buf_.erase(0, nl + 1);
    json r = json::parse(line, nullptr, false);
    auto ok = r.is_object() ? r.find("ok") : r.end();
    if (r.is_discarded() || !r.is_object() || ok == r.end() || !ok->is_boolean()) {
        if (err) *err = "malformed reply from " + path_;
        return ControlStatus::kBadReply;
    }
    reply->ok = ok->get<bool>();
    reply->data = reply->ok && r.contains("data") ? r["data"] : json();
    reply->error.clear();
    if (!reply->ok) {
        auto e = r.find("error");
        reply->error = e != r.end() && e->is_string() ? e->get<std::string>() : "unknown error";
    }
    return ControlStatus::kOk;
}

ControlStatus ControlClient::request(const std::string &cmd, const std::vector<std::string> &args,
                                     ControlReply *reply, std::string *err, int timeout_ms) {
    const auto start = Clock::now();
    json req = {{"cmd", cmd}, {"args", args}};
    std::string line = req.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    std::string send_err;
    ControlStatus s = send_raw(line, &send_err, timeout_ms);
    if (s == ControlStatus::kTimeout) {
        if (err) *err = send_err;
        return s;
    }
    // Even when the send failed (the server closes on an oversize request), its error reply
    // may already be waiting: read it before reporting the send error.
    int elapsed = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
    std::string read_err;
    ControlStatus r = read_reply(reply, &read_err, std::max(timeout_ms - elapsed, 0));
    if (r != ControlStatus::kOk && s != ControlStatus::kOk) {
        if (err) *err = send_err;
        return s;
    }
    if (r != ControlStatus::kOk && err) *err = read_err;
    return r;
}

bool control_busy(const ControlReply &r) {
    return !r.ok && std::string_view(r.error).starts_with(kControlBusyError);
}

ControlStatus ControlClient::call(const std::string &path, const std::string &cmd,
                                  const std::vector<std::string> &args, ControlReply *reply,
                                  std::string *err, bool *no_server, int timeout_ms) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    std::minstd_rand jitter(uint32_t(std::chrono::steady_clock::now().time_since_epoch().count()));
    *no_server = false;
    for (int wait_ms = 5;; wait_ms = std::min(wait_ms * 2, 200)) {
        const int left = remaining_ms(deadline);
        if (!connect(path, err, std::max(left, 1))) {
            *no_server = true;
            return ControlStatus::kIoError;
        }
        const ControlStatus s = request(cmd, args, reply, err, std::max(remaining_ms(deadline), 1));
        // Waits of 3/4 to all of wait_ms: clients refused together come back apart.
        const int pause = wait_ms - int(jitter() % uint32_t(wait_ms / 4 + 1));
        if (s != ControlStatus::kOk || !control_busy(*reply) || remaining_ms(deadline) <= pause)
            return s;
        close();
        std::this_thread::sleep_for(std::chrono::milliseconds(pause));
    }
}

std::string default_control_socket() {
    const char *env = std::getenv("ROCESW_SOCKET");
    if (env != nullptr && *env != '\0') return env;
    return control_socket_for_name(kControlDefaultName);
}

std::string control_socket_for_name(const std::string &name) {
    return std::string(kControlSocketDir) + "/" + name + ".sock";
}

// ---------------------------------------------------------------------------------------------
// Tables

namespace {

struct Table {
    std::vector<std::string> headers;
    std::vector<bool> right;  // right-align this column (numbers)
    std::vector<std::vector<std::string>> rows;

    std::string render() const {
        std::vector<size_t> width(headers.size());
        for (size_t i = 0; i < headers.size(); i++) width[i] = headers[i].size();
        for (const auto &r : rows)
            for (size_t i = 0; i < r.size() && i < width.size(); i++)
                width[i] = std::max(width[i], r[i].size());
        std::string out;
        auto line = [&](const std::vector<std::string> &cells) {
            std::string l;
            for (size_t i = 0; i < headers.size(); i++) {
                const std::string &cell = i < cells.size() ? cells[i] : std::string();
                if (i > 0) l += "  ";
                std::string pad(width[i] - cell.size(), ' ');
                l += right[i] ? pad + cell : cell + pad;
            }
            l.erase(l.find_last_not_of(' ') + 1);
            out += l + "\n";
        };
        line(headers);
        for (const auto &r : rows) line(r);
        return out;
    }
};

// A scalar as text: strings without quotes, bools as yes/no, missing or null as "-".
std::string text(const json &v) {
    if (v.is_null()) return "-";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

const json &field(const json &obj, const char *key) {
    static const json null_value;
    if (!obj.is_object()) return null_value;
    auto it = obj.find(key);
    return it == obj.end() ? null_value : *it;
}

std::string text(const json &obj, const char *key) {
    return text(field(obj, key));
}

std::string speed_text(const json &mbps) {
    if (!mbps.is_number() || mbps.get<double>() <= 0) return "";
    double m = mbps.get<double>();
    char buf[32];
    if (m < 1000) {
        std::snprintf(buf, sizeof(buf), "%gM", m);
    } else {
        std::snprintf(buf, sizeof(buf), "%gG", m / 1000);
    }
    return buf;
}

std::string join(const std::vector<std::string> &v, const char *sep) {
    std::string s;
    for (size_t i = 0; i < v.size(); i++) s += (i ? sep : "") + v[i];
    return s;
}

// The array under data[key], or nullptr when data is not shaped like that.
const json *list(const json &data, const char *key) {
    const json &l = field(data, key);
    return l.is_array() ? &l : nullptr;
}

std::string ports_view(const json &ports) {
    Table cfg{{"IDX", "NAME", "DEVICE", "MAC", "MTU", "LINK", "ADDRESSES"},
              {true, false, false, false, true, false, false},
              {}};
    Table ctr{{"NAME", "RX-PKTS", "RX-BYTES", "TX-PKTS", "TX-BYTES", "RX-MISSED", "RX-NOMBUF",
               "DROPS", "LOCAL"},
              {false, true, true, true, true, true, true, true, true},
              {}};
    for (const auto &p : ports) {
        std::string link = "-";
        const json &l = field(p, "link");
        if (l.is_object() && field(l, "up").is_boolean()) {
            if (field(l, "up").get<bool>()) {
                std::string speed = speed_text(field(l, "speed_mbps"));
                if (speed.empty()) speed = speed_text(field(p, "speed_mbps"));
                // Appended piece by piece: " " + string is a prepend into the temporary, where
                // GCC 12 at -O3 reports a bogus -Wrestrict overlap.
                link = "up";
                if (!speed.empty()) {
                    link += ' ';
                    link += speed;
                }
                if (field(l, "duplex").is_string()) {
                    link += ' ';
                    link += field(l, "duplex").get<std::string>();
                }
            } else {
                link = "down";
            }
        }
        std::vector<std::string> addrs;
        for (const char *fam : {"ipv4", "ipv6"}) {
            const json &a = field(p, fam);
            if (a.is_array())
                for (const auto &x : a) addrs.push_back(text(x));
        }
        cfg.rows.push_back({text(p, "index"), text(p, "name"), text(p, "device"), text(p, "mac"),
                            text(p, "mtu"), link, addrs.empty() ? "-" : join(addrs, ",")});
        ctr.rows.push_back({text(p, "name"), text(p, "rx_packets"), text(p, "rx_bytes"),
                            text(p, "tx_packets"), text(p, "tx_bytes"), text(p, "rx_missed"),
                            text(p, "rx_nombuf"), text(p, "drops"), text(p, "local_packets")});
    }
    // AF_XDP ports: what rocesw's XDP program sent to the switch and passed to the kernel.
    std::string xdp;
    for (const auto &p : ports) {
        const json &x = field(p, "af_xdp");
        if (!x.is_object()) continue;
        xdp += "xdp " + text(p, "name") + " (" + text(x, "interface") + ", " + text(x, "mode") +
               (field(x, "attach").is_string() ? ", " + text(x, "attach") + " XDP" : "") + "):";
        const json &c = field(x, "packets");
        if (c.is_object())
            for (auto it = c.begin(); it != c.end(); ++it)
                xdp += " " + it.key() + "=" + text(it.value());
        // Per-queue receive counts, when the port has several queues (spread over workers).
        const json &q = field(p, "rx_queue_packets");
        if (q.is_array() && q.size() > 1) {
            std::vector<std::string> v;
            for (const auto &n : q) v.push_back(text(n));
            xdp += " rx_queue_packets=" + join(v, "/");
        }
        xdp += "\n";
    }
    return cfg.render() + "\n" + ctr.render() + (xdp.empty() ? "" : "\n" + xdp);
}

std::string routes_view(const json &data, const json &routes) {
    Table t{{"PREFIX", "TYPE", "NH", "VIA", "PORT", "MAC", "RESOLVED"},
            {false, false, true, false, false, false, false},
            {}};
    for (const auto &r : routes) {
        const json &nh = field(r, "nexthop");
        // Learned routes show the kernel protocol they came from (bird, bgp, static, ...).
        std::string type = field(r, "origin").is_string() ? text(r, "origin") : text(r, "type");
        t.rows.push_back({text(r, "prefix"), type, text(nh, "id"), text(nh, "via"),
                          text(nh, "port"), text(nh, "mac"), text(nh, "resolved")});
    }
    std::string out = t.render();
    const json &counts = field(data, "counts");
    if (counts.is_object())
        out += "ipv4 routes: " + text(counts, "ipv4") + ", ipv6 routes: " + text(counts, "ipv6") +
               "\n";
    return out;
}

std::string punt_view(const json &data) {
    if (!field(data, "enabled").is_boolean() || !field(data, "enabled").get<bool>())
        return "punt path off (control_plane.host_interfaces: false)\n";
    Table c{{"CLASS", "RATE-PPS", "BURST", "PUNTED", "POLICED", "QUEUE-FULL"},
            {false, true, true, true, true, true},
            {}};
    if (const json *l = list(data, "classes"))
        for (const auto &x : *l)
            c.rows.push_back({text(x, "class"), text(x, "rate_pps"), text(x, "burst"),
                              text(x, "punted"), text(x, "policed"), text(x, "queue_full")});
    Table p{{"PORT", "IFINDEX", "PUNTED", "TO-KERNEL", "FAILED", "FROM-KERNEL", "DROPPED"},
            {false, true, true, true, true, true, true},
            {}};
    if (const json *l = list(data, "ports"))
        for (const auto &x : *l)
            p.rows.push_back({text(x, "port"), text(x, "ifindex"), text(x, "punted"),
                              text(x, "to_kernel"), text(x, "to_kernel_failed"),
                              text(x, "from_kernel"), text(x, "from_kernel_dropped")});
    return c.render() + "\n" + p.render();
}

std::string control_view(const json &data) {
    std::string out = "host interfaces: " + text(data, "host_interfaces") +
                      ", netlink sync: " + text(data, "netlink_sync") + "\n";
    Table r{{"SOURCE", "ROUTES"}, {false, true}, {}};
    const json &by = field(data, "routes_by_source");
    if (by.is_object())
        for (auto it = by.begin(); it != by.end(); ++it) r.rows.push_back({it.key(), text(it.value())});
    out += "\n" + r.render();
    const json &nl = field(data, "netlink");
    if (nl.is_object()) {
        Table n{{"NETLINK", "COUNT"}, {false, true}, {}};
        for (auto it = nl.begin(); it != nl.end(); ++it) n.rows.push_back({it.key(), text(it.value())});
        out += "\n" + n.render();
    }
    const json &lat = field(data, "sync_latency");
    if (lat.is_object())
        out += "\nnetlink -> FIB: " + text(lat, "batches") + " batches, last " +
               text(lat, "last_us") + " us, mean " + text(lat, "mean_us") + " us, max " +
               text(lat, "max_us") + " us\n";
    return out;
}

std::string neighbours_view(const json &neighbours) {
    Table t{{"IP", "MAC", "PORT", "SOURCE"}, {false, false, false, false}, {}};
    for (const auto &n : neighbours) {
        std::string source = text(n, "source");
        if (!field(n, "kernel_mac").is_null()) source += " (kernel: " + text(n, "kernel_mac") + ")";
        t.rows.push_back({text(n, "ip"), text(n, "mac"), text(n, "port"), source});
    }
    return t.render();
}

std::string drops_view(const json &data, const json &drops) {
    Table t{{"PORT", "REASON", "PACKETS", "DESCRIPTION"}, {false, false, true, false}, {}};
    for (const auto &d : drops)
        t.rows.push_back(
            {text(d, "port"), text(d, "reason"), text(d, "packets"), text(d, "description")});
    std::string out = t.render();
    if (!field(data, "total").is_null()) out += "total: " + text(data, "total") + "\n";
    return out;
}

// Two tables (received and sent terms), a row per port and a total row, then the verdict.
std::string accounting_view(const json &data, const json &ports) {
    Table in{{"PORT", "RX", "FORWARDED", "DROPPED", "LOCAL", "PUNTED", "DIFF"},
             {false, true, true, true, true, true, true},
             {}};
    Table out{{"PORT", "FORWARDED", "LOCAL-REPLIES", "PFC", "INJECTED", "TX", "DROPPED", "QUEUED",
               "DIFF"},
              {false, true, true, true, true, true, true, true, true},
              {}};
    auto row = [&](const std::string &name, const json &p) {
        const json &r = field(p, "received"), &s = field(p, "sent");
        in.rows.push_back({name, text(r, "rx"), text(r, "forwarded"), text(r, "dropped"),
                           text(r, "local"), text(r, "punted"), text(r, "difference")});
        out.rows.push_back({name, text(s, "forwarded"), text(s, "local_replies"),
                            text(s, "pfc_frames"), text(s, "injected"), text(s, "tx"),
                            text(s, "dropped"), text(s, "queued"), text(s, "difference")});
    };
    for (const auto &p : ports) row(text(p, "port"), p);
    if (field(data, "total").is_object()) row("total", field(data, "total"));
    std::string o = "received = forwarded + dropped + local + punted\n" + in.render();
    o += "forwarded + local replies + pfc + injected = tx + dropped + queued\n" + out.render();
    // Drops by reason, received side then sent side, from the total.
    const json &total = field(data, "total");
    for (const char *side : {"received", "sent"}) {
        const json &d = field(field(total, side), "drops");
        if (!d.is_object() || d.empty()) continue;
        std::vector<std::string> parts;
        for (const auto &[k, v] : d.items()) parts.push_back(k + " " + text(v));
        o += std::string(side) + " drops: " + join(parts, ", ") + "\n";
    }
    if (!field(data, "verdict").is_null()) o += "verdict: " + text(data, "verdict") + "\n";
    return o;
}

std::string queues_view(const json &queues) {
    Table t{{"PORT", "Q", "ENQ-PKTS", "DEQ-PKTS", "DEPTH-BYTES", "WATERMARK", "ECN-MARKED", "DROPS"},
            {false, true, true, true, true, true, true, true},
            {}};
    for (const auto &q : queues)
        t.rows.push_back({text(q, "port"), text(q, "queue"), text(q, "enq_packets"),
                          text(q, "deq_packets"), text(q, "depth_bytes"), text(q, "watermark_bytes"),
                          text(q, "ecn_marked"), text(q, "drops")});
    return t.render();
}

std::string ecn_view(const json &rows) {
    Table t{{"PORT", "Q", "LOSSLESS", "MARK-AT", "KMIN", "KMAX", "PMAX%", "DEPTH-BYTES",
             "WATERMARK", "ECN-MARKED", "WRED-DROPS"},
            {false, true, false, false, true, true, true, true, true, true, true},
            {}};
    for (const auto &r : rows) {
        const json &c = field(r, "mark_curve");
        const bool on = c.is_object();
        t.rows.push_back({text(r, "port"), text(r, "queue"),
                          field(r, "lossless").is_boolean() && field(r, "lossless").get<bool>()
                              ? "yes"
                              : "no",
                          on ? text(r, "mark_point") : "-", on ? text(c, "min_bytes") : "-",
                          on ? text(c, "max_bytes") : "-", on ? text(c, "max_probability_pct") : "-",
                          text(r, "depth_bytes"), text(r, "watermark_bytes"),
                          text(r, "ecn_marked"), text(r, "wred_drops")});
    }
    return t.render();
}

std::string workers_view(const json &workers) {
    Table t{{"ID", "LCORE", "QUEUES", "POLLS", "BUSY-POLLS", "BUSY%", "IDLE-SLEEPS"},
            {true, true, false, true, true, true, true},
            {}};
    for (const auto &w : workers) {
        std::vector<std::string> qs;
        const json &q = field(w, "queues");
        if (q.is_array())
            for (const auto &x : q) qs.push_back(text(x, "port") + "/" + text(x, "queue"));
        std::string busy = "-";
        const json &polls = field(w, "polls");
        const json &busy_polls = field(w, "busy_polls");
        if (polls.is_number() && busy_polls.is_number() && polls.get<double>() > 0) {
            char buf[32];
            std::snprintf(buf, sizeof(buf), "%.1f",
                          100.0 * busy_polls.get<double>() / polls.get<double>());
            busy = buf;
        }
        t.rows.push_back({text(w, "id"), text(w, "lcore"), qs.empty() ? "-" : join(qs, ","),
                          text(polls), text(busy_polls), busy, text(w, "idle_sleeps")});
    }
    return t.render();
}

std::string info_view(const json &info) {
    static const std::vector<std::string> order = {"name",     "version", "pid",
                                                   "uptime_s", "workers", "file_prefix"};
    std::vector<std::string> keys;
    for (const auto &k : order)
        if (info.contains(k)) keys.push_back(k);
    for (const auto &[k, v] : info.items())
        if (std::find(order.begin(), order.end(), k) == order.end()) keys.push_back(k);
    size_t w = 0;
    for (const auto &k : keys) w = std::max(w, k.size());
    std::string out;
    for (const auto &k : keys)
        out += k + ":" + std::string(w - k.size() + 2, ' ') + text(info[k]) + "\n";
    return out;
}

std::string help_view(const json &cmds) {
    Table t{{"COMMAND", "HELP"}, {false, false}, {}};
    for (const auto &c : cmds) t.rows.push_back({text(c, "cmd"), text(c, "help")});
    return t.render();
}

}  // namespace

std::string format_table(const std::string &cmd, const nlohmann::json &data) {
    const json *l = nullptr;
    if (cmd == "ports" && (l = list(data, "ports"))) return ports_view(*l);
    if (cmd == "routes" && (l = list(data, "routes"))) return routes_view(data, *l);
    if (cmd == "neighbours" && (l = list(data, "neighbours"))) return neighbours_view(*l);
    if (cmd == "drops" && (l = list(data, "drops"))) return drops_view(data, *l);
    if (cmd == "accounting" && (l = list(data, "ports"))) return accounting_view(data, *l);
    if (cmd == "workers" && (l = list(data, "workers"))) return workers_view(*l);
    if (cmd == "queues" && (l = list(data, "queues"))) return queues_view(*l);
    if (cmd == "ecn" && (l = list(data, "ecn"))) return ecn_view(*l);
    // An empty object has no line to print: it goes out as JSON ("{}"), never as nothing.
    if (cmd == "info" && data.is_object() && !data.empty()) return info_view(data);
    if (cmd == "punt" && data.is_object()) return punt_view(data);
    if (cmd == "control" && data.is_object()) return control_view(data);
    if (cmd == "help" && data.is_array()) return help_view(data);
    return data.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace rocesw
