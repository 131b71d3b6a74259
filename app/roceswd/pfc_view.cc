// The `pfc` view (rocectl show pfc, /rocesw/pfc): per port the mode, per priority what was
// received and sent and for how long, per lossless PG its buffer, threshold and headroom, per
// lossless queue the watchdog. Read-only, lock-free (QosShared's PfcPortStats).
#include <algorithm>

#include "switch.h"

namespace rocesw {

using nlohmann::json;

json Switch::view_pfc(const std::vector<std::string> &args) const {
    const uint64_t now = clock_.now_ns();
    const QosPlan &plan = qos_->plan();
    json out = json::array();
    for (size_t i = 0; i < cfg_.ports.size(); i++) {
        if (!args.empty() && std::find(args.begin(), args.end(), cfg_.ports[i].name) == args.end())
            continue;
        const PortQosPlan &pp = plan.ports[i];
        const PfcPortStats &st = qos_->pfc(uint16_t(i));
        json prios = json::array();
        for (unsigned p = 0; p < kNumPriorities; p++) {
            const bool lossless = pp.cls.pfc_enable >> p & 1;
            if (!lossless && !st.rx_ignored[p].load()) continue;
            prios.push_back({{"priority", p},
                             {"lossless", lossless},
                             {"rx_pause", st.rx_pause[p].load()},
                             {"rx_xon", st.rx_xon[p].load()},
                             {"rx_ignored", st.rx_ignored[p].load()},
                             {"rx_paused_now", st.rx_clock[p].active(now)},
                             {"rx_pause_us", st.rx_clock[p].total_ns(now) / 1000},
                             {"tx_pause", st.tx_pause[p].load()},
                             {"tx_xon", st.tx_xon[p].load()},
                             {"tx_pausing_now", st.tx_clock[p].active(now)},
                             {"tx_pause_us", st.tx_clock[p].total_ns(now) / 1000}});
        }
        json pgs = json::array();
        for (unsigned g = 0; g < kNumPg; g++) {
            const PgPlan &pg = pp.pgs[g];
            if (!pg.priorities) continue;
            pgs.push_back({{"pg", g},
                           {"priorities", pg.priorities},
                           {"profile", pg.automatic ? "automatic" : "BUFFER_PG"},
                           {"bytes", qos_->pg_bytes(uint16_t(i), uint8_t(g))},
                           {"watermark_bytes", qos_->pg_watermark(uint16_t(i), uint8_t(g))},
                           {"xoff_threshold_bytes", st.pg_threshold[g].load()},
                           {"headroom_bytes", pg.headroom_bytes},
                           {"headroom_needed_bytes", pg.headroom_needed},
                           {"headroom_used_bytes", st.pg_headroom_used[g].load()},
                           {"headroom_watermark_bytes", st.pg_headroom_watermark[g].load()},
                           {"headroom_drops", qos_->pg_drops(uint16_t(i), uint8_t(g))},
                           {"xoff", st.pg_xoff[g].load() != 0}});
        }
        json wd = json::array();
        if (pp.wd.enabled)
            for (unsigned q = 0; q < kNumQueues; q++) {
                if (!(pp.lossless_queues() >> q & 1)) continue;
                wd.push_back({{"queue", q},
                              {"stormed", (st.wd_stormed.load() >> q & 1) != 0},
                              {"storms", st.wd_storms[q].load()},
                              {"restores", st.wd_restores[q].load()}});
            }
        json malformed = json::object();
        for (size_t e = 0; e < kMacControlErrorCount; e++)
            if (uint64_t n = st.rx_malformed[e].load())
                malformed[std::string(mac_control_error_name(MacControlError(e)))] = n;
        out.push_back({{"port", cfg_.ports[i].name},
                       {"mode", pfc_modes_.size() > i ? pfc_modes_[i] : "software"},
                       {"pfc_enable", pp.cls.pfc_enable},
                       {"pause_quanta", pp.pfc_quanta},
                       {"pause_8023x", pp.honor_pause ? "honor" : "ignore"},
                       {"rx_pause_8023x", st.rx_global_pause.load()},
                       {"rx_pause_8023x_ignored", st.rx_global_ignored.load()},
                       {"rx_malformed", malformed},
                       {"tx_failed", st.tx_failed.load()},
                       {"paused_queues", st.paused_queues.load()},
                       {"priorities", prios},
                       {"pgs", pgs},
                       {"watchdog",
                        {{"enabled", pp.wd.enabled},
                         {"action", pp.wd.drop ? "drop" : "forward"},
                         {"detection_ms", pp.wd.detection_ns / 1'000'000},
                         {"restoration_ms", pp.wd.restoration_ns / 1'000'000},
                         {"queues", wd}}}});
    }
    if (!args.empty() && out.empty()) throw CommandError("pfc: no port named '" + args[0] + "'");
    return {{"ports", out}};
}

}  // namespace rocesw
