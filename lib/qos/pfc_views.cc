#include "qos/pfc_views.h"

#include <memory>

namespace rocesw {

using nlohmann::json;

namespace {

json pfc_view(const PfcViewSources &src, const CommandArgs &args) {
    const uint64_t now = src.now_ns();
    json out = json::array();
    for (size_t i = 0; i < src.port_names.size(); i++) {
        if (!port_selected(args, src.port_names[i])) continue;
        const PfcPortView v = src.qos->pfc_snapshot(uint16_t(i), now);
        json prios = json::array();
        for (unsigned p = 0; p < kNumPriorities; p++) {
            const PfcPortView::Priority &pr = v.priorities[p];
            if (!pr.lossless && !pr.rx_ignored) continue;
            prios.push_back({{"priority", p},
                             {"lossless", pr.lossless},
                             {"rx_pause", pr.rx_pause},
                             {"rx_xon", pr.rx_xon},
                             {"rx_ignored", pr.rx_ignored},
                             {"rx_paused_now", pr.rx_paused_now},
                             {"rx_pause_us", pr.rx_pause_ns / 1000},
                             {"tx_pause", pr.tx_pause},
                             {"tx_xon", pr.tx_xon},
                             {"tx_pausing_now", pr.tx_pausing_now},
                             {"tx_pause_us", pr.tx_pause_ns / 1000}});
        }
        json pgs = json::array();
        for (unsigned g = 0; g < kNumPg; g++) {
            const PfcPortView::Pg &pg = v.pgs[g];
            if (!pg.priorities) continue;
            pgs.push_back({{"pg", g},
                           {"priorities", pg.priorities},
                           {"profile", pg.automatic ? "automatic" : "BUFFER_PG"},
                           {"bytes", pg.bytes},
                           {"watermark_bytes", pg.watermark_bytes},
                           {"xoff_threshold_bytes", pg.xoff_threshold_bytes},
                           {"headroom_bytes", pg.headroom_bytes},
                           {"headroom_needed_bytes", pg.headroom_needed_bytes},
                           {"headroom_used_bytes", pg.headroom_used_bytes},
                           {"headroom_watermark_bytes", pg.headroom_watermark_bytes},
                           {"headroom_drops", pg.headroom_drops},
                           {"xoff", pg.xoff}});
        }
        json wd = json::array();
        for (unsigned q = 0; q < kNumQueues; q++) {
            const PfcPortView::WdQueue &w = v.wd_queues[q];
            if (!w.watched) continue;
            wd.push_back({{"queue", q},
                          {"stormed", w.stormed},
                          {"storms", w.storms},
                          {"restores", w.restores}});
        }
        json malformed = json::object();
        for (size_t e = 0; e < kMacControlErrorCount; e++)
            if (uint64_t n = v.rx_malformed[e])
                malformed[std::string(mac_control_error_name(MacControlError(e)))] = n;
        out.push_back({{"port", src.port_names[i]},
                       {"mode", src.pfc_modes.size() > i ? src.pfc_modes[i] : "software"},
                       {"pfc_enable", v.pfc_enable},
                       {"pause_quanta", v.pause_quanta},
                       {"pause_8023x", v.honor_pause ? "honor" : "ignore"},
                       {"rx_pause_8023x", v.rx_global_pause},
                       {"rx_pause_8023x_ignored", v.rx_global_ignored},
                       {"rx_malformed", malformed},
                       {"tx_failed", v.tx_failed},
                       {"tx_frames", v.tx_frames},
                       {"paused_queues", v.paused_queues},
                       {"priorities", prios},
                       {"pgs", pgs},
                       {"watchdog",
                        {{"enabled", v.wd.enabled},
                         {"action", v.wd.drop ? "drop" : "forward"},
                         {"detection_ms", v.wd.detection_ns / 1'000'000},
                         {"restoration_ms", v.wd.restoration_ns / 1'000'000},
                         {"queues", wd}}}});
    }
    if (!args.empty() && out.empty()) throw CommandError("pfc: no port named '" + args[0] + "'");
    return {{"ports", out}};
}


json ecn_view(const PfcViewSources &src, const CommandArgs &args) {
    const QosPlan &plan = src.qos->plan();
    json out = json::array();
    auto curve = [](const WredCurve &c) -> json {
        if (!c.enabled) return nullptr;
        return {{"min_bytes", c.min_bytes},
                {"max_bytes", c.max_bytes},
                {"max_probability_pct", c.max_probability_pct}};
    };
    bool port_seen = args.empty();
    for (size_t i = 0; i < src.port_names.size(); i++) {
        if (!port_selected(args, src.port_names[i])) continue;
        port_seen = true;
        for (uint8_t q = 0; q < kNumQueues; q++) {
            const QueuePlan &qp = plan.ports[i].queues[q];
            if (!qp.ecn && !qp.drop.enabled) continue;
            QueueSnapshot s = src.qos->queue(uint16_t(i), q);
            out.push_back({{"port", src.port_names[i]},
                           {"queue", q},
                           {"lossless", qp.lossless},
                           {"ecn", qp.ecn},
                           {"mark_point", qp.mark_point == MarkPoint::dequeue ? "dequeue" : "enqueue"},
                           {"mark_curve", qp.ecn ? curve(qp.mark) : json(nullptr)},
                           {"drop_curve", curve(qp.drop)},
                           {"depth_bytes", s.depth_bytes},
                           {"watermark_bytes", s.watermark_bytes},
                           {"ecn_marked", s.ecn_marked},
                           {"wred_drops", s.drops[size_t(QueueDrop::wred_drop)]}});
        }
    }
    if (!port_seen) throw CommandError("ecn: no port named '" + args[0] + "'");
    return {{"ecn", out}};
}

// Prometheus families of PFC (doc/observability.md): per (port, priority), zeros included for
// every lossless priority. Relaxed loads of single-writer counters; the pause clocks are read
// with the switch's clock.
void register_pfc_metrics(MetricRegistry &m, const std::shared_ptr<const PfcViewSources> &src) {
    // Every (port, lossless priority) of the plan.
    auto each = [src](MetricSink &s, auto value) {
        const QosPlan &plan = src->qos->plan();
        for (size_t p = 0; p < src->port_names.size(); p++)
            for (unsigned prio = 0; prio < kNumPriorities; prio++)
                if (plan.ports[p].cls.pfc_enable >> prio & 1)
                    s.sample({{"port", src->port_names[p]}, {"priority", prio}},
                             value(src->qos->pfc().stats(uint16_t(p)), prio, p));
    };
    m.counter("rocesw_pfc_frames_sent_total",
              "PFC frames sent with a pause time for the priority (XOFF and refreshes)",
              [=](MetricSink &s) {
                  each(s, [](const PfcPortStats &st, unsigned pr, size_t) {
                      return st.tx_pause[pr].load();
                  });
              });
    m.counter("rocesw_pfc_frames_received_total",
              "PFC frames received with a pause time for the priority",
              [=](MetricSink &s) {
                  each(s, [](const PfcPortStats &st, unsigned pr, size_t) {
                      return st.rx_pause[pr].load();
                  });
              });
    m.counter("rocesw_pfc_xon_sent_total", "PFC XON (zero pause time) frames sent",
              [=](MetricSink &s) {
                  each(s, [](const PfcPortStats &st, unsigned pr, size_t) {
                      return st.tx_xon[pr].load();
                  });
              });
    m.counter("rocesw_pfc_xon_received_total", "PFC XON (zero pause time) frames received",
              [=](MetricSink &s) {
                  each(s, [](const PfcPortStats &st, unsigned pr, size_t) {
                      return st.rx_xon[pr].load();
                  });
              });
    m.counter("rocesw_pfc_pause_seconds_total",
              "Time paused: received = the peer held our queue, caused = we held the peer",
              [src](MetricSink &s) {
                  const uint64_t now = src->now_ns();
                  const QosPlan &plan = src->qos->plan();
                  for (size_t p = 0; p < src->port_names.size(); p++)
                      for (unsigned pr = 0; pr < kNumPriorities; pr++) {
                          if (!(plan.ports[p].cls.pfc_enable >> pr & 1)) continue;
                          const PfcPortStats &st = src->qos->pfc().stats(uint16_t(p));
                          s.sample({{"port", src->port_names[p]},
                                    {"priority", pr},
                                    {"direction", "received"}},
                                   double(st.rx_clock[pr].total_ns(now)) / 1e9);
                          s.sample({{"port", src->port_names[p]},
                                    {"priority", pr},
                                    {"direction", "caused"}},
                                   double(st.tx_clock[pr].total_ns(now)) / 1e9);
                      }
              });
    m.counter("rocesw_pfc_watchdog_storms_total",
              "PFC storms the watchdog detected on the priority's queue",
              [=](MetricSink &s) {
                  each(s, [src](const PfcPortStats &st, unsigned pr, size_t p) {
                      return st.wd_storms[src->qos->plan().ports[p].cls.tc_to_queue[pr]].load();
                  });
              });
    m.counter("rocesw_pfc_watchdog_restores_total",
              "PFC storms that ended (the queue honors PFC again)",
              [=](MetricSink &s) {
                  each(s, [src](const PfcPortStats &st, unsigned pr, size_t p) {
                      return st.wd_restores[src->qos->plan().ports[p].cls.tc_to_queue[pr]].load();
                  });
              });
    m.gauge("rocesw_pfc_paused", "1 while the peer's PFC holds the priority's queue",
            [src](MetricSink &s) {
                const uint64_t now = src->now_ns();
                const QosPlan &plan = src->qos->plan();
                for (size_t p = 0; p < src->port_names.size(); p++)
                    for (unsigned pr = 0; pr < kNumPriorities; pr++)
                        if (plan.ports[p].cls.pfc_enable >> pr & 1)
                            s.sample({{"port", src->port_names[p]}, {"priority", pr}},
                                     src->qos->pfc().stats(uint16_t(p)).rx_clock[pr].active(now)
                                         ? 1
                                         : 0);
            });
    m.gauge("rocesw_pg_headroom_used_bytes", "Bytes of a lossless PG above its xoff threshold",
            [src](MetricSink &s) {
                const QosPlan &plan = src->qos->plan();
                for (size_t p = 0; p < src->port_names.size(); p++)
                    for (unsigned g = 0; g < kNumPg; g++)
                        if (plan.ports[p].pgs[g].priorities)
                            s.sample({{"port", src->port_names[p]}, {"pg", g}},
                                     src->qos->pfc().stats(uint16_t(p)).pg_headroom_used[g].load());
            });
    m.counter("rocesw_mac_control_malformed_total",
              "Malformed MAC-control frames received, by reason",
              [src](MetricSink &s) {
                  for (size_t p = 0; p < src->port_names.size(); p++)
                      for (size_t e = 0; e < kMacControlErrorCount; e++)
                          s.sample({{"port", src->port_names[p]},
                                    {"reason", mac_control_error_name(MacControlError(e))}},
                                   src->qos->pfc().stats(uint16_t(p)).rx_malformed[e].load());
              });
}

}  // namespace

void register_pfc_views(ViewRegistry &r, PfcViewSources s) {
    auto src = std::make_shared<const PfcViewSources>(std::move(s));
    r.commands.read_only(
        "pfc",
        "PFC per port: pauses received/sent per priority, PG buffers, watchdog ([port...])",
        [src](const CommandArgs &args) { return pfc_view(*src, args); });
    r.commands.read_only("ecn", "WRED/ECN per queue: curves, CE marks, WRED drops ([port...])",
                         [src](const CommandArgs &args) { return ecn_view(*src, args); });
    register_pfc_metrics(r.metrics, src);
}

}  // namespace rocesw
