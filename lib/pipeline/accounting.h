// The accounting identity (doc/accounting.md): every frame a port received and every frame it
// sent, explained by the counters that already exist - no second set of counters.
//
//   received  rx = forwarded + ingress drops (by reason) + local + punted
//   sent      forwarded_out + local_replies + pfc_frames + injected
//               = tx + egress drops (by reason) + queued
//   total     the sums over the ports, and sum(forwarded) = sum(forwarded_out)
//
// take_accounting() reads a snapshot (relaxed loads, any thread); check_accounting() computes
// the differences from it, a pure function. A snapshot of a switch whose workers are running is
// not atomic: a burst a worker is processing is counted as received before its outcome (a
// positive received difference), and a flush between its device call and its depth update can
// show a sent frame still queued (a negative sent difference). With the workers between polls
// (tests, the simulator, an idle switch) every difference is exactly 0.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/counters.h"
#include "common/drop_reason.h"
#include "egress/egress.h"
#include "metrics/metrics.h"

namespace rocesw {

class TrafficManager;
class Dataplane;

// One port's terms.
struct AccountingPort {
    // Frames received on the port, and what became of them.
    uint64_t rx = 0;
    uint64_t forwarded = 0;  // routed and handed to the egress stage (of any port)
    uint64_t local = 0;      // answered or consumed by the switch (ARP, ND, echo, PFC/PAUSE)
    uint64_t punted = 0;     // handed to the port's host interface
    std::array<uint64_t, kDropReasonCount> drops{};  // every reason charged to this port
    // Frames that entered the port's egress stage, and what became of them.
    uint64_t forwarded_out = 0;  // routed to this port (from any port)
    uint64_t local_replies = 0;  // replies to frames received here (part of `local`)
    uint64_t pfc_frames = 0;     // PFC frames generated (sent directly, never queued)
    uint64_t injected = 0;       // from the port's host interface
    uint64_t tx = 0;             // taken by the device
    uint64_t queued = 0;         // held in the egress stage when the snapshot was read

    uint64_t ingress_drops() const;  // drops of !drop_at_egress reasons
    uint64_t egress_drops() const;   // drops of drop_at_egress reasons
    uint64_t generated() const { return local_replies + pfc_frames + injected; }
    // rx - (forwarded + ingress drops + local + punted).
    int64_t received_difference() const;
    // (forwarded_out + generated) - (tx + egress drops + queued).
    int64_t sent_difference() const;
    void add(const AccountingPort &o);
};

struct AccountingSnapshot {
    std::vector<std::string> port_names;
    std::vector<AccountingPort> ports;  // by port index
};

struct AccountingSources {
    std::vector<std::string> port_names;          // by port index
    const WorkerCounters *counters = nullptr;     // one block per worker
    std::vector<const Egress *> egress;           // one per worker: the queued term
    const TrafficManager *tm = nullptr;           // PFC frames and injected; null: none
};

// The sources of a Dataplane's accounting (its counters, egresses and traffic manager).
AccountingSources accounting_sources(const Dataplane &dp, std::vector<std::string> port_names);

AccountingSnapshot take_accounting(const AccountingSources &src);

struct AccountingReport {
    AccountingSnapshot snapshot;
    AccountingPort total;
    // Per port (and total): the two differences; all 0: balanced.
    std::vector<int64_t> received_difference, sent_difference;
    int64_t total_received_difference = 0, total_sent_difference = 0;
    // sum(forwarded) - sum(forwarded_out): counted at one place, so 0 unless a counter is lost.
    int64_t forwarding_difference = 0;
    bool balanced = true;
};

AccountingReport check_accounting(AccountingSnapshot snap);

// The `accounting` view: per port and total, every term (drops by nonzero reason), the
// differences and the verdict ("balanced", or "unbalanced" with the differences named).
nlohmann::json accounting_json(const AccountingReport &r);

// The Prometheus families of the terms the port and drop families do not already have
// (doc/observability.md): rocesw_port_forwarded_packets_total, ..._forwarded_out_packets_total,
// ..._local_replies_total, ..._punted_packets_total, ..._injected_packets_total,
// rocesw_port_pfc_frames_sent_total, rocesw_port_egress_queued_packets and
// rocesw_accounting_difference{port,identity}. `src` must outlive every scrape.
void register_accounting_metrics(MetricRegistry &m, const AccountingSources &src);

}  // namespace rocesw
