// ControlServer over a real Unix socket, served by a background thread, spoken to with
// ControlClient; and the rocectl table views.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "telemetry/control_client.h"
#include "telemetry/control_protocol.h"
#include "telemetry/control_server.h"

namespace rocesw {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

uint64_t steady_ms() {
    return uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count());
}

// A socket file with nobody behind it, as a crashed server leaves it.
void make_stale_socket(const std::string &path) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)), 0) << std::strerror(errno);
    ::close(fd);
}

class ControlServerTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/rocesw-ctl-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        path_ = dir_ + "/sw.sock";
        srv_.add("echo", "returns its arguments", [](const std::vector<std::string> &args) {
            return json{{"args", args}};
        });
        srv_.add("fail", "always a user error", [](const std::vector<std::string> &) -> json {
            throw CommandError("no such port 'p9'");
        });
        srv_.add("crash", "an internal error", [](const std::vector<std::string> &) -> json {
            throw std::logic_error("table corrupt");
        });
        srv_.add("big", "a reply of N bytes", [](const std::vector<std::string> &args) {
            return json(std::string(std::stoul(args.at(0)), 'x'));
        });
    }
    void TearDown() override {
        stop_server();
        srv_.close();
        fs::remove_all(dir_);
    }
    void start_server() {
        std::string err;
        ASSERT_TRUE(srv_.listen(path_, &err)) << err;
        run_ = true;
        thread_ = std::thread([this] {
            while (run_) srv_.poll_once(5, steady_ms());
        });
    }
    void stop_server() {
        run_ = false;
        if (thread_.joinable()) thread_.join();
    }
    void connect(ControlClient &c) {
        std::string err;
        ASSERT_TRUE(c.connect(path_, &err)) << err;
    }
    ControlReply request(ControlClient &c, const std::string &cmd,
                         const std::vector<std::string> &args = {}) {
        ControlReply r;
        std::string err;
        EXPECT_EQ(c.request(cmd, args, &r, &err), ControlStatus::kOk) << err;
        return r;
    }
    ControlReply read_reply(ControlClient &c) {
        ControlReply r;
        std::string err;
        EXPECT_EQ(c.read_reply(&r, &err), ControlStatus::kOk) << err;
        return r;
    }

    std::string dir_, path_;
    ControlServer srv_;
    std::atomic<bool> run_{false};
    std::thread thread_;
};

TEST_F(ControlServerTest, AnswersACommandWithItsData) {
    start_server();
    ControlClient c;
    connect(c);
    ControlReply r = request(c, "echo", {"p0", "all"});
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(r.data, (json{{"args", {"p0", "all"}}}));
    // The same connection serves further requests.
    r = request(c, "echo");
    EXPECT_EQ(r.data, (json{{"args", json::array()}}));
}

TEST_F(ControlServerTest, RepliesOkFirstOnTheWire) {
    start_server();
    ControlClient c;
    connect(c);
    std::string err;
    ASSERT_EQ(c.send_raw("{\"cmd\":\"echo\",\"args\":[\"a\"]}\n", &err), ControlStatus::kOk);
    char buf[256] = {};
    // Wait for the whole line; the reply is small enough to arrive at once.
    ssize_t n = 0;
    for (int i = 0; i < 500 && n <= 0; i++) {
        n = ::recv(c.fd(), buf, sizeof(buf) - 1, MSG_DONTWAIT);
        if (n <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_EQ(std::string(buf), "{\"ok\":true,\"data\":{\"args\":[\"a\"]}}\n");
}

TEST_F(ControlServerTest, ReportsCommandErrorAsError) {
    start_server();
    ControlClient c;
    connect(c);
    ControlReply r = request(c, "fail");
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, "no such port 'p9'");
}

TEST_F(ControlServerTest, ReportsOtherExceptionsAsInternalError) {
    start_server();
    ControlClient c;
    connect(c);
    ControlReply r = request(c, "crash");
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, "internal error: table corrupt");
}

TEST_F(ControlServerTest, RejectsUnknownCommand) {
    start_server();
    ControlClient c;
    connect(c);
    ControlReply r = request(c, "nope");
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, "unknown command 'nope'; try 'help'");
}

