// PromExporter over a real loopback socket: GET /metrics serves the registry, other methods
// are refused with 405, unknown paths get 404, a busy port is reported. Also the TraceWriter.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "metrics/metrics.h"
#include "telemetry/prom_exporter.h"
#include "telemetry/trace.h"

namespace rocesw {
namespace {

// Sends one raw HTTP request to 127.0.0.1:port and returns the whole response.
std::string http(int port, const std::string &request) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return "";
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string out;
    if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 &&
        write(fd, request.data(), request.size()) == ssize_t(request.size())) {
        char buf[4096];
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
    }
    ::close(fd);
    return out;
}

std::string req(const std::string &method, const std::string &path) {
    return method + " " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" +
           "Content-Length: 0\r\n\r\n";
}

// One server for the suite: civetweb's mg_stop takes up to two seconds (its listener polls
// with that timeout), so starting one per test would only slow the suite down.
class PromExporterTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        reg = new MetricRegistry;
        reg->counter("rocesw_port_rx_packets_total", "Packets received", [](MetricSink &s) {
            s.sample({{"port", "p0"}}, rx.load());
        });
        exp = new PromExporter(*reg);
        std::string err;
        ASSERT_TRUE(exp->start("127.0.0.1:0", &err)) << err;
        ASSERT_GT(exp->port(), 0);
    }
    static void TearDownTestSuite() {
        delete exp;
        delete reg;
    }
    static inline MetricRegistry *reg = nullptr;
    static inline PromExporter *exp = nullptr;
    static inline std::atomic<uint64_t> rx{41};
};

TEST_F(PromExporterTest, GetMetricsServesTheRegistry) {
    std::string r = http(exp->port(), req("GET", "/metrics"));
    EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
    EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << r;
    EXPECT_NE(r.find("# TYPE rocesw_port_rx_packets_total counter\n"), std::string::npos);
    EXPECT_NE(r.find("rocesw_port_rx_packets_total{port=\"p0\"} 41\n"), std::string::npos);
    const uint64_t before = exp->scrapes();
    rx = 42;
    r = http(exp->port(), req("GET", "/metrics"));
    EXPECT_NE(r.find("rocesw_port_rx_packets_total{port=\"p0\"} 42\n"), std::string::npos);
    EXPECT_EQ(exp->scrapes(), before + 1);
}

TEST_F(PromExporterTest, RefusesEveryMethodButGet) {
    for (const char *m : {"POST", "PUT", "DELETE", "PATCH"}) {
        std::string r = http(exp->port(), req(m, "/metrics"));
        EXPECT_EQ(r.rfind("HTTP/1.1 405", 0), 0u) << m << ": " << r;
        EXPECT_NE(r.find("Allow: GET"), std::string::npos) << r;
    }
    EXPECT_GE(exp->refused(), 4u);
}

TEST_F(PromExporterTest, UnknownPathIs404) {
    std::string r = http(exp->port(), req("GET", "/admin"));
    EXPECT_EQ(r.rfind("HTTP/1.1 404", 0), 0u) << r;
}

TEST_F(PromExporterTest, BusyPortIsAnError) {
    PromExporter other(*reg);
    std::string err;
    EXPECT_FALSE(other.start("127.0.0.1:" + std::to_string(exp->port()), &err));
    EXPECT_NE(err.find("cannot serve metrics on 127.0.0.1:"), std::string::npos) << err;
}

TEST(TraceWriter, WritesSamplesAndDrainsWorkerRings) {
    char path[] = "/tmp/rocesw_trace_test_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ::close(fd);
    {
        TraceWriter tw({"p0", "p1"}, 2);
        std::string err;
        ASSERT_TRUE(tw.open(path, &err)) << err;
        tw.write({1000, 4096, 1, 3, TraceKind::queue_bytes});
        EXPECT_TRUE(tw.ring(1).push({2000, 1, 0, 3, TraceKind::pfc_xoff_sent}));
        EXPECT_EQ(tw.drain(), 1u);
        for (size_t i = 0; i < TraceRing::kCapacity + 5; i++)
            tw.ring(0).push({3000, 0, 0, 0, TraceKind::ecn_mark_sample});
        EXPECT_EQ(tw.lost(), 5u);
        EXPECT_EQ(tw.drain(), TraceRing::kCapacity);
        EXPECT_EQ(tw.written(), TraceRing::kCapacity + 2);
    }
    std::ifstream in(path);
    std::string l1, l2, l3;
    std::getline(in, l1);
    std::getline(in, l2);
    std::getline(in, l3);
    EXPECT_EQ(l1, "time_ns,event,port,id,value");
    EXPECT_EQ(l2, "1000,queue_bytes,p1,3,4096");
    EXPECT_EQ(l3, "2000,pfc_xoff_sent,p0,3,1");
    std::remove(path);
}

// Two worker threads push into their rings while the control thread drains them to the file
// (the case tools/sanitize runs under TSan): every event is written once or counted lost, and
// each worker's events come out in the order it pushed them.
TEST(TraceThreads, WorkersPushWhileTheControlThreadDrains) {
    char path[] = "/tmp/rocesw_trace_threads_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ::close(fd);
    constexpr uint64_t kEvents = 20000;
    uint64_t written = 0, lost = 0;
    {
        TraceWriter tw({"p0", "p1"}, 2);
        std::string err;
        ASSERT_TRUE(tw.open(path, &err)) << err;
        std::atomic<int> running{2};
        auto worker = [&](uint16_t w) {
            for (uint64_t i = 1; i <= kEvents; i++) {
                tw.ring(w).push({i, i, w, w, TraceKind::queue_bytes});
                if (i % 256 == 0) std::this_thread::yield();
            }
            running--;
        };
        std::thread w0(worker, 0), w1(worker, 1);
        while (running.load() > 0) tw.drain();
        w0.join();
        w1.join();
        tw.drain();
        written = tw.written();
        lost = tw.lost();
    }
    EXPECT_EQ(written + lost, 2 * kEvents);
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "time_ns,event,port,id,value");
    uint64_t lines = 0, last[2] = {0, 0};
    while (std::getline(in, line)) {
        lines++;
        unsigned long long t = 0, v = 0;
        char port[8] = {};
        unsigned id = 0;
        ASSERT_EQ(std::sscanf(line.c_str(), "%llu,queue_bytes,%7[^,],%u,%llu", &t, port, &id, &v),
                  4)
            << line;
        ASSERT_LT(id, 2u);
        EXPECT_EQ(std::string(port), id ? "p1" : "p0");
        EXPECT_EQ(t, v);
        EXPECT_GT(t, last[id]) << line;  // in push order
        last[id] = t;
    }
    EXPECT_EQ(lines, written);
    std::remove(path);
}

}  // namespace
}  // namespace rocesw
