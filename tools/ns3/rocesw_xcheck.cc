// rocesw_xcheck: the ns-3 (3.37, Debian's libns3-dev) side of rocesim's cross-check and
// benchmark (doc/rocesim.md, "Cross-check with ns-3"). It runs constant-rate UDP flows over an
// HPCC topology.txt (the file `rocesim --write-topology` writes, so both simulate the same
// fabric) and writes what rocesim writes for the same flows: udp_delays.csv (one line per
// delivered packet, rocesim's columns) and summary.json (frames, frame-hops, drops, wall time).
//
//   rocesw_xcheck --topology topo.txt --flows flows.txt --queue-packets N --out DIR
//                 [--no-delays] [--until TIME_PS]
//
// flows.txt: one flow per line, `src dst rate_bps frame_bytes start_ps stop_ps` ('#' starts a
// comment), the fields of rocesim's udp_flows: frame_bytes counts the Ethernet header to the
// payload end without the FCS, rate_bps counts wire bits (frame + FCS 4 + preamble/SFD/IFG 20),
// packet k is generated at start + floor(k * (frame_bytes + 24) * 8 * 1e12 / rate) ps while
// that is < stop.
//
// Modelling (why the numbers compare with rocesim's to the picosecond):
// - Time resolution is 1 ps (rocesim's unit) instead of ns-3's default 1 ns.
// - Every node is an IPv4 node; switches route with Ipv4GlobalRouting (shortest paths; with
//   several equal-cost next hops RandomEcmpRouting picks one per packet, i.e. spraying). Every
//   link is a PointToPointNetDevice pair; they serialise p->GetSize() bytes at the link rate,
//   and that size is PPP 2 + IPv4 20 + UDP 8 + payload. ns-3 has no preamble, IFG or FCS, so
//   the UDP payload is frame_bytes - 6: the serialised size is then frame_bytes + 24 = the
//   bytes rocesim's link counts (frame + FCS + 20). Arrival = end of serialisation + delay in
//   both (store and forward), and neither switch takes processing time.
// - No queue disc (the default one Ipv4AddressHelper installs is removed): a device's queue is
//   ns-3's DropTailQueue of --queue-packets packets, the frame being serialised is not in it.
//   rocesim's egress holds, besides the wire frame, one dequeued frame the wire refused (the
//   TX-ring model, doc/rocesim.md "How the link rate reaches the egress") and a lossy queue
//   with a static threshold of T bytes admits a frame of L bytes while queued + L <= T. With
//   frames of one size L that is floor(T / L) + 1 packets here (the +1: the held frame).
// - Senders are not ns-3 applications: each flow's packets are scheduled at rocesim's exact
//   generation times and carry (seq, generation time) in a SeqTsHeader; the receiver records
//   the delivery time. Frame-hops count PhyRxEnd on every device (a frame delivered at the far
//   end of a link, rocesim's definition); drops are the device queues' Drop traces and the
//   traffic-control layer's TcDrop (with no queue disc it drops a packet for a device whose
//   queue is stopped by flow control, i.e. full, before the device sees it).
#include <sys/resource.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

using namespace ns3;

namespace {

constexpr uint32_t kMtu = 9216;

struct FlowSpec {
    uint32_t src = 0, dst = 0;
    uint64_t rate_bps = 0;
    uint32_t frame_bytes = 0;
    uint64_t start_ps = 0, stop_ps = 0;
};

struct Delivery {
    uint32_t flow;
    uint32_t seq;
    uint64_t sent, received;
};

struct Counters {
    uint64_t frames = 0;      // put on a wire (PhyTxBegin)
    uint64_t frame_hops = 0;  // delivered at the far end of a link (PhyRxEnd)
    uint64_t queue_drops = 0;
    uint64_t ip_drops = 0;
    uint64_t sent = 0, received = 0;
};

Counters g_ctr;
std::vector<Delivery> g_deliveries;
bool g_keep_delays = true;

[[noreturn]] void fail(const std::string &msg) {
    std::fprintf(stderr, "rocesw_xcheck: %s\n", msg.c_str());
    std::exit(1);
}

std::vector<std::string> content_lines(const std::string &path) {
    std::ifstream in(path);
    if (!in) fail("cannot open " + path);
    std::vector<std::string> out;
    std::string line;
    while (std::getline(in, line)) {
        if (auto h = line.find('#'); h != std::string::npos) line.resize(h);
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        out.push_back(line);
    }
    return out;
}

void on_tx(Ptr<const Packet>) {
    g_ctr.frames++;
}
void on_rx(Ptr<const Packet>) {
    g_ctr.frame_hops++;
}
void on_queue_drop(Ptr<const Packet>) {
    g_ctr.queue_drops++;
}
void on_ip_drop(const Ipv4Header &, Ptr<const Packet>, Ipv4L3Protocol::DropReason, Ptr<Ipv4>,
                uint32_t) {
    g_ctr.ip_drops++;
}

// One constant-rate flow: packet k at start + floor(k * wire_bits * 1e12 / rate) ps.
class Flow {
  public:
    Flow(uint32_t id, const FlowSpec &f, Ptr<Socket> tx) : id_(id), f_(f), tx_(tx) {
        if (f.frame_bytes < 6 + 12) fail("frame_bytes below 18");
        if (f.frame_bytes + 22 > kMtu) fail("frame_bytes above the MTU");
        wire_bits_ = uint64_t(f.frame_bytes + 24) * 8;
        payload_ = f.frame_bytes - 6 - 12;  // what follows the SeqTsHeader
    }
    void schedule_next() {
        const unsigned __int128 off = (unsigned __int128)wire_bits_ * k_ * 1'000'000'000'000ull;
        const uint64_t t = f_.start_ps + uint64_t(off / f_.rate_bps);
        if (t >= f_.stop_ps) return;
        Simulator::Schedule(PicoSeconds(int64_t(t)) - Simulator::Now(), &Flow::send, this);
    }