TEST_F(ControlServerTest, HelpListsEveryCommandSorted) {
    json help = srv_.call("help", {});
    ASSERT_TRUE(help.is_array());
    std::vector<std::string> names;
    for (const auto &h : help) names.push_back(h["cmd"]);
    EXPECT_EQ(names, (std::vector<std::string>{"big", "control_clients", "crash", "echo", "fail",
                                               "help"}));
    EXPECT_EQ(help[3]["help"], "returns its arguments");
}

TEST_F(ControlServerTest, CallDispatchesInProcess) {
    EXPECT_EQ(srv_.call("echo", {"x"}), (json{{"args", {"x"}}}));
    EXPECT_THROW(srv_.call("nope", {}), CommandError);
    EXPECT_THROW(srv_.call("fail", {}), CommandError);
    json d = srv_.dispatch("fail", {});
    EXPECT_EQ(d, (json{{"ok", false}, {"error", "no such port 'p9'"}}));
}

// Access classes (views/registry.h): a mutating command is refused on the socket until the
// process allows it, with the refusal it chose; read-only commands are always served.
TEST_F(ControlServerTest, ServesAMutatingCommandOnlyOnceAllowed) {
    int changed = 0;
    srv_.mutating("bump", "changes state", [&changed](const std::vector<std::string> &) {
        return json(++changed);
    });
    srv_.mutating("wipe", "changes state too", [&changed](const std::vector<std::string> &) {
        changed = 0;
        return json(true);
    });
    srv_.allow("wipe", false, "wipe: not allowed by the config (telemetry.allow_wipe: false)");
    start_server();
    ControlClient c;
    connect(c);
    ControlReply r = request(c, "bump");
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, "bump: mutating command not enabled");
    r = request(c, "wipe");
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, "wipe: not allowed by the config (telemetry.allow_wipe: false)");
    EXPECT_TRUE(request(c, "echo").ok);  // read-only: always
    EXPECT_EQ(changed, 0);

    srv_.allow("bump", true);
    r = request(c, "bump");
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.data, json(1));
    EXPECT_FALSE(request(c, "wipe").ok);
    EXPECT_EQ(changed, 1);
}

// "a b ..." runs "a_b ...": a view keeps its mutating verbs as commands of their own.
TEST_F(ControlServerTest, RunsASubcommandSpelledAsAnArgument) {
    srv_.add("view", "read-only", [](const std::vector<std::string> &args) {
        return json{{"view", args}};
    });
    srv_.mutating("view_drain", "mutating", [](const std::vector<std::string> &args) {
        return json{{"drained", args}};
    });
    srv_.allow("view_drain", true);
    start_server();
    ControlClient c;
    connect(c);
    EXPECT_EQ(request(c, "view", {"drain", "5"}).data, (json{{"drained", {"5"}}}));
    EXPECT_EQ(request(c, "view_drain").data, (json{{"drained", json::array()}}));
    EXPECT_EQ(request(c, "view", {"p1"}).data, (json{{"view", {"p1"}}}));
    // Capped at read-only (the telemetry bridge), the same spelling is refused.
    EXPECT_EQ(srv_.dispatch("view", {"drain"}, Access::read_only),
              (json{{"ok", false},
                    {"error", "view_drain: changes state; served only on the control socket"}}));
    EXPECT_EQ(srv_.dispatch("view", {}, Access::read_only)["ok"], true);
}

TEST_F(ControlServerTest, ListsTheAccessClassOfEachCommand) {
    srv_.mutating("bump", "", [](const std::vector<std::string> &) { return json(); });
    for (const auto &c : srv_.commands())
        EXPECT_EQ(c.access, c.name == "bump" ? Access::mutating : Access::read_only) << c.name;
}

TEST_F(ControlServerTest, RejectsCommandNamesTelemetryCannotCarry) {
    auto h = [](const std::vector<std::string> &) { return json(); };
    EXPECT_THROW(srv_.add("show-ports", "", h), std::invalid_argument);
    EXPECT_THROW(srv_.add("", "", h), std::invalid_argument);
    EXPECT_THROW(srv_.add("ok", "", nullptr), std::invalid_argument);
}

