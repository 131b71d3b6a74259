// Fuzz target: the control-socket protocol (telemetry/control_protocol.h), both ends.
//
// Server: the input goes to a ControlServer over a real Unix socket, in chunks whose size
// data[0] chooses (0: at once; 1..7: that many bytes; else 8 times it; 0xff: the rest repeated
// past kControlMaxRequestBytes, the oversize path), one poll_once() per chunk, then the client
// shuts down writing. The server
// must answer with well-formed lines only, {"ok":true,"data":...} or
// {"ok":false,"error":"..."}, at most one per request line plus one oversize error, and then
// close the connection; nothing may throw out of it.
// Client: every input line that is JSON goes through rocectl's table rendering
// (format_table) for each command it knows; it must return text ending in a newline.
#include <spdlog/spdlog.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/control_client.h"
#include "telemetry/control_protocol.h"
#include "telemetry/control_server.h"

namespace {

using nlohmann::json;

struct Server {
    std::string dir;
    rocesw::ControlServer srv;
    Server() {
        spdlog::set_level(spdlog::level::off);  // "internal error" replies are logged
        char tmpl[] = "/tmp/rocesw-fuzz-ctl-XXXXXX";
        if (!::mkdtemp(tmpl)) std::abort();
        dir = tmpl;
        srv.add("echo", "its arguments", [](const std::vector<std::string> &a) {
            return json{{"args", a}};
        });
        srv.add("fail", "a user error", [](const std::vector<std::string> &) -> json {
            throw rocesw::CommandError("no such port 'p9'");
        });
        // Throws std::invalid_argument / std::out_of_range on bad text: an internal error.
        srv.add("num", "its first argument as a number", [](const std::vector<std::string> &a) {
            return json(std::stoul(a.at(0)));
        });
        srv.add("port_stats", "a subcommand ('port stats')",
                [](const std::vector<std::string> &a) { return json(a); });
        srv.add(rocesw::CommandSpec{"set", "mutating, not allowed", rocesw::Access::mutating,
                                    [](const std::vector<std::string> &) { return json(1); }});
        std::string err;
        if (!srv.listen(dir + "/fuzz.sock", &err)) std::abort();
    }
    ~Server() {
        srv.close();
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
};

void check_reply(std::string_view line) {
    json r = json::parse(line, nullptr, false);
    if (r.is_discarded() || !r.is_object() || r.size() != 2) std::abort();
    auto ok = r.find("ok");
    if (ok == r.end() || !ok->is_boolean()) std::abort();
    if (ok->get<bool>() ? !r.contains("data") : !r.contains("error") || !r["error"].is_string())
        std::abort();
}

void serve(const uint8_t *data, size_t size) {
    static Server s;
    std::string in;
    size_t chunk = size ? data[0] : 0;
    if (chunk == 0xff) {
        std::string_view unit(reinterpret_cast<const char *>(data + 1), size - 1);
        if (unit.empty()) unit = "x";
        while (in.size() <= rocesw::kControlMaxRequestBytes) in += unit;
        chunk = 0;
    } else if (size > 1) {
        in.assign(reinterpret_cast<const char *>(data + 1), size - 1);
    }
    if (chunk >= 8) chunk *= 8;  // byte-sized chunks are slow; lines split anyway
    if (chunk == 0) chunk = in.size() + 1;

    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, s.srv.path().c_str(), sizeof(a.sun_path) - 1);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0) std::abort();

    std::string out;
    size_t sent = 0;
    bool shut = false, closed = false;
    for (int round = 0; !closed; round++) {
        if (round > 1000000) std::abort();  // the server neither answers nor closes
        if (sent < in.size()) {
            ssize_t n = ::send(fd, in.data() + sent, std::min(chunk, in.size() - sent),
                               MSG_NOSIGNAL);
            if (n > 0) sent += size_t(n);
            // The server closed after an oversize request: the rest cannot be sent.
            else if (n < 0 && errno != EAGAIN) sent = in.size();
        } else if (!shut) {
            ::shutdown(fd, SHUT_WR);
            shut = true;
        }
        s.srv.poll_once(0, 0);
        char buf[65536];
        for (;;) {
            ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
            if (n > 0) {
                out.append(buf, size_t(n));
                continue;
            }
            if (n == 0 || (errno != EAGAIN && errno != EINTR)) closed = true;
            break;
        }
    }
    ::close(fd);
    if (s.srv.client_count() != 0) std::abort();

    size_t requests = 0;
    for (char c : in) requests += c == '\n';
    size_t replies = 0, start = 0;
    for (size_t nl; (nl = out.find('\n', start)) != std::string::npos; start = nl + 1) {
        check_reply(std::string_view(out).substr(start, nl - start));
        replies++;
    }
    if (start != out.size()) std::abort();  // a reply without its newline
    if (replies > requests + 1) std::abort();
}

void render(const uint8_t *data, size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    for (size_t start = 0; start <= text.size();) {
        size_t nl = text.find('\n', start);
        if (nl == std::string_view::npos) nl = text.size();
        json j = json::parse(text.substr(start, nl - start), nullptr, false);
        start = nl + 1;
        if (j.is_discarded()) continue;
        for (const char *cmd : {"ports", "routes", "neighbours", "drops", "workers", "queues",
                                "ecn", "info", "punt", "control", "help", "other"}) {
            std::string t = rocesw::format_table(cmd, j);
            if (t.empty() || t.back() != '\n') std::abort();
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    serve(data, size);
    render(data, size);
    return 0;
}
