#include "roce/host_results.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace rocesw::roce {

namespace {

bool open_out(const std::string &dir, const char *name, std::ofstream &o) {
    o.open(dir + "/" + name);
    if (!o) spdlog::error("{}/{}: cannot write", dir, name);
    return bool(o);
}

std::string fixed4(double x) {
    char b[32];
    std::snprintf(b, sizeof(b), "%.4f", x);
    return b;
}

// A host's receivers in QP-number order.
std::vector<const RecvEntry *> receivers_of(const Host &h) {
    std::vector<const RecvEntry *> es;
    for (const auto &[k, e] : h.recv) es.push_back(&e);
    std::sort(es.begin(), es.end(), [](auto *a, auto *b) { return a->qpn < b->qpn; });
    return es;
}

bool write_flows(const HostSet &hs, const std::string &dir, const std::vector<FlowResult> &rs) {
    std::ofstream f;
    if (!open_out(dir, "flows.csv", f)) return false;
    f << "flow,src,dst,size_bytes,start_ns,finish_ns,fct_ns,ideal_ns,base_rtt_ns,slowdown,"
         "completed,packets_tx,retransmitted,naks,timeouts,cnps_rx\n";
    size_t i = 0;
    for (const Flow &fl : hs.flows()) {
        if (fl.host < 0) continue;
        const FlowResult &r = rs[i++];
        f << r.id << ',' << r.src << ',' << r.dst << ',' << r.size_bytes << ',' << r.start_ns << ','
          << r.finish_ns << ',' << r.fct_ns() << ',' << r.ideal_ns << ',' << r.base_rtt_ns << ','
          << fixed4(r.slowdown())
          << ',' << (r.completed ? 1 : 0) << ',' << fl.packets_tx << ',' << r.retransmitted << ','
          << fl.qp.naks() << ',' << fl.qp.timeouts() << ',' << fl.cnps_rx << '\n';
    }
    return true;
}

bool write_qp_rates(const HostSet &hs, const std::string &dir) {
    std::ofstream q;
    if (!open_out(dir, "qp_rates.csv", q)) return false;
    q << "flow,qpn,t_ns,rc_bps,rt_bps,alpha,event\n";
    for (const Flow &fl : hs.flows())
        for (const auto &c : fl.trace)
            q << fl.spec.id << ',' << fl.qpn << ',' << c.t_ns << ',' << c.rc_bps << ',' << c.rt_bps
              << ',' << c.alpha << ',' << rp_event_name(c.event) << '\n';
    return true;
}

bool write_flow_bytes(const HostSet &hs, const std::string &dir) {
    std::ofstream fb;
    if (!open_out(dir, "flow_bytes.csv", fb)) return false;
    fb << "flow,t_ns,sent_bytes,acked_bytes\n";
    for (const Flow &fl : hs.flows())
        for (const auto &b : fl.bytes)
            fb << fl.spec.id << ',' << b.t_ns << ',' << b.sent_bytes << ',' << b.acked_bytes
               << '\n';
    return true;
}

bool write_receivers(const HostSet &hs, const std::string &dir) {
    std::ofstream rc;
    if (!open_out(dir, "receivers.csv", rc)) return false;
    rc << "host,src_ip,qpn,packets,bytes,messages,psn_gaps,missing_packets,"
          "discarded_out_of_order,duplicates,ce_packets,ce_fraction,cnps_sent,acks_sent,naks_"
          "sent\n";
    for (const Host &h : hs.hosts())
        for (const RecvEntry *e : receivers_of(h)) {
            const auto &s = e->qp.stats();
            const uint64_t all = s.packets + s.discarded_out_of_order + s.duplicates;
            rc << h.cfg.name << ',' << e->src_ip.str() << ',' << e->qpn << ',' << s.packets << ','
               << s.bytes << ',' << s.messages << ',' << s.psn_gaps << ',' << s.missing_packets
               << ',' << s.discarded_out_of_order << ',' << s.duplicates << ',' << e->np.ce_packets
               << ',' << fixed4(all ? double(e->np.ce_packets) / double(all) : 0.0) << ','
               << e->np.cnps << ',' << s.acks_sent << ',' << s.naks_sent << '\n';
        }
    return true;
}

// hosts.csv; returns the per-host part of summary.json.
bool write_hosts(const HostSet &hs, const std::string &dir, uint64_t run_ns, nlohmann::json *jh) {
    std::ofstream o;
    if (!open_out(dir, "hosts.csv", o)) return false;
    o << "host,tx_frames,tx_data,rx_frames,rx_roce,rx_bad_icrc,rx_truncated,rx_not_roce,"
         "rx_unknown_qp,cnps_tx,cnps_rx,acks_rx,naks_rx,pause_frames,xon_frames,paused_us,"
         "arp_requests_rx,arp_requests_tx,alloc_failures\n";
    *jh = nlohmann::json::array();
    const uint8_t p = hs.config().traffic.data_priority;
    for (const Host &h : hs.hosts()) {
        const double paused_us = double(h.pause.paused_ns(p, run_ns)) / 1000;
        o << h.cfg.name << ',' << h.c.tx_frames << ',' << h.c.tx_data << ',' << h.c.rx_frames << ','
          << h.c.rx_roce << ',' << h.c.rx_bad_icrc << ',' << h.c.rx_truncated << ','
          << h.c.rx_not_roce << ',' << h.c.rx_unknown_qp << ',' << h.c.cnps_tx << ',' << h.c.cnps_rx
          << ',' << h.c.acks_rx << ',' << h.c.naks_rx << ',' << h.pause.pause_frames(p) << ','
          << h.pause.xon_frames(p) << ',' << paused_us << ',' << h.c.arp_requests_rx << ','
          << h.c.arp_requests_tx << ',' << h.c.alloc_failures << '\n';
        jh->push_back({{"name", h.cfg.name},
                       {"tx_data", h.c.tx_data},
                       {"rx_roce", h.c.rx_roce},
                       {"rx_bad_icrc", h.c.rx_bad_icrc},
                       {"cnps_tx", h.c.cnps_tx},
                       {"cnps_rx", h.c.cnps_rx},
                       {"naks_rx", h.c.naks_rx},
                       {"pause_frames", h.pause.pause_frames(p)},
                       {"paused_us", paused_us},
                       {"pfc_xoff_tx", h.c.pfc_xoff_tx},
                       {"pfc_xon_tx", h.c.pfc_xon_tx},
                       {"held_frames", h.c.held_frames},
                       {"held_max_bytes", h.c.held_max_bytes}});
        // A host with a PFC storm: the storm's frames, sent and skipped (HostCounters).
        if (std::any_of(h.faults.begin(), h.faults.end(), [&](const FaultState &fs) {
                return hs.config().faults[fs.index].kind == HostFault::pfc_storm;
            })) {
            jh->back()["storm_frames"] = h.c.storm_frames;
            jh->back()["storm_frames_skipped"] = h.c.storm_frames_skipped;
        }
    }
    return true;
}

bool write_pauses(const HostSet &hs, const std::string &dir) {
    std::ofstream ps;
    if (!open_out(dir, "pauses.csv", ps)) return false;
    ps << "host,t_ns,priority,quanta,until_ns\n";
    for (const Host &h : hs.hosts())
        for (const auto &e : h.pause_trace)
            ps << h.cfg.name << ',' << e.t_ns << ',' << int(e.priority) << ',' << e.quanta << ','
               << e.until_ns << '\n';
    return true;
}

// pfc_sent.csv: the PFC frames the hosts' NICs sent (faults: storms, slow receivers).
bool write_pfc_sent(const HostSet &hs, const std::string &dir) {
    std::ofstream ps;
    if (!open_out(dir, "pfc_sent.csv", ps)) return false;
    ps << "host,t_ns,priority,quanta\n";
    for (const Host &h : hs.hosts())
        for (const auto &e : h.pfc_sent)
            ps << h.cfg.name << ',' << e.t_ns << ',' << int(e.priority) << ',' << e.quanta << '\n';
    return true;
}

// Throughput of each completed flow over its FCT (fairness over whole flows).
std::vector<double> flow_throughputs(const std::vector<FlowResult> &rs) {
    std::vector<double> tput;
    for (const auto &r : rs)
        if (r.completed && r.fct_ns())
            tput.push_back(double(r.size_bytes) * 8 / double(r.fct_ns()));
    return tput;
}

// Fairness while every local flow is active, over the second half of that interval.
OverlapFairness overlap_of(const HostSet &hs) {
    std::vector<FlowTimeline> tl;
    for (const Flow &fl : hs.flows())
        if (fl.host >= 0) tl.push_back({fl.start_ns, fl.finish_ns, fl.done, &fl.bytes});
    return overlap_fairness(tl);
}

struct Totals {
    uint64_t completed = 0, retx = 0;
};

Totals totals_of(const std::vector<FlowResult> &rs) {
    Totals t;
    for (const auto &r : rs) {
        t.completed += r.completed;
        t.retx += r.retransmitted;
    }
    return t;
}

nlohmann::json summary_json(const HostSet &hs, uint64_t run_ns, const LoopStats &loop,
                            const std::vector<FlowResult> &rs, const ReceiverTotals &rx,
                            const OverlapFairness &ov, const std::vector<SlowdownBucket> &buckets,
                            nlohmann::json hosts) {
    const Totals t = totals_of(rs);
    nlohmann::json js;
    js["run_ns"] = run_ns;
    js["dcqcn"] = hs.config().dcqcn_enabled;
    js["flows_local"] = rs.size();
    js["flows_completed"] = t.completed;
    js["retransmitted_packets"] = t.retx;
    js["receiver"] = {{"packets", rx.packets},       {"messages", rx.messages},
                      {"psn_gaps", rx.psn_gaps},     {"missing_packets", rx.missing},
                      {"duplicates", rx.duplicates}, {"ce_packets", rx.ce},
                      {"cnps_sent", rx.cnps}};
    js["hosts"] = std::move(hosts);
    if (!hs.config().udp_flows.empty())
        js["udp"] = {{"flows", hs.config().udp_flows.size()},
                     {"sent", hs.udp().sent()},
                     {"received", hs.udp().received()}};
    js["loop_gaps"] = {{"max_us", double(loop.gap_max_ns) / 1000},
                       {"over_100us", loop.gaps_100us},
                       {"over_1ms", loop.gaps_1ms}};
    if (loop.start_monotonic_ns) js["clock_monotonic_start_ns"] = loop.start_monotonic_ns;
    js["jain_throughput"] = jain_index(flow_throughputs(rs));
    if (ov.valid) {
        js["overlap"] = {{"window_start_ns", ov.window_start_ns},
                         {"window_end_ns", ov.window_end_ns},
                         {"half_start_ns", ov.half_start_ns},
                         {"rate_bps", ov.rate_bps},
                         {"jain", ov.jain}};
        js["jain_last_half"] = ov.jain;
    } else {
        js["overlap"] = nullptr;
        js["jain_last_half"] = nullptr;
    }
    nlohmann::json jb = nlohmann::json::array();
    for (const auto &b : buckets)
        jb.push_back({{"bucket", b.label},
                      {"flows", b.count},
                      {"mean_fct_us", b.mean_fct_us},
                      {"slowdown_mean", b.mean},
                      {"slowdown_median", b.median},
                      {"slowdown_p99", b.p99}});
    js["slowdown"] = jb;
    return js;
}

void print_summary(const HostSet &hs, uint64_t run_ns, const LoopStats &loop,
                   const std::vector<FlowResult> &rs, const ReceiverTotals &rx,
                   const OverlapFairness &ov, const std::vector<SlowdownBucket> &buckets) {
    const HostRunConfig &cfg = hs.config();
    std::printf("rocehost %s: %llu/%zu local flows completed in %.3f ms, dcqcn %s\n",
                cfg.run.name.c_str(), (unsigned long long)totals_of(rs).completed, rs.size(),
                double(run_ns) / 1e6, cfg.dcqcn_enabled ? "on" : "off");
    std::printf(
        "receiver: %llu packets, %llu messages, %llu PSN gaps (%llu missing), %llu CE, "
        "%llu CNPs sent\n",
        (unsigned long long)rx.packets, (unsigned long long)rx.messages,
        (unsigned long long)rx.psn_gaps, (unsigned long long)rx.missing, (unsigned long long)rx.ce,
        (unsigned long long)rx.cnps);
    std::printf(
        "polling loop while flows ran: longest gap %.1f us, %llu gaps > 100 us, %llu > 1 ms\n",
        double(loop.gap_max_ns) / 1000, (unsigned long long)loop.gaps_100us,
        (unsigned long long)loop.gaps_1ms);
    if (ov.valid) {
        std::printf(
            "fairness: all %zu flows active %.3f..%.3f ms; last half from %.3f ms: Jain "
            "%.4f (rates",
            ov.rate_bps.size(), double(ov.window_start_ns) / 1e6, double(ov.window_end_ns) / 1e6,
            double(ov.half_start_ns) / 1e6, ov.jain);
        for (double r : ov.rate_bps) std::printf(" %.1f", r / 1e6);
        std::printf(" Mb/s); whole flows: Jain %.4f\n", jain_index(flow_throughputs(rs)));
    }
    if (!rs.empty()) std::printf("%s", format_summary(buckets).c_str());
    std::fflush(stdout);
}

}  // namespace

