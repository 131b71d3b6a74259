#include "watch.h"

#include <signal.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <thread>

namespace rocesw {

using nlohmann::json;

namespace {

volatile sig_atomic_t g_stop = 0;
void on_signal(int) {
    g_stop = 1;
}

uint64_t u(const json &j, const char *key) {
    auto it = j.find(key);
    return it != j.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

// Per-second rate of a counter between two samples; null on the first frame or a reset.
json rate(uint64_t now, const json *prev_obj, const char *key, double dt) {
    if (!prev_obj || dt <= 0) return nullptr;
    uint64_t before = u(*prev_obj, key);
    if (now < before) return nullptr;
    return double(now - before) / dt;
}

const json *find_port(const json *ports, const std::string &name) {
    if (!ports || !ports->contains("ports")) return nullptr;
    for (const auto &p : (*ports)["ports"])
        if (p.value("name", "") == name) return &p;
    return nullptr;
}

const json *find_queue(const json *queues, const std::string &port, uint64_t q) {
    if (!queues || !queues->contains("queues")) return nullptr;
    for (const auto &e : (*queues)["queues"])
        if (e.value("port", "") == port && u(e, "queue") == q) return &e;
    return nullptr;
}

// j[key] when it is an array, else an empty array: a reference that outlives the loop, so
// pointers into it stay valid (json::value() would return a temporary copy).
const json &array_at(const json &j, const char *key) {
    static const json empty = json::array();
    if (!j.is_object()) return empty;
    auto it = j.find(key);
    return it != j.end() && it->is_array() ? *it : empty;
}

bool wanted(const WatchOptions &opt, const std::string &port) {
    if (opt.ports.empty()) return true;
    for (const auto &p : opt.ports)
        if (p == port) return true;
    return false;
}

std::string num(const json &v, double scale = 1.0, int prec = 0) {
    if (!v.is_number()) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", prec, v.get<double>() / scale);
    return buf;
}

std::string pad(const std::string &s, size_t w, bool left = false) {
    if (s.size() >= w) return s;
    return left ? s + std::string(w - s.size(), ' ') : std::string(w - s.size(), ' ') + s;
}

}  // namespace

json watch_frame(const json &ports, const json &queues, const json *prev_ports,
                 const json *prev_queues, double dt, const WatchOptions &opt) {
    json fp = json::array(), fq = json::array();
    for (const auto &p : array_at(ports, "ports")) {
        std::string name = p.value("name", "?");
        if (!wanted(opt, name)) continue;
        const json *pp = find_port(prev_ports, name);
        auto bits = [&](const char *key) -> json {
            json r = rate(u(p, key), pp, key, dt);
            return r.is_null() ? r : json(r.get<double>() * 8);
        };
        fp.push_back({{"port", name},
                      {"link_up", p.contains("link") ? p["link"].value("up", false) : false},
                      {"rx_packets", u(p, "rx_packets")},
                      {"tx_packets", u(p, "tx_packets")},
                      {"drops", u(p, "drops")},
                      {"rx_pps", rate(u(p, "rx_packets"), pp, "rx_packets", dt)},
                      {"tx_pps", rate(u(p, "tx_packets"), pp, "tx_packets", dt)},
                      {"rx_bps", bits("rx_bytes")},
                      {"tx_bps", bits("tx_bytes")},
                      {"drops_ps", rate(u(p, "drops"), pp, "drops", dt)}});
    }
    for (const auto &q : array_at(queues, "queues")) {
        std::string port = q.value("port", "?");
        if (!wanted(opt, port)) continue;
        if (!opt.all_queues && u(q, "enq_packets") == 0 && u(q, "drops") == 0) continue;
        const json *pq = find_queue(prev_queues, port, u(q, "queue"));
        fq.push_back({{"port", port},
                      {"queue", u(q, "queue")},
                      {"depth_bytes", u(q, "depth_bytes")},
                      {"depth_packets", u(q, "depth_packets")},
                      {"watermark_bytes", u(q, "watermark_bytes")},
                      {"ecn_marked", u(q, "ecn_marked")},
                      {"drops", u(q, "drops")},
                      {"enq_pps", rate(u(q, "enq_packets"), pq, "enq_packets", dt)},
                      {"ecn_ps", rate(u(q, "ecn_marked"), pq, "ecn_marked", dt)},
                      {"drops_ps", rate(u(q, "drops"), pq, "drops", dt)}});
    }
    return {{"interval_s", dt}, {"ports", fp}, {"queues", fq}};
}

json watch_pfc_rows(const json &pfc, const json *prev_pfc, double dt, const WatchOptions &opt) {
    json rows = json::array();
    for (const auto &p : array_at(pfc, "ports")) {
        std::string port = p.value("port", "?");
        if (!wanted(opt, port)) continue;
        const json *pp = nullptr;
        if (prev_pfc)
            for (const auto &x : array_at(*prev_pfc, "ports"))
                if (x.value("port", "") == port) pp = &x;
        for (const auto &pr : array_at(p, "priorities")) {
            uint64_t prio = u(pr, "priority");
            const json *ppr = nullptr;
            if (pp)
                for (const auto &x : array_at(*pp, "priorities"))
                    if (u(x, "priority") == prio) ppr = &x;
            bool now_rx = pr.value("rx_paused_now", false),
                 now_tx = pr.value("tx_pausing_now", false);
            if (!opt.all_queues && !now_rx && !now_tx && u(pr, "rx_pause") == 0 &&
                u(pr, "tx_pause") == 0)
                continue;
            rows.push_back({{"port", port},
                            {"priority", prio},
                            {"rx_pause", u(pr, "rx_pause")},
                            {"tx_pause", u(pr, "tx_pause")},
                            {"rx_pause_ps", rate(u(pr, "rx_pause"), ppr, "rx_pause", dt)},
                            {"tx_pause_ps", rate(u(pr, "tx_pause"), ppr, "tx_pause", dt)},
                            {"rx_paused_now", now_rx},
                            {"tx_pausing_now", now_tx},
                            {"rx_pause_us", u(pr, "rx_pause_us")},
                            {"tx_pause_us", u(pr, "tx_pause_us")}});
        }
    }
    return rows;
}

std::string format_watch(const json &frame, const WatchOptions &opt) {
    std::ostringstream o;
    o << pad("PORT", 10, true) << pad("LINK", 5) << pad("RX pps", 11) << pad("TX pps", 11)
      << pad("RX Mb/s", 10) << pad("TX Mb/s", 10) << pad("DROPS", 12) << pad("DROPS/s", 10) << "\n";
    for (const auto &p : frame["ports"])
        o << pad(p["port"].get<std::string>(), 10, true)
          << pad(p["link_up"].get<bool>() ? "up" : "down", 5) << pad(num(p["rx_pps"]), 11)
          << pad(num(p["tx_pps"]), 11) << pad(num(p["rx_bps"], 1e6, 2), 10)
          << pad(num(p["tx_bps"], 1e6, 2), 10)
          << pad(std::to_string(p["drops"].get<uint64_t>()), 12) << pad(num(p["drops_ps"]), 10)
          << "\n";
    o << "\n"
      << pad("PORT", 10, true) << pad("Q", 3) << pad("DEPTH KB", 10) << pad("PKTS", 7)
      << pad("WMARK KB", 10) << pad("ENQ pps", 10) << pad("ECN", 11) << pad("ECN/s", 9)
      << pad("DROPS", 10) << pad("DROPS/s", 9) << "\n";
    if (frame["queues"].empty())
        o << (opt.all_queues ? "(no queues)\n" : "(no queue has held a packet yet)\n");
    for (const auto &q : frame["queues"])
        o << pad(q["port"].get<std::string>(), 10, true)
          << pad(std::to_string(q["queue"].get<uint64_t>()), 3)
          << pad(num(q["depth_bytes"], 1e3, 1), 10)
          << pad(std::to_string(q["depth_packets"].get<uint64_t>()), 7)
          << pad(num(q["watermark_bytes"], 1e3, 1), 10) << pad(num(q["enq_pps"]), 10)
          << pad(std::to_string(q["ecn_marked"].get<uint64_t>()), 11) << pad(num(q["ecn_ps"]), 9)
          << pad(std::to_string(q["drops"].get<uint64_t>()), 10) << pad(num(q["drops_ps"]), 9)
          << "\n";
    if (frame.contains("pfc")) {
        o << "\n"
          << pad("PORT", 10, true) << pad("PRIO", 5) << pad("RX XOFF", 10) << pad("RX/s", 8)
          << pad("PAUSED", 8) << pad("RX ms", 10) << pad("TX XOFF", 10) << pad("TX/s", 8)
          << pad("PAUSING", 8) << pad("TX ms", 10) << "\n";
        if (frame["pfc"].empty()) o << "(no PFC pause sent or received yet)\n";
        for (const auto &r : frame["pfc"])
            o << pad(r["port"].get<std::string>(), 10, true)
              << pad(std::to_string(r["priority"].get<uint64_t>()), 5)
              << pad(std::to_string(r["rx_pause"].get<uint64_t>()), 10)
              << pad(num(r["rx_pause_ps"]), 8)
              << pad(r["rx_paused_now"].get<bool>() ? "yes" : "-", 8)
              << pad(num(r["rx_pause_us"], 1e3, 1), 10)
              << pad(std::to_string(r["tx_pause"].get<uint64_t>()), 10)
              << pad(num(r["tx_pause_ps"]), 8)
              << pad(r["tx_pausing_now"].get<bool>() ? "yes" : "-", 8)
              << pad(num(r["tx_pause_us"], 1e3, 1), 10) << "\n";
    }
    return o.str();
}

int run_watch(ControlClient &client, const WatchOptions &opt, const std::string &name) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);

