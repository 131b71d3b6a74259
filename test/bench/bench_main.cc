// EAL once per binary (no hugepages, no PCI, no telemetry, a file prefix of its own whose runtime
// directory is removed at exit), then Google Benchmark.
#include <benchmark/benchmark.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_common.h"

namespace rocesw::bench {

namespace {
// Ethernet header: `dst_mac`, source 02:00:00:00:01:02, `ethertype`.
void put_eth(uint8_t *p, const uint8_t dst_mac[6], uint16_t ethertype) {
    const uint8_t src_mac[6] = {0x02, 0, 0, 0, 0x01, 0x02};
    for (int i = 0; i < 6; i++) {
        p[i] = dst_mac[i];
        p[6 + i] = src_mac[i];
    }
    p[12] = uint8_t(ethertype >> 8);
    p[13] = uint8_t(ethertype);
}
// The BTH of an RC RDMA WRITE middle to QP 0x42, PSN 1 (the rest of the frame zero).
void put_bth(uint8_t *bth) {
    bth[0] = 0x07;           // RC RDMA WRITE middle
    bth[2] = bth[3] = 0xFF;  // P_Key
    bth[7] = 0x42;           // dest QP
    bth[11] = 0x01;          // PSN
}
}  // namespace

std::vector<uint8_t> roce_frame(uint32_t dst, uint16_t sport, uint32_t len,
                                const uint8_t dst_mac[6]) {
    std::vector<uint8_t> f(len < 60 ? 60 : len, 0);
    uint8_t *p = f.data();
    put_eth(p, dst_mac, 0x0800);
    uint8_t *ip = p + 14;
    const uint32_t ip_len = uint32_t(f.size()) - 14;
    const uint32_t src = (10u << 24) | (1u << 8) | 2u;
    ip[0] = 0x45;
    ip[1] = uint8_t((26 << 2) | 2);
    ip[2] = uint8_t(ip_len >> 8);
    ip[3] = uint8_t(ip_len);
    ip[6] = 0x40;  // DF
    ip[8] = 64;
    ip[9] = 17;
    for (int i = 0; i < 4; i++) {
        ip[12 + i] = uint8_t(src >> (24 - 8 * i));
        ip[16 + i] = uint8_t(dst >> (24 - 8 * i));
    }
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2) sum += uint32_t(ip[i] << 8 | ip[i + 1]);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    ip[10] = uint8_t(~sum >> 8);
    ip[11] = uint8_t(~sum);
    uint8_t *udp = ip + 20;
    const uint32_t udp_len = ip_len - 20;
    udp[0] = uint8_t(sport >> 8);
    udp[1] = uint8_t(sport);
    udp[2] = 4791 >> 8;
    udp[3] = 4791 & 0xFF;
    udp[4] = uint8_t(udp_len >> 8);
    udp[5] = uint8_t(udp_len);
    put_bth(udp + 8);
    return f;
}

std::vector<uint8_t> roce_frame6(uint32_t dst, uint16_t sport, uint32_t len,
                                 const uint8_t dst_mac[6]) {
    std::vector<uint8_t> f(len < 78 ? 78 : len, 0);
    uint8_t *p = f.data();
    put_eth(p, dst_mac, 0x86DD);
    uint8_t *ip = p + 14;
    const uint32_t payload = uint32_t(f.size()) - 14 - 40;
    const uint8_t tc = uint8_t((26 << 2) | 2);  // DSCP 26, ECT(0)
    ip[0] = uint8_t(0x60 | tc >> 4);
    ip[1] = uint8_t((tc & 0x0F) << 4);
    ip[4] = uint8_t(payload >> 8);
    ip[5] = uint8_t(payload);
    ip[6] = 17;
    ip[7] = 64;
    const uint8_t src[16] = {0xfd, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    for (int i = 0; i < 16; i++) ip[8 + i] = src[i];
    uint8_t *d = ip + 24;
    d[0] = 0x20;
    d[1] = 0x01;
    d[2] = 0x0d;
    d[3] = 0xb8;
    for (int i = 0; i < 4; i++) d[4 + i] = uint8_t(dst >> (24 - 8 * i));
    d[15] = 2;
    uint8_t *udp = ip + 40;
    udp[0] = uint8_t(sport >> 8);
    udp[1] = uint8_t(sport);
    udp[2] = 4791 >> 8;
    udp[3] = 4791 & 0xFF;
    udp[4] = uint8_t(payload >> 8);
    udp[5] = uint8_t(payload);
    put_bth(udp + 8);
    return f;
}

namespace {
void set_tos(uint8_t *ip, uint8_t tos) {
    ip[1] = tos;
    ip[10] = ip[11] = 0;
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2) sum += uint32_t(ip[i] << 8 | ip[i + 1]);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    ip[10] = uint8_t(~sum >> 8);
    ip[11] = uint8_t(~sum);
}
}  // namespace

std::vector<std::vector<uint8_t>> mix_frames(uint32_t n, uint32_t len,
                                             const std::vector<uint32_t> &dests,
                                             const uint8_t dst_mac[6]) {
    std::vector<std::vector<uint8_t>> out;
    for (uint32_t i = 0; i < n; i++) {
        auto f = roce_frame(dests[i % dests.size()], uint16_t(0xC000 | i), len, dst_mac);
        uint8_t *ip = f.data() + 14;
        if (i % 10 == 8) {
            set_tos(ip, 48 << 2);  // CNP
            ip[28] = 0x81;
        } else if (i % 10 == 9) {
            set_tos(ip, 0);  // plain UDP
            ip[22] = 5001 >> 8;
            ip[23] = 5001 & 0xFF;
        }
        out.push_back(std::move(f));
    }
    return out;
}

std::vector<uint32_t> destinations(uint32_t n, uint32_t routes, uint32_t seed) {
    std::vector<uint32_t> d(n);
    uint32_t x = seed * 2654435761u + 1;
    for (auto &v : d) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v = (32u << 24) + ((x % routes) << 8) + 2 + (x >> 24) % 250;
    }
    return d;
}

}  // namespace rocesw::bench

int main(int argc, char **argv) {
    std::vector<std::string> args = {"rocesw_microbench",
                                     "--file-prefix=rocesw-mbench-" + std::to_string(getpid()),
                                     "--no-huge",
                                     "--no-pci",
                                     "-m",
                                     "2560",
                                     "-l",
                                     "0",
                                     "--log-level=lib.eal:error",
                                     "--no-telemetry"};
    std::vector<char *> av;
    for (auto &a : args) av.push_back(a.data());
    if (rte_eal_init(int(av.size()), av.data()) < 0) {
        std::fprintf(stderr, "rte_eal_init failed: %s\n", rte_strerror(rte_errno));
        return 1;
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    benchmark::AddCustomContext("tsc_hz", std::to_string(rte_get_tsc_hz()));
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    std::string runtime_dir = rte_eal_get_runtime_dir();
    rte_eal_cleanup();
    std::error_code ec;
    std::filesystem::remove_all(runtime_dir, ec);
    return 0;
}
