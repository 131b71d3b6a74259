// rocegen: a paced frame generator. Replays the frames of a pcap file, in order and in a loop,
// on one DPDK port (memif to a roceswd port in tools/bench --latency; any ethdev works) at a
// fixed packet rate paced by the TSC, or as fast as the port takes them (--rate 0). The
// frames are built once; every transmit takes a reference on the prebuilt mbuf, so the
// generator's cost per packet is the driver's (memif copies the frame into its ring).
//
//   rocegen [EAL options] -- --pcap FILE [--rate PPS] [--duration S] [--burst N]
//           [--link-timeout S] [--warmup S] [--slack-us U] [--linger S]
//
// It waits for the port's link (a memif peer), sends for --warmup + --duration seconds and
// prints one JSON object: what it offered during the measured --duration window.
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) {
    g_stop = true;
}

[[noreturn]] void die(const std::string &msg) {
    std::fprintf(stderr, "rocegen: %s\n", msg.c_str());
    std::exit(1);
}

// Classic pcap (microsecond or nanosecond magic, either byte order).
std::vector<std::vector<uint8_t>> read_pcap(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) die("cannot open " + path);
    uint8_t gh[24];
    if (!f.read(reinterpret_cast<char *>(gh), sizeof gh)) die(path + ": not a pcap file");
    uint32_t magic;
    std::memcpy(&magic, gh, 4);
    bool swap;
    if (magic == 0xa1b2c3d4 || magic == 0xa1b23c4d)
        swap = false;
    else if (magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1)
        swap = true;
    else
        die(path + ": not a pcap file (magic)");
    std::vector<std::vector<uint8_t>> frames;
    uint8_t rh[16];
    while (f.read(reinterpret_cast<char *>(rh), sizeof rh)) {
        uint32_t len;
        std::memcpy(&len, rh + 8, 4);
        if (swap) len = __builtin_bswap32(len);
        if (len > 65535) die(path + ": record too long");
        std::vector<uint8_t> fr(len);
        if (!f.read(reinterpret_cast<char *>(fr.data()), len)) die(path + ": truncated record");
        frames.push_back(std::move(fr));
    }
    if (frames.empty()) die(path + ": no frames");
    return frames;
}

struct Options {
    std::string pcap;
    double rate = 0;  // packets/s; 0 = as fast as the port takes them
    double duration = 5, warmup = 1, link_timeout = 30;
    double slack_us = 10000;  // how far behind a late pacer may catch up
    double linger = 0;        // stay connected (sending nothing) after the report
    unsigned burst = 32;
};

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 0; i < argc; i++) {
        std::string a = argv[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= argc) die(a + " needs a value");
            return argv[++i];
        };
        if (a == "--pcap")
            o.pcap = val();
        else if (a == "--rate")
            o.rate = std::strtod(val().c_str(), nullptr);
        else if (a == "--duration")
            o.duration = std::strtod(val().c_str(), nullptr);
        else if (a == "--warmup")
            o.warmup = std::strtod(val().c_str(), nullptr);
        else if (a == "--link-timeout")
            o.link_timeout = std::strtod(val().c_str(), nullptr);
        else if (a == "--linger")
            o.linger = std::strtod(val().c_str(), nullptr);
        else if (a == "--slack-us")
            o.slack_us = std::strtod(val().c_str(), nullptr);
        else if (a == "--burst")
            o.burst = unsigned(std::strtoul(val().c_str(), nullptr, 10));
        else if (a == "--help" || a == "-h") {
            std::printf(
                "usage: rocegen [EAL options] -- --pcap FILE [--rate PPS] [--duration S]\n"
                "               [--warmup S] [--burst N] [--slack-us U] [--linger S] [--link-timeout S]\n"
                "Sends the pcap's frames in a loop on port 0 at PPS packets/s (0: as fast as\n"
                "the port takes them) and prints what it offered in the --duration window.\n"
                "A pacer that fell behind (descheduled) sends up to --slack-us (10000) of\n"
                "packets back to back to catch up; what is later than that is not offered\n"
                "(\"late\"). --linger S keeps the port up, sending nothing, for S seconds after\n"
                "the report (or until SIGINT/SIGTERM), so the peer can be read before the link\n"
                "goes down.\n");
            std::exit(0);
        } else
            die("unknown option '" + a + "'");
    }
    if (o.pcap.empty()) die("--pcap is required");
    if (o.burst < 1 || o.burst > 256) die("--burst must be 1..256");
    if (o.rate < 0 || o.duration <= 0 || o.warmup < 0 || o.slack_us < 0)
        die("bad --rate/--duration/--warmup/--slack-us");
    return o;
}

}  // namespace

