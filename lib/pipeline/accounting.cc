#include "pipeline/accounting.h"

#include <cinttypes>
#include <cstdio>
#include <memory>

#include "pipeline/dataplane.h"
#include "qos/qos_egress.h"

namespace rocesw {

using nlohmann::json;

uint64_t AccountingPort::ingress_drops() const {
    uint64_t s = 0;
    for (size_t r = 0; r < kDropReasonCount; r++)
        if (!drop_at_egress(DropReason(r))) s += drops[r];
    return s;
}

uint64_t AccountingPort::egress_drops() const {
    uint64_t s = 0;
    for (size_t r = 0; r < kDropReasonCount; r++)
        if (drop_at_egress(DropReason(r))) s += drops[r];
    return s;
}

int64_t AccountingPort::received_difference() const {
    return int64_t(rx) - int64_t(forwarded + ingress_drops() + local + punted);
}

int64_t AccountingPort::sent_difference() const {
    return int64_t(forwarded_out + generated()) - int64_t(tx + egress_drops() + queued);
}

void AccountingPort::add(const AccountingPort &o) {
    rx += o.rx;
    forwarded += o.forwarded;
    local += o.local;
    punted += o.punted;
    for (size_t r = 0; r < kDropReasonCount; r++) drops[r] += o.drops[r];
    forwarded_out += o.forwarded_out;
    local_replies += o.local_replies;
    pfc_frames += o.pfc_frames;
    injected += o.injected;
    tx += o.tx;
    queued += o.queued;
}

AccountingSources accounting_sources(const Dataplane &dp, std::vector<std::string> port_names) {
    AccountingSources s;
    s.port_names = std::move(port_names);
    s.counters = dp.counters();
    for (uint16_t w = 0; w < dp.workers(); w++) s.egress.push_back(&dp.egress(w));
    s.tm = dp.has_tm() ? &dp.tm() : nullptr;
    return s;
}

AccountingSnapshot take_accounting(const AccountingSources &src) {
    AccountingSnapshot snap;
    snap.port_names = src.port_names;
    const size_t n_workers = src.egress.size();
    for (size_t p = 0; p < src.port_names.size(); p++) {
        AccountingPort a;
        // The egress stage's queued first, rx last, so that a concurrent read errs toward
        // "in flight" (doc/accounting.md).
        for (const Egress *e : src.egress) a.queued += e->queued(uint16_t(p));
        if (src.tm && p < src.tm->n_ports()) {
            a.pfc_frames = src.tm->pfc().stats(uint16_t(p)).tx_frames.load();
            a.injected = src.tm->injected(uint16_t(p));
        }
        const PortTotals t = sum_port(src.counters, n_workers, p);
        // rx again, after every outcome: a worker counts a burst's rx before any of its
        // outcomes, so the received difference read this way is never negative.
        for (size_t w = 0; w < n_workers; w++) a.rx += src.counters[w].ports[p].rx_packets.load();
        a.forwarded = t.forwarded;
        a.local = t.local_packets;
        a.punted = t.punted;
        a.drops = t.drops;
        a.forwarded_out = t.forwarded_out;
        a.local_replies = t.local_replies;
        a.tx = t.tx_packets;
        snap.ports.push_back(a);
    }
    return snap;
}

AccountingReport check_accounting(AccountingSnapshot snap) {
    AccountingReport r;
    r.snapshot = std::move(snap);
    for (const AccountingPort &p : r.snapshot.ports) {
        r.total.add(p);
        r.received_difference.push_back(p.received_difference());
        r.sent_difference.push_back(p.sent_difference());
        r.balanced = r.balanced && p.received_difference() == 0 && p.sent_difference() == 0;
    }
    r.total_received_difference = r.total.received_difference();
    r.total_sent_difference = r.total.sent_difference();
    r.forwarding_difference = int64_t(r.total.forwarded) - int64_t(r.total.forwarded_out);
    r.balanced = r.balanced && r.forwarding_difference == 0;
    return r;
}

namespace {

json terms_json(const AccountingPort &p, int64_t received_diff, int64_t sent_diff) {
    json in_drops = json::object(), out_drops = json::object();
    for (size_t r = 0; r < kDropReasonCount; r++) {
        if (!p.drops[r]) continue;
        (drop_at_egress(DropReason(r)) ? out_drops : in_drops)[std::string(
            drop_reason_name(DropReason(r)))] = p.drops[r];
    }
    return {{"received",
             {{"rx", p.rx},
              {"forwarded", p.forwarded},
              {"dropped", p.ingress_drops()},
              {"drops", in_drops},
              {"local", p.local},
              {"punted", p.punted},
              {"difference", received_diff}}},
            {"sent",
             {{"forwarded", p.forwarded_out},
              {"local_replies", p.local_replies},
              {"pfc_frames", p.pfc_frames},
              {"injected", p.injected},
              {"tx", p.tx},
              {"dropped", p.egress_drops()},
              {"drops", out_drops},
              {"queued", p.queued},
              {"difference", sent_diff}}}};
}

// snprintf, not "+" + std::to_string(v): GCC 12's LTO (build-release) reports a false
// -Wstringop-overflow in the inlined string concatenation.
std::string signed_str(int64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, v > 0 ? "%+" PRId64 : "%" PRId64, v);
    return buf;
}

}  // namespace

