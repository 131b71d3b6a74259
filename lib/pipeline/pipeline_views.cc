#include "pipeline/pipeline_views.h"

#include <memory>

#include "pipeline/accounting.h"
#include "pipeline/dataplane_metrics.h"

namespace rocesw {

using nlohmann::json;

namespace {

json drops_view(const PipelineViewSources &src, bool all) {
    json out = json::array();
    uint64_t total = 0;
    for (size_t i = 0; i < src.port_names.size(); i++) {
        PortTotals t = sum_port(src.counters, src.workers.size(), i);
        for (size_t r = 0; r < kDropReasonCount; r++) {
            total += t.drops[r];
            if (!all && t.drops[r] == 0) continue;
            out.push_back({{"port", src.port_names[i]},
                           {"reason", drop_reason_name(DropReason(r))},
                           {"description", drop_reason_text(DropReason(r))},
                           {"packets", t.drops[r]}});
        }
    }
    return {{"drops", out}, {"total", total}};
}

json workers_view(const PipelineViewSources &src) {
    json out = json::array();
    for (size_t w = 0; w < src.workers.size(); w++) {
        json qs = json::array();
        for (const auto &q : src.workers[w]->rx_queues())
            qs.push_back({{"port", src.port_names[q.port]}, {"queue", q.queue}});
        const WorkerCounters &c = src.counters[w];
        out.push_back({{"id", w},
                       {"lcore", w < src.lcores.size() ? src.lcores[w] : 0u},
                       {"queues", qs},
                       {"polls", c.polls.load()},
                       {"busy_polls", c.busy_polls.load()},
                       {"idle_sleeps", c.idle_sleeps.load()},
                       {"poll_gaps",
                        {{"max_us", double(c.poll_gap_max_ns.load()) / 1000},
                         {"over_100us", c.poll_gaps_100us.load()},
                         {"over_1ms", c.poll_gaps_1ms.load()}}}});
    }
    return {{"workers", out}};
}

}  // namespace

void register_pipeline_views(ViewRegistry &r, PipelineViewSources s) {
    auto src = std::make_shared<const PipelineViewSources>(std::move(s));
    r.commands.read_only("drops", "drop counters by port and reason ('all' includes zeros)",
                         [src](const CommandArgs &args) {
                             bool all = false;
                             for (const auto &a : args) {
                                 if (a == "all")
                                     all = true;
                                 else
                                     throw CommandError("drops: unknown argument '" + a +
                                                        "' (allowed: all)");
                             }
                             return drops_view(*src, all);
                         });
    r.commands.read_only("workers", "workers, their RX queues and poll counters",
                         [src](const CommandArgs &) { return workers_view(*src); });
    AccountingSources acct{src->port_names, src->counters, src->egress, src->tm};
    r.commands.read_only(
        "accounting",
        "accounting identity per port and total: received and sent frames by term, verdict",
        [acct](const CommandArgs &args) {
            if (!args.empty()) throw CommandError("accounting: takes no argument");
            return accounting_json(check_accounting(take_accounting(acct)));
        });
    register_dataplane_metrics(r.metrics,
                               {src->port_names, src->counters, src->workers.size()});
    register_accounting_metrics(r.metrics, acct);
}

}  // namespace rocesw
