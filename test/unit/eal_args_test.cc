#include <gtest/gtest.h>

#include <algorithm>

#include "config/config.h"
#include "ethdev/eal_args.h"

using namespace rocesw;

namespace {

Config two_ports(const char *dev0, const char *dev1, int workers = 1) {
    std::string y = "switch: {name: s1, workers: " + std::to_string(workers) +
                    "}\n"
                    "ports:\n"
                    "  - {name: p0, device: \"" +
                    dev0 +
                    "\", mac: \"02:00:00:00:00:01\"}\n"
                    "  - {name: p1, device: \"" +
                    dev1 + "\", mac: \"02:00:00:00:00:02\"}\n";
    return load_config_string(y, "t.yaml");
}

bool has(const std::vector<std::string> &v, const std::string &s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST(EalArgs, RecognisesPciAddressesAndVdevs) {
    EXPECT_TRUE(is_pci_device("0000:3b:00.0"));
    EXPECT_TRUE(is_pci_device("3b:00.1"));
    EXPECT_TRUE(is_pci_device("0000:3b:00.0,txq_inline_max=128"));
    EXPECT_FALSE(is_pci_device("net_tap0,iface=x"));
    EXPECT_FALSE(is_pci_device("net_af_xdp0,iface=eth0"));
    EXPECT_EQ(ethdev_name("net_tap0,iface=x"), "net_tap0");
    EXPECT_EQ(ethdev_name("3b:00.1"), "0000:3b:00.1");
    EXPECT_EQ(ethdev_name("0000:3b:00.0,a=b"), "0000:3b:00.0");
}

TEST(EalArgs, FallsBackToNoHugeWithoutHugepages) {
    Config c = two_ports("net_tap0,iface=a", "net_tap1,iface=b");
    EalPlan p = plan_eal(c, {0, 1}, 0);
    EXPECT_TRUE(p.no_huge);
    EXPECT_TRUE(has(p.args, "--no-huge"));
    auto m = std::find(p.args.begin(), p.args.end(), "-m");
    ASSERT_NE(m, p.args.end());
    EXPECT_EQ(*(m + 1), std::to_string(c.sw.memory_mb));
    EalPlan h = plan_eal(c, {0, 1}, 512);
    EXPECT_FALSE(h.no_huge);
    EXPECT_FALSE(has(h.args, "--no-huge"));
}

TEST(EalArgs, VdevsUseVdevAndDisablePciScan) {
    Config c = two_ports("net_tap0,iface=a",
                         "net_memif0,role=server,socket=/tmp/m.sock,socket-abstract=no");
    EalPlan p = plan_eal(c, {0, 1}, 0);
    EXPECT_TRUE(has(p.args, "--no-pci"));
    EXPECT_TRUE(has(p.args, "--vdev"));
    EXPECT_TRUE(has(p.args, "net_memif0,role=server,socket=/tmp/m.sock,socket-abstract=no"));
    EXPECT_TRUE(has(p.args, "--file-prefix=roceswd-s1"));
}

TEST(EalArgs, PciDevicesAreAllowListed) {
    Config c = two_ports("0000:3b:00.0", "0000:3b:00.1");
    EalPlan p = plan_eal(c, {0, 1}, 0);
    EXPECT_FALSE(has(p.args, "--no-pci"));
    EXPECT_TRUE(has(p.args, "-a"));
    EXPECT_TRUE(has(p.args, "0000:3b:00.1"));
}

TEST(EalArgs, ControlPlusWorkersFloatOverTheAllowedCpus) {
    Config c = two_ports("net_null0", "net_null1", 3);
    EalPlan p = plan_eal(c, {0, 1}, 0);
    EXPECT_TRUE(has(p.args, "--lcores=0@(0,1),1@(0,1),2@(0,1),3@(0,1)"));
}

TEST(EalArgs, HugepagesOnlyWhenMountedAndEnough) {
    std::string why;
    HugepageState h{0, 2u << 20, true};
    EXPECT_EQ(usable_hugepages(h, 300, why), 0u);  // none free: plain --no-huge, no reason
    EXPECT_EQ(why, "");
    h.free_pages = 512;  // 1 GiB
    EXPECT_EQ(usable_hugepages(h, 300, why), 512u);
    EXPECT_EQ(why, "");
    EXPECT_EQ(usable_hugepages(h, 1024, why), 512u);  // exactly enough
    EXPECT_EQ(usable_hugepages(h, 1025, why), 0u);
    EXPECT_EQ(why, "512 free hugepages hold 1024 MiB, the switch needs about 1025");
    h.mounted = false;
    EXPECT_EQ(usable_hugepages(h, 300, why), 0u);
    EXPECT_EQ(why, "512 free hugepages but no hugetlbfs of their size (2048 kB) mounted");
    // The plan follows the count it is given.
    Config c = two_ports("net_null0", "net_null1");
    EXPECT_TRUE(plan_eal(c, {0, 1}, usable_hugepages(h, 300, why)).no_huge);
    h.mounted = true;
    EXPECT_FALSE(plan_eal(c, {0, 1}, usable_hugepages(h, 300, why)).no_huge);
}

TEST(EalArgs, HugepageStateReadsThisMachine) {
    HugepageState h = hugepage_state();
    EXPECT_GT(h.page_bytes, 0u);  // Hugepagesize is in every x86-64 kernel's /proc/meminfo
}

TEST(EalArgs, MbufPoolPacksOnlyForCopyingPortsWithoutHugepages) {
    EXPECT_TRUE(mbuf_pool_packs(two_ports("net_tap0,iface=a", "net_pcap0,rx_pcap=x.pcap"), false));
    EXPECT_TRUE(mbuf_pool_packs(
        two_ports("net_memif0,role=server,socket=/tmp/m.sock", "net_null0"), false));
    EXPECT_TRUE(mbuf_pool_packs(two_ports("net_ring0", "net_af_packet0,iface=a"), false));
    // Hugepages pack inside each page already.
    EXPECT_FALSE(mbuf_pool_packs(two_ports("net_tap0,iface=a", "net_null0"), true));
    // Devices that DMA into the pool or map it.
    EXPECT_FALSE(mbuf_pool_packs(two_ports("net_tap0,iface=a", "0000:3b:00.0"), false));
    EXPECT_FALSE(mbuf_pool_packs(two_ports("net_tap0,iface=a", "net_af_xdp0,iface=a"), false));
    EXPECT_FALSE(mbuf_pool_packs(
        two_ports("net_memif0,role=server,socket=/tmp/m.sock,zero-copy=yes", "net_null0"), false));
}
