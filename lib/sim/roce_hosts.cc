#include "sim/roce_hosts.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include <rte_mbuf.h>

#include "roce/host_results.h"

namespace rocesw::sim {

RoceHosts::RoceHosts(const Scenario &s, std::vector<roce::HostConfig> hosts,
                     std::vector<uint32_t> nodes, std::vector<PortQos> access,
                     const EcmpRouting &routing, rte_mempool *pool, std::FILE *fct)
    : s_(s),
      routing_(routing),
      nodes_(std::move(nodes)),
      access_(std::move(access)),
      sports_(s.topo.node_count()) {
    const RoceHostSpec &R = s.roce;
    cfg_.source = s.source.empty() ? "rocesim" : s.source;
    cfg_.run.name = "rocesim";
    cfg_.run.mtu = R.mtu;
    cfg_.run.ack_every = R.ack_every;
    cfg_.run.window = R.window;
    cfg_.run.rto_ns = R.rto_ns;
    cfg_.run.start_delay_ns = 0;  // flows start at their own times (flow.txt: seconds)
    cfg_.run.linger_ns = 0;
    cfg_.run.exit_when_done = false;
    cfg_.run.duration_ns = UINT64_MAX;
    cfg_.run.sample_ns = R.byte_samples_ns;
    cfg_.run.base_rtt_ns = R.base_rtt_ns.value_or(0);
    // The host's wake-ups are whole ns while the wire is in ps: 1 ns of slack keeps the line
    // and QP pacers on their exact ps schedule (a wake-up at ceil(t) does not push the next
    // packet back); the wire still serialises every frame.
    cfg_.run.pacer_slack_ns = 1;
    cfg_.traffic = R.traffic;
    cfg_.dcqcn = R.dcqcn;
    cfg_.dcqcn_enabled = R.dcqcn_enabled;
    cfg_.hosts = std::move(hosts);
    cfg_.workload.spec.pattern = roce::Pattern::pairs;  // none: flows are added below
    cfg_.workload.spec.n_hosts = uint32_t(cfg_.hosts.size());
    index_.assign(s.topo.node_count(), -1);
    for (size_t i = 0; i < nodes_.size(); i++) index_[nodes_[i]] = int(i);
    // Hosts honour PFC for every pg their flows use that the switch treats as lossless.
    std::vector<PortQos> by_node(s.topo.node_count());
    for (size_t i = 0; i < nodes_.size(); i++) by_node[nodes_[i]] = access_[i];
    cfg_.traffic.pfc_mask = hosts_pfc_mask(s, cfg_.traffic, by_node);
    hs_ = std::make_unique<roce::HostSet>(cfg_, cfg_.hosts.size(), io_, pool);
    if (fct) fct_ = std::make_unique<FctWriter>(fct);

    // Flows with known start times, in start order (SourcePorts numbers them per host in that
    // order, as HPCC does); ties keep the file order.
    std::vector<uint32_t> order(s.flows.size());
    for (uint32_t i = 0; i < order.size(); i++) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return s.flows[a].start_ns < s.flows[b].start_ns;
    });
    for (uint32_t i : order) add(s.flows[i], s.flows[i].start_ns);
    for (const CollectiveWorkload &j : s.jobs) jobs_.add(j.spec, j.start_ns);
    add_job_flows(jobs_.initial(), 0, nullptr);
}

void RoceHosts::add_job_flows(const std::vector<roce::JobRunner::Start> &starts, uint64_t now_ns,
                              std::vector<uint32_t> *woken) {
    for (const roce::JobRunner::Start &st : starts) {
        const roce::CollectiveJob &job = jobs_.job(st.job);
        const roce::CollectiveFlow &cf = job.flows[st.flow];
        FlowRecord f;
        f.src = cf.src;
        f.dst = cf.dst;
        f.size_bytes = cf.size_bytes;
        f.pg = job.spec.pg;
        f.dport = job.spec.dport;
        const uint32_t id = add(f, std::max(st.at_ns, now_ns));
        jobs_.bind(id, st.job, st.flow);
        if (woken) woken->push_back(f.src);
    }
}