std::vector<FlowResult> flow_results(const HostSet &hs) {
    const HostRunConfig &cfg = hs.config();
    std::vector<FlowResult> results;
    for (const Flow &fl : hs.flows()) {
        if (fl.host < 0) continue;
        const Host &h = hs.hosts()[size_t(fl.host)];
        FlowResult r;
        r.id = fl.spec.id;
        r.src = cfg.hosts[fl.spec.src].name;
        r.dst = cfg.hosts[fl.spec.dst].name;
        r.size_bytes = fl.spec.size_bytes;
        r.start_ns = fl.start_ns;
        r.finish_ns = fl.finish_ns;
        r.completed = fl.done;
        r.ideal_ns = fl.spec.ideal_ns
                         ? fl.spec.ideal_ns
                         : ideal_fct_ns(fl.spec.size_bytes, cfg.run.mtu, h.cfg.line_rate_bps,
                                        cfg.run.base_rtt_ns, h.cfg.ip.addr.is_v6);
        r.base_rtt_ns = fl.spec.ideal_ns ? fl.spec.base_rtt_ns : cfg.run.base_rtt_ns;
        r.retransmitted = fl.qp.retransmitted();
        results.push_back(r);
    }
    return results;
}

ReceiverTotals receiver_totals(const HostSet &hs) {
    ReceiverTotals t;
    for (const Host &h : hs.hosts())
        for (const auto &[k, e] : h.recv) {
            const auto &s = e.qp.stats();
            t.packets += s.packets;
            t.bytes += s.bytes;
            t.messages += s.messages;
            t.psn_gaps += s.psn_gaps;
            t.missing += s.missing_packets;
            t.duplicates += s.duplicates;
            t.ce += e.np.ce_packets;
            t.cnps += e.np.cnps;
        }
    return t;
}

