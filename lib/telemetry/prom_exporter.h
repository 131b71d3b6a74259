// PromExporter: serves a MetricRegistry over HTTP in the Prometheus text format.
//
// The HTTP server is civetweb (Debian's libcivetweb-dev, the server prometheus-cpp's own pull
// exposer embeds; doc/observability.md says why not prometheus-cpp). It runs on civetweb's own
// threads: a scrape renders the registry there, reading counters without locks, so neither the
// workers nor the control loop wait for a slow scraper.
//
//   GET /metrics   200, text/plain; version=0.0.4, the registry's exposition
//   GET /          200, a one-line pointer to /metrics
//   other paths    404
//   other methods  405 with "Allow: GET" (the endpoint is read-only)
//
// It listens on a kernel socket (default 127.0.0.1:9417). Data-plane ports are DPDK ports, not
// kernel interfaces, so the endpoint is never reachable through them.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

struct mg_context;
struct mg_connection;

namespace rocesw {

class MetricRegistry;

class PromExporter {
  public:
    explicit PromExporter(const MetricRegistry &registry) : registry_(registry) {}
    ~PromExporter();
    PromExporter(const PromExporter &) = delete;
    PromExporter &operator=(const PromExporter &) = delete;

    // `listen`: "host:port" (IPv6: "[addr]:port"); port 0 picks a free port. False with *err
    // (the server's message) when the address cannot be bound.
    bool start(const std::string &listen, std::string *err);
    // Stops the server and joins its threads. Idempotent; the destructor calls it.
    void stop();

    bool running() const { return ctx_ != nullptr; }
    int port() const { return port_; }  // the bound port, after start
    uint64_t scrapes() const { return scrapes_.load(std::memory_order_relaxed); }
    uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

  private:
    static int handle(mg_connection *conn, void *self);
    int handle(mg_connection *conn);

    const MetricRegistry &registry_;
    mg_context *ctx_ = nullptr;
    int port_ = 0;
    std::atomic<uint64_t> scrapes_{0}, refused_{0};
};

}  // namespace rocesw
