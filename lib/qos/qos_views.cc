#include "qos/qos_views.h"

#include <spdlog/spdlog.h>

#include "qos/qos_metrics.h"

namespace rocesw {

using nlohmann::json;

void register_qos_views(ViewRegistry &r, const std::vector<std::string> &port_names,
                        TrafficManager &qos_ref) {
    TrafficManager *qos = &qos_ref;
    const std::vector<std::string> names = port_names;
    r.commands.read_only(
        "queues", "8 egress queues per port: depth, watermark, ECN marks, drops ([port...])",
        [qos, names](const CommandArgs &args) {
            json out = json::array();
            for (size_t i = 0; i < names.size(); i++) {
                if (!port_selected(args, names[i])) continue;
                for (uint8_t q = 0; q < 8; q++) {
                    QueueSnapshot s = qos->queue(uint16_t(i), q);
                    json drops = json::object();
                    for (size_t d = 0; d < kQueueDropCount; d++)
                        if (s.drops[d])
                            drops[std::string(queue_drop_name(QueueDrop(d)))] = s.drops[d];
                    out.push_back({{"port", names[i]},
                                   {"queue", q},
                                   {"enq_packets", s.enq_packets},
                                   {"enq_bytes", s.enq_bytes},
                                   {"deq_packets", s.deq_packets},
                                   {"deq_bytes", s.deq_bytes},
                                   {"depth_packets", s.depth_packets},
                                   {"depth_bytes", s.depth_bytes},
                                   {"watermark_bytes", s.watermark_bytes},
                                   {"ecn_marked", s.ecn_marked},
                                   {"drops", s.drops_total()},
                                   {"drops_by_reason", drops}});
                }
            }
            if (!args.empty() && out.empty())
                throw CommandError("queues: no port named '" + args[0] + "'");
            return json{{"queues", out}};
        });
    // Each port's scheduler owner applies the clear at its next flush: no worker waits.
    r.commands.mutating(
        "clear_watermarks", "restart queue and PG watermarks from the current depths ([port...])",
        [qos, names](const CommandArgs &args) {
            std::vector<uint16_t> ports;
            for (const auto &a : args) {
                size_t i = 0;
                while (i < names.size() && names[i] != a) i++;
                if (i == names.size()) throw CommandError("clear: no port named '" + a + "'");
                ports.push_back(uint16_t(i));
            }
            if (ports.empty())
                for (size_t i = 0; i < names.size(); i++) ports.push_back(uint16_t(i));
            json cleared = json::array();
            for (uint16_t p : ports) {
                qos->clear_watermarks(p);
                cleared.push_back(names[p]);
            }
            spdlog::info("watermarks cleared on {}", cleared.dump());
            return json{{"cleared", "watermarks"}, {"ports", cleared}};
        });
    register_qos_metrics(r.metrics, names, *qos);
}

}  // namespace rocesw