TEST_F(ControlServerTest, AnswersMalformedRequestsAndKeepsTheConnection) {
    start_server();
    ControlClient c;
    connect(c);
    std::string err;
    ASSERT_EQ(c.send_raw("{not json\n", &err), ControlStatus::kOk);
    ControlReply r = read_reply(c);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error.rfind("malformed request", 0), 0u) << r.error;

    ASSERT_EQ(c.send_raw("{\"args\":[]}\n", &err), ControlStatus::kOk);
    r = read_reply(c);
    EXPECT_EQ(r.error, "malformed request: 'cmd' must be a string");

    ASSERT_EQ(c.send_raw("{\"cmd\":\"echo\",\"args\":[1]}\n", &err), ControlStatus::kOk);
    r = read_reply(c);
    EXPECT_EQ(r.error, "malformed request: 'args' must be an array of strings");

    ASSERT_EQ(c.send_raw("[1,2]\n", &err), ControlStatus::kOk);
    EXPECT_FALSE(read_reply(c).ok);

    r = request(c, "echo", {"still", "here"});
    EXPECT_TRUE(r.ok);
}

TEST_F(ControlServerTest, AnswersPipelinedRequestsInOrder) {
    start_server();
    ControlClient c;
    connect(c);
    std::string err;
    // CRLF and blank lines are tolerated.
    ASSERT_EQ(c.send_raw("{\"cmd\":\"echo\",\"args\":[\"1\"]}\r\n\n{\"cmd\":\"nope\"}\n"
                         "{\"cmd\":\"echo\",\"args\":[\"3\"]}\n",
                         &err),
              ControlStatus::kOk);
    EXPECT_EQ(read_reply(c).data, (json{{"args", {"1"}}}));
    EXPECT_FALSE(read_reply(c).ok);
    EXPECT_EQ(read_reply(c).data, (json{{"args", {"3"}}}));
}

TEST_F(ControlServerTest, ServesTwoClientsWhileOneIsMidRequest) {
    start_server();
    ControlClient a, b;
    connect(a);
    connect(b);
    std::string err;
    ASSERT_EQ(a.send_raw("{\"cmd\":\"ec", &err), ControlStatus::kOk);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(request(b, "echo", {"b"}).data, (json{{"args", {"b"}}}));
    ASSERT_EQ(a.send_raw("ho\",\"args\":[\"a\"]}\n", &err), ControlStatus::kOk);
    EXPECT_EQ(read_reply(a).data, (json{{"args", {"a"}}}));
}

TEST_F(ControlServerTest, SurvivesAClientThatDisconnectsMidRequest) {
    start_server();
    {
        ControlClient gone;
        connect(gone);
        std::string err;
        ASSERT_EQ(gone.send_raw("{\"cmd\":\"echo\",\"ar", &err), ControlStatus::kOk);
    }
    {
        // One that leaves before reading a large reply.
        ControlClient rude;
        connect(rude);
        std::string err;
        ASSERT_EQ(rude.send_raw("{\"cmd\":\"big\",\"args\":[\"3000000\"]}\n", &err),
                  ControlStatus::kOk);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ControlClient c;
    connect(c);
    EXPECT_TRUE(request(c, "echo").ok);
    stop_server();
    for (int i = 0; i < 10; i++) srv_.poll_once(5, steady_ms());
    EXPECT_EQ(srv_.client_count(), 1u);
}

TEST_F(ControlServerTest, AnswersARequestSentBeforeTheClientShutsDownWriting) {
    start_server();
    ControlClient c;
    connect(c);
    std::string err;
    ASSERT_EQ(c.send_raw("{\"cmd\":\"echo\",\"args\":[\"x\"]}\n", &err), ControlStatus::kOk);
    ::shutdown(c.fd(), SHUT_WR);
    EXPECT_EQ(read_reply(c).data, (json{{"args", {"x"}}}));
}

TEST_F(ControlServerTest, DeliversAReplyLargerThanTheSocketBuffer) {
    start_server();
    ControlClient c;
    connect(c);
    ControlReply r = request(c, "big", {"5000000"});
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.data.get<std::string>().size(), 5000000u);
}