json accounting_json(const AccountingReport &r) {
    json ports = json::array();
    std::string diffs;
    auto note = [&diffs](const std::string &where, const char *identity, int64_t d) {
        if (!d) return;
        if (!diffs.empty()) diffs += ", ";  // not `(...) + where`: see common/strings.h
        diffs += where + " " + identity + " " + signed_str(d);
    };
    for (size_t i = 0; i < r.snapshot.ports.size(); i++) {
        const std::string &name = r.snapshot.port_names[i];
        json p = terms_json(r.snapshot.ports[i], r.received_difference[i], r.sent_difference[i]);
        p["port"] = name;
        p["balanced"] = r.received_difference[i] == 0 && r.sent_difference[i] == 0;
        ports.push_back(std::move(p));
        note(name, "received", r.received_difference[i]);
        note(name, "sent", r.sent_difference[i]);
    }
    json total = terms_json(r.total, r.total_received_difference, r.total_sent_difference);
    total["forwarding_difference"] = r.forwarding_difference;
    note("total", "forwarded-forwarded_out", r.forwarding_difference);
    return {{"ports", ports},
            {"total", total},
            {"balanced", r.balanced},
            {"verdict", r.balanced ? std::string("balanced") : "unbalanced: " + diffs}};
}

void register_accounting_metrics(MetricRegistry &m, const AccountingSources &src_in) {
    auto src = std::make_shared<const AccountingSources>(src_in);
    struct Field {
        const char *name, *help;
        uint64_t AccountingPort::*f;
    };
    static const Field counters[] = {
        {"rocesw_port_forwarded_packets_total",
         "Packets received on the port, routed and handed to the egress stage",
         &AccountingPort::forwarded},
        {"rocesw_port_forwarded_out_packets_total",
         "Routed packets handed to the port's egress stage (from any ingress port)",
         &AccountingPort::forwarded_out},
        {"rocesw_port_local_replies_total",
         "Replies the switch sent to packets received on the port (ARP, ND, echo)",
         &AccountingPort::local_replies},
        {"rocesw_port_punted_packets_total",
         "Packets received on the port and handed to its host interface",
         &AccountingPort::punted},
        {"rocesw_port_injected_packets_total",
         "Frames from the port's host interface taken by its egress stage",
         &AccountingPort::injected},
        {"rocesw_port_pfc_frames_sent_total", "PFC frames the port's device took",
         &AccountingPort::pfc_frames},
    };
    for (const Field &f : counters)
        m.counter(f.name, f.help, [src, f](MetricSink &s) {
            const AccountingSnapshot snap = take_accounting(*src);
            for (size_t i = 0; i < snap.ports.size(); i++)
                s.sample({{"port", snap.port_names[i]}}, snap.ports[i].*f.f);
        });
    m.gauge("rocesw_port_egress_queued_packets",
            "Packets held in the port's egress stage (queues, device retries, handoff ring)",
            [src](MetricSink &s) {
                const AccountingSnapshot snap = take_accounting(*src);
                for (size_t i = 0; i < snap.ports.size(); i++)
                    s.sample({{"port", snap.port_names[i]}}, snap.ports[i].queued);
            });
    m.gauge("rocesw_accounting_difference",
            "Accounting identity (doc/accounting.md) per port: received = rx - (forwarded + "
            "ingress drops + local + punted); sent = forwarded_out + generated - (tx + egress "
            "drops + queued). 0 when balanced; frames in flight show while traffic flows",
            [src](MetricSink &s) {
                const AccountingReport r = check_accounting(take_accounting(*src));
                for (size_t i = 0; i < r.snapshot.ports.size(); i++) {
                    s.sample({{"port", r.snapshot.port_names[i]}, {"identity", "received"}},
                             double(r.received_difference[i]));
                    s.sample({{"port", r.snapshot.port_names[i]}, {"identity", "sent"}},
                             double(r.sent_difference[i]));
                }
            });
}

}  // namespace rocesw
