// enable_ipv6_forwarding (drivers/hostif): which sysctl it turns on for the host interfaces, on a
// stand-in for /proc/sys/net/ipv6/conf/ in a temporary directory.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "hostif/host_if.h"

namespace rocesw {
namespace {

namespace fs = std::filesystem;

class Ipv6ForwardingTest : public ::testing::Test {
  protected:
    void SetUp() override {
        root = fs::temp_directory_path() / ("rocesw-hostif-" + std::to_string(getpid()));
        fs::remove_all(root);
        conf = root.string() + "/";
    }
    void TearDown() override { fs::remove_all(root); }
    // A conf/<dir>/<name> file holding value.
    void put(const std::string &dir, const std::string &name, const std::string &value) {
        fs::create_directories(root / dir);
        std::ofstream(root / dir / name) << value << "\n";
    }
    std::string get(const std::string &dir, const std::string &name) {
        std::ifstream f(root / dir / name);
        std::string v;
        f >> v;
        return v;
    }
    // The interfaces of a kernel with IPv6, all.forwarding off.
    void kernel(bool force_forwarding) {
        put("all", "forwarding", "0");
        for (const char *p : {"p0", "p1"}) {
            put(p, "forwarding", "1");
            if (force_forwarding) put(p, "force_forwarding", "0");
        }
    }

    fs::path root;
    std::string conf;
    const std::vector<std::string> ports = {"p0", "p1"};
};

// Linux 6.17 on: force_forwarding on each host interface, nothing global, whatever the namespace.
TEST_F(Ipv6ForwardingTest, PerInterfaceWhereTheKernelHasForceForwarding) {
    kernel(true);
    EXPECT_EQ(enable_ipv6_forwarding(ports, conf, false), Ipv6Forwarding::per_interface);
    EXPECT_EQ(get("p0", "force_forwarding"), "1");
    EXPECT_EQ(get("p1", "force_forwarding"), "1");
    EXPECT_EQ(get("all", "forwarding"), "0");
}

// Older kernels: all.forwarding, only in a namespace of roceswd's own.
TEST_F(Ipv6ForwardingTest, AllForwardingInItsOwnNamespace) {
    kernel(false);
    EXPECT_EQ(enable_ipv6_forwarding(ports, conf, true), Ipv6Forwarding::all_set);
    EXPECT_EQ(get("all", "forwarding"), "1");
    EXPECT_FALSE(fs::exists(root / "p0" / "force_forwarding"));
}

TEST_F(Ipv6ForwardingTest, TheHostsNamespaceIsLeftAsItIs) {
    kernel(false);
    EXPECT_EQ(enable_ipv6_forwarding(ports, conf, false), Ipv6Forwarding::left_off);
    EXPECT_EQ(get("all", "forwarding"), "0");
}

TEST_F(Ipv6ForwardingTest, AlreadyOnOrNoIpv6ChangesNothing) {
    kernel(false);
    put("all", "forwarding", "1");
    EXPECT_EQ(enable_ipv6_forwarding(ports, conf, false), Ipv6Forwarding::already_on);
    fs::remove_all(root);
    EXPECT_EQ(enable_ipv6_forwarding(ports, conf, true), Ipv6Forwarding::no_ipv6);
    EXPECT_FALSE(fs::exists(root));
}

// A named namespace (ip netns add, then setns as ip netns exec does) is roceswd's own. Needs
// root; the thread enters it, so the test's own namespace stays as it is.
TEST(OwnNetworkNamespace, ANamedNamespaceIsItsOwn) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (ip netns add)";
    const std::string name = "rocesw-ut-" + std::to_string(getpid());
    if (std::system(("ip netns add " + name + " 2>/dev/null").c_str()) != 0)
        GTEST_SKIP() << "ip netns add failed";
    bool inside = false, entered = false;
    std::thread([&] {
        const int fd = open(("/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && setns(fd, CLONE_NEWNET) == 0) {
            entered = true;
            inside = own_network_namespace();
        }
        if (fd >= 0) close(fd);
    }).join();
    EXPECT_EQ(std::system(("ip netns del " + name).c_str()), 0);
    ASSERT_TRUE(entered);
    EXPECT_TRUE(inside);
}

}  // namespace
}  // namespace rocesw