TEST_F(ControlServerTest, RejectsAnOversizeRequestAndCloses) {
    start_server();
    ControlClient c;
    connect(c);
    std::string err;
    // No newline: the server gives up once the line passes the limit.
    c.send_raw(std::string(kControlMaxRequestBytes + 1000, 'a'), &err);
    ControlReply r = read_reply(c);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, "request exceeds 65536 bytes; closing connection");
    EXPECT_EQ(c.read_reply(&r, &err, 1000), ControlStatus::kIoError);

    // A complete line over the limit, through request(): still answered.
    ControlClient d;
    connect(d);
    r = ControlReply{};
    EXPECT_EQ(d.request("echo", {std::string(kControlMaxRequestBytes, 'b')}, &r, &err),
              ControlStatus::kOk)
        << err;
    EXPECT_FALSE(r.ok);

    ControlClient e;
    connect(e);
    EXPECT_TRUE(request(e, "echo").ok);
}

TEST_F(ControlServerTest, AcceptsARequestJustUnderTheLimit) {
    start_server();
    ControlClient c;
    connect(c);
    std::string arg(kControlMaxRequestBytes - 100, 'c');
    ControlReply r = request(c, "echo", {arg});
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.data["args"][0], arg);
}

TEST_F(ControlServerTest, ClientTimesOutWhenNobodyAnswers) {
    std::string err;
    ASSERT_TRUE(srv_.listen(path_, &err)) << err;  // listening, but never polled
    ControlClient c;
    connect(c);
    ControlReply r;
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(c.request("echo", {}, &r, &err, 100), ControlStatus::kTimeout);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(100));
    EXPECT_EQ(err, "no reply from " + path_ + " within 0.1 s");
}

TEST_F(ControlServerTest, ReplacesAStaleSocketFile) {
    make_stale_socket(path_);
    ASSERT_TRUE(fs::exists(path_));
    start_server();
    ControlClient c;
    connect(c);
    EXPECT_TRUE(request(c, "echo").ok);
}

TEST_F(ControlServerTest, RefusesAPathALiveServerAnswersOn) {
    start_server();
    ControlServer other;
    std::string err;
    EXPECT_FALSE(other.listen(path_, &err));
    EXPECT_EQ(err, "another roceswd is using " + path_);
    other.close();
    // The live server's socket is untouched.
    ControlClient c;
    connect(c);
    EXPECT_TRUE(request(c, "echo").ok);
}

TEST_F(ControlServerTest, RefusesAPathThatIsNotASocket) {
    std::ofstream(path_) << "hello";
    std::string err;
    EXPECT_FALSE(srv_.listen(path_, &err));
    EXPECT_EQ(err, path_ + " exists and is not a socket");
    EXPECT_TRUE(fs::exists(path_));
}

TEST_F(ControlServerTest, RefusesToListenTwice) {
    start_server();
    std::string err;
    EXPECT_FALSE(srv_.listen(dir_ + "/other.sock", &err));
    EXPECT_EQ(err, "already listening on " + path_);
}