    bool has_pfc = false;  // the switch serves a "pfc" view (pause counters per priority)
    {
        ControlReply r;
        std::string err;
        if (client.request("help", {}, &r, &err) == ControlStatus::kOk && r.ok && r.data.is_array())
            for (const auto &c : r.data)
                if (c.is_object() && c.value("cmd", "") == "pfc") has_pfc = true;
    }
    json prev_ports, prev_queues, prev_pfc;
    bool have_prev = false;
    auto prev_t = std::chrono::steady_clock::now();
    for (long frame = 0; !g_stop && (opt.count == 0 || frame < opt.count); frame++) {
        if (frame > 0) {
            // Sleep in short slices so Ctrl-C ends the view at once.
            auto until = prev_t + std::chrono::duration<double>(opt.interval_s);
            while (!g_stop && std::chrono::steady_clock::now() < until)
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            if (g_stop) break;
        }
        ControlReply rp, rq;
        std::string err;
        auto t = std::chrono::steady_clock::now();
        ControlStatus s1 = client.request("ports", {}, &rp, &err);
        ControlStatus s2 = s1 == ControlStatus::kOk ? client.request("queues", {}, &rq, &err) : s1;
        if (g_stop) break;
        if (s1 != ControlStatus::kOk || s2 != ControlStatus::kOk) {
            std::cerr << "rocectl watch: " << err << "\n";
            return 3;
        }
        if (!rp.ok || !rq.ok) {
            std::cerr << "rocectl watch: " << (rp.ok ? rq.error : rp.error) << "\n";
            return 1;
        }
        double dt = std::chrono::duration<double>(t - prev_t).count();
        json f = watch_frame(rp.data, rq.data, have_prev ? &prev_ports : nullptr,
                             have_prev ? &prev_queues : nullptr, dt, opt);
        if (has_pfc) {
            ControlReply rf;
            if (client.request("pfc", {}, &rf, &err) != ControlStatus::kOk) {
                std::cerr << "rocectl watch: " << err << "\n";
                return 3;
            }
            if (rf.ok && rf.data.is_object()) {
                f["pfc"] = watch_pfc_rows(rf.data, have_prev ? &prev_pfc : nullptr, dt, opt);
                prev_pfc = std::move(rf.data);
            }
        }
        prev_ports = std::move(rp.data);
        prev_queues = std::move(rq.data);
        prev_t = t;
        have_prev = true;
        if (opt.json) {
            f["switch"] = name;
            f["time"] = double(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count()) /
                        1000.0;
            std::cout << f.dump() << "\n";
        } else {
            time_t now = time(nullptr);
            char ts[32];
            strftime(ts, sizeof ts, "%H:%M:%S", localtime(&now));
            if (opt.clear_screen)
                std::cout << "\033[H\033[2J";
            else if (frame > 0)
                std::cout << "\n";
            std::cout << "rocesw " << name << "  " << ts << "  every " << opt.interval_s << " s"
                      << (opt.clear_screen ? "  (Ctrl-C quits)" : "") << "\n\n"
                      << format_watch(f, opt);
        }
        std::cout.flush();
        if (!std::cout) return 1;
    }
    return 0;
}

}  // namespace rocesw