  private:
    void send() {
        SeqTsHeader h;
        h.SetSeq(uint32_t(k_));  // stamps Simulator::Now(), the generation time
        Ptr<Packet> p = Create<Packet>(payload_);
        p->AddHeader(h);
        tx_->Send(p);
        g_ctr.sent++;
        k_++;
        schedule_next();
    }
    uint32_t id_;
    FlowSpec f_;
    Ptr<Socket> tx_;
    uint64_t wire_bits_ = 0, k_ = 0;
    uint32_t payload_ = 0;
};

void receive(uint32_t flow, Ptr<Socket> s) {
    Ptr<Packet> p;
    while ((p = s->Recv())) {
        SeqTsHeader h;
        p->RemoveHeader(h);
        g_ctr.received++;
        if (g_keep_delays)
            g_deliveries.push_back({flow, h.GetSeq(), uint64_t(h.GetTs().GetPicoSeconds()),
                                    uint64_t(Simulator::Now().GetPicoSeconds())});
    }
}

}  // namespace

int main(int argc, char **argv) {
    // Before any Time exists: rocesim's unit.
    Time::SetResolution(Time::PS);
    std::string topo_path, flows_path, out;
    uint32_t queue_packets = 0;
    uint64_t until_ps = 0;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) fail(a + " needs a value");
            return argv[++i];
        };
        if (a == "--topology")
            topo_path = value();
        else if (a == "--flows")
            flows_path = value();
        else if (a == "--out")
            out = value();
        else if (a == "--queue-packets")
            queue_packets = uint32_t(std::stoul(value()));
        else if (a == "--until")
            until_ps = std::stoull(value());
        else if (a == "--no-delays")
            g_keep_delays = false;
        else if (a == "--help" || a == "-h") {
            std::puts(
                "usage: rocesw_xcheck --topology topo.txt --flows flows.txt --queue-packets N "
                "--out DIR [--no-delays] [--until TIME_PS]\n"
                "(tools/ns3/rocesw_xcheck.cc explains the files and the modelling)");
            return 0;
        } else
            fail("unknown argument '" + a + "' (--help)");
    }
    if (topo_path.empty() || flows_path.empty() || out.empty() || !queue_packets)
        fail("--topology, --flows, --queue-packets and --out are required (--help)");

    const auto t0 = std::chrono::steady_clock::now();

    // Topology: HPCC's topology.txt (first line nodes switches links, then the switch ids,
    // then `a b rate delay error_rate`); rates and delays are ns-3 strings already.
    std::ifstream tin(topo_path);
    if (!tin) fail("cannot open " + topo_path);
    uint32_t n_nodes = 0, n_sw = 0, n_links = 0;
    if (!(tin >> n_nodes >> n_sw >> n_links)) fail(topo_path + ": bad first line");
    std::vector<bool> is_switch(n_nodes, false);
    for (uint32_t i = 0; i < n_sw; i++) {
        uint32_t s;
        if (!(tin >> s) || s >= n_nodes) fail(topo_path + ": bad switch id");
        is_switch[s] = true;
    }
    NodeContainer nodes;
    nodes.Create(n_nodes);

    Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(true));
    InternetStackHelper internet;
    internet.Install(nodes);

    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
    std::vector<Ipv4Address> host_addr(n_nodes);
    std::vector<bool> host_has_addr(n_nodes, false);
    TrafficControlHelper tch;
    const std::string qsize = std::to_string(queue_packets) + "p";
    for (uint32_t l = 0; l < n_links; l++) {
        uint32_t a, b;
        std::string rate, delay, err;
        if (!(tin >> a >> b >> rate >> delay >> err) || a >= n_nodes || b >= n_nodes)
            fail(topo_path + ": bad link " + std::to_string(l));
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(rate)));
        // ns-3's default 1500 would fragment frames rocesim sends whole (its MTU is 9000).
        p2p.SetDeviceAttribute("Mtu", UintegerValue(kMtu));
        p2p.SetChannelAttribute("Delay", TimeValue(Time(delay)));
        p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(qsize)));
        NetDeviceContainer devs = p2p.Install(nodes.Get(a), nodes.Get(b));
        Ipv4InterfaceContainer ifs = addr.Assign(devs);
        addr.NewNetwork();
        tch.Uninstall(devs);  // no queue disc: the device queue is the drop-tail queue
        for (uint32_t j = 0; j < 2; j++) {
            Ptr<PointToPointNetDevice> d = DynamicCast<PointToPointNetDevice>(devs.Get(j));
            d->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&on_tx));
            d->TraceConnectWithoutContext("PhyRxEnd", MakeCallback(&on_rx));
            if (!d->GetQueue()->TraceConnectWithoutContext("Drop", MakeCallback(&on_queue_drop)))
                fail("no queue Drop trace");
            const uint32_t n = j ? b : a;
            if (!is_switch[n] && !host_has_addr[n]) {
                host_addr[n] = ifs.GetAddress(j);
                host_has_addr[n] = true;
            }
        }
    }
    for (uint32_t n = 0; n < n_nodes; n++) {
        nodes.Get(n)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
            "Drop", MakeCallback(&on_ip_drop));
        // Without a queue disc, the traffic-control layer drops a packet for a device whose
        // queue is stopped (full) before the device sees it: that is the drop-tail drop.
        if (!nodes.Get(n)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
                "TcDrop", MakeCallback(&on_queue_drop)))
            fail("no TrafficControlLayer TcDrop trace");
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // Flows: a UDP socket per flow at each end (receiver port 10000 + flow).
    std::vector<FlowSpec> specs;
    for (const auto &line : content_lines(flows_path)) {
        std::istringstream ls(line);
        FlowSpec f;
        if (!(ls >> f.src >> f.dst >> f.rate_bps >> f.frame_bytes >> f.start_ps >> f.stop_ps))
            fail(flows_path + ": bad line '" + line + "'");
        if (f.src >= n_nodes || f.dst >= n_nodes || is_switch[f.src] || is_switch[f.dst] ||
            !host_has_addr[f.src] || !host_has_addr[f.dst] || f.src == f.dst || !f.rate_bps)
            fail(flows_path + ": bad flow '" + line + "'");
        specs.push_back(f);
    }
    std::vector<std::unique_ptr<Flow>> flows;
    TypeId udp = UdpSocketFactory::GetTypeId();
    for (uint32_t i = 0; i < specs.size(); i++) {
        const FlowSpec &f = specs[i];
        const uint16_t port = uint16_t(10000 + i);
        Ptr<Socket> rx = Socket::CreateSocket(nodes.Get(f.dst), udp);
        rx->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        rx->SetRecvCallback(MakeBoundCallback(&receive, i));
        Ptr<Socket> tx = Socket::CreateSocket(nodes.Get(f.src), udp);
        tx->Bind();
        tx->Connect(InetSocketAddress(host_addr[f.dst], port));
        flows.push_back(std::make_unique<Flow>(i, f, tx));
        flows.back()->schedule_next();
    }
    if (until_ps) Simulator::Stop(PicoSeconds(int64_t(until_ps)));

    const auto t1 = std::chrono::steady_clock::now();
    Simulator::Run();
    const auto t2 = std::chrono::steady_clock::now();
    const uint64_t sim_ps = uint64_t(Simulator::Now().GetPicoSeconds());
    Simulator::Destroy();

    const double setup = std::chrono::duration<double>(t1 - t0).count();
    const double wall = std::chrono::duration<double>(t2 - t1).count();
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    if (g_keep_delays) {
        std::FILE *f = std::fopen((out + "/udp_delays.csv").c_str(), "w");
        if (!f) fail("cannot write " + out + "/udp_delays.csv");
        std::fprintf(f, "flow,seq,sent_ps,received_ps,delay_ps\n");
        for (const auto &d : g_deliveries)
            std::fprintf(f, "%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", d.flow, d.seq, d.sent,
                         d.received, d.received - d.sent);
        std::fclose(f);
    }
    std::FILE *f = std::fopen((out + "/summary.json").c_str(), "w");
    if (!f) fail("cannot write " + out + "/summary.json");
    std::fprintf(f,
                 "{\n  \"simulator\": \"ns-3 %s\",\n  \"simulated_time_ns\": %" PRIu64
                 ",\n  \"frames\": %" PRIu64 ",\n  \"frame_hops\": %" PRIu64
                 ",\n  \"queue_drops\": %" PRIu64 ",\n  \"ip_drops\": %" PRIu64
                 ",\n  \"udp\": {\"flows\": %zu, \"sent\": %" PRIu64 ", \"received\": %" PRIu64
                 "},\n  \"setup_wall_time_s\": %.3f,\n  \"wall_time_s\": %.3f,\n"
                 "  \"peak_rss_kb\": %ld\n}\n",
                 "3.37", sim_ps / 1000, g_ctr.frames, g_ctr.frame_hops, g_ctr.queue_drops,
                 g_ctr.ip_drops, specs.size(), g_ctr.sent, g_ctr.received, setup, wall,
                 ru.ru_maxrss);
    std::fclose(f);
    return 0;
}
