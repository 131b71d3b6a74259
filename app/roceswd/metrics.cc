// Observability of the running switch: the process-level Prometheus families (switch, links and
// device counters from ethdev, latency, trace; the modules register theirs with their commands,
// see Switch::register_commands), the exporter, the event trace and "clear latency". Collect
// functions read single-writer counters without locks; the exporter renders on civetweb's
// thread, so a scrape never blocks a worker (ARCHITECTURE.md invariant 5). Adding a family: in
// the module that owns the data (its register_<module>_views), else here
// (doc/observability.md, "Adding a metric").
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

#include "switch.h"

namespace rocesw {

void Switch::register_metrics() {
    // The trace's rings exist from construction, so components can take trace_ring(w) when
    // they set up their workers; the file is opened when run() starts.
    std::vector<std::string> names;
    for (const auto &p : cfg_.ports) names.push_back(p.name);
    if (!cfg_.telemetry.trace_file.empty())
        trace_ = std::make_unique<TraceWriter>(names, workers_.size());
    MetricRegistry &m = metrics_;
    const size_t n_ports = cfg_.ports.size();
    auto port_name = [this](size_t i) -> const std::string & { return cfg_.ports[i].name; };

    // --- Switch ---
    m.gauge("rocesw_info", "Constant 1, labelled with the switch name and version",
            [this](MetricSink &s) {
                s.sample({{"name", cfg_.sw.name}, {"version", ROCESW_VERSION}}, 1);
            });
    m.gauge("rocesw_uptime_seconds", "Seconds since the switch started", [this](MetricSink &s) {
        s.sample(
            {}, std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count());
    });

    // The mbuf pool (view_mbufs): in use = size - available (per-lcore caches are available).
    m.gauge("rocesw_mbufs", "Mbufs in the packet pool", [this](MetricSink &s) {
        s.sample({}, ports_->pool() ? ports_->pool()->size : 0);
    });
    m.gauge("rocesw_mbufs_in_use",
            "Mbufs out of the packet pool: in device rings, queues, punt and handoff rings",
            [this](MetricSink &s) {
                s.sample({}, ports_->pool() ? rte_mempool_in_use_count(ports_->pool()) : 0);
            });

    m.gauge("rocesw_dpdk_heap_allocated_bytes",
            "Bytes allocated from DPDK's malloc heaps (FIB tables, rings, pools)",
            [](MetricSink &s) { s.sample({}, view_dpdk_heap()["allocated_bytes"].get<uint64_t>()); });

    register_control_metrics();  // control_plane.cc
    register_latency_metrics();

    m.gauge("rocesw_port_link_up", "1 when the port's link is up", [=, this](MetricSink &s) {
        // Link state is refreshed by the control thread under the handler lock.
        std::lock_guard lk(server_.handler_mutex());
        for (size_t i = 0; i < n_ports; i++)
            s.sample({{"port", port_name(i)}},
                     ports_->ports()[i].link.link_status == RTE_ETH_LINK_UP ? 1 : 0);
    });
    struct DevField {
        const char *name, *help;
        uint64_t rte_eth_stats::*f;
    };
    static const DevField dev_fields[] = {
        {"rocesw_port_rx_missed_total", "Packets the device dropped: RX ring full (imissed)",
         &rte_eth_stats::imissed},
        {"rocesw_port_rx_nombuf_total", "RX mbuf allocation failures in the device",
         &rte_eth_stats::rx_nombuf},
        {"rocesw_port_rx_errors_total", "Erroneous packets received by the device",
         &rte_eth_stats::ierrors},
        {"rocesw_port_tx_errors_total", "Packets the device failed to transmit",
         &rte_eth_stats::oerrors},
    };
    for (const DevField &df : dev_fields)
        m.counter(df.name, df.help, [=, this](MetricSink &s) {
            // Device stats as the views read them: under the handler lock (not a worker's).
            std::lock_guard lk(server_.handler_mutex());
            for (size_t i = 0; i < n_ports; i++) {
                rte_eth_stats st{};
                rte_eth_stats_get(ports_->ports()[i].port_id, &st);
                s.sample({{"port", port_name(i)}}, st.*df.f);
            }
        });

    m.counter(
        "rocesw_port_xdp_packets_total",
        "Frames rocesw's XDP program handled on an af_xdp port, by reason (to_switch_*: "
        "to the switch's socket; pass_*: to the kernel)",
        [=, this](MetricSink &s) {
            std::lock_guard lk(server_.handler_mutex());
            for (size_t i = 0; i < n_ports && i < xdp_.size(); i++) {
                if (!xdp_[i]) continue;
                auto v = xdp_[i]->counters();
                for (size_t r = 0; r < v.size(); r++)
                    s.sample({{"port", port_name(i)}, {"reason", afxdp_reason_names()[r]}}, v[r]);
            }
        });

    // --- The observability machinery itself ---
    m.counter(
        "rocesw_trace_events_total", "Events written to the trace file",
        [this](MetricSink &s) { s.sample({}, trace_events_.load(std::memory_order_relaxed)); });
    m.counter("rocesw_trace_events_lost_total",
              "Trace events a worker could not queue (its ring was full)",
              [this](MetricSink &s) { s.sample({}, trace_ ? trace_->lost() : 0); });
    m.gauge("rocesw_trace_failed",
            "1 when writing the trace file failed (disk full, I/O error) and tracing stopped",
            [this](MetricSink &s) { s.sample({}, trace_failed_.load() ? 1 : 0); });
}

// rocesw_latency_seconds: a Prometheus histogram per traffic class, from the per-worker
// log-linear histograms (cumulative since start; `clear latency` does not touch it). Each fine
// bucket is counted under the first `le` at or above its top, so a boundary is exact to the
// fine bucket's width (3 %).
void Switch::register_latency_metrics() {
    if (!latency_) return;
    metrics_.histogram(
        "rocesw_latency_seconds",
        "Time from the RX burst that received a packet to the TX burst that sent it, by traffic class",
        [this](MetricSink &s) {
            static const double kLe[] = {1e-6,   2e-6,   5e-6, 10e-6, 20e-6, 50e-6, 100e-6,
                                         200e-6, 500e-6, 1e-3, 2e-3,  5e-3,  10e-3, 100e-3};
            const double hz = double(rte_get_tsc_hz());
            const LatencySnapshot snap = latency_snapshot(latency_.get(), workers_.size());
            for (unsigned c = 0; c < kLatClasses; c++) {
                const LatencyClassSnapshot &h = snap.tc[c];
                uint64_t cum = 0;
                unsigned i = 0;
                for (double le : kLe) {
                    for (; i < kLatBuckets && double(latency_bucket_upper(i) - 1) / hz <= le; i++)
                        cum += h.buckets[i];
                    s.sample_suffixed("_bucket", {{"tc", c}, {"le", format_value(le)}}, cum);
                }
                s.sample_suffixed("_bucket", {{"tc", c}, {"le", "+Inf"}}, h.count);
                s.sample_suffixed("_sum", {{"tc", c}}, double(h.sum) / hz);
                s.sample_suffixed("_count", {{"tc", c}}, h.count);
            }
        });
}

void Switch::start_observability() {
    const TelemetryConfig &t = cfg_.telemetry;
    if (t.prometheus) {
        prom_ = std::make_unique<PromExporter>(metrics_);
        // A listen address from the file is used exactly; the default takes the first free
        // port from 9417 up, so that several switches with default settings start side by side
        // (each logs, and `rocectl show info` reports, the port it got). Failing to bind is an
        // error at start-up, before any worker runs: a switch whose metrics silently went
        // missing is worse than one that says why it did not start.
        std::string err, first_err, listen = t.prometheus_listen;
        const uint16_t tries = t.prometheus_listen_given ? 1 : kPrometheusDefaultPorts;
        bool ok = false;
        for (uint16_t i = 0; i < tries && !ok; i++) {
            if (!t.prometheus_listen_given)
                listen = "127.0.0.1:" + std::to_string(kPrometheusDefaultPort + i);
            ok = prom_->start(listen, &err);
            if (!ok && first_err.empty()) first_err = err;
        }
        if (!ok) {
            prom_.reset();
            throw std::runtime_error(
                "telemetry.prometheus.listen: " + first_err +
                (t.prometheus_listen_given
                     ? std::string(" (another switch on this port? give each switch its own "
                                   "port, 127.0.0.1:0 for any free one, or prometheus: "
                                   "{enabled: false})")
                     : " and on the next " + std::to_string(kPrometheusDefaultPorts - 1) +
                           " ports (set telemetry.prometheus.listen)"));
        }
        if (listen != t.prometheus_listen)
            spdlog::warn("prometheus: {} is in use (another switch?); using {}",
                         t.prometheus_listen, listen);
        spdlog::info("prometheus: serving http://{}/metrics (port {})", listen, prom_->port());
    }
    if (trace_) {
        std::string err;
        if (trace_->open(t.trace_file, &err))
            spdlog::info("trace: {} every {} ms", t.trace_file, t.trace_interval_ms);
        else {  // the rings stay (workers may hold them); observe() drains and discards
            spdlog::error("trace: {}; tracing disabled (forwarding goes on)", err);
            trace_failure_logged_ = true;
            trace_failed_ = true;
        }
    }
}

// "clear latency" (mutating; the control socket allows it with telemetry.allow_clear).
nlohmann::json Switch::clear_latency(const std::vector<std::string> &args) {
    if (!args.empty()) throw CommandError("clear latency: unexpected '" + args[0] + "'");
    if (!latency_) throw CommandError("clear latency: latency is off (telemetry.latency: false)");
    // A baseline for the views; the workers' histograms and Prometheus keep counting.
    latency_base_ = latency_snapshot(latency_.get(), workers_.size());
    latency_since_ = std::chrono::steady_clock::now();
    return {{"cleared", "latency"}};
}

int Switch::observe() {
    constexpr int kMaxWaitMs = 50;
    if (!trace_) return kMaxWaitMs;
    const uint64_t now = clock_.now_ns();
    trace_->drain();
    if (!trace_->is_open()) {
        // A failed write (disk full) closed the file: say so once; forwarding goes on.
        if (!trace_->error().empty() && !trace_failure_logged_) {
            trace_failure_logged_ = true;
            trace_failed_ = true;
            spdlog::error("trace: {}; tracing stopped after {} events (forwarding goes on)",
                          trace_->error(), trace_->written());
        }
        return kMaxWaitMs;
    }
    if (now >= next_trace_ns_) {
        next_trace_ns_ = now + uint64_t(cfg_.telemetry.trace_interval_ms) * 1'000'000ull;
        for (size_t i = 0; i < cfg_.ports.size(); i++)
            for (uint8_t q = 0; q < kNumQueues; q++) {
                QueueSnapshot s = qos_->queue(uint16_t(i), q);
                if (s.enq_packets == 0 && s.drops_total() == 0) continue;  // never used
                const uint16_t p = uint16_t(i);
                trace_->write({now, s.depth_bytes, p, q, TraceKind::queue_bytes});
                trace_->write({now, s.depth_packets, p, q, TraceKind::queue_packets});
                trace_->write({now, s.ecn_marked, p, q, TraceKind::ecn_marked});
                trace_->write({now, s.drops_total(), p, q, TraceKind::queue_drops});
            }
        trace_->flush();
        trace_events_.store(trace_->written(), std::memory_order_relaxed);
        if (!trace_->is_open()) return 0;  // failed: logged at once by the next call
    }
    uint64_t left_ms = next_trace_ns_ > now ? (next_trace_ns_ - now) / 1'000'000ull : 0;
    return int(std::min<uint64_t>(left_ms, kMaxWaitMs));
}

void Switch::stop_observability() {
    if (prom_) prom_->stop();
    prom_.reset();
    // Called once the workers have stopped (end of run(), destructor): no ring is in use.
    if (trace_ && trace_->is_open()) {
        trace_->close();
        spdlog::info("trace: {} events written, {} lost", trace_->written(), trace_->lost());
    }
    trace_.reset();
}

}  // namespace rocesw
