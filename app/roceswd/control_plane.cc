// The switch's control plane (doc/control-plane.md): host interfaces and the punt path, the
// netlink route-sync thread, and their views (rocectl show punt, show control).
#include <linux/rtnetlink.h>
#include <poll.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "ctrl/netlink_socket.h"
#include "qos/classifier.h"
#include "switch.h"

namespace rocesw {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Constructor part: after the data plane is assembled, before its workers run.
void Switch::setup_control_plane() {
    const ControlPlaneConfig &cp = cfg_.control_plane;
    if (!cp.host_interfaces) return;
    punt_ = std::make_unique<Punt>(cp, uint16_t(cfg_.sw.workers));
    dp_->set_punt(punt_.get());
    qos_->enable_inject();
    std::vector<HostInterfaces::PortSpec> specs;
    for (size_t i = 0; i < cfg_.ports.size(); i++)
        specs.push_back({cfg_.ports[i].name, cfg_.ports[i].mac, cfg_.ports[i].mtu,
                         dp_->ctx().ports[i].parse});
    hostif_ = std::make_unique<HostInterfaces>(std::move(specs), *punt_, *qos_, ports_->pool(),
                                               qos_->plan().switch_tc);
    // The configured addresses become the kernel's: it answers ARP/ND/ping for them and
    // routing daemons bind to them.
    nl::NetlinkSocket nl;
    std::string err;
    if (!nl.open(false, 1 << 20, &err)) throw std::runtime_error("netlink: " + err);
    for (size_t i = 0; i < cfg_.ports.size(); i++) {
        std::vector<IfAddr> all = cfg_.ports[i].ipv4;
        all.insert(all.end(), cfg_.ports[i].ipv6.begin(), cfg_.ports[i].ipv6.end());
        for (const auto &a : all)
            if (!nl.add_address(hostif_->ifindex(uint16_t(i)), a, &err))
                throw std::runtime_error("host interface " + cfg_.ports[i].name + ": address " +
                                         a.str() + ": " + err);
    }
    // Link state is mirrored on the TAP's carrier, except for net_tap ports: their TAP may be
    // in another namespace (labs, tests), where this process cannot see its state.
    for (const auto &p : ports_->ports()) {
        bool track = p.driver != "net_tap";
        track_link_.push_back(track);
        if (!track)
            spdlog::info("port {}: link state not mirrored on its host interface (driver {})",
                         p.name, p.driver);
    }
    if (cp.netlink)
        route_sync_ = std::make_unique<RouteSync>(
            *rib_, cfg_.ports.size(),
            [this](int ifindex) { return hostif_->port_of_ifindex(ifindex); });
    spdlog::info("control plane: {} host interface(s), punt queue {} per worker, netlink {}",
                 hostif_->size(), cp.punt_queue, cp.netlink ? "on" : "off");
}

void Switch::start_control_plane() {
    if (!hostif_) return;
    hostif_->start();
    if (!route_sync_) return;
    // Subscribe first, then dump: an update between the two is seen twice, never missed.
    std::string err;
    nl_sub_ = std::make_unique<nl::NetlinkSocket>();
    if (!open_subscription(&err)) throw std::runtime_error("netlink: " + err);
    if (!netlink_dump(false, &err)) throw std::runtime_error("netlink: " + err);
    netlink_stop_ = false;
    netlink_thread_ = std::thread([this] { netlink_loop(); });
}

void Switch::stop_control_plane() {
    netlink_stop_ = true;
    if (netlink_thread_.joinable()) netlink_thread_.join();
    if (hostif_) hostif_->stop();
}

// Links, neighbours, addresses and IPv4/IPv6 routes, with the configured socket buffer.
bool Switch::open_subscription(std::string *err) {
    return nl_sub_->open(true, size_t(cfg_.control_plane.netlink_rcvbuf_kb) * 1024, err);
}

// Dumps links, addresses, neighbours, kernel nexthop objects and routes (in that order: routes
// need the neighbours and the objects they name) into the RIB; `resync` sweeps what the dump no
// longer has. Then syncs the FIB. A kernel without nexthop objects (before 5.3) refuses their
// dump: said once, and routes then name none.
bool Switch::netlink_dump(bool resync, std::string *err) {
    nl::NetlinkSocket nl;
    if (!nl.open(false, 8 << 20, err)) return false;
    std::lock_guard lk(sync_mu_);
    if (resync) route_sync_->begin_resync();
    for (uint16_t type : {uint16_t(RTM_GETLINK), uint16_t(RTM_GETADDR), uint16_t(RTM_GETNEIGH),
                          uint16_t(RTM_GETNEXTHOP), uint16_t(RTM_GETROUTE)}) {
        std::vector<nl::Message> msgs;
        if (!nl.dump(type, &msgs, err)) {
            if (type != RTM_GETNEXTHOP) return false;
            if (!nexthop_dump_warned_)
                spdlog::warn("netlink: no kernel nexthop objects here ({}): routes naming "
                             "one use the next hops they carry",
                             *err);
            nexthop_dump_warned_ = true;
            continue;
        }
        for (const auto &m : msgs) route_sync_->apply(m);
    }
    if (resync) route_sync_->end_resync();
    auto t0 = Clock::now();
    if (size_t refused = rib_->sync()) spdlog::warn("{} routes could not be installed (FIB full)", refused);
    record_sync_latency(Clock::now() - t0);
    spdlog::info("netlink: {} learned route(s), FIB {} IPv4 / {} IPv6", route_sync_->learned_routes(),
                 rib_->route_count(false), rib_->route_count(true));
    return true;
}

void Switch::record_sync_latency(Clock::duration d) {
    uint64_t ns = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
    sync_lat_.last_ns = ns;
    sync_lat_.max_ns = std::max(sync_lat_.max_ns, ns);
    sync_lat_.sum_ns += ns;
    sync_lat_.batches++;
}

// The route-sync thread: everything waiting on the socket is applied, then one FIB sync. The
// latency recorded is from reading the batch's first message to the FIB commit's return.
void Switch::netlink_loop() {
    pollfd pfd{nl_sub_->fd(), POLLIN, 0};
    while (!netlink_stop_.load(std::memory_order_relaxed)) {
        request_resolves();
        if (poll(&pfd, 1, 100) <= 0) continue;
        auto t0 = Clock::now();
        bool changed = false, overrun = false;
        std::string err;
        std::unique_lock lk(sync_mu_);
        // Bounded (about 100 ms of FIB work at worst), so views and stop are not held off.
        for (int i = 0; i < 1024; i++) {
            std::span<const uint8_t> buf;
            ssize_t n = nl_sub_->recv(&buf, &overrun, &err);
            if (n == 0) break;
            if (n < 0) {
                if (!overrun) spdlog::warn("netlink: {}", err);
                break;
            }
            nl::ParseResult r = nl::parse(buf);
            for (const auto &e : r.errors) {
                sync_errors_++;
                spdlog::warn("netlink: malformed message: {}", e);
            }
            for (const auto &m : r.msgs) changed |= route_sync_->apply(m);
        }
        if (changed) {
            if (size_t refused = rib_->sync())
                spdlog::warn("{} routes could not be installed (FIB full)", refused);
            record_sync_latency(Clock::now() - t0);
        }
        const bool relink = route_sync_->take_resync_request();
        lk.unlock();
        if (overrun) {
            // What is still queued predates the loss and the dump: applied after the dump it
            // would undo newer state. A fresh subscription, then the dump, is the new baseline
            // (an update racing the dump is seen twice, never missed).
            spdlog::warn("netlink: socket overrun (ENOBUFS): re-subscribing and re-dumping");
            nl_sub_->close();
            if (!open_subscription(&err)) {
                spdlog::error("netlink: cannot re-subscribe: {}; retrying", err);
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
                continue;
            }
            pfd.fd = nl_sub_->fd();
        }
        if (overrun || relink) {
            if (!netlink_dump(true, &err)) spdlog::error("netlink: re-dump failed: {}", err);
        }
    }
}

// Next hops of learned routes the kernel has not resolved (RouteSync::take_resolves): the
// kernel is asked to resolve each (ARP/ND); its answer comes back as a neighbour notification.
// Outside sync_mu_: each request waits for the kernel's ACK.
void Switch::request_resolves() {
    std::vector<ResolveRequest> reqs;
    {
        std::lock_guard lk(sync_mu_);
        reqs = route_sync_->take_resolves();
    }
    for (const ResolveRequest &r : reqs) {
        std::string err;
        if (nl_sub_->resolve_neighbour(r.ifindex, r.ip, &err))
            spdlog::debug("netlink: asked the kernel to resolve next hop {} (ifindex {})",
                          r.ip.str(), r.ifindex);
        else
            spdlog::warn("netlink: cannot ask the kernel to resolve next hop {}: {}", r.ip.str(), err);
    }
}

// Called from the control loop when a port's link changes, and by port_link: the host
// interface's carrier is up while the port's link is up and not set down by port_link (a
// pulled cable), so the kernel, the routing daemon (BIRD's `check link`) and the route sync
// see both alike.
void Switch::on_link_change(size_t port) {
    if (!hostif_ || port >= track_link_.size() || !track_link_[port]) return;
    const bool up = ports_->ports()[port].link.link_status && !(qos_ && qos_->link_down(uint16_t(port)));
    std::string err;
    if (!hostif_->set_carrier(uint16_t(port), up, &err))
        spdlog::warn("host interface {}: {}", cfg_.ports[port].name, err);
    if (!route_sync_) {  // no netlink to bring the carrier change back: withdraw directly
        rib_->set_port_up(uint8_t(port), up);
        rib_->sync();
    }
}

// Called from the control loop when a port's link changes: a link lost (after it had been up)
// drops what the device refuses, counted as link_down (TrafficManager::set_carrier_down), so
// that lossless frames for a peer that is gone do not sit in the queues holding their ingress
// PGs in XOFF, which would pause the senders' traffic to every other port too, as a real
// switch's MAC drops what it cannot send. Not before the link was first up (a memif peer still
// starting: frames wait for it, as before) and not for net_tap ports (a TAP moved into another
// namespace reads down while it works).
void Switch::follow_carrier(size_t port) {
    if (!qos_ || port >= carrier_.size() || !carrier_[port].tracked) return;
    const bool up = ports_->ports()[port].link.link_status;
    if (up) carrier_[port].seen_up = true;
    if (!carrier_[port].seen_up || qos_->carrier_down(uint16_t(port)) == !up) return;
    qos_->set_carrier_down(uint16_t(port), !up);
    if (up)
        spdlog::info("port {}: link back: frames leave again", cfg_.ports[port].name);
    else
        spdlog::warn("port {}: link lost: what it would send is dropped (link_down) until it is "
                     "back", cfg_.ports[port].name);
}

// Prometheus: punt classes, host interfaces, routes by source, netlink -> FIB latency.
void Switch::register_control_metrics() {
    MetricRegistry &m = metrics_;
    m.gauge("rocesw_routes_by_source", "Routes installed in the FIB, by source (connected, local, "
                             "neighbour, static, and the kernel protocol of learned ones)",
            [this](MetricSink &s) {
                for (const auto &[src, n] : rib_->route_counts()) s.sample({{"source", src}}, double(n));
            });
    if (!punt_) return;
    m.counter("rocesw_punt_packets_total",
              "Packets for the control plane by punt class and fate: punted (to the host "
              "interface), policed (over the class's rate), queue_full",
              [this](MetricSink &s) {
                  for (size_t c = 0; c < kPuntClassCount; c++) {
                      const std::string cls(punt_class_name(PuntClass(c)));
                      const PuntClassStats &st = punt_->stats(PuntClass(c));
                      s.sample({{"class", cls}, {"result", "punted"}}, double(st.punted.load()));
                      s.sample({{"class", cls}, {"result", "policed"}}, double(st.policed.load()));
                      s.sample({{"class", cls}, {"result", "queue_full"}},
                               double(st.queue_full.load()));
                  }
              });
    m.gauge("rocesw_punt_rate_limit_pps", "Control-plane policing rate per punt class",
            [this](MetricSink &s) {
                for (size_t c = 0; c < kPuntClassCount; c++)
                    s.sample({{"class", std::string(punt_class_name(PuntClass(c)))}},
                             double(punt_->pps(PuntClass(c))));
            });
    m.counter("rocesw_hostif_packets_total",
              "Frames between the data plane and the ports' host interfaces, by direction and "
              "result",
              [this](MetricSink &s) {
                  for (size_t i = 0; i < hostif_->size(); i++) {
                      const HostIfStats &st = hostif_->stats(uint16_t(i));
                      const std::string &p = cfg_.ports[i].name;
                      s.sample({{"port", p}, {"direction", "to_kernel"}, {"result", "ok"}},
                               double(st.to_kernel.load()));
                      s.sample({{"port", p}, {"direction", "to_kernel"}, {"result", "failed"}},
                               double(st.to_kernel_failed.load()));
                      s.sample({{"port", p}, {"direction", "from_kernel"}, {"result", "ok"}},
                               double(st.from_kernel.load()));
                      s.sample({{"port", p}, {"direction", "from_kernel"}, {"result", "dropped"}},
                               double(st.from_kernel_dropped.load()));
                  }
              });
    if (!route_sync_) return;
    m.gauge("rocesw_netlink_fib_latency_seconds",
            "Netlink batch read to FIB commit: last and largest so far",
            [this](MetricSink &s) {
                std::lock_guard lk(sync_mu_);
                s.sample({{"stat", "last"}}, sync_lat_.last_ns / 1e9);
                s.sample({{"stat", "max"}}, sync_lat_.max_ns / 1e9);
            });
    m.counter("rocesw_netlink_messages_total", "Netlink messages applied by the route sync",
              [this](MetricSink &s) {
                  std::lock_guard lk(sync_mu_);
                  s.sample({}, double(route_sync_->stats().messages));
              });
    m.counter("rocesw_netlink_events_total",
              "What the route sync did with netlink messages (rocectl show control: netlink)",
              [this](MetricSink &s) {
                  std::lock_guard lk(sync_mu_);
                  const RouteSyncStats &st = route_sync_->stats();
                  const std::pair<const char *, uint64_t> events[] = {
                      {"route_added", st.routes_added},
                      {"route_removed", st.routes_removed},
                      {"neighbour_added", st.neighbours_added},
                      {"neighbour_removed", st.neighbours_removed},
                      {"nexthop_change", st.nexthop_changes},
                      {"resolve_request", st.resolve_requests},
                      {"ignored", st.ignored},
                      {"unsupported", st.unsupported},
                      {"malformed", sync_errors_},
                      {"resync", st.resyncs}};
                  for (const auto &[event, n] : events) s.sample({{"event", event}}, double(n));
              });
}

json Switch::view_punt() const {
    if (!punt_) return {{"enabled", false}};
    json classes = json::array();
    for (size_t c = 0; c < kPuntClassCount; c++) {
        const PuntClassStats &s = punt_->stats(PuntClass(c));
        classes.push_back({{"class", std::string(punt_class_name(PuntClass(c)))},
                           {"rate_pps", punt_->pps(PuntClass(c))},
                           {"burst", punt_->burst(PuntClass(c))},
                           {"punted", s.punted.load()},
                           {"policed", s.policed.load()},
                           {"queue_full", s.queue_full.load()}});
    }
    json ports = json::array();
    for (size_t i = 0; i < hostif_->size(); i++) {
        const HostIfStats &s = hostif_->stats(uint16_t(i));
        PortTotals t = sum_port(counters_, workers_.size(), i);
        ports.push_back({{"port", cfg_.ports[i].name},
                         {"ifindex", hostif_->ifindex(uint16_t(i))},
                         {"punted", t.punted},
                         {"to_kernel", s.to_kernel.load()},
                         {"to_kernel_bytes", s.to_kernel_bytes.load()},
                         {"to_kernel_failed", s.to_kernel_failed.load()},
                         {"from_kernel", s.from_kernel.load()},
                         {"from_kernel_bytes", s.from_kernel_bytes.load()},
                         {"from_kernel_dropped", s.from_kernel_dropped.load()}});
    }
    return {{"enabled", true},
            {"queue_capacity", punt_->queue_capacity()},
            {"classes", classes},
            {"ports", ports}};
}

json Switch::view_control() const {
    json out = {{"host_interfaces", bool(hostif_)}, {"netlink_sync", bool(route_sync_)}};
    json counts = json::object();
    for (const auto &[src, n] : rib_->route_counts()) counts[src] = n;
    out["routes_by_source"] = counts;
    json ports = json::array();
    for (size_t i = 0; i < cfg_.ports.size(); i++)
        ports.push_back({{"port", cfg_.ports[i].name},
                         {"up", rib_->port_up(uint8_t(i))},
                         {"link_mirrored", i < track_link_.size() && track_link_[i]}});
    out["ports"] = ports;
    if (route_sync_) {
        std::lock_guard lk(sync_mu_);
        const RouteSyncStats &s = route_sync_->stats();
        out["netlink"] = {{"messages", s.messages},
                          {"changes", s.changes},
                          {"ignored", s.ignored},
                          {"unsupported", s.unsupported},
                          {"nexthop_changes", s.nexthop_changes},
                          {"malformed", sync_errors_},
                          {"resyncs", s.resyncs},
                          {"routes_added", s.routes_added},
                          {"routes_removed", s.routes_removed},
                          {"neighbours_added", s.neighbours_added},
                          {"neighbours_removed", s.neighbours_removed},
                          {"addr_changes", s.addr_changes},
                          {"link_changes", s.link_changes},
                          {"resolve_requests", s.resolve_requests},
                          {"learned_routes", route_sync_->learned_routes()},
                          {"kernel_routes", route_sync_->kernel_routes()}};
        out["sync_latency"] = {
            {"batches", sync_lat_.batches},
            {"last_us", sync_lat_.last_ns / 1000},
            {"max_us", sync_lat_.max_ns / 1000},
            {"mean_us", sync_lat_.batches ? sync_lat_.sum_ns / 1000 / sync_lat_.batches : 0}};
    }
    return out;
}

}  // namespace rocesw
