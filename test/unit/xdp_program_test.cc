// rocesw's XDP program (drivers/afxdp/rocesw_xdp.bpf.c) run by the kernel on crafted frames
// through BPF_PROG_TEST_RUN: which frames shared mode sends to the switch and which it passes
// to the kernel, told apart by the per-reason counters. No socket is in xsks_map here, so a
// frame for the switch ends as pass_no_socket (the system test, test_af_xdp.sh, sees the
// to_switch_* reasons with real sockets). Needs root (or CAP_BPF) and the program built by
// clang; skips otherwise.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>

#include <cstring>
#include <string>
#include <vector>

#include "afxdp/af_xdp.h"
#include "afxdp/xdp_abi.h"

namespace rocesw {
namespace {

using Bytes = std::vector<uint8_t>;

const uint8_t kSwitchMac[6] = {0x02, 0, 0, 0, 0x01, 0x01};
const uint8_t kHostMac[6] = {0x02, 0, 0, 0, 0x01, 0x02};
const uint8_t kKernelMac[6] = {0x02, 0xaa, 0, 0, 0, 0x01};
const uint8_t kBcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

// The header is written into a vector of its final size: a 6-byte range inserted after the
// first six makes GCC 12 at -O3 report a bogus -Warray-bounds (-Wstringop-overflow with LTO)
// in the vector's reallocation.
Bytes eth(const uint8_t *dst, uint16_t type) {
    Bytes b(14);
    std::memcpy(b.data(), dst, 6);
    std::memcpy(b.data() + 6, kHostMac, 6);
    b[12] = uint8_t(type >> 8);
    b[13] = uint8_t(type);
    return b;
}

Bytes pad(Bytes b) {
    if (b.size() < 60) b.resize(60, 0);
    return b;
}

Bytes arp_request(uint32_t target_v4) {
    Bytes b = eth(kBcast, 0x0806);
    const uint8_t hdr[8] = {0, 1, 8, 0, 6, 4, 0, 1};
    b.insert(b.end(), hdr, hdr + 8);
    b.insert(b.end(), kHostMac, kHostMac + 6);
    uint32_t spa = htonl(0x0a000102), tpa = htonl(target_v4);
    b.insert(b.end(), (uint8_t *)&spa, (uint8_t *)&spa + 4);
    b.insert(b.end(), 6, 0);
    b.insert(b.end(), (uint8_t *)&tpa, (uint8_t *)&tpa + 4);
    return pad(b);
}

Bytes neighbour_solicitation(const uint8_t target[16]) {
    const uint8_t mc[6] = {0x33, 0x33, 0xff, target[13], target[14], target[15]};
    Bytes b = eth(mc, 0x86dd);
    Bytes ip6(40, 0);
    ip6[0] = 0x60;
    ip6[5] = 24;   // payload length
    ip6[6] = 58;   // ICMPv6
    ip6[7] = 255;  // hop limit
    b.insert(b.end(), ip6.begin(), ip6.end());
    Bytes icmp(24, 0);
    icmp[0] = 135;
    std::memcpy(&icmp[8], target, 16);
    b.insert(b.end(), icmp.begin(), icmp.end());
    return b;
}

class XdpProgram : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string path = afxdp_program_path();
        if (path.empty()) GTEST_SKIP() << "XDP program not built (no clang)";
        obj_ = bpf_object__open_file(path.c_str(), nullptr);
        ASSERT_TRUE(obj_) << "cannot open " << path;
        libbpf_set_print([](libbpf_print_level, const char *, va_list) { return 0; });
        if (bpf_object__load(obj_) != 0) GTEST_SKIP() << "cannot load BPF programs (not root?)";
        prog_fd_ = bpf_program__fd(bpf_object__find_program_by_name(obj_, RSW_XDP_PROG_NAME));
        cfg_fd_ = bpf_map__fd(bpf_object__find_map_by_name(obj_, RSW_XDP_CFG_MAP));
        stats_fd_ = bpf_map__fd(bpf_object__find_map_by_name(obj_, RSW_XDP_STATS_MAP));
        ASSERT_GE(prog_fd_, 0);
        ASSERT_GE(cfg_fd_, 0);
        ASSERT_GE(stats_fd_, 0);
    }
    void TearDown() override {
        if (obj_) bpf_object__close(obj_);
    }