TEST_F(ControlServerTest, CreatesParentDirectoryAndSetsModes) {
    path_ = dir_ + "/run/rocesw/sw1.sock";
    start_server();
    struct stat st;
    ASSERT_EQ(::stat((dir_ + "/run/rocesw").c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777 & ~0022u, 0755u & ~0022u);  // umask may only remove bits
    ASSERT_EQ(::stat(path_.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0660u);
}

TEST_F(ControlServerTest, CloseUnlinksTheSocketAndDisconnectsClients) {
    start_server();
    ControlClient c;
    connect(c);
    EXPECT_TRUE(request(c, "echo").ok);
    stop_server();
    srv_.close();
    EXPECT_FALSE(fs::exists(path_));
    ControlReply r;
    std::string err;
    EXPECT_EQ(c.request("echo", {}, &r, &err, 1000), ControlStatus::kIoError);
    ControlClient d;
    EXPECT_FALSE(d.connect(path_, &err));
    EXPECT_EQ(err, "cannot connect to " + path_ + ": No such file or directory");
    srv_.close();  // idempotent
}

TEST_F(ControlServerTest, CloseLeavesASuccessorsSocketAlone) {
    std::string err;
    ASSERT_TRUE(srv_.listen(path_, &err)) << err;
    ::unlink(path_.c_str());
    ControlServer successor;
    ASSERT_TRUE(successor.listen(path_, &err)) << err;
    srv_.close();
    EXPECT_TRUE(fs::exists(path_));
    successor.close();
    EXPECT_FALSE(fs::exists(path_));
}

// A client that asks for more than its socket buffer holds and never reads: its replies wait
// with no progress; at kClientStallMs (virtual time) it is disconnected and counted.
TEST_F(ControlServerTest, DisconnectsAClientWhoseRepliesStallUnread) {
    std::string err;
    ASSERT_TRUE(srv_.listen(path_, &err)) << err;
    ControlClient rude;
    connect(rude);
    ASSERT_EQ(rude.send_raw("{\"cmd\":\"big\",\"args\":[\"3000000\"]}\n", &err),
              ControlStatus::kOk);
    const uint64_t t0 = 1000;
    for (int i = 0; i < 20; i++) srv_.poll_once(1, t0);
    ASSERT_EQ(srv_.client_count(), 1u);
    EXPECT_EQ(srv_.client_stats().accepted, 1u);
    srv_.poll_once(0, t0 + ControlServer::kClientStallMs - 1);
    EXPECT_EQ(srv_.client_count(), 1u);
    EXPECT_EQ(srv_.client_stats().stalled, 0u);
    srv_.poll_once(0, t0 + ControlServer::kClientStallMs);
    EXPECT_EQ(srv_.client_count(), 0u);
    const auto st = srv_.client_stats();
    EXPECT_EQ(st.stalled, 1u);
    EXPECT_EQ(st.connected, 0u);
    json v = srv_.call("control_clients", {});
    EXPECT_EQ(v["disconnected"]["stalled"], 1u);
    EXPECT_EQ(v["accepted"], 1u);
}

// A server at its client limit refuses a new connection with kControlBusyError; ControlClient::
// call (rocectl) connects again until a place frees up, within its timeout.
TEST_F(ControlServerTest, ClientAtTheLimitIsRefusedAndCallRetriesUntilServed) {
    start_server();
    std::vector<std::unique_ptr<ControlClient>> idle;
    for (size_t i = 0; i < ControlServer::kMaxClients; i++) {
        idle.push_back(std::make_unique<ControlClient>());
        connect(*idle.back());
    }
    for (int i = 0; i < 200 && srv_.client_count() < ControlServer::kMaxClients; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(srv_.client_count(), ControlServer::kMaxClients);
    // A plain request gets the refusal.
    ControlClient one;
    connect(one);
    ControlReply r;
    std::string err;
    ASSERT_EQ(one.request("echo", {"a"}, &r, &err), ControlStatus::kOk) << err;
    EXPECT_TRUE(control_busy(r)) << r.error;
    EXPECT_NE(r.error.find("limit 64"), std::string::npos) << r.error;
    // call() gives up with that reply when no place frees up in time...
    ControlClient two;
    bool no_server = true;
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(two.call(path_, "echo", {"b"}, &r, &err, &no_server, 300), ControlStatus::kOk);
    const auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_FALSE(no_server);
    EXPECT_TRUE(control_busy(r));
    EXPECT_GE(waited, std::chrono::milliseconds(100));
    EXPECT_LT(waited, std::chrono::milliseconds(2000));
    const uint64_t refused = srv_.client_stats().refused;
    EXPECT_GE(refused, 4u);  // the first refusal, then 5, 10, 20, 40 ... ms apart
    // ...and is served once one does.
    std::thread freeing([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        idle.pop_back();
    });
    ControlClient three;
    ASSERT_EQ(three.call(path_, "echo", {"c"}, &r, &err, &no_server, 5000), ControlStatus::kOk)
        << err;
    freeing.join();
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.data["args"], json::array({"c"}));
    EXPECT_GT(srv_.client_stats().refused, refused);
    // No server at all: reported as such, without retrying.
    ControlClient four;
    EXPECT_EQ(four.call(dir_ + "/nobody.sock", "echo", {}, &r, &err, &no_server, 5000),
              ControlStatus::kIoError);
    EXPECT_TRUE(no_server);
    EXPECT_NE(err.find("cannot connect"), std::string::npos) << err;
}

// One that reads, slowly, is never cut off: each byte that leaves restarts the stall time.
TEST_F(ControlServerTest, KeepsAClientThatReadsSlowly) {
    std::string err;
    ASSERT_TRUE(srv_.listen(path_, &err)) << err;
    ControlClient slow;
    connect(slow);
    ASSERT_EQ(slow.send_raw("{\"cmd\":\"big\",\"args\":[\"3000000\"]}\n", &err),
              ControlStatus::kOk);
    uint64_t t = 1000;
    size_t got = 0;
    char buf[65536];
    while (got < 3000000) {
        srv_.poll_once(1, t);
        // What has arrived, all of it: the server sees the room only once the socket buffer
        // drains (a reader that takes less than that per stall time looks stalled).
        for (ssize_t n; (n = ::recv(slow.fd(), buf, sizeof(buf), MSG_DONTWAIT)) > 0;)
            got += size_t(n);
        t += ControlServer::kClientStallMs - 1;  // the server stays just within the limit
        ASSERT_EQ(srv_.client_count(), 1u) << "after " << got << " bytes";
    }
    EXPECT_EQ(srv_.client_stats().stalled, 0u);
}

TEST_F(ControlServerTest, PollOnceReturnsWithinTheTimeout) {
    start_server();
    stop_server();
    auto t0 = std::chrono::steady_clock::now();
    srv_.poll_once(20, 0);
    auto dt = std::chrono::steady_clock::now() - t0;
    EXPECT_LT(dt, std::chrono::milliseconds(1000));
    // Without a socket it still waits at most the timeout.
    ControlServer idle;
    t0 = std::chrono::steady_clock::now();
    idle.poll_once(0, 0);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1000));
}

