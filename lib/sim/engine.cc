#include "sim/engine.h"

#include <optional>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "pfc/frame.h"
#include "pkt/bytes.h"
#include "pkt/mbuf_meta.h"
#include "sim/lab.h"

namespace rocesw::sim {

// ---------------------------------------------------------------------------------------------
// SimPorts

uint16_t SimPorts::rx_burst(uint16_t port, uint16_t, rte_mbuf **pkts, uint16_t n) {
    Fifo &f = rx_[port];
    uint16_t k = uint16_t(std::min<size_t>(n, f.size()));
    for (uint16_t i = 0; i < k; i++) pkts[i] = f.v[f.head++];
    if (f.head == f.v.size()) {
        f.v.clear();
        f.head = 0;
    }
    pending_ -= k;
    return k;
}

uint16_t SimPorts::tx_burst(uint16_t port, uint16_t, rte_mbuf **pkts, uint16_t n) {
    uint16_t k = e_.switch_tx(node_, port, pkts, n);
    if (k < n) refused_ |= 1u << port;
    return k;
}

SimPorts::~SimPorts() {
    for (auto &f : rx_)
        for (size_t i = f.head; i < f.v.size(); i++) rte_pktmbuf_free(f.v[i]);
}

// ---------------------------------------------------------------------------------------------
// Engine: set-up

MacAddr Engine::port_mac(uint32_t node, uint16_t port) {
    return MacAddr{
        {0x02, uint8_t(node >> 16), uint8_t(node >> 8), uint8_t(node), 0, uint8_t(port)}};
}
uint32_t Engine::port_addr(uint32_t node, uint16_t port) const {
    const Topology &t = s_.topo;
    if (t.is_switch(node) && port < t.ports(node).size()) {
        const PortRef &r = t.ports(node)[port];
        if (t.is_switch(r.peer)) return lab_link_addr(r.link, node > r.peer);
    }
    return 0x0A800000u | (node & 0x7FFF) << 8 | (port & 0xFF);  // 10.128/9: not a link's
}

static std::FILE *open_out(const std::string &dir, const char *name) {
    if (dir.empty()) return nullptr;
    std::string p = dir + "/" + name;
    std::FILE *f = std::fopen(p.c_str(), "w");
    if (!f) throw std::runtime_error("cannot write " + p);
    return f;
}

std::vector<SimSwitchPort> sim_switch_ports(const Scenario &s, uint32_t n) {
    std::vector<SimSwitchPort> ports;
    for (uint16_t p = 0; p < s.topo.ports(n).size(); p++) {
        const TopoLink &tl = s.topo.link(s.topo.ports(n)[p].link);
        std::string name = "p";  // not "p" + to_string: GCC 12's bogus -Wrestrict at -O3
        name += std::to_string(p);
        ports.push_back(SimSwitchPort{std::move(name), Engine::port_mac(n, p), tl.rate_bps, s.mtu});
    }
    return ports;
}

std::vector<PortQos> host_access_classes(const Scenario &s) {
    const Topology &t = s.topo;
    std::vector<PortQos> out(t.node_count());
    std::vector<std::optional<QosPlan>> plans(t.node_count());
    for (uint32_t h : t.hosts()) {
        if (t.ports(h).empty()) continue;
        const PortRef &r = t.ports(h)[0];
        if (!t.is_switch(r.peer)) continue;
        if (!plans[r.peer]) plans[r.peer] = sim_qos_plan(s.qos, sim_switch_ports(s, r.peer));
        out[h] = plans[r.peer]->ports[r.peer_port].cls;
    }
    return out;
}

Engine::Engine(const Scenario &s, const std::string &out_dir)
    : s_(s), out_(out_dir), routing_(s_.topo), udp_(s.udp.size()) {
    const Topology &t = s_.topo;
    if (t.node_count() > 65536) throw std::runtime_error("at most 65536 nodes");
    udp_.keep_deliveries(s_.delays);

    const uint32_t data_room = RTE_PKTMBUF_HEADROOM + std::max<uint32_t>(2048, s_.mtu + 18);
    static unsigned instance = 0;  // engines may follow each other in one process (tests)
    std::string pname = "rocesim_pool_" + std::to_string(instance++);
    // Packed (no device DMAs a simulated frame): without hugepages DPDK's default layout puts
    // each mbuf in a 4 KiB page of its own, 40 % of the pool unused (pkt/mbuf_meta.h).
    pool_ = create_mbuf_pool(pname, s_.mbufs, s_.mbufs > 2048 ? 256 : 0, uint16_t(data_room),
                             SOCKET_ID_ANY, true);
    if (!pool_)
        throw std::runtime_error(std::string("cannot create the mbuf pool: ") +
                                 rte_strerror(rte_errno));

    for (uint32_t i = 0; i < t.link_count(); i++) {
        const TopoLink &tl = t.link(i);
        Link l;
        l.node_a = tl.a;
        l.node_b = tl.b;
        l.port_a = tl.port_a;
        l.port_b = tl.port_b;
        const uint64_t seed = s_.seed * 0x9E3779B97F4A7C15ull + i;
        l.a_to_b = LinkDirection({tl.rate_bps, tl.delay_ps, tl.error_rate, seed * 2});
        l.b_to_a = LinkDirection({tl.rate_bps, tl.delay_ps, tl.error_rate, seed * 2 + 1});
        links_.push_back(l);
    }

    pfc_f_ = open_out(out_, "pfc_events.csv");
    queue_f_ = open_out(out_, "queue_depth.csv");
    fct_f_ = open_out(out_, "fct.txt");  // RoCE flows only
    if (pfc_f_) std::fprintf(pfc_f_, "time_ns,node,port,priority,event,quanta\n");
    if (queue_f_) std::fprintf(queue_f_, "time_ns,node,port,queue,depth_bytes,depth_packets\n");
    if (s_.sample_interval) {
        port_f_ = open_out(out_, "port_samples.csv");
        if (port_f_)
            std::fprintf(port_f_,
                         "time_ns,node,port,tx_frames,tx_bytes,ecn_marked,drops,paused_queues,"
                         "wd_stormed\n");
    }

    nodes_.resize(t.node_count());
    // Flows: the PFC priority of a flow is the TC its DSCP maps to at its first switch.
    std::vector<UdpFlowSpec> &flows = s_.udp;
    for (uint32_t n = 0; n < t.node_count(); n++) {
        if (!t.is_switch(n)) continue;
        Node &nd = nodes_[n];
        SimSwitchSpec spec;
        spec.name = "sw" + std::to_string(n);
        spec.ports = sim_switch_ports(s_, n);
        spec.lb.default_policy = s_.lb_policy;
        if (auto it = s_.lb_per_switch.find(n); it != s_.lb_per_switch.end())
            spec.lb.default_policy = it->second;
        spec.lb.seed = s_.lb_seed ^ (uint64_t(n) * 0x9E3779B97F4A7C15ull);  // per switch
        spec.lb.flowlet_gap_us = s_.flowlet_gap_us;
        spec.lb.flowlet_age_us = std::max<uint32_t>(10000, s_.flowlet_gap_us);
        spec.lb.flowlet_entries = 4096;
        spec.compact_fib = s_.compact_fib;
        spec.max_routes = t.host_count() + uint32_t(t.ports(n).size()) + 16;
        QosPlan plan = sim_qos_plan(s_.qos, spec.ports);
        nd.ports = std::make_unique<SimPorts>(*this, n, uint16_t(spec.ports.size()));
        nd.sw = std::make_unique<SimSwitch>(spec, plan, *nd.ports, pool_);
        nd.wake_at.assign(spec.ports.size(), 0);
        for (uint16_t p = 0; p < t.ports(n).size(); p++) {
            const PortRef &r = t.ports(n)[p];
            nd.sw->add_neighbour(uint8_t(p), IpAddr{false, port_addr(r.peer, r.peer_port), {}},
                                 port_mac(r.peer, r.peer_port));
        }
        install_routes(n);
    }
    for (auto &f : flows) {
        const PortRef &r = t.ports(f.src).at(0);
        if (t.is_switch(r.peer)) {
            const PortQos &cls = nodes_[r.peer].sw->qos().plan().ports[r.peer_port].cls;
            f.priority = udp_flow_priority(cls, f.dscp);
        }
    }
    if (uses_roce(s_)) {
        // Every host is a lib/roce host: MAC 02:nn:nn:nn:00:00, HPCC's address as a /32 (so
        // every destination is reached through the gateway), the switch port it is cabled to
        // as a static gateway (no ARP), line rate = its link's rate.
        std::vector<roce::HostConfig> hosts;
        std::vector<uint32_t> ids;
        std::vector<PortQos> access;
        for (uint32_t n = 0; n < t.node_count(); n++) {
            if (!t.is_host(n) || t.ports(n).empty()) continue;
            const PortRef &r = t.ports(n)[0];
            roce::HostConfig h;
            h.name = "h" + std::to_string(n);
            h.device = "sim";
            h.mac = port_mac(n, 0);
            h.ip = IfAddr{IpAddr{false, host_address(n), {}}, 32};
            h.gateway = IpAddr{false, port_addr(r.peer, r.peer_port), {}};
            h.gateway_mac = port_mac(r.peer, r.peer_port);
            h.line_rate_bps = t.link(r.link).rate_bps;
            hosts.push_back(h);
            ids.push_back(n);
            access.push_back(t.is_switch(r.peer)
                                 ? nodes_[r.peer].sw->qos().plan().ports[r.peer_port].cls
                                 : PortQos{});
        }
        roce_ = std::make_unique<RoceHosts>(s_, std::move(hosts), ids, std::move(access),
                                            routing_, pool_, fct_f_);
    }
    // UDP hosts: every host of a run without RoCE traffic; with RoCE, the hosts that send or
    // receive a UDP flow are both (MixedSimHost), the others RoCE hosts.
    std::vector<bool> udp_node(t.node_count(), !roce_);
    for (const UdpFlowSpec &f : flows) udp_node[f.src] = udp_node[f.dst] = true;
    for (uint32_t n = 0; n < t.node_count(); n++) {
        if (!t.is_host(n) || t.ports(n).empty()) continue;
        std::unique_ptr<RoceSimHost> roce_host;
        if (roce_) roce_host = std::make_unique<RoceSimHost>(*roce_, n);
        if (!udp_node[n]) {
            nodes_[n].host = std::move(roce_host);
        } else {
            const PortRef &r = t.ports(n)[0];
            UdpHostParams hp;
            hp.node = n;
            hp.ip = host_address(n);
            hp.mac = port_mac(n, 0);
            hp.peer_mac = port_mac(r.peer, r.peer_port);
            hp.port_rate_bps = t.link(r.link).rate_bps;
            hp.pool = pool_;
            auto udp_host = std::make_unique<UdpHost>(hp, flows, udp_);
            if (roce_host)
                nodes_[n].host = std::make_unique<MixedSimHost>(std::move(udp_host),
                                                                std::move(roce_host), pool_);
            else
                nodes_[n].host = std::move(udp_host);
        }
        schedule_host(n);
    }
    for (size_t i = 0; i < s_.host_events.size(); i++) {
        const HostEvent &he = s_.host_events[i];
        if (he.node >= t.node_count() || !t.is_host(he.node) || t.ports(he.node).empty())
            throw std::runtime_error("host event " + std::to_string(i) + ": " +
                                     std::to_string(he.node) + " is not a connected host");
        schedule_live(he.at, host_event, he.node, 0, i);
    }
    for (size_t i = 0; i < s_.events.size(); i++) {
        if (s_.events[i].link >= links_.size())
            throw std::runtime_error("event " + std::to_string(i) + ": no link " +
                                     std::to_string(s_.events[i].link));
        schedule_live(s_.events[i].at, link_change, 0, 0, i);
    }
    if (s_.sample_interval) q_.schedule(0, sample);
}

Engine::~Engine() {
    while (!q_.empty()) {
        Event e = q_.pop();
        if (e.kind == arrive) {
            rte_pktmbuf_free(inflight_[e.arg].m);
        }
    }
    for (auto &n : nodes_) {
        n.sw.reset();  // frees what its egress holds
        n.ports.reset();
        n.host.reset();
        for (rte_mbuf *m : n.held) rte_pktmbuf_free(m);
    }
    roce_.reset();  // its frames go back to the pool before the pool goes
    for (std::FILE *f : {pfc_f_, queue_f_, fct_f_, port_f_})
        if (f) std::fclose(f);
    rte_mempool_free(pool_);
}

void Engine::install_routes(uint32_t node) {
    std::vector<SimSwitch::RouteSet> rs;
    for (uint32_t h : s_.topo.hosts()) {
        SimSwitch::RouteSet r;
        r.prefix = IpPrefix{IpAddr{false, host_address(h), {}}, 32};
        for (const NextHop &nh : routing_.next_hops(node, h)) {
            const PortRef &pr = s_.topo.ports(node)[nh.port];
            r.paths.push_back(LearnedPath{uint8_t(nh.port),
                                          IpAddr{false, port_addr(pr.peer, pr.peer_port), {}}, 1});
        }
        rs.push_back(std::move(r));
    }
    st_.routes_refused += nodes_[node].sw->set_routes(rs);
}

// ---------------------------------------------------------------------------------------------
// Frames on wires

void Engine::observe_pfc(uint32_t node, uint16_t port, const rte_mbuf *m) {
    const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
    const uint32_t len = rte_pktmbuf_data_len(m);
    if (len < 14 || rd16(b + 12) != kEtherTypeMacControl) return;
    MacControlFrame mc;
    if (parse_mac_control(b, len, &mc) != MacControlError::none) return;
    st_.pfc_frames++;
    if (!pfc_f_) return;
    for (unsigned p = 0; p < 8; p++) {
        if (!(mc.enable >> p & 1)) continue;
        const uint16_t q = mc.pfc ? mc.quanta[p] : mc.quanta[0];
        std::fprintf(pfc_f_, "%lu,%u,%u,%u,%s,%u\n", (unsigned long)ns(q_.now()), node, port, p,
                     q ? "xoff" : "xon", q);
    }
}

void Engine::transmit(uint32_t node, uint16_t port, rte_mbuf *m) {
    const PortRef &r = s_.topo.ports(node)[port];
    Link &l = links_[r.link];
    const uint8_t d = node == l.node_a && port == l.port_a ? 0 : 1;
    LinkDirection &dir = d == 0 ? l.a_to_b : l.b_to_a;
    observe_pfc(node, port, m);
    const uint32_t frame = std::max<uint32_t>(m->pkt_len, kMacControlFrameLen) + 4;
    const Transmission t = dir.transmit(q_.now(), frame);
    st_.frames++;
    if (!t.sent || t.lost) {
        if (!t.sent) {
            st_.link_down_drops++;
            st_.first_link_drop = std::min(st_.first_link_drop, q_.now());
            st_.last_link_drop = std::max(st_.last_link_drop, q_.now());
        } else {
            st_.lost_error++;
        }
        rte_pktmbuf_free(m);
        return;
    }
    uint32_t slot;
    if (!free_slots_.empty()) {
        slot = free_slots_.back();
        free_slots_.pop_back();
    } else {
        slot = uint32_t(inflight_.size());
        inflight_.push_back({});
    }
    inflight_[slot] = InFlight{m, r.link, t.generation, d};
    schedule_live(t.arrival, arrive, r.peer, r.peer_port, slot);
}

uint16_t Engine::switch_tx(uint32_t node, uint16_t port, rte_mbuf **pkts, uint16_t n) {
    LinkDirection &dir = dir_of(node, port);
    if (!dir.up()) {  // the link drops (and counts) everything handed to it
        for (uint16_t i = 0; i < n; i++) transmit(node, port, pkts[i]);
        return n;
    }
    if (!n || !dir.idle(q_.now())) return 0;
    transmit(node, port, pkts[0]);
    return 1;
}

void Engine::on_arrive(const Event &e) {
    const InFlight f = inflight_[e.arg];
    free_slots_.push_back(uint32_t(e.arg));
    Link &l = links_[f.link];
    LinkDirection &dir = f.dir == 0 ? l.a_to_b : l.b_to_a;
    Transmission t;
    t.generation = f.gen;
    if (!dir.delivers(t)) {
        dir.count_lost_in_flight();
        st_.lost_in_flight++;
        rte_pktmbuf_free(f.m);
        return;
    }
    st_.frame_hops++;
    Node &nd = nodes_[e.node];
    if (nd.sw) {
        nd.ports->push_rx(e.port, f.m);
        run_switch(e.node);
    } else if (nd.host) {
        if (q_.now() < nd.slow_until) {  // a slow receiver: the frame waits in its RX buffer
            nd.held.push_back(f.m);
            nd.held_bytes += f.m->pkt_len;
            st_.slow_held_frames++;
            st_.slow_held_max_bytes = std::max(st_.slow_held_max_bytes, nd.held_bytes);
            const HostEvent *he = nullptr;
            for (const HostEvent &x : s_.host_events)
                if (x.node == e.node && x.kind == HostEvent::slow_receiver && x.at <= q_.now() &&
                    q_.now() < x.until)
                    he = &x;
            if (he && !nd.rx_xoff && nd.held_bytes >= he->xoff_bytes) {
                nd.rx_xoff = true;
                send_host_pfc(e.node, he->priority, 0xFFFF);
                st_.slow_pause_frames++;
                schedule_live(q_.now() + he->interval, host_event, e.node, 1,
                              uint64_t(he - s_.host_events.data()));
            }
            return;
        }
        deliver_to_host(e.node, f.m);
    } else {
        rte_pktmbuf_free(f.m);
    }
}

void Engine::deliver_to_host(uint32_t node, rte_mbuf *m) {
    Node &nd = nodes_[node];
    nd.host->on_rx(&m, 1, q_.now());
    schedule_host(node);
    if (roce_) {
        woken_.clear();
        roce_->on_completions(q_.now(), woken_);
        for (uint32_t n : woken_) schedule_host(n);
    }
}

// A PFC frame from host `node`'s NIC (storm, slow receiver): straight onto its wire, behind
// the frame in progress; the host's own frames wait for the wire as usual.
void Engine::send_host_pfc(uint32_t node, uint8_t priority, uint16_t quanta) {
    rte_mbuf *m = rte_pktmbuf_alloc(pool_);
    if (!m) return;
    uint8_t *b = reinterpret_cast<uint8_t *>(rte_pktmbuf_append(m, kMacControlFrameLen));
    if (!b) {
        rte_pktmbuf_free(m);
        return;
    }
    std::array<uint16_t, kNumPriorities> q{};
    q[priority] = quanta;
    build_pfc_frame(b, port_mac(node, 0).b, uint8_t(1u << priority), q);
    transmit(node, 0, m);
    schedule_host(node);
}

// Host events: port 0 = the start, 1 = a refresh tick, 2 = the end.
void Engine::on_host_event(const Event &e) {
    const HostEvent &he = s_.host_events[e.arg];
    Node &nd = nodes_[e.node];
    const TimePs now = q_.now();
    if (he.kind == HostEvent::pfc_storm) {
        if (now >= he.until) {
            send_host_pfc(e.node, he.priority, 0);
            st_.storm_frames++;
            return;
        }
        send_host_pfc(e.node, he.priority, 0xFFFF);
        st_.storm_frames++;
        const TimePs next = now + he.interval;
        schedule_live(std::min(next, he.until), host_event, e.node, next >= he.until ? 2 : 1,
                      e.arg);
        return;
    }
    // slow_receiver
    if (e.port == 0) {
        nd.slow_until = he.until;
        schedule_live(he.until, host_event, e.node, 2, e.arg);
    } else if (e.port == 1) {
        if (nd.rx_xoff && now < nd.slow_until) {
            send_host_pfc(e.node, he.priority, 0xFFFF);
            st_.slow_pause_frames++;
            schedule_live(now + he.interval, host_event, e.node, 1, e.arg);
        }
    } else {
        nd.slow_until = 0;
        std::vector<rte_mbuf *> held;
        held.swap(nd.held);
        nd.held_bytes = 0;
        for (rte_mbuf *m : held) deliver_to_host(e.node, m);
        if (nd.rx_xoff) {
            nd.rx_xoff = false;
            send_host_pfc(e.node, he.priority, 0);
            st_.slow_pause_frames++;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Running nodes

void Engine::run_switch(uint32_t node) {
    Node &nd = nodes_[node];
    const uint64_t now_ns = ns(q_.now());
    int guard = 0;
    do {
        nd.sw->poll(now_ns);
        st_.switch_polls++;
    } while (nd.ports->rx_pending() && ++guard < 4096);
    uint32_t refused = nd.ports->take_refused();
    for (uint16_t p = 0; refused; p++, refused >>= 1) {
        if (!(refused & 1)) continue;
        const TimePs t = dir_of(node, p).free_at();
        if (nd.wake_at[p] == t) continue;  // already scheduled
        nd.wake_at[p] = t;
        schedule_live(t, wire_free, node, p);
    }
    // What the egress holds back by itself (PFC pause expiry, XOFF refresh, watchdog, shaper):
    // run the switch exactly then. One pending poll per switch, replaced by an earlier one.
    // When the egress answers "nothing" (an XON ended the pause whose refresh the poll was
    // for, the paused queue it waited on drained), the pending poll stays but no longer keeps
    // the run going (poll_live); a later answer it covers makes it count again.
    const uint64_t next_ns = nd.sw->next_event_ns(now_ns);
    if (next_ns == Egress::kNoEventNs) {
        set_live(nd.poll_live, false);
        return;
    }
    const TimePs t = from_ns(std::max(next_ns, now_ns + 1));
    if (nd.repoll_at <= q_.now() || t < nd.repoll_at) {
        set_live(nd.poll_live, false);  // the one it replaces pops stale
        nd.repoll_at = t;
        q_.schedule(t, poll, node);
    }
    set_live(nd.poll_live, true);
}

void Engine::set_live(bool &flag, bool live) {
    if (flag == live) return;
    flag = live;
    if (live)
        live_++;
    else
        live_--;
}

void Engine::schedule_host(uint32_t node) {
    Node &nd = nodes_[node];
    const TimePs wf = dir_of(node, 0).free_at();
    TimePs t = nd.host->next_event(wf);
    if (t == kNever) {
        // Nothing left to wake for (the flows whose timers it was for have completed): a
        // pending wake-up stays but no longer keeps the run going.
        set_live(nd.host_live, false);
        return;
    }
    t = std::max(t, q_.now());
    set_live(nd.host_live, true);
    if (t == nd.host_at) return;
    nd.host_at = t;
    q_.schedule(t, host, node, 0, ++nd.host_gen);
}

void Engine::run_host(uint32_t node) {
    Node &nd = nodes_[node];
    host_out_.clear();
    nd.host->run(q_.now(), dir_of(node, 0).free_at(), host_out_);
    for (rte_mbuf *m : host_out_) transmit(node, 0, m);
    schedule_host(node);
}

// port_samples.csv: per (node, port) the cumulative frames and bytes put on its wire, and on
// switch ports the ECN marks (all queues), drops charged to the port, the PFC-paused and
// watchdog-stormed queue masks; a row only when one of them changed since the last row.
void Engine::write_port_samples(unsigned long t) {
    if (!port_f_) return;
    const Topology &topo = s_.topo;
    size_t idx = 0;
    for (uint32_t n = 0; n < nodes_.size(); n++) {
        const SimSwitch *sw = nodes_[n].sw.get();
        for (uint16_t p = 0; p < topo.ports(n).size(); p++, idx++) {
            if (port_last_.size() <= idx) port_last_.push_back({});
            const LinkDirection &d = links_[topo.ports(n)[p].link].from(n);
            std::array<uint64_t, 6> v{d.frames_sent(), d.bytes_sent(), 0, 0, 0, 0};
            if (sw) {
                const TrafficManager &tm = sw->qos();
                for (uint8_t q = 0; q < kNumQueues; q++)
                    v[2] += tm.stats(p).queues[q].ecn_marked.load();
                const PortCounters &pc = sw->counters().ports[p];
                for (size_t r = 0; r < kDropReasonCount; r++) v[3] += pc.drops[r].load();
                const PfcPortStats &ps = tm.pfc().stats(p);
                v[4] = ps.paused_queues.load();
                v[5] = ps.wd_stormed.load();
            }
            if (v == port_last_[idx]) continue;
            port_last_[idx] = v;
            std::fprintf(port_f_, "%lu,%u,%u,%lu,%lu,%lu,%lu,%lu,%lu\n", t, n, p,
                         (unsigned long)v[0], (unsigned long)v[1], (unsigned long)v[2],
                         (unsigned long)v[3], (unsigned long)v[4], (unsigned long)v[5]);
        }
    }
}

// links.csv: every link with its two ends, rate and delay, and per direction the frames and
// bytes put on the wire and those lost (sent onto a down link, lost in flight or to errors).
void Engine::write_links() {
    std::FILE *f = open_out(out_, "links.csv");
    std::fprintf(f,
                 "link,node_a,port_a,node_b,port_b,rate_bps,delay_ns,up,"
                 "frames_ab,bytes_ab,lost_ab,frames_ba,bytes_ba,lost_ba\n");
    for (uint32_t i = 0; i < links_.size(); i++) {
        const Link &l = links_[i];
        auto lost = [](const LinkDirection &d) {
            return (unsigned long)(d.frames_dropped_down() + d.frames_lost_in_flight() +
                                   d.frames_lost_error());
        };
        std::fprintf(f, "%u,%u,%u,%u,%u,%lu,%lu,%d,%lu,%lu,%lu,%lu,%lu,%lu\n", i, l.node_a,
                     l.port_a, l.node_b, l.port_b, (unsigned long)l.a_to_b.rate_bps(),
                     (unsigned long)ns(s_.topo.link(i).delay_ps), l.a_to_b.up() ? 1 : 0,
                     (unsigned long)l.a_to_b.frames_sent(), (unsigned long)l.a_to_b.bytes_sent(),
                     lost(l.a_to_b), (unsigned long)l.b_to_a.frames_sent(),
                     (unsigned long)l.b_to_a.bytes_sent(), lost(l.b_to_a));
    }
    std::fclose(f);
}

void Engine::write_samples() {
    write_port_samples((unsigned long)ns(q_.now()));
    if (!queue_f_) return;
    const unsigned long t = (unsigned long)ns(q_.now());
    for (uint32_t n = 0; n < nodes_.size(); n++) {
        if (!nodes_[n].sw) continue;
        const TrafficManager &qs = nodes_[n].sw->qos();
        for (uint16_t p = 0; p < qs.n_ports(); p++)
            for (uint8_t q = 0; q < kNumQueues; q++) {
                QueueSnapshot s = qs.queue(p, q);
                if (s.depth_bytes || s.depth_packets)
                    std::fprintf(queue_f_, "%lu,%u,%u,%u,%lu,%lu\n", t, n, p, q,
                                 (unsigned long)s.depth_bytes, (unsigned long)s.depth_packets);
            }
    }
}

static_assert(kEventKinds == size_t(Engine::kKinds), "kEventKindNames: one name per Kind");

void Engine::schedule_live(TimePs t, Kind kind, uint32_t node, uint16_t port, uint64_t arg) {
    q_.schedule(t, kind, node, port, arg);
    live_++;
}

void Engine::run(void (*progress)(const Engine &, void *), void *arg) {
    // The run ends with the last event that can do something: samples and superseded or void
    // wake-ups left in the queue do not keep it going.
    while (live_) {
        if (s_.until && q_.top().time > s_.until) break;
        const Event e = q_.pop();
        st_.events++;
        st_.events_by_kind[e.kind]++;
        if (progress && (st_.events & 0xFFFF) == 0) progress(*this, arg);
        // Counted in live_ when scheduled: all but samples, polls and host wake-ups (those
        // count through their node's poll_live and host_live).
        if (e.kind != sample && e.kind != poll && e.kind != host) live_--;
        switch (e.kind) {
            case arrive:
                on_arrive(e);
                break;
            case wire_free: {
                Node &nd = nodes_[e.node];
                if (nd.wake_at[e.port] == e.time) nd.wake_at[e.port] = 0;
                run_switch(e.node);
                break;
            }
            case poll:
                if (e.time != nodes_[e.node].repoll_at) {  // replaced by an earlier one
                    st_.stale_events++;
                    break;
                }
                set_live(nodes_[e.node].poll_live, false);
                st_.repolls++;
                run_switch(e.node);
                break;
            case host: {
                Node &nd = nodes_[e.node];
                if (e.arg != nd.host_gen) {  // superseded
                    st_.stale_events++;
                    break;
                }
                nd.host_at = kNever;
                set_live(nd.host_live, false);
                run_host(e.node);
                break;
            }
            case link_change: {
                const LinkEvent &ev = s_.events[e.arg];
                links_[ev.link].set_up(ev.up);
                routing_.set_link_up(ev.link, ev.up);
                schedule_live(e.time + ev.convergence, reroute);
                break;
            }
            case reroute:
                st_.reroutes++;
                routing_.recompute();
                for (uint32_t n : routing_.changed_nodes())
                    if (nodes_[n].sw) install_routes(n);
                break;
            case host_event:
                on_host_event(e);
                break;
            case sample:
                write_samples();
                if (live_) q_.schedule(e.time + s_.sample_interval, sample);
                break;
        }
    }
    st_.now = q_.now();
}

std::array<uint64_t, kDropReasonCount> Engine::drops() const {
    std::array<uint64_t, kDropReasonCount> d{};
    for (const auto &n : nodes_)
        if (n.sw)
            for (const auto &pc : n.sw->counters().ports)
                for (size_t r = 0; r < kDropReasonCount; r++) d[r] += pc.drops[r].load();
    return d;
}

Engine::AccountingSummary Engine::accounting() const {
    AccountingSummary s;
    for (const auto &n : nodes_) {
        if (!n.sw) continue;
        const AccountingReport r = n.sw->accounting();
        s.switches++;
        s.total.add(r.total);
        if (!r.balanced)
            s.unbalanced.push_back(n.sw->spec().name + ": " +
                                   accounting_json(r).at("verdict").get<std::string>());
    }
    return s;
}

void Engine::finish(double setup_s, double wall_s, long peak_rss_kb) {
    if (out_.empty()) return;
    if (roce_) roce_->write_results(out_ + "/hosts", out_, st_.now);
    write_port_samples((unsigned long)ns(st_.now));  // the end state, for rates and totals
    write_links();
    std::FILE *f = open_out(out_, "udp_flows.csv");
    std::vector<roce::UdpFlowRow> rows;
    for (const UdpFlowSpec &fs : s_.udp) rows.push_back({fs.src, fs.dst, fs.sport, fs.dport});
    roce::write_udp_flows_csv(f, rows, udp_);
    std::fclose(f);
    if (s_.delays) {
        f = open_out(out_, "udp_delays.csv");
        std::fprintf(f, "flow,seq,sent_ps,received_ps,delay_ps\n");
        for (const auto &d : udp_.deliveries())
            std::fprintf(f, "%u,%lu,%lu,%lu,%lu\n", d.flow, (unsigned long)d.seq,
                         (unsigned long)d.sent, (unsigned long)d.received,
                         (unsigned long)(d.received - d.sent));
        std::fclose(f);
    }
    // Each switch's time per class (SimSwitch::latency), and all switches' as one histogram.
    f = open_out(out_, "switch_latency.csv");
    std::fprintf(f, "node,tc,packets,p50_ns,p99_ns,p999_ns,max_ns,mean_ns\n");
    std::array<LatencyClassSnapshot, kLatClasses> all_latency;
    // packets, p50, p99, p99.9, max, mean (ns): the CSV's columns and the summary's keys.
    auto latency_figures = [](const LatencyClassSnapshot &c) {
        return std::array<unsigned long, 6>{c.count,           c.quantile(0.5), c.quantile(0.99),
                                            c.quantile(0.999), c.max,           c.sum / c.count};
    };
    for (uint32_t n = 0; n < nodes_.size(); n++) {
        if (!nodes_[n].sw) continue;
        const LatencySnapshot l = nodes_[n].sw->latency();
        for (unsigned c = 0; c < kLatClasses; c++) {
            if (!l.tc[c].count) continue;
            const auto v = latency_figures(l.tc[c]);
            std::fprintf(f, "%u,%u,%lu,%lu,%lu,%lu,%lu,%lu\n", n, c, v[0], v[1], v[2], v[3], v[4],
                         v[5]);
            all_latency[c].add(l.tc[c]);
        }
    }
    std::fclose(f);
    f = open_out(out_, "summary.json");
    std::fprintf(f, "{\n");
    std::fprintf(f, "  \"simulated_time_ns\": %lu,\n", (unsigned long)ns(st_.now));
    std::fprintf(f, "  \"events\": %lu,\n", (unsigned long)st_.events);
    std::fprintf(f, "  \"event_kinds\": {");
    for (size_t k = 0; k < kEventKinds; k++)
        std::fprintf(f, "\"%s\": %lu, ", kEventKindNames[k], (unsigned long)st_.events_by_kind[k]);
    std::fprintf(f, "\"stale\": %lu},\n", (unsigned long)st_.stale_events);
    std::fprintf(f, "  \"frames\": %lu,\n", (unsigned long)st_.frames);
    std::fprintf(f, "  \"frame_hops\": %lu,\n", (unsigned long)st_.frame_hops);
    std::fprintf(f, "  \"pfc_frames\": %lu,\n", (unsigned long)st_.pfc_frames);
    std::fprintf(f, "  \"switch_polls\": %lu,\n", (unsigned long)st_.switch_polls);
    std::fprintf(f, "  \"repolls\": %lu,\n", (unsigned long)st_.repolls);
    std::fprintf(f, "  \"reroutes\": %lu,\n", (unsigned long)st_.reroutes);
    std::fprintf(f, "  \"routes_refused\": %lu,\n", (unsigned long)st_.routes_refused);
    std::fprintf(f,
                 "  \"link_drops\": {\"link_down\": %lu, \"lost_in_flight\": %lu, "
                 "\"error\": %lu},\n",
                 (unsigned long)st_.link_down_drops, (unsigned long)st_.lost_in_flight,
                 (unsigned long)st_.lost_error);
    std::fprintf(f, "  \"switch_drops\": {");
    const auto d = drops();
    bool first = true;
    for (size_t r = 0; r < kDropReasonCount; r++) {
        if (!d[r]) continue;
        std::fprintf(f, "%s\"%s\": %lu", first ? "" : ", ",
                     std::string(drop_reason_name(DropReason(r))).c_str(), (unsigned long)d[r]);
        first = false;
    }
    std::fprintf(f, "},\n");
    // Switch-side ECN and PFC: CE marks by every queue, PFC frames sent by switches (XOFF:
    // quanta > 0), watchdog storms detected and restored.
    uint64_t marks = 0, tx_pause = 0, tx_xon = 0, storms = 0, restores = 0, cut_through = 0;
    for (const auto &n : nodes_) {
        if (!n.sw) continue;
        cut_through += n.sw->cut_through_packets();
        const TrafficManager &tm = n.sw->qos();
        for (uint16_t p = 0; p < tm.n_ports(); p++) {
            for (uint8_t q = 0; q < kNumQueues; q++)
                marks += tm.stats(p).queues[q].ecn_marked.load();
            const PfcPortStats &ps = tm.pfc().stats(p);
            for (unsigned pr = 0; pr < kNumPriorities; pr++) {
                tx_pause += ps.tx_pause[pr].load();
                tx_xon += ps.tx_xon[pr].load();
            }
            for (uint8_t q = 0; q < kNumQueues; q++) {
                storms += ps.wd_storms[q].load();
                restores += ps.wd_restores[q].load();
            }
        }
    }
    std::fprintf(f,
                 "  \"switches\": {\"ecn_marked\": %lu, \"pfc_xoff_sent\": %lu, "
                 "\"pfc_xon_sent\": %lu, \"watchdog_storms\": %lu, \"watchdog_restores\": %lu, "
                 "\"cut_through_packets\": %lu},\n",
                 (unsigned long)marks, (unsigned long)tx_pause, (unsigned long)tx_xon,
                 (unsigned long)storms, (unsigned long)restores, (unsigned long)cut_through);
    std::fprintf(f, "  \"switch_latency\": {");
    first = true;
    for (unsigned c = 0; c < kLatClasses; c++) {
        if (!all_latency[c].count) continue;
        const auto v = latency_figures(all_latency[c]);
        std::fprintf(f,
                     "%s\"%u\": {\"packets\": %lu, \"p50_ns\": %lu, \"p99_ns\": %lu, "
                     "\"p999_ns\": %lu, \"max_ns\": %lu, \"mean_ns\": %lu}",
                     first ? "" : ", ", c, v[0], v[1], v[2], v[3], v[4], v[5]);
        first = false;
    }
    std::fprintf(f, "},\n");
    // The accounting identity of every switch (doc/accounting.md); the verdict must be
    // "balanced" at the end of every run.
    const AccountingSummary acct = accounting();
    std::string verdict = "balanced";
    if (!acct.unbalanced.empty()) {
        verdict = "unbalanced:";
        for (const auto &u : acct.unbalanced) verdict += " [" + u + "]";
    }
    const AccountingPort &t = acct.total;
    std::fprintf(f,
                 "  \"accounting\": {\"switches\": %u, \"balanced\": %zu, \"verdict\": %s, "
                 "\"rx\": %lu, \"forwarded\": %lu, \"local\": %lu, \"punted\": %lu, "
                 "\"ingress_drops\": %lu, \"pfc_frames\": %lu, \"local_replies\": %lu, "
                 "\"injected\": %lu, \"tx\": %lu, \"egress_drops\": %lu, \"queued\": %lu},\n",
                 acct.switches, size_t(acct.switches) - acct.unbalanced.size(),
                 nlohmann::json(verdict).dump().c_str(), (unsigned long)t.rx,
                 (unsigned long)t.forwarded, (unsigned long)t.local, (unsigned long)t.punted,
                 (unsigned long)t.ingress_drops(), (unsigned long)t.pfc_frames,
                 (unsigned long)t.local_replies, (unsigned long)t.injected, (unsigned long)t.tx,
                 (unsigned long)t.egress_drops(), (unsigned long)t.queued);
    std::fprintf(f, "  \"udp\": {\"flows\": %zu, \"sent\": %lu, \"received\": %lu},\n",
                 s_.udp.size(), (unsigned long)udp_.sent(), (unsigned long)udp_.received());
    if (!s_.host_events.empty())
        std::fprintf(f,
                     "  \"host_events\": {\"storm_frames\": %lu, \"slow_pause_frames\": %lu, "
                     "\"slow_held_frames\": %lu, \"slow_held_max_bytes\": %lu},\n",
                     (unsigned long)st_.storm_frames, (unsigned long)st_.slow_pause_frames,
                     (unsigned long)st_.slow_held_frames,
                     (unsigned long)st_.slow_held_max_bytes);
    if (roce_) {
        const roce::HostSet &hs = roce_->host_set();
        roce::HostCounters c{};
        for (const roce::Host &h : hs.hosts()) {
            c.tx_data += h.c.tx_data;
            c.cnps_tx += h.c.cnps_tx;
            c.cnps_rx += h.c.cnps_rx;
            c.naks_rx += h.c.naks_rx;
            c.mac_control_rx += h.c.mac_control_rx;
            c.alloc_failures += h.c.alloc_failures;
        }
        uint64_t cuts = 0;
        for (const roce::Flow &fl : hs.flows()) cuts += fl.rp.stats().decreases;
        std::fprintf(f,
                     "  \"roce\": {\"flows\": %zu, \"completed\": %u, \"data_packets\": %lu, "
                     "\"cnps_sent\": %lu, \"cnps_received\": %lu, \"rate_cuts\": %lu, "
                     "\"naks\": %lu, \"pause_frames_received\": %lu, \"alloc_failures\": %lu},\n",
                     hs.flows().size(), hs.done_flows(), (unsigned long)c.tx_data,
                     (unsigned long)c.cnps_tx, (unsigned long)c.cnps_rx, (unsigned long)cuts,
                     (unsigned long)c.naks_rx, (unsigned long)c.mac_control_rx,
                     (unsigned long)c.alloc_failures);
    }
    if (roce_ && roce_->jobs().size()) {  // rocelab's real engine writes the same key
        const roce::JobRunner::Totals jt = roce_->jobs().totals();
        std::fprintf(f,
                     "  \"jobs\": {\"jobs\": %lu, \"completed\": %lu, \"iterations\": %lu, "
                     "\"iterations_completed\": %lu},\n",
                     (unsigned long)jt.jobs, (unsigned long)jt.jobs_completed,
                     (unsigned long)jt.iterations, (unsigned long)jt.iterations_completed);
    }
    // The only fields that differ between identical runs (names containing wall_time_s, and
    // peak_rss_kb).
    std::fprintf(f, "  \"setup_wall_time_s\": %.3f,\n", setup_s);
    std::fprintf(f, "  \"wall_time_s\": %.3f,\n", wall_s);
    std::fprintf(f, "  \"peak_rss_kb\": %ld\n", peak_rss_kb);
    std::fprintf(f, "}\n");
    std::fclose(f);
    for (std::FILE *x : {pfc_f_, queue_f_, fct_f_, port_f_})
        if (x) std::fflush(x);
}

// ---------------------------------------------------------------------------------------------
// EAL

static std::string g_runtime_dir;

bool sim_eal_init(const char *argv0, uint64_t memory_mb) {
    std::string prefix = "--file-prefix=rocesim" + std::to_string(getpid());
    std::string mem = std::to_string(memory_mb);
    std::vector<std::string> args = {argv0,
                                     "--no-huge",
                                     "--no-pci",
                                     "-m",
                                     mem,
                                     "-l",
                                     "0",
                                     prefix,
                                     "--log-level=lib.eal:error",
                                     "--no-telemetry"};
    std::vector<char *> av;
    for (auto &a : args) av.push_back(a.data());
    if (rte_eal_init(int(av.size()), av.data()) < 0) {
        std::fprintf(stderr, "rte_eal_init failed: %s\n", rte_strerror(rte_errno));
        return false;
    }
    g_runtime_dir = rte_eal_get_runtime_dir();
    return true;
}

void sim_eal_cleanup() {
    rte_eal_cleanup();
    std::error_code ec;
    if (!g_runtime_dir.empty()) std::filesystem::remove_all(g_runtime_dir, ec);
}

uint64_t sim_eal_memory_mb(const Scenario &s) {
    const uint64_t per_switch_mb =
        fib_memory_bytes(fib_params_for_sim(s.topo.host_count() + 64, s.compact_fib)) / (1 << 20) + 8;
    const uint64_t pool_mb = uint64_t(s.mbufs) * (2048 + s.mtu + 512) / (1 << 20) + 16;
    return 256 + s.topo.switch_count() * per_switch_mb + pool_mb;
}

}  // namespace rocesw::sim