// udp_flows.csv (roce/udp_flow.h, rocesim's columns; src and dst are host indexes): when the
// run has UDP flows.
bool write_udp_flows(const HostSet &hs, const std::string &dir) {
    const auto &flows = hs.config().udp_flows;
    if (flows.empty()) return true;
    std::FILE *f = std::fopen((dir + "/udp_flows.csv").c_str(), "w");
    if (!f) {
        spdlog::error("{}/udp_flows.csv: cannot write", dir);
        return false;
    }
    std::vector<UdpFlowRow> rows;
    for (const UdpFlowConfig &u : flows) rows.push_back({u.src, u.dst, u.sport, u.dport});
    write_udp_flows_csv(f, rows, hs.udp());
    return std::fclose(f) == 0;
}
namespace {
// jobs.csv and job_flows.csv (JobRunner's formats); summary.json's `jobs` (rocesim's key).
bool write_jobs(const JobRunner &jobs, const std::string &dir, nlohmann::json &js) {
    auto write = [&](const char *name, void (JobRunner::*what)(std::FILE *) const) {
        const std::string p = dir + "/" + name;
        std::FILE *f = std::fopen(p.c_str(), "w");
        if (!f) spdlog::error("{}: cannot write", p);
        if (!f) return false;
        (jobs.*what)(f);
        return std::fclose(f) == 0;
    };
    if (!write("jobs.csv", &JobRunner::write_csv) ||
        !write("job_flows.csv", &JobRunner::write_flows_csv))
        return false;
    const JobRunner::Totals t = jobs.totals();
    js["jobs"] = {{"jobs", t.jobs},
                  {"completed", t.jobs_completed},
                  {"iterations", t.iterations},
                  {"iterations_completed", t.iterations_completed}};
    return true;
}
}  // namespace

bool write_host_results(const HostSet &hs, const std::string &dir, uint64_t run_ns,
                        const LoopStats &loop, const JobRunner *jobs) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const std::vector<FlowResult> rs = flow_results(hs);
    nlohmann::json hosts;
    if (!write_flows(hs, dir, rs) || !write_qp_rates(hs, dir) || !write_flow_bytes(hs, dir) ||
        !write_receivers(hs, dir) || !write_hosts(hs, dir, run_ns, &hosts) ||
        !write_pauses(hs, dir) || !write_pfc_sent(hs, dir) || !write_udp_flows(hs, dir))
        return false;
    const ReceiverTotals rx = receiver_totals(hs);
    const OverlapFairness ov = overlap_of(hs);
    const auto buckets = summarize(rs);
    std::ofstream sj;
    if (!open_out(dir, "summary.json", sj)) return false;
    nlohmann::json js = summary_json(hs, run_ns, loop, rs, rx, ov, buckets, std::move(hosts));
    if (jobs && jobs->size() && !write_jobs(*jobs, dir, js)) return false;
    sj << js.dump(2) << '\n';
    print_summary(hs, run_ns, loop, rs, rx, ov, buckets);
    return true;
}

}  // namespace rocesw::roce