TEST(ControlSocketPath, FollowsNameAndEnvironment) {
    EXPECT_EQ(control_socket_for_name("sw1"), "/run/rocesw/sw1.sock");
    ::unsetenv("ROCESW_SOCKET");
    EXPECT_EQ(default_control_socket(), "/run/rocesw/rocesw.sock");
    ::setenv("ROCESW_SOCKET", "/tmp/x.sock", 1);
    EXPECT_EQ(default_control_socket(), "/tmp/x.sock");
    ::unsetenv("ROCESW_SOCKET");
}

// ---- rocectl views ----

TEST(FormatTable, PortsShowsConfigurationThenCounters) {
    json data = json::parse(R"({"ports":[
      {"index":0,"name":"p0","device":"net_tap0","mac":"02:00:00:00:00:01","mtu":1500,
       "speed_mbps":10000,"link":{"up":true,"speed_mbps":10000,"duplex":"full"},
       "ipv4":["10.0.1.1/24"],"ipv6":["fd00:1::1/64"],"rx_packets":12,"rx_bytes":1500,
       "tx_packets":3,"tx_bytes":180,"rx_nombuf":0,"rx_missed":7,"drops":2,"local_packets":5},
      {"index":1,"name":"p1","device":"net_ring_r1","mac":"02:00:00:00:00:02","mtu":9000,
       "speed_mbps":2500,"link":{"up":false,"speed_mbps":0,"duplex":"half"},"ipv4":[],"ipv6":[],
       "rx_packets":123456789,"rx_bytes":0,"tx_packets":0,"tx_bytes":0,"rx_nombuf":0,
       "rx_missed":0,"drops":0,"local_packets":0},
      {"index":2,"name":"p2","link":{"up":true,"speed_mbps":0},"speed_mbps":2500}
    ]})");
    EXPECT_EQ(
        format_table("ports", data),
        "IDX  NAME  DEVICE       MAC                 MTU  LINK         ADDRESSES\n"
        "  0  p0    net_tap0     02:00:00:00:00:01  1500  up 10G full  10.0.1.1/24,fd00:1::1/64\n"
        "  1  p1    net_ring_r1  02:00:00:00:00:02  9000  down         -\n"
        "  2  p2    -            -                     -  up 2.5G      -\n"
        "\n"
        "NAME    RX-PKTS  RX-BYTES  TX-PKTS  TX-BYTES  RX-MISSED  RX-NOMBUF  DROPS  LOCAL\n"
        "p0           12      1500        3       180          7          0      2      5\n"
        "p1    123456789         0        0         0          0          0      0      0\n"
        "p2            -         -        -         -          -          -      -      -\n");
}

