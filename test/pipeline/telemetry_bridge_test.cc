// The rte_telemetry bridge, end to end: EAL with telemetry on (no hugepages, no PCI), commands
// registered as /rocesw/<cmd>, queried over DPDK's own telemetry socket as dpdk-telemetry.py
// would. A binary of its own because the other pipeline tests run EAL with --no-telemetry.
#include <gtest/gtest.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "telemetry/control_server.h"

namespace rocesw {
namespace {

using nlohmann::json;

std::string g_runtime_dir;

// DPDK cannot unregister a command: a test that registers one uses a fresh name each run, so
// that --gtest_repeat works.
std::string unique_command(const std::string &base) {
    static int n = 0;
    return base + std::to_string(n++);
}

// Sends one telemetry request and returns the parsed reply.
json telemetry(const std::string &request) {
    int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::string path = g_runtime_dir + "/dpdk_telemetry.v2";
    std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
    if (::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0) {
        ADD_FAILURE() << "connect " << path << ": " << std::strerror(errno);
        ::close(fd);
        return json();
    }
    std::vector<char> buf(1 << 20);
    ssize_t n = ::read(fd, buf.data(), buf.size());  // the greeting: version, pid, max length
    EXPECT_GT(n, 0);
    EXPECT_EQ(::write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
    n = ::read(fd, buf.data(), buf.size());
    ::close(fd);
    if (n <= 0) return json();
    json r = json::parse(std::string(buf.data(), static_cast<size_t>(n)), nullptr, false);
    EXPECT_FALSE(r.is_discarded()) << std::string(buf.data(), static_cast<size_t>(n));
    return r;
}

class TelemetryBridge : public ::testing::Test {
  protected:
    void SetUp() override {
        srv_.add("echo", "returns its arguments", [](const std::vector<std::string> &args) {
            return json{{"args", args}};
        });
        srv_.add("fail", "a user error", [](const std::vector<std::string> &) -> json {
            throw CommandError("no such port 'p9'");
        });
        srv_.add("value", "returns the test's value",
                 [this](const std::vector<std::string> &) { return value_; });
        register_telemetry_commands(srv_);
    }
    json value(const json &v) {
        value_ = v;
        return telemetry("/rocesw/value")["/rocesw/value"];
    }

    ControlServer srv_;
    json value_;
};

TEST_F(TelemetryBridge, RegistersEachCommandOnce) {
    // SetUp registered everything already (in this or an earlier test).
    EXPECT_EQ(register_telemetry_commands(srv_), 0);
    const std::string extra = unique_command("extra");
    srv_.add(extra, "added late", [](const std::vector<std::string> &) { return json(1); });
    EXPECT_EQ(register_telemetry_commands(srv_), 1);
    EXPECT_EQ(telemetry("/rocesw/" + extra), (json{{"/rocesw/" + extra, "1"}}));
    json list = telemetry("/")["/"];
    for (const std::string &c : std::vector<std::string>{"/rocesw/help", "/rocesw/echo",
                                                         "/rocesw/fail", "/rocesw/" + extra})
        EXPECT_NE(std::find(list.begin(), list.end(), c), list.end()) << c;
}

TEST_F(TelemetryBridge, SplitsTheParameterIntoArgs) {
    EXPECT_EQ(telemetry("/rocesw/echo,p0,all"),
              (json{{"/rocesw/echo", {{"args", {"p0", "all"}}}}}));
    EXPECT_EQ(telemetry("/rocesw/echo"), (json{{"/rocesw/echo", {{"args", json::array()}}}}));
}

TEST_F(TelemetryBridge, ReportsCommandErrorsAsAnErrorEntry) {
    EXPECT_EQ(telemetry("/rocesw/fail"),
              (json{{"/rocesw/fail", {{"error", "no such port 'p9'"}}}}));
}

TEST_F(TelemetryBridge, KeepsObjectsAndListsStructured) {
    json ports = json::parse(R"({"ports":[
        {"index":0,"name":"p0","link":{"up":true,"speed_mbps":10000},"ipv4":["10.0.1.1/24"],
         "ipv6":[],"rx_packets":18446744073709551615}]})");
    EXPECT_EQ(value(ports), json::parse(R"({"ports":{"0":
        {"index":0,"name":"p0","link":{"up":1,"speed_mbps":10000},"ipv4":["10.0.1.1/24"],
         "ipv6":[],"rx_packets":18446744073709551615}}})"));
}