int main(int argc, char **argv) {
    int n = rte_eal_init(argc, argv);
    if (n < 0) die(std::string("EAL: ") + rte_strerror(rte_errno));
    Options o = parse(argc - n - 1 > 0 ? argc - n - 1 : 0, argv + n + 1);
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    if (rte_eth_dev_count_avail() < 1) die("no port (give one with --vdev)");
    const uint16_t port = 0;

    auto frames = read_pcap(o.pcap);
    size_t max_len = 0;
    for (auto &f : frames) max_len = std::max(max_len, f.size());
    const unsigned n_frames = unsigned(frames.size());
    rte_mempool *pool = rte_pktmbuf_pool_create(
        "rocegen", std::max(4095u, n_frames + 2048), 0, 0,
        uint16_t(std::max<size_t>(RTE_MBUF_DEFAULT_BUF_SIZE, max_len + RTE_PKTMBUF_HEADROOM)),
        int(rte_socket_id()));
    if (!pool) die(std::string("mempool: ") + rte_strerror(rte_errno));

    rte_eth_conf conf{};
    if (rte_eth_dev_configure(port, 1, 1, &conf) < 0) die("cannot configure port 0");
    if (rte_eth_rx_queue_setup(port, 0, 1024, rte_eth_dev_socket_id(port), nullptr, pool) < 0 ||
        rte_eth_tx_queue_setup(port, 0, 1024, rte_eth_dev_socket_id(port), nullptr) < 0)
        die("cannot set up port 0 queues");
    if (rte_eth_dev_start(port) < 0) die("cannot start port 0");

    std::vector<rte_mbuf *> pkts(n_frames);
    for (unsigned i = 0; i < n_frames; i++) {
        rte_mbuf *m = rte_pktmbuf_alloc(pool);
        if (!m) die("mbuf alloc");
        std::memcpy(rte_pktmbuf_append(m, uint16_t(frames[i].size())), frames[i].data(),
                    frames[i].size());
        pkts[i] = m;
    }

    const uint64_t hz = rte_get_tsc_hz();
    // Wait for the link (a memif peer connecting).
    const uint64_t link_deadline = rte_rdtsc() + uint64_t(o.link_timeout * double(hz));
    for (;;) {
        rte_eth_link link{};
        rte_eth_link_get_nowait(port, &link);
        if (link.link_status == RTE_ETH_LINK_UP) break;
        if (g_stop || rte_rdtsc() > link_deadline) die("port 0: no link");
        rte_delay_ms(10);
    }

    const unsigned burst = o.burst;
    // A late pacer may fall behind by at most --slack-us of packets (sent back to back, a burst
    // at a time, to catch up); anything later is not offered (counted in "late"), so a long
    // stall does not turn into a burst the rate never asked for.
    const uint64_t max_catchup =
        std::max<uint64_t>(4 * burst, uint64_t(o.rate * o.slack_us * 1e-6));
    std::vector<rte_mbuf *> b(burst);
    rte_mbuf *rx[64];
    unsigned next = 0;
    uint64_t sent = 0, refused = 0, late = 0, credit_base = 0;
    const uint64_t t0 = rte_rdtsc();
    const uint64_t t_measure = t0 + uint64_t(o.warmup * double(hz));
    const uint64_t t_end = t_measure + uint64_t(o.duration * double(hz));
    uint64_t sent_at_measure = 0, late_at_measure = 0, refused_at_measure = 0;
    bool measuring = false;
    uint64_t loops = 0;
    while (!g_stop) {
        const uint64_t now = rte_rdtsc();
        if (!measuring && now >= t_measure) {
            measuring = true;
            sent_at_measure = sent;
            late_at_measure = late;
            refused_at_measure = refused;
        }
        if (now >= t_end) break;
        if ((++loops & 63) == 0) {  // nothing is expected back; keep the RX ring empty
            uint16_t r = rte_eth_rx_burst(port, 0, rx, 64);
            if (r) rte_pktmbuf_free_bulk(rx, r);
        }
        uint64_t want = burst;
        if (o.rate > 0) {
            const uint64_t due =
                uint64_t(double(now - t0) * o.rate / double(hz)) - credit_base;
            if (due <= sent) continue;
            want = due - sent;
            if (want > max_catchup) {
                late += want - max_catchup;
                credit_base += want - max_catchup;
                want = max_catchup;
            }
            want = std::min<uint64_t>(want, burst);
        }
        for (uint64_t i = 0, j = next; i < want; i++) {
            b[i] = pkts[j];
            rte_mbuf_refcnt_update(b[i], 1);  // the driver's free leaves our reference
            if (++j == n_frames) j = 0;
        }
        const uint16_t k = rte_eth_tx_burst(port, 0, b.data(), uint16_t(want));
        for (uint64_t i = k; i < want; i++) rte_mbuf_refcnt_update(b[i], -1);
        next = unsigned((next + k) % n_frames);
        sent += k;
        if (k < want) {
            refused += want - k;
            // A full ring: with pacing, what was refused is late; unpaced, just retry.
            if (o.rate > 0) {
                late += want - k;
                credit_base += want - k;
            }
        }
    }
    const uint64_t t_stop = rte_rdtsc();
    const double secs = double(t_stop - std::max(t_measure, t0)) / double(hz);
    const uint64_t s = sent - sent_at_measure;
    rte_eth_stats st{};
    rte_eth_stats_get(port, &st);
    std::printf(
        "{\"rate_pps\": %.0f, \"window_s\": %.4f, \"sent\": %llu, \"offered_pps\": %.1f, "
        "\"late\": %llu, \"refused\": %llu, \"frames\": %u, \"tsc_hz\": %llu, "
        "\"port_opackets\": %llu, \"interrupted\": %s}\n",
        o.rate, secs, (unsigned long long)s, secs > 0 ? double(s) / secs : 0.0,
        (unsigned long long)(late - late_at_measure),
        (unsigned long long)(refused - refused_at_measure), n_frames, (unsigned long long)hz,
        (unsigned long long)st.opackets, g_stop ? "true" : "false");
    std::fflush(stdout);
    const uint64_t linger_end = rte_rdtsc() + uint64_t(o.linger * double(hz));
    while (!g_stop && rte_rdtsc() < linger_end) {
        uint16_t r = rte_eth_rx_burst(port, 0, rx, 64);
        if (r) rte_pktmbuf_free_bulk(rx, r);
        rte_delay_us_sleep(1000);
    }
    rte_eth_dev_stop(port);
    rte_eth_dev_close(port);
    for (auto *m : pkts) rte_pktmbuf_free(m);
    rte_eal_cleanup();
    return 0;
}