TEST(FormatTable, DropsListsReasonsAndTotal) {
    json data = json::parse(R"({"drops":[
      {"port":"p0","reason":"no_route","description":"no route to the destination","packets":12},
      {"port":"p1","reason":"ttl_expired","description":"TTL or hop limit is 0 or 1","packets":3}
    ],"total":15})");
    EXPECT_EQ(format_table("drops", data),
              "PORT  REASON       PACKETS  DESCRIPTION\n"
              "p0    no_route          12  no route to the destination\n"
              "p1    ttl_expired        3  TTL or hop limit is 0 or 1\n"
              "total: 15\n");
    EXPECT_EQ(format_table("drops", json{{"drops", json::array()}, {"total", 0}}),
              "PORT  REASON  PACKETS  DESCRIPTION\n"
              "total: 0\n");
}

// The accounting view: a received-side and a sent-side table with a total row, the drops by
// reason and the verdict.
TEST(FormatTable, AccountingShowsBothIdentitiesAndTheVerdict) {
    auto side = [](uint64_t rx, uint64_t fwd, uint64_t drop, json in_drops, uint64_t local,
                   uint64_t fwd_out, uint64_t replies, uint64_t pfc, uint64_t tx, uint64_t edrop,
                   json out_drops, uint64_t queued) {
        return json{{"received",
                     {{"rx", rx}, {"forwarded", fwd}, {"dropped", drop}, {"drops", in_drops},
                      {"local", local}, {"punted", 0}, {"difference", 0}}},
                    {"sent",
                     {{"forwarded", fwd_out}, {"local_replies", replies}, {"pfc_frames", pfc},
                      {"injected", 0}, {"tx", tx}, {"dropped", edrop}, {"drops", out_drops},
                      {"queued", queued}, {"difference", 0}}}};
    };
    json p0 = side(10, 6, 2, {{"no_route", 2}}, 2, 0, 1, 1, 2, 0, json::object(), 0);
    p0["port"] = "p0";
    json p1 = side(0, 0, 0, json::object(), 0, 6, 0, 0, 5, 1, {{"queue_full", 1}}, 0);
    p1["port"] = "p1";
    json total = side(10, 6, 2, {{"no_route", 2}}, 2, 6, 1, 1, 7, 1, {{"queue_full", 1}}, 0);
    json data = {{"ports", {p0, p1}}, {"total", total}, {"balanced", true}, {"verdict", "balanced"}};
    EXPECT_EQ(format_table("accounting", data),
              "received = forwarded + dropped + local + punted\n"
              "PORT   RX  FORWARDED  DROPPED  LOCAL  PUNTED  DIFF\n"
              "p0     10          6        2      2       0     0\n"
              "p1      0          0        0      0       0     0\n"
              "total  10          6        2      2       0     0\n"
              "forwarded + local replies + pfc + injected = tx + dropped + queued\n"
              "PORT   FORWARDED  LOCAL-REPLIES  PFC  INJECTED  TX  DROPPED  QUEUED  DIFF\n"
              "p0             0              1    1         0   2        0       0     0\n"
              "p1             6              0    0         0   5        1       0     0\n"
              "total          6              1    1         0   7        1       0     0\n"
              "received drops: no_route 2\n"
              "sent drops: queue_full 1\n"
              "verdict: balanced\n");
}

TEST(FormatTable, QueuesShowDepthWatermarkMarksAndDrops) {
    json data = {{"queues", json::array({{{"port", "p1"}, {"queue", 3}, {"enq_packets", 10},
                                          {"deq_packets", 7}, {"depth_bytes", 3000},
                                          {"watermark_bytes", 9000}, {"ecn_marked", 5},
                                          {"drops", 1}}})}};
    EXPECT_EQ(format_table("queues", data),
              "PORT  Q  ENQ-PKTS  DEQ-PKTS  DEPTH-BYTES  WATERMARK  ECN-MARKED  DROPS\n"
              "p1    3        10         7         3000       9000           5      1\n");
}

