// TESTPLAN Q1: every DSCP value (64) and every PCP value (8) lands in its configured queue,
// for IPv4 and IPv6, tagged and untagged, checked on the exact per-queue counters after each
// packet: parse -> classify on the ingress port -> egress TC_TO_QUEUE_MAP -> queue.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/strings.h"
#include "qos_fixture.h"

#ifndef ROCESW_TEST_DATA
#error "ROCESW_TEST_DATA must name the test/data directory"
#endif

namespace rocesw::test {
namespace {

using QosClassify = QosFixture;

Bytes frame(bool v6, uint8_t dscp, int pcp) {
    if (v6) return udp6_frame(dscp, 0, 120, pcp);
    return cat(eth(kH2, kP1, kEtherTypeIpv4, pcp),
               ipv4(v4(10, 0, 1, 2), v4(10, 0, 2, 2), kProtoUdp, udp_payload(1, 2, 64), 63,
                    uint8_t(dscp << 2)));
}

Bytes arp_frame() {
    Bytes b = eth({0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, kH1, kEtherTypeArp);
    const uint8_t arp[28] = {0,  1, 8, 0, 6, 4, 0, 1, 2, 0, 0,  0, 0xAA, 1,
                             10, 0, 1, 2, 0, 0, 0, 0, 0, 0, 10, 0, 1,    1};
    b.insert(b.end(), arp, arp + 28);
    return b;
}

std::string read_file(const std::string &path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

class Q1 : public QosClassify {
  public:
    // Sends one frame in on `in_port`, out of port 1, and checks that exactly queue `want`
    // counted it.
    void expect_queue(const Bytes &f, uint16_t in_port, uint8_t want, const std::string &what) {
        std::array<uint64_t, 8> before{};
        for (uint8_t i = 0; i < 8; i++) before[i] = q(i).enq_packets;
        send(f, 1, 1, in_port);
        for (uint8_t i = 0; i < 8; i++)
            ASSERT_EQ(q(i).enq_packets - before[i], i == want ? 1u : 0u)
                << what << ": queue " << int(i) << (i == want ? " should" : " should not")
                << " have counted it";
        egress->flush(now_ns += 1'000'000);
        ASSERT_EQ(ports->take_tx(1).size(), 1u) << what;
    }
};

// p0 trusts DSCP (d -> TC (5d + 3) % 8), p1 trusts PCP (p -> TC 7 - p, untagged -> TC 2); both
// map TC t -> queue 7 - t, so neither map is the identity and both are applied.
TEST_F(Q1, EveryDscpAndPcpToItsQueueIpv4Ipv6TaggedUntagged) {
    std::string y = "DSCP_TO_TC_MAP:\n  D: {" + join_n(64, ", ", [](int d) {
        return std::to_string(d) + ": " + std::to_string((5 * d + 3) % 8);
    });
    y += "}\nDOT1P_TO_TC_MAP:\n  P: {0: 7, 1: 6, 2: 5, 3: 4, 4: 3, 5: 2, 6: 1, 7: 0}\n"
         "TC_TO_QUEUE_MAP:\n  R: {0: 7, 1: 6, 2: 5, 3: 4, 4: 3, 5: 2, 6: 1, 7: 0}\n"
         "PORT_QOS_MAP:\n"
         "  p0: {trust: dscp, dscp_to_tc_map: D, tc_to_queue_map: R, default_tc: 6}\n"
         "  p1: {trust: dot1p, dot1p_to_tc_map: P, tc_to_queue_map: R, default_tc: 2}\n";
    start(y);
    int checked = 0;
    for (bool v6 : {false, true}) {
        for (int pcp : {-1, 0, 5, 7}) {
            for (uint8_t d = 0; d < 64; d++) {
                std::string what = std::string(v6 ? "IPv6" : "IPv4") +
                                   (pcp < 0 ? " untagged" : " PCP " + std::to_string(pcp)) +
                                   " DSCP " + std::to_string(d);
                expect_queue(frame(v6, d, pcp), 0, uint8_t(7 - (5 * d + 3) % 8), what);
                checked++;
            }
            // PCP trust ignores DSCP: any DSCP gives the PCP's queue (TC 7 - p -> queue p).
            for (uint8_t d : {0, 26, 63}) {
                std::string what = std::string(v6 ? "IPv6" : "IPv4") + " on p1, " +
                                   (pcp < 0 ? "untagged" : "PCP " + std::to_string(pcp)) +
                                   " DSCP " + std::to_string(d);
                expect_queue(frame(v6, d, pcp), 1, pcp < 0 ? 5 : uint8_t(pcp), what);
            }
        }
        for (int pcp = 0; pcp < 8; pcp++)
            expect_queue(frame(v6, 46, pcp), 1, uint8_t(pcp), "every PCP " + std::to_string(pcp));
    }
    // Non-IP under DSCP trust: p0's default TC 6 -> queue 1.
    expect_queue(arp_frame(), 0, 1, "ARP on a DSCP-trust port");
    EXPECT_EQ(checked, 512);
}

struct ProfileCase {
    const char *file;
    std::array<uint8_t, 64> queue_of_dscp;
};

std::array<uint8_t, 64> sonic_expected() {
    std::array<uint8_t, 64> a;
    for (int d = 0; d < 64; d++)
        a[size_t(d)] = d == 3 ? 3 : d == 4 ? 4 : d == 46 ? 5 : d == 48 ? 6 : d == 8 ? 0 : 1;
    return a;
}

std::array<uint8_t, 64> nvidia_expected() {
    std::array<uint8_t, 64> a;
    for (int d = 0; d < 64; d++) a[size_t(d)] = d == 26 ? 3 : d == 48 ? 6 : d == 56 ? 7 : 0;
    return a;
}

TEST_F(Q1, ShippedProfilesPutEveryDscpInItsDocumentedQueue) {
    for (auto pc : {ProfileCase{"sonic-default.yaml", sonic_expected()},
                    ProfileCase{"nvidia-roce.yaml", nvidia_expected()}}) {
        SCOPED_TRACE(pc.file);
        start(read_file(std::string(ROCESW_TEST_DATA "/../../config/qos/") + pc.file));
        for (bool v6 : {false, true})
            for (int pcp : {-1, 3})
                for (uint8_t d = 0; d < 64; d++)
                    expect_queue(frame(v6, d, pcp), 0, pc.queue_of_dscp[d],
                                 std::string(v6 ? "IPv6" : "IPv4") + " DSCP " + std::to_string(d));
        egress.reset();
        shared.reset();
    }
}

}  // namespace
}  // namespace rocesw::test