std::optional<roce::FlowClass> resolve_flow_class(const PortQos &c, const roce::TrafficConfig &t,
                                                  uint8_t pg, const std::string &where) {
    const bool dscp_ok = c.trust == Trust::dscp;
    if (dscp_ok && c.dscp_to_tc[t.data_dscp & 63] == pg && t.data_priority == pg) return std::nullopt;
    roce::FlowClass fc;
    fc.data_priority = pg;
    int dscp = -1;
    if (dscp_ok && c.dscp_to_tc[t.data_dscp & 63] == pg) dscp = t.data_dscp;
    for (int d = 0; dscp_ok && dscp < 0 && d < int(kNumDscp); d++)
        if (c.dscp_to_tc[size_t(d)] == pg) dscp = d;
    if (dscp < 0)
        throw std::runtime_error("pg " + std::to_string(pg) + ": no DSCP maps to TC " +
                                 std::to_string(pg) + " at " + where);
    fc.data_dscp = uint8_t(dscp);
    if (t.ack_dscp == t.data_dscp && t.ack_prio() == t.data_priority) {
        fc.ack_dscp = fc.data_dscp;
        fc.ack_priority = pg;
    } else {
        fc.ack_dscp = t.ack_dscp;
        fc.ack_priority = t.ack_prio();
    }
    return fc;
}

std::string flow_class_where(const Scenario &s, uint32_t node) {
    return "host " + std::to_string(node) + "'s switch port (" + s.qos_source + ")";
}

uint8_t hosts_pfc_mask(const Scenario &s, const roce::TrafficConfig &t,
                       const std::vector<PortQos> &access) {
    uint8_t mask = t.pfc_mask;
    auto honour = [&](uint32_t src, const std::optional<uint8_t> &pg) {
        if (!pg || src >= access.size() || !s.topo.is_host(src)) return;
        if (!resolve_flow_class(access[src], t, *pg, flow_class_where(s, src))) return;
        if (access[src].pfc_enable >> *pg & 1) mask |= uint8_t(1u << *pg);
    };
    for (const FlowRecord &f : s.flows) honour(f.src, f.pg);
    for (const CollectiveWorkload &j : s.jobs)
        for (uint32_t h : j.spec.hosts) honour(h, j.spec.pg);
    return mask;
}

std::optional<roce::FlowClass> RoceHosts::flow_class(uint32_t src, uint8_t pg) const {
    return resolve_flow_class(access_.at(size_t(index(src))), cfg_.traffic, pg,
                              flow_class_where(s_, src));
}

RoceHosts::~RoceHosts() {
    hs_->release();
}

uint32_t RoceHosts::add(const FlowRecord &f, uint64_t start_ns) {
    const int si = index(f.src), di = index(f.dst);
    if (si < 0 || di < 0) throw std::runtime_error("a RoCE flow between nodes that are not hosts");
    roce::FlowSpec spec;
    spec.src = uint32_t(si);
    spec.dst = uint32_t(di);
    spec.size_bytes = f.size_bytes;
    spec.start_ns = start_ns;
    if (f.pg) spec.cls = flow_class(f.src, *f.pg);
    const PathInfo p = routing_.path(f.src, f.dst, s_.roce.standalone.payload_bytes);
    if (p.reachable && !s_.roce.base_rtt_ns) {
        spec.ideal_ns = roce::path_ideal_fct_ns(f.size_bytes, s_.roce.mtu, p.links);
        uint64_t bottleneck = UINT64_MAX;
        for (const roce::PathLink &l : p.links) bottleneck = std::min(bottleneck, l.rate_bps);
        const uint64_t bytes_ns = roce::ideal_fct_ns(f.size_bytes, s_.roce.mtu, bottleneck, 0);
        spec.base_rtt_ns = spec.ideal_ns > bytes_ns ? spec.ideal_ns - bytes_ns : 0;
    }
    const uint32_t id = hs_->add_flow(spec);
    SimFlowInfo in;
    in.src = f.src;
    in.dst = f.dst;
    in.sport = sports_.next(f.src);
    in.dport = f.dport;
    in.standalone_ns = p.reachable ? standalone_fct_ns(f.size_bytes, p, s_.roce.standalone) : 0;
    if (info_.size() <= id) info_.resize(id + 1);
    info_[id] = in;
    return id;
}