TEST(FormatTable, RoutesShowNextHops) {
    json data = json::parse(R"({"routes":[
      {"prefix":"10.0.2.0/24","type":"connected","nexthop":{"id":3,"via":null,"port":"p1","mac":null,"resolved":true}},
      {"prefix":"10.9.0.0/16","type":"static","nexthop":{"id":4,"via":"10.0.2.2","port":"p1","mac":"02:00:00:00:00:09","resolved":false}},
      {"prefix":"::/0","type":"static"}
    ],"counts":{"ipv4":2,"ipv6":1}})");
    EXPECT_EQ(format_table("routes", data),
              "PREFIX       TYPE       NH  VIA       PORT  MAC                RESOLVED\n"
              "10.0.2.0/24  connected   3  -         p1    -                  yes\n"
              "10.9.0.0/16  static      4  10.0.2.2  p1    02:00:00:00:00:09  no\n"
              "::/0         static      -  -         -     -                  -\n"
              "ipv4 routes: 2, ipv6 routes: 1\n");
}

TEST(FormatTable, NeighboursWorkersInfoAndHelp) {
    EXPECT_EQ(format_table("neighbours", json::parse(R"({"neighbours":[
                  {"ip":"10.0.1.2","mac":"02:aa:00:00:00:01","port":"p0","source":"static"},
                  {"ip":"10.0.1.3","mac":"02:aa:00:00:00:03","port":"p0","source":"static",
                   "kernel_mac":"02:aa:00:00:00:99"},
                  {"ip":"10.0.1.4","mac":"02:aa:00:00:00:04","port":"p0","source":"learned"}]})")),
              "IP        MAC                PORT  SOURCE\n"
              "10.0.1.2  02:aa:00:00:00:01  p0    static\n"
              "10.0.1.3  02:aa:00:00:00:03  p0    static (kernel: 02:aa:00:00:00:99)\n"
              "10.0.1.4  02:aa:00:00:00:04  p0    learned\n");
    EXPECT_EQ(format_table("workers", json::parse(R"({"workers":[
                  {"id":0,"lcore":1,"queues":[{"port":"p0","queue":0},{"port":"p1","queue":0}],
                   "polls":200,"busy_polls":50,"idle_sleeps":9},
                  {"id":1,"lcore":2,"queues":[],"polls":0,"busy_polls":0,"idle_sleeps":0}]})")),
              "ID  LCORE  QUEUES     POLLS  BUSY-POLLS  BUSY%  IDLE-SLEEPS\n"
              " 0      1  p0/0,p1/0    200          50   25.0            9\n"
              " 1      2  -              0           0      -            0\n");
    EXPECT_EQ(format_table("info", json::parse(R"({"uptime_s":12.5,"name":"sw1","pid":123,
                  "version":"0.1.0","workers":1,"file_prefix":"rocesw-sw1","extra":true})")),
              "name:         sw1\n"
              "version:      0.1.0\n"
              "pid:          123\n"
              "uptime_s:     12.5\n"
              "workers:      1\n"
              "file_prefix:  rocesw-sw1\n"
              "extra:        yes\n");
    EXPECT_EQ(format_table("help", json::parse(R"([{"cmd":"help","help":"list the commands"}])")),
              "COMMAND  HELP\n"
              "help     list the commands\n");
}

TEST(FormatTable, PrintsJsonForUnknownCommandsAndUnexpectedShapes) {
    json data = {{"a", 1}};
    EXPECT_EQ(format_table("custom", data), "{\n  \"a\": 1\n}\n");
    EXPECT_EQ(format_table("ports", json{{"ports", "oops"}}), "{\n  \"ports\": \"oops\"\n}\n");
    EXPECT_EQ(format_table("ports", json{{"ports", json::array()}}),
              "IDX  NAME  DEVICE  MAC  MTU  LINK  ADDRESSES\n"
              "\n"
              "NAME  RX-PKTS  RX-BYTES  TX-PKTS  TX-BYTES  RX-MISSED  RX-NOMBUF  DROPS  LOCAL\n");
}

// Found by fuzz_control: "info" of an empty object printed nothing, not even the newline every
// view ends with. Kept input: test/fuzz/regressions/control/crash-info-of-empty-object.
TEST(FormatTable, InfoOfAnEmptyObjectPrintsJson) {
    EXPECT_EQ(format_table("info", json::object()), "{}\n");
}

}  // namespace
}  // namespace rocesw