    void configure(uint32_t mode, uint32_t flags = 0) {
        rsw_xdp_cfg c{};
        c.mode = mode;
        c.flags = flags;
        std::memcpy(c.mac, kSwitchMac, 6);
        c.n_v4 = 2;
        c.v4[0] = htonl(0x0a000101);  // 10.0.1.1
        c.v4[1] = htonl(0x0a000201);  // 10.0.2.1
        c.n_v6 = 1;
        inet_pton(AF_INET6, "fd00:1::1", c.v6[0]);
        uint32_t key = 0;
        ASSERT_EQ(bpf_map_update_elem(cfg_fd_, &key, &c, BPF_ANY), 0);
    }

    // Runs the program on `frame`; returns the reason whose counter rose (exactly one must).
    std::string run(const Bytes &frame) {
        std::vector<uint64_t> before = counters();
        Bytes out(frame.size() + 256);
        bpf_test_run_opts o{};
        o.sz = sizeof(o);
        o.data_in = frame.data();
        o.data_size_in = uint32_t(frame.size());
        o.data_out = out.data();
        o.data_size_out = uint32_t(out.size());
        o.repeat = 1;
        if (bpf_prog_test_run_opts(prog_fd_, &o) != 0) return "test_run failed";
        if (o.retval != XDP_PASS) return "retval " + std::to_string(o.retval);
        std::vector<uint64_t> after = counters();
        std::string rose;
        for (size_t r = 0; r < after.size(); r++)
            if (after[r] != before[r]) rose += (rose.empty() ? "" : ",") + afxdp_reason_names()[r];
        return rose;
    }

    std::vector<uint64_t> counters() {
        int ncpu = libbpf_num_possible_cpus();
        std::vector<uint64_t> out(RSW_XDP_REASONS), per(static_cast<size_t>(ncpu));
        for (uint32_t r = 0; r < RSW_XDP_REASONS; r++) {
            if (bpf_map_lookup_elem(stats_fd_, &r, per.data()) != 0) continue;
            for (uint64_t v : per) out[r] += v;
        }
        return out;
    }

    bpf_object *obj_ = nullptr;
    int prog_fd_ = -1, cfg_fd_ = -1, stats_fd_ = -1;
};

TEST_F(XdpProgram, PassesEverythingUntilConfigured) {
    EXPECT_EQ(run(pad(eth(kSwitchMac, 0x0800))), "pass_unconfigured");
}

TEST_F(XdpProgram, DedicatedModeSendsEveryFrameToTheSwitchOrCountsTheMissingSocket) {
    configure(RSW_XDP_DEDICATED);
    EXPECT_EQ(run(pad(eth(kKernelMac, 0x0800))), "pass_no_socket");
}

TEST_F(XdpProgram, SharedModePassesTheKernelsTrafficToTheKernel) {
    configure(RSW_XDP_SHARED);
    EXPECT_EQ(run(pad(eth(kKernelMac, 0x0800))), "pass_kernel");  // IPv4 to the host
    EXPECT_EQ(run(arp_request(0x0a0001fe)), "pass_kernel");       // ARP for 10.0.1.254
    uint8_t other[16];
    inet_pton(AF_INET6, "fd00:1::99", other);
    EXPECT_EQ(run(neighbour_solicitation(other)), "pass_kernel");  // ND for the host
    EXPECT_EQ(run(pad(eth(kBcast, 0x88cc))), "pass_kernel");       // LLDP, no hostif
    Bytes short_arp = eth(kBcast, 0x0806);                         // truncated ARP
    short_arp.resize(short_arp.size() + 10, 0);
    EXPECT_EQ(run(short_arp), "pass_kernel");
}

TEST_F(XdpProgram, SharedModeSteersTheSwitchsFramesToItsSocket) {
    configure(RSW_XDP_SHARED, RSW_XDP_F_LLDP);
    // No socket in xsks_map: each is for the switch, so each ends as pass_no_socket (and not
    // pass_kernel).
    EXPECT_EQ(run(pad(eth(kSwitchMac, 0x0800))), "pass_no_socket");
    EXPECT_EQ(run(arp_request(0x0a000101)), "pass_no_socket");
    EXPECT_EQ(run(arp_request(0x0a000201)), "pass_no_socket");
    uint8_t mine[16];
    inet_pton(AF_INET6, "fd00:1::1", mine);
    EXPECT_EQ(run(neighbour_solicitation(mine)), "pass_no_socket");
    const uint8_t pfc_dst[6] = {0x01, 0x80, 0xc2, 0, 0, 0x01};
    EXPECT_EQ(run(pad(eth(pfc_dst, 0x8808))), "pass_no_socket");
    const uint8_t lldp_dst[6] = {0x01, 0x80, 0xc2, 0, 0, 0x0e};
    EXPECT_EQ(run(pad(eth(lldp_dst, 0x88cc))), "pass_no_socket");
}

}  // namespace
}  // namespace rocesw
