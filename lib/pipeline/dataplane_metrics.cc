#include "pipeline/dataplane_metrics.h"

namespace rocesw {

void register_dataplane_metrics(MetricRegistry &m, const DataplaneMetricSources &src) {
    const size_t n_ports = src.port_names.size();
    const size_t n_workers = src.n_workers;
    const std::vector<std::string> names = src.port_names;
    const WorkerCounters *workers = src.workers;
    auto port_name = [names](size_t i) -> const std::string & { return names[i]; };
    auto totals = [workers, n_workers](size_t i) { return sum_port(workers, n_workers, i); };

    // --- Ports (per-worker counters summed) ---
    struct PortField {
        const char *name, *help;
        uint64_t PortTotals::*f;
    };
    static const PortField port_fields[] = {
        {"rocesw_port_rx_packets_total", "Packets received on the port", &PortTotals::rx_packets},
        {"rocesw_port_rx_bytes_total", "Bytes received on the port (frames without FCS)",
         &PortTotals::rx_bytes},
        {"rocesw_port_tx_packets_total", "Packets the port's device accepted for transmission",
         &PortTotals::tx_packets},
        {"rocesw_port_tx_bytes_total", "Bytes the port's device accepted (frames without FCS)",
         &PortTotals::tx_bytes},
        {"rocesw_port_local_packets_total",
         "Packets for the switch itself, answered or consumed (ARP, ND, echo, PFC/PAUSE)",
         &PortTotals::local_packets},
    };
    for (const PortField &pf : port_fields)
        m.counter(pf.name, pf.help, [=](MetricSink &s) {
            for (size_t i = 0; i < n_ports; i++)
                s.sample({{"port", port_name(i)}}, totals(i).*pf.f);
        });
    m.counter("rocesw_drops_total",
              "Packets dropped, by port and reason (lib/common/drop_reason.h); ingress port, "
              "except the egress-stage reasons (doc/accounting.md): egress port",
              [=](MetricSink &s) {
                  for (size_t i = 0; i < n_ports; i++) {
                      PortTotals t = totals(i);
                      for (size_t r = 0; r < kDropReasonCount; r++)
                          s.sample(
                              {{"port", port_name(i)}, {"reason", drop_reason_name(DropReason(r))}},
                              t.drops[r]);
                  }
              });

    // --- Workers ---
    struct WorkerField {
        const char *name, *help;
        Counter WorkerCounters::*f;
    };
    static const WorkerField worker_fields[] = {
        {"rocesw_worker_polls_total", "RX poll rounds of the worker", &WorkerCounters::polls},
        {"rocesw_worker_busy_polls_total", "Poll rounds that found packets",
         &WorkerCounters::busy_polls},
        {"rocesw_worker_idle_sleeps_total", "Adaptive-idle sleeps of the worker",
         &WorkerCounters::idle_sleeps},
        {"rocesw_worker_poll_gaps_over_100us_total",
         "Gaps over 100 us between two polls while the worker had work (scheduling stalls)",
         &WorkerCounters::poll_gaps_100us},
        {"rocesw_worker_poll_gaps_over_1ms_total",
         "Gaps over 1 ms between two polls while the worker had work (scheduling stalls)",
         &WorkerCounters::poll_gaps_1ms},
    };
    for (const WorkerField &wf : worker_fields)
        m.counter(wf.name, wf.help, [=](MetricSink &s) {
            for (size_t w = 0; w < n_workers; w++)
                s.sample({{"worker", w}}, (workers[w].*wf.f).load());
        });
}

}  // namespace rocesw