TEST_F(TelemetryBridge, ConvertsScalarsDpdkHasNoTypeFor) {
    json v = {{"f", 12.5},
              {"n", nullptr},
              {"neg", -3},
              {"big_neg", -5000000000LL},
              {"t", true},
              {"bad-key.x", "k"},
              {"ints", {-1, 2}},
              {"flags", {true, false}},
              {"mixed", {1, "a", nullptr}},
              {"nested", {{1, 2}, {3}}}};
    EXPECT_EQ(value(v), json::parse(R"({"f":"12.5","n":"null","neg":-3,"big_neg":"-5000000000",
        "t":1,"bad_key_x":"k","ints":[-1,2],"flags":[1,0],"mixed":{"0":1,"1":"a","2":"null"},
        "nested":{"0":[1,2],"1":[3]}})"));
}

TEST_F(TelemetryBridge, TurnsWhatDoesNotFitIntoJsonText) {
    json many = json::array();
    for (int i = 0; i < 600; i++) many.push_back(i);
    json r = value({{"many", many}});
    std::string text = many.dump();
    EXPECT_EQ(r["many"], text.substr(0, 127));  // DPDK cuts strings in containers at 127 bytes

    EXPECT_EQ(value("hello"), "hello");
    EXPECT_EQ(value(7), "7");
    EXPECT_EQ(value({"a", "b"}), (json{"a", "b"}));
    EXPECT_EQ(value({1, 2}), (json{1, 2}));
}

// Only read-only commands reach rte_telemetry: a mutating one is not registered (whether
// the socket allows it or not), and spelling it as an argument of a read-only one is refused.
TEST_F(TelemetryBridge, NeverRegistersAMutatingCommand) {
    const std::string view = unique_command("view");
    int drained = 0;
    srv_.add(view, "read-only", [](const std::vector<std::string> &) { return json(1); });
    srv_.mutating(view + "_drain", "drains a ring",
                  [&drained](const std::vector<std::string> &) { return json(++drained); });
    srv_.allow(view + "_drain", true);  // the control socket may serve it; telemetry never
    EXPECT_EQ(register_telemetry_commands(srv_), 1);  // the view only
    json list = telemetry("/")["/"];
    EXPECT_NE(std::find(list.begin(), list.end(), "/rocesw/" + view), list.end());
    EXPECT_EQ(std::find(list.begin(), list.end(), "/rocesw/" + view + "_drain"), list.end());
    EXPECT_EQ(telemetry("/rocesw/" + view + ",drain"),
              (json{{"/rocesw/" + view,
                     {{"error", view + "_drain: changes state; served only on the control "
                                       "socket"}}}}));
    EXPECT_EQ(drained, 0);
    EXPECT_EQ(srv_.call(view, {"drain"}), json(1));  // in-process (the socket's rule) it runs
    EXPECT_EQ(drained, 1);
}

TEST(TelemetryBridgeLifetime, AnswersWhenTheServerIsGone) {
    const std::string tel = "/rocesw/" + unique_command("gone");
    {
        ControlServer srv;
        srv.add(tel.substr(8), "", [](const std::vector<std::string> &) { return json(1); });
        EXPECT_GE(register_telemetry_commands(srv), 1);
        EXPECT_EQ(telemetry(tel), (json{{tel, "1"}}));
    }
    EXPECT_EQ(telemetry(tel),
              (json{{tel, {{"error", "the rocesw control server is not running"}}}}));
}

}  // namespace
}  // namespace rocesw

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    std::string prefix = "--file-prefix=rocesw-tel-" + std::to_string(getpid());
    std::vector<std::string> args = {
        "telemetry_bridge_test",    "--no-huge", "--no-pci", "-l", "0", prefix,
        "--log-level=lib.eal:error"};
    std::vector<char *> av;
    for (auto &a : args) av.push_back(a.data());
    if (rte_eal_init(static_cast<int>(av.size()), av.data()) < 0) {
        fprintf(stderr, "rte_eal_init failed: %s\n", rte_strerror(rte_errno));
        return 1;
    }
    rocesw::g_runtime_dir = rte_eal_get_runtime_dir();
    int rc = RUN_ALL_TESTS();
    rte_eal_cleanup();
    std::error_code ec;
    std::filesystem::remove_all(rocesw::g_runtime_dir, ec);
    return rc;
}