void RoceHosts::on_rx(uint32_t node, rte_mbuf **frames, uint16_t n, TimePs now) {
    hs_->on_rx(size_t(index_[node]), frames, n, ns(now));
}

TimePs RoceHosts::next_event(uint32_t node, TimePs wire_free) const {
    const uint64_t t = hs_->next_event_ns(size_t(index_[node]));
    if (t == roce::kNeverNs) return kNever;
    // Anything it wants to do sends a frame (timers run at the next poll, with their own
    // times), so it need not run before its wire is free.
    return std::max(from_ns(t), wire_free);
}

void RoceHosts::run(uint32_t node, TimePs now, TimePs wire_free, std::vector<rte_mbuf *> &out) {
    io_.arm(&out, now >= wire_free);
    hs_->poll_host(size_t(index_[node]), ns(now));
    io_.arm(nullptr, false);
}

void RoceHosts::on_completions(TimePs now, std::vector<uint32_t> &woken) {
    done_.clear();
    hs_->take_completed(done_);
    for (uint32_t id : done_) {
        const roce::Flow &f = hs_->flows()[id];
        const SimFlowInfo in = info_[id];
        if (fct_) {
            FctRecord r;
            r.sip = host_address(in.src);
            r.dip = host_address(in.dst);
            r.sport = in.sport;
            r.dport = in.dport;
            r.size_bytes = f.spec.size_bytes;
            r.start_ns = f.start_ns;
            r.fct_ns = f.finish_ns - f.start_ns;
            r.standalone_fct_ns = in.standalone_ns;
            fct_->write(r);
        }
        add_job_flows(jobs_.on_sent(id, f.finish_ns), ns(now), &woken);
    }
    received_.clear();
    hs_->take_received(received_);
    for (const roce::HostSet::Received &r : received_)
        add_job_flows(jobs_.on_received(r.flow, r.t_ns), ns(now), &woken);
}

bool RoceHosts::write_results(const std::string &dir, const std::string &jobs_dir,
                              TimePs now) const {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    bool ok = roce::write_host_results(*hs_, dir, ns(now));
    if (!jobs_.size()) return ok;
    const std::string p = jobs_dir + "/jobs.csv";
    std::FILE *f = std::fopen(p.c_str(), "w");
    if (!f) return false;
    jobs_.write_csv(f);
    std::fclose(f);
    return ok;
}

void MixedSimHost::on_rx(rte_mbuf **frames, uint16_t n, TimePs now) {
    for (uint16_t i = 0; i < n; i++) {
        rte_mbuf *m = frames[i];
        if (UdpHost::is_udp_flow_frame(m)) {
            udp_->on_rx(&m, 1, now);
        } else if (UdpHost::is_mac_control(m)) {
            rte_mbuf *c = rte_pktmbuf_copy(m, pool_, 0, UINT32_MAX);
            if (c)
                udp_->on_rx(&c, 1, now);
            else
                clone_failed_++;
            roce_->on_rx(&m, 1, now);
        } else {
            roce_->on_rx(&m, 1, now);
        }
    }
}

void MixedSimHost::run(TimePs now, TimePs wire_free, std::vector<rte_mbuf *> &out) {
    const size_t n0 = out.size();
    // A sender that finds a frame already on the wire sees it busy (wire free after now).
    auto wire = [&] { return out.size() > n0 ? now + 1 : wire_free; };
    if (udp_->next_event(wire_free) <= roce_->next_event(wire_free)) {
        udp_->run(now, wire_free, out);
        roce_->run(now, wire(), out);
    } else {
        roce_->run(now, wire_free, out);
        udp_->run(now, wire(), out);
    }
}

}  // namespace rocesw::sim
