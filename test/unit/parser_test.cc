// Parser unit test. The main vectors come from test/data/parser_cases.{pcap,json}, written by
// an independent encoder (scapy, test/data/gen_parser_pcaps.py): every frame is parsed and the
// result and every listed PacketMeta field are checked. Hand-built RoCEv2 frames are then cut
// at every length, and every frame is parsed from an exactly-sized heap buffer so that ASan
// catches any read past `len`.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/drop_reason.h"
#include "pcap_reader.h"
#include "pkt/meta.h"
#include "pkt/parser.h"

#ifndef ROCESW_TEST_DATA
#error "ROCESW_TEST_DATA must name the test/data directory"
#endif

namespace rocesw {
namespace {

using nlohmann::json;
using Result = std::optional<DropReason>;

std::string result_name(const Result &r) {
    return r ? std::string(drop_reason_name(*r)) : std::string("ok");
}

std::optional<DropReason> reason_by_name(const std::string &name) {
    for (size_t i = 0; i < kDropReasonCount; ++i) {
        const auto r = static_cast<DropReason>(i);
        if (drop_reason_name(r) == name) return r;
    }
    return std::nullopt;
}

// A receive stamp that no field's zero or garbage fill matches: every parse compared below
// (fast against general path included) writes it.
constexpr uint8_t kInPort = 7;
constexpr uint32_t kRxNsLo = 0x89ABCDEFu;

ParseOptions default_options() {
    ParseOptions o;
    o.max_l3_len = 1500;
    o.in_port = kInPort;
    o.rx_ns_lo = kRxNsLo;
    return o;
}

// Parses `len` bytes from a heap buffer of exactly `len` bytes (ASan flags any read past it).
// The meta starts out as garbage so that fields the parser fails to write show up.
Result parse_exact(const uint8_t *data, size_t len, const ParseOptions &opt, PacketMeta *meta) {
    std::unique_ptr<uint8_t[]> buf(new uint8_t[len]);
    if (len) std::memcpy(buf.get(), data, len);
    std::memset(meta, 0xA5, sizeof *meta);
    return parse_frame(buf.get(), static_cast<uint32_t>(len), opt, meta);
}

Result parse_exact(const std::vector<uint8_t> &f, const ParseOptions &opt, PacketMeta *meta) {
    return parse_exact(f.data(), f.size(), opt, meta);
}

uint32_t ip4_from_string(const std::string &s) {
    unsigned a, b, c, d;
    char tail;
    if (std::sscanf(s.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4 || a > 255 || b > 255 ||
        c > 255 || d > 255) {
        ADD_FAILURE() << "bad IPv4 address in manifest: " << s;
        return 0;
    }
    return a << 24 | b << 16 | c << 8 | d;
}

// The parser-owned fields of a meta, for comparing two parses of the same frame.
std::string meta_fingerprint(const PacketMeta &m) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "l3o=%u l4o=%u l3len=%u flags=%#x l3=%u proto=%u ttl=%u dscp=%u ecn=%u "
                  "pcp=%u vid=%u ports=%u/%u ip4=%#x/%#x qp=%#x",
                  m.l3_offset, m.l4_offset, m.l3_len, m.flags, unsigned(m.l3), m.ip_proto, m.ttl,
                  m.dscp, m.ecn, m.pcp, m.vid, m.src_port, m.dst_port, m.src_ip4, m.dst_ip4,
                  m.dest_qp);
    return buf;
}

// Checks every field the manifest lists for a valid case (the BTH opcode and PSN through
// bth_opcode() and bth_psn(), which read them from the frame).
void expect_meta(const json &spec, const PacketMeta &m, const std::vector<uint8_t> &frame) {
    static const std::map<std::string, uint16_t> kFlagKeys = {
        {"vlan", kFlagVlan},          {"l4", kFlagL4},
        {"roce", kFlagRoce},          {"fragment", kFlagFragment},
        {"dst_bcast", kFlagDstBcast}, {"dst_mcast", kFlagDstMcast},
    };
    // clang-format off
#define ROCESW_FIELD(f) {#f, [](const PacketMeta &p) { return uint32_t(p.f); }}
    // clang-format on
    static const std::map<std::string, uint32_t (*)(const PacketMeta &)> kNumeric = {
        ROCESW_FIELD(l3_offset), ROCESW_FIELD(l4_offset), ROCESW_FIELD(l3_len),
        ROCESW_FIELD(ip_proto),  ROCESW_FIELD(ttl),       ROCESW_FIELD(dscp),
        ROCESW_FIELD(ecn),       ROCESW_FIELD(pcp),       ROCESW_FIELD(vid),
        ROCESW_FIELD(src_port),  ROCESW_FIELD(dst_port),  ROCESW_FIELD(dest_qp),
    };
#undef ROCESW_FIELD
    static const std::map<std::string, L3Type> kL3 = {
        {"ipv4", L3Type::ipv4}, {"ipv6", L3Type::ipv6}, {"arp", L3Type::arp},
        {"mac_control", L3Type::mac_control}};

    for (const auto &[key, v] : spec.items()) {
        SCOPED_TRACE("field " + key);
        if (key == "name" || key == "len" || key == "expect" || key == "note") continue;
        if (auto f = kFlagKeys.find(key); f != kFlagKeys.end()) {
            EXPECT_EQ((m.flags & f->second) != 0, v.get<bool>())
                << key << " flag; flags=" << std::hex << m.flags;
        } else if (key == "l3") {
            ASSERT_TRUE(kL3.count(v.get<std::string>())) << "manifest l3 " << v;
            EXPECT_EQ(unsigned(m.l3), unsigned(kL3.at(v.get<std::string>()))) << "l3";
        } else if (key == "src_ip4") {
            EXPECT_EQ(m.src_ip4, ip4_from_string(v.get<std::string>())) << std::hex << "src_ip4";
        } else if (key == "dst_ip4") {
            EXPECT_EQ(m.dst_ip4, ip4_from_string(v.get<std::string>())) << std::hex << "dst_ip4";
        } else if (key == "bth_opcode" || key == "psn") {
            ASSERT_TRUE(m.flags & kFlagRoce) << key << " without kFlagRoce";
            EXPECT_EQ(key == "psn" ? bth_psn(frame.data(), m) : bth_opcode(frame.data(), m),
                      v.get<uint32_t>())
                << key;
        } else {
            const auto field = kNumeric.find(key);
            if (field == kNumeric.end()) {
                ADD_FAILURE() << "unknown manifest key " << key;
                continue;
            }
            const uint32_t got = field->second(m), want = v.get<uint32_t>();
            EXPECT_EQ(got, want) << key;
        }
    }
    constexpr uint16_t kKnownFlags =
        kFlagVlan | kFlagL4 | kFlagRoce | kFlagFragment | kFlagDstBcast | kFlagDstMcast;
    EXPECT_EQ(m.flags & ~kKnownFlags, 0) << "unknown flag bits set: " << std::hex << m.flags;
}

struct Case {
    std::string name;
    std::vector<uint8_t> frame;
    json spec;
    Result expect;
};

// ---------------------------------------------------------------------------------------------
// The scapy-encoded vectors

class ParserCases : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        try {
            const std::string dir = ROCESW_TEST_DATA;
            uint32_t linktype = 0;
            auto frames = test::read_pcap(dir + "/parser_cases.pcap", &linktype);
            if (linktype != test::kPcapLinktypeEthernet) {
                throw std::runtime_error("parser_cases.pcap: link type " +
                                         std::to_string(linktype) + ", want Ethernet");
            }
            std::ifstream in(dir + "/parser_cases.json");
            if (!in) throw std::runtime_error("cannot open " + dir + "/parser_cases.json");
            const json manifest = json::parse(in);
            if (!manifest.is_array() || manifest.size() != frames.size()) {
                throw std::runtime_error("manifest lists " + std::to_string(manifest.size()) +
                                         " cases, the pcap holds " + std::to_string(frames.size()) +
                                         " frames");
            }
            std::set<std::string> names;
            for (size_t i = 0; i < frames.size(); ++i) {
                Case c;
                c.spec = manifest[i];
                c.name = c.spec.at("name").get<std::string>();
                if (!names.insert(c.name).second) throw std::runtime_error("duplicate " + c.name);
                if (c.spec.at("len").get<size_t>() != frames[i].size()) {
                    throw std::runtime_error(c.name + ": manifest len disagrees with the pcap");
                }
                const auto expect = c.spec.at("expect").get<std::string>();
                if (expect != "ok") {
                    c.expect = reason_by_name(expect);
                    if (!c.expect) throw std::runtime_error(c.name + ": unknown reason " + expect);
                }
                c.frame = std::move(frames[i]);
                cases_->push_back(std::move(c));
            }
        } catch (const std::exception &e) {
            *load_error_ = e.what();
        }
    }

    void SetUp() override { ASSERT_TRUE(load_error_->empty()) << *load_error_; }

    static const Case &by_name(const std::string &name) {
        for (const auto &c : *cases_) {
            if (c.name == name) return c;
        }
        throw std::runtime_error("no case named " + name);
    }

    static inline std::vector<Case> *cases_ = new std::vector<Case>;
    static inline std::string *load_error_ = new std::string;
};

TEST_F(ParserCases, EveryCaseMatchesManifest) {
    ASSERT_GE(cases_->size(), 100u);
    for (const auto &c : *cases_) {
        SCOPED_TRACE("case " + c.name);
        PacketMeta meta;
        const Result got = parse_exact(c.frame, default_options(), &meta);
        EXPECT_EQ(result_name(got), result_name(c.expect));
        if (!got && !c.expect) expect_meta(c.spec, meta, c.frame);
    }
}

// The meta must not depend on what it held before: parse into a zeroed meta and a garbage one.
TEST_F(ParserCases, MetaDoesNotDependOnPriorContents) {
    for (const auto &c : *cases_) {
        if (c.expect) continue;
        SCOPED_TRACE("case " + c.name);
        PacketMeta a, b;
        std::memset(&a, 0, sizeof a);
        std::memset(&b, 0xFF, sizeof b);
        ASSERT_FALSE(parse_frame(c.frame.data(), uint32_t(c.frame.size()), default_options(), &a));
        ASSERT_FALSE(parse_frame(c.frame.data(), uint32_t(c.frame.size()), default_options(), &b));
        expect_meta(c.spec, a, c.frame);
        expect_meta(c.spec, b, c.frame);
    }
}

// Every reason the parser can produce has at least one vector.
TEST_F(ParserCases, CoversEveryParserDropReason) {
    const std::set<std::string> not_parser = {"dst_mac_mismatch", "l3_multicast", "ttl_expired",
                                              "no_route",         "no_neighbour", "mtu_exceeded",
                                              "local_unhandled",  "tx_full",      "port_stopped",
                                              // egress queues (lib/qos) and PFC (lib/pfc)
                                              "queue_full", "buffer_full", "wred_drop",
                                              "headroom_exhausted", "handoff_full", "pfc_watchdog",
                                              "mac_control_malformed", "pause_ignored",
                                              // punt path (lib/pipeline/punt.h, drivers/hostif)
                                              "punt_policed", "punt_queue_full",
                                              // a discard route (lib/route)
                                              "route_discard",
                                              // a lost link (lib/qos, TrafficManager)
                                              "link_down"};
    std::set<std::string> seen;
    for (const auto &c : *cases_) seen.insert(result_name(c.expect));
    EXPECT_TRUE(seen.count("ok"));
    for (size_t i = 0; i < kDropReasonCount; ++i) {
        const std::string name(drop_reason_name(static_cast<DropReason>(i)));
        if (!not_parser.count(name)) {
            EXPECT_TRUE(seen.count(name)) << "no case for " << name;
        }
    }
}

// Every prefix of every vector: no crash, no read past len (exact-size buffers under ASan), and
// the same answer as when the bytes after len are present in memory. A prefix of a frame with
// no bytes after its L3 packet must be dropped.
TEST_F(ParserCases, EveryPrefixOfEveryCase) {
    const ParseOptions opt = default_options();
    for (const auto &c : *cases_) {
        SCOPED_TRACE("case " + c.name);
        bool tight = false;
        if (!c.expect) {
            const auto off = c.spec.at("l3_offset").get<size_t>();
            if (c.spec.contains("l3_len")) {
                tight = off + c.spec["l3_len"].get<size_t>() == c.frame.size();
            } else if (c.spec.at("l3").get<std::string>() == "arp") {
                tight = off + 28 == c.frame.size();
            }
        }
        for (size_t len = 0; len < c.frame.size(); ++len) {
            SCOPED_TRACE("len " + std::to_string(len));
            PacketMeta exact, inplace;
            const Result a = parse_exact(c.frame.data(), len, opt, &exact);
            std::memset(&inplace, 0xA5, sizeof inplace);
            const Result b = parse_frame(c.frame.data(), uint32_t(len), opt, &inplace);
            ASSERT_EQ(result_name(a), result_name(b));
            if (!a) {
                ASSERT_EQ(meta_fingerprint(exact), meta_fingerprint(inplace));
            }
            if (tight) {
                ASSERT_TRUE(a.has_value()) << "a cut frame parsed ok";
            }
        }
    }
}

TEST_F(ParserCases, ChecksumVerificationCanBeTurnedOff) {
    ParseOptions opt = default_options();
    opt.verify_ipv4_checksum = false;
    for (const char *name : {"ipv4_checksum_bad", "ipv4_checksum_zero"}) {
        SCOPED_TRACE(name);
        PacketMeta meta;
        EXPECT_EQ(result_name(parse_exact(by_name(name).frame, opt, &meta)), "ok");
        EXPECT_EQ(meta.l3, L3Type::ipv4);
        EXPECT_EQ(meta.l3_offset, 14);
        EXPECT_EQ(meta.l4_offset, 34);
        EXPECT_EQ(meta.dst_port, 53);
    }
}

TEST_F(ParserCases, MaxL3LenIsTheLimit) {
    ParseOptions opt = default_options();
    opt.max_l3_len = 9000;
    for (const char *name : {"frame_too_long_ipv4", "frame_too_long_ipv4_1501",
                             "frame_too_long_ipv6", "frame_too_long_roce4"}) {
        SCOPED_TRACE(name);
        PacketMeta meta;
        EXPECT_EQ(result_name(parse_exact(by_name(name).frame, opt, &meta)), "ok");
    }
    PacketMeta meta;
    ASSERT_FALSE(parse_exact(by_name("frame_too_long_roce4").frame, opt, &meta));
    EXPECT_TRUE(meta.flags & kFlagRoce);
    EXPECT_EQ(meta.l3_len, 4156);
    EXPECT_EQ(meta.dest_qp, 5u);
    EXPECT_EQ(bth_psn(by_name("frame_too_long_roce4").frame.data(), meta), 6u);

    opt.max_l3_len = 1499;
    for (const char *name : {"ipv4_len_1500", "vlan_ipv4_len_1500", "ipv6_len_1500"}) {
        SCOPED_TRACE(name);
        EXPECT_EQ(result_name(parse_exact(by_name(name).frame, opt, &meta)), "frame_too_long");
    }
    opt.max_l3_len = 1500;
    for (const char *name : {"ipv4_len_1500", "vlan_ipv4_len_1500", "ipv6_len_1500"}) {
        SCOPED_TRACE(name);
        EXPECT_EQ(result_name(parse_exact(by_name(name).frame, opt, &meta)), "ok");
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-built RoCEv2 frames, written byte by byte here (independent of the parser's helpers).

void put16(std::vector<uint8_t> &f, uint16_t v) {
    f.push_back(uint8_t(v >> 8));
    f.push_back(uint8_t(v));
}
void put24(std::vector<uint8_t> &f, uint32_t v) {
    f.push_back(uint8_t(v >> 16));
    put16(f, uint16_t(v));
}
void put32(std::vector<uint8_t> &f, uint32_t v) {
    put16(f, uint16_t(v >> 16));
    put16(f, uint16_t(v));
}
void set16(std::vector<uint8_t> &f, size_t at, uint16_t v) {
    f[at] = uint8_t(v >> 8);
    f[at + 1] = uint8_t(v);
}

void fix_ipv4_checksum(std::vector<uint8_t> &f, size_t ip) {
    set16(f, ip + 10, 0);
    uint32_t sum = 0;
    for (size_t i = 0; i < 20; i += 2) sum += uint32_t(f[ip + i]) << 8 | f[ip + i + 1];
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    set16(f, ip + 10, uint16_t(~sum));
}

constexpr uint32_t kQp = 0xABCDEF, kPsn = 0x123456;
constexpr size_t kRoceBodyLen = 12 + 16 + 32 + 4;  // BTH + RETH + payload + ICRC

void put_eth(std::vector<uint8_t> &f) {
    for (uint8_t b : {0x02, 0x00, 0x00, 0x00, 0x00, 0xFE, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01})
        f.push_back(b);
}

// BTH (RDMA WRITE only, A bit and FECN set), RETH, 32 payload bytes, ICRC placeholder.
void put_roce_body(std::vector<uint8_t> &f) {
    f.push_back(0x0A);
    f.push_back(0x00);
    put16(f, 0xFFFF);
    f.push_back(0x80);  // FECN
    put24(f, kQp);
    f.push_back(0x80);  // A bit
    put24(f, kPsn);
    put32(f, 0x00007F00);  // RETH VA
    put32(f, 0x10000000);
    put32(f, 0x1234);  // rkey
    put32(f, 32);      // DMA length
    for (int i = 0; i < 32; ++i) f.push_back(uint8_t(i));
    put32(f, 0xDEADBEEF);  // ICRC: not checked by the parser
}

// Ethernet / IPv4 (DSCP 26, ECT(0), DF) / UDP 0xC0DE -> 4791 / RoCE body. 14+20+8+64 bytes.
std::vector<uint8_t> roce_ipv4_frame() {
    std::vector<uint8_t> f;
    put_eth(f);
    put16(f, 0x0800);
    const size_t ip = f.size();
    f.push_back(0x45);
    f.push_back((26 << 2) | 2);
    put16(f, uint16_t(20 + 8 + kRoceBodyLen));
    put16(f, 0x1234);
    put16(f, 0x4000);
    f.push_back(64);
    f.push_back(17);
    put16(f, 0);
    put32(f, 0x0A000001);
    put32(f, 0x0A000102);
    put16(f, 0xC0DE);
    put16(f, 4791);
    put16(f, uint16_t(8 + kRoceBodyLen));
    put16(f, 0);
    put_roce_body(f);
    fix_ipv4_checksum(f, ip);
    return f;
}

// Ethernet / 802.1Q (PCP 3, VID 100) / IPv6 (DSCP 26, CE, flow label) / UDP / RoCE body.
std::vector<uint8_t> roce_ipv6_vlan_frame() {
    std::vector<uint8_t> f;
    put_eth(f);
    put16(f, 0x8100);
    put16(f, (3 << 13) | 100);
    put16(f, 0x86DD);
    const uint8_t tc = (26 << 2) | 3;
    put32(f, 6u << 28 | uint32_t(tc) << 20 | 0xABCDE);
    put16(f, uint16_t(8 + kRoceBodyLen));
    f.push_back(17);
    f.push_back(7);  // hop limit
    for (int i = 0; i < 16; ++i) f.push_back(i == 0 ? 0xFD : i == 15 ? 0x01 : 0x00);
    for (int i = 0; i < 16; ++i) f.push_back(i == 0 ? 0xFD : i == 15 ? 0x02 : 0x00);
    put16(f, 0xC0DF);
    put16(f, 4791);
    put16(f, uint16_t(8 + kRoceBodyLen));
    put16(f, 0x1111);  // some checksum: not checked
    put_roce_body(f);
    return f;
}

TEST(ParserHandBuilt, RoceIpv4Parses) {
    const auto f = roce_ipv4_frame();
    ASSERT_EQ(f.size(), 14u + 20 + 8 + kRoceBodyLen);
    PacketMeta m;
    ASSERT_EQ(result_name(parse_exact(f, default_options(), &m)), "ok");
    EXPECT_EQ(m.l3, L3Type::ipv4);
    EXPECT_EQ(m.l3_offset, 14);
    EXPECT_EQ(m.l4_offset, 34);
    EXPECT_EQ(m.l3_len, 20 + 8 + kRoceBodyLen);
    EXPECT_EQ(m.flags, kFlagL4 | kFlagRoce);
    EXPECT_EQ(m.ip_proto, 17);
    EXPECT_EQ(m.ttl, 64);
    EXPECT_EQ(m.dscp, 26);
    EXPECT_EQ(m.ecn, 2);
    EXPECT_EQ(m.pcp, 0);
    EXPECT_EQ(m.vid, 0);
    EXPECT_EQ(m.src_port, 0xC0DE);
    EXPECT_EQ(m.dst_port, 4791);
    EXPECT_EQ(m.src_ip4, 0x0A000001u);
    EXPECT_EQ(m.dst_ip4, 0x0A000102u);
    EXPECT_EQ(bth_opcode(f.data(), m), 0x0A);
    EXPECT_EQ(m.dest_qp, kQp);
    EXPECT_EQ(bth_psn(f.data(), m), kPsn);
}

TEST(ParserHandBuilt, RoceIpv6VlanParses) {
    const auto f = roce_ipv6_vlan_frame();
    ASSERT_EQ(f.size(), 18u + 40 + 8 + kRoceBodyLen);
    PacketMeta m;
    ASSERT_EQ(result_name(parse_exact(f, default_options(), &m)), "ok");
    EXPECT_EQ(m.l3, L3Type::ipv6);
    EXPECT_EQ(m.l3_offset, 18);
    EXPECT_EQ(m.l4_offset, 58);
    EXPECT_EQ(m.l3_len, 40 + 8 + kRoceBodyLen);
    EXPECT_EQ(m.flags, kFlagVlan | kFlagL4 | kFlagRoce);
    EXPECT_EQ(m.ip_proto, 17);
    EXPECT_EQ(m.ttl, 7);
    EXPECT_EQ(m.dscp, 26);
    EXPECT_EQ(m.ecn, 3);
    EXPECT_EQ(m.pcp, 3);
    EXPECT_EQ(m.vid, 100);
    EXPECT_EQ(m.src_port, 0xC0DF);
    EXPECT_EQ(m.dst_port, 4791);
    EXPECT_EQ(bth_opcode(f.data(), m), 0x0A);
    EXPECT_EQ(m.dest_qp, kQp);
    EXPECT_EQ(bth_psn(f.data(), m), kPsn);
}

// Cutting the frame (length fields untouched) at every length: the reason follows the layer
// the cut lands in. Exact-size buffers: ASan reports any read past len.
TEST(ParserHandBuilt, RoceIpv4EveryTruncation) {
    const auto f = roce_ipv4_frame();
    for (size_t len = 0; len < f.size(); ++len) {
        SCOPED_TRACE("len " + std::to_string(len));
        PacketMeta m;
        const Result r = parse_exact(f.data(), len, default_options(), &m);
        const char *want = len < 14   ? "eth_truncated"
                           : len < 34 ? "ipv4_truncated"
                                      : "ipv4_length_bad";
        EXPECT_EQ(result_name(r), want);
    }
}

TEST(ParserHandBuilt, RoceIpv6VlanEveryTruncation) {
    const auto f = roce_ipv6_vlan_frame();
    for (size_t len = 0; len < f.size(); ++len) {
        SCOPED_TRACE("len " + std::to_string(len));
        PacketMeta m;
        const Result r = parse_exact(f.data(), len, default_options(), &m);
        const char *want = len < 14   ? "eth_truncated"
                           : len < 18 ? "vlan_truncated"
                           : len < 58 ? "ipv6_truncated"
                                      : "ipv6_length_bad";
        EXPECT_EQ(result_name(r), want);
    }
}

// Cutting the frame and shrinking the IP length to match: the packet is consistent down to the
// cut, so the reason is the first header (UDP, then BTH + ICRC) that no longer fits.
TEST(ParserHandBuilt, ConsistentTruncationReachesUdpAndBth) {
    for (bool v6 : {false, true}) {
        SCOPED_TRACE(v6 ? "ipv6 vlan" : "ipv4");
        const auto full = v6 ? roce_ipv6_vlan_frame() : roce_ipv4_frame();
        const size_t ip = v6 ? 18 : 14, udp = v6 ? 58 : 34;
        for (size_t l4len = 0; l4len <= full.size() - udp; ++l4len) {
            SCOPED_TRACE("l4 bytes " + std::to_string(l4len));
            std::vector<uint8_t> f(full.begin(), full.begin() + long(udp + l4len));
            if (v6) {
                set16(f, ip + 4, uint16_t(l4len));
            } else {
                set16(f, ip + 2, uint16_t(20 + l4len));
                fix_ipv4_checksum(f, ip);
            }
            if (l4len >= 8) set16(f, udp + 4, uint16_t(l4len));
            PacketMeta m;
            const Result r = parse_exact(f, default_options(), &m);
            const char *want = l4len < 8        ? "udp_truncated"
                               : l4len < 8 + 16 ? "bth_truncated"
                                                : "ok";
            EXPECT_EQ(result_name(r), want);
            if (!r) {
                EXPECT_EQ(m.dest_qp, kQp);
                EXPECT_EQ(bth_psn(f.data(), m), kPsn);
                EXPECT_EQ(m.l3_len, l4len + (v6 ? 40 : 20));
            }
        }
    }
}

// Bytes after len must not matter: the frame sits in a larger buffer whose tail would make it a
// valid (longer) packet, and the parse must see only len bytes.
TEST(ParserHandBuilt, NeverReadsBeyondLen) {
    for (bool v6 : {false, true}) {
        SCOPED_TRACE(v6 ? "ipv6 vlan" : "ipv4");
        const auto f = v6 ? roce_ipv6_vlan_frame() : roce_ipv4_frame();
        for (size_t len = 0; len <= f.size(); ++len) {
            SCOPED_TRACE("len " + std::to_string(len));
            PacketMeta a, b;
            const Result ra = parse_exact(f.data(), len, default_options(), &a);
            std::memset(&b, 0xA5, sizeof b);
            const Result rb = parse_frame(f.data(), uint32_t(len), default_options(), &b);
            ASSERT_EQ(result_name(ra), result_name(rb));
            if (!ra) {
                EXPECT_EQ(meta_fingerprint(a), meta_fingerprint(b));
            }
            EXPECT_EQ(ra.has_value(), len != f.size());
        }
    }
}

// Whether the worker's PortFastPath for the frame's own destination MAC takes `f` (its record
// in the padded private area it writes 48 bytes of).
bool port_fast_path_takes(const std::vector<uint8_t> &f, const ParseOptions &opt) {
    struct alignas(16) {
        PacketMeta m;
        uint8_t pad[4];
    } r;
    return PortFastPath(opt, f.data()).parse(f.data(), uint32_t(f.size()), opt.verify_ipv4_checksum,
                                             &r.m);
}

// The worker's PortFastPath for the port MACs that matter to `f` (its own destination, that
// address with the group bit, another unicast one) against parse_ipv4_udp_fast (`fast`: its
// record, null when it refused the frame): it takes exactly the frames that one takes whose
// destination is the port's unicast MAC, that have at least PortFastPath::kMinFrame bytes and
// whose TTL is at least 2, with the same record (bytes 0..43), and writes zeros after it (bytes
// 44..47, the private area's padding).
void port_fast_path_agrees(const uint8_t *f, size_t len, const ParseOptions &opt,
                           const PacketMeta *fast) {
    std::array<uint8_t, 6> own{0x02, 0, 0, 0, 0, 1};
    if (len >= 6) std::copy_n(f, 6, own.begin());
    std::array<uint8_t, 6> group = own, other = own;
    group[0] |= 1;
    other[0] &= uint8_t(~1);
    other[5] ^= 0x40;
    for (const auto &mac : {own, group, other}) {
        struct alignas(16) {
            PacketMeta m;
            uint8_t pad[4];
        } r;
        std::memset(&r, 0xA5, sizeof r);
        const bool took = PortFastPath(opt, mac.data())
                              .parse(f, uint32_t(len), opt.verify_ipv4_checksum, &r.m);
        const bool to_port = len >= 6 && std::equal(mac.begin(), mac.end(), f) && !(mac[0] & 1);
        const bool ttl2 = len > 14 + 8 && f[14 + 8] >= 2;
        // Source and destination first octets below 224 (len >= kMinFrame covers them).
        const bool below224 = len >= PortFastPath::kMinFrame && f[14 + 12] < 224 && f[14 + 16] < 224;
        EXPECT_EQ(took, fast && to_port && len >= PortFastPath::kMinFrame && ttl2 && below224)
            << "port MAC " << int(mac[0]) << ":.." << int(mac[5]) << ", " << len << " bytes";
        if (!took || !fast) continue;
        EXPECT_EQ(0, std::memcmp(&r.m, fast, sizeof r.m))
            << meta_fingerprint(r.m) << " vs " << meta_fingerprint(*fast);
        const uint8_t zero[4] = {};
        EXPECT_EQ(0, std::memcmp(r.pad, zero, 4));
    }
}

// Parses `len` bytes of `f` (from an exactly-sized buffer) with the inline fast path, the
// general parser and parse_frame: parse_frame must return the general parser's verdict, and a
// frame the fast path accepts must be accepted by the general parser with byte-identical
// metadata. Returns whether the fast path took the frame.
bool fast_path_agrees(const std::vector<uint8_t> &f, size_t len, const ParseOptions &opt) {
    std::unique_ptr<uint8_t[]> buf(new uint8_t[len ? len : 1]);
    if (len) std::memcpy(buf.get(), f.data(), len);
    PacketMeta a, b;
    std::memset(&a, 0xA5, sizeof a);
    std::memset(&b, 0x5A, sizeof b);
    const bool fast = parse_ipv4_udp_fast(buf.get(), uint32_t(len), opt, &a);
    const Result rb = parse_frame_general(buf.get(), uint32_t(len), opt, &b);
    const Result rc = parse_frame(buf.get(), uint32_t(len), opt, &b);
    EXPECT_EQ(result_name(rb), result_name(rc));
    port_fast_path_agrees(buf.get(), len, opt, fast ? &a : nullptr);
    if (!fast) return false;
    EXPECT_FALSE(rb.has_value()) << "fast path accepted what the general parser refuses: "
                                 << result_name(rb);
    EXPECT_EQ(0, std::memcmp(&a, &b, sizeof a))
        << meta_fingerprint(a) << " vs " << meta_fingerprint(b);
    return true;
}

constexpr size_t kFastIp = 14, kFastUdp = 14 + 20;

// The inline fast path (parse_ipv4_udp_fast) against the general parser: on every single-byte
// mutation of the header bytes, with and without a repaired IPv4 checksum, at every length and
// with the options varied, a frame the fast path accepts must be accepted by the general parser
// with byte-identical metadata. The general parser itself is checked against scapy above.
TEST(ParserFastPath, AgreesWithGeneralParser) {
    const auto base = roce_ipv4_frame();
    size_t fast_taken = 0, compared = 0;
    auto check = [&](const std::vector<uint8_t> &f, size_t len, const ParseOptions &opt) {
        ++compared;
        fast_taken += fast_path_agrees(f, len, opt);
    };
    ParseOptions nocsum = default_options();
    nocsum.verify_ipv4_checksum = false;
    ParseOptions small = default_options();
    small.max_l3_len = 60;
    for (const ParseOptions &opt : {default_options(), nocsum, small}) {
        for (size_t len = 0; len <= base.size(); ++len) check(base, len, opt);
        for (size_t pos = 0; pos < 14 + 20 + 8 + 12; ++pos) {
            for (int v : {0x00, 0xFF, base[pos] ^ 0x01, base[pos] ^ 0x80, (base[pos] + 0x10) & 0xFF,
                          0x40, 0x3F}) {
                for (bool fix : {false, true}) {
                    auto f = base;
                    f[pos] = uint8_t(v);
                    if (fix) {
                        f[24] = f[25] = 0;
                        fix_ipv4_checksum(f, 14);
                    }
                    check(f, f.size(), opt);
                    check(f, f.size() - 5, opt);
                }
            }
        }
    }
    ASSERT_FALSE(HasFailure());
    // The common frame must actually take the fast path.
    PacketMeta m;
    EXPECT_TRUE(parse_ipv4_udp_fast(base.data(), uint32_t(base.size()), default_options(), &m));
    EXPECT_GT(fast_taken, 1000u) << fast_taken << " of " << compared;  // 1150 of 4857
}

// The length checks the fast path folds into single unsigned compares, at and around each
// bound: IPv4 total length against 28 and the frame, UDP length against 8 and the IP payload,
// the port MTU, the BTH that must fit the UDP payload. Checksums repaired, so the lengths decide.
TEST(ParserFastPath, AgreesAtLengthBounds) {
    const auto base = roce_ipv4_frame();
    const uint16_t total = uint16_t(base.size() - 14), udp = uint16_t(total - 20);
    auto with = [&](size_t at, uint16_t v) {
        auto f = base;
        set16(f, at, v);
        fix_ipv4_checksum(f, kFastIp);
        return f;
    };
    size_t fast = 0;
    for (int t : {0, 1, 19, 20, 27, 28, 29, 36, total - 1, int(total), total + 1, 0xFFFF}) {
        for (size_t cut : {size_t(0), size_t(1), size_t(8)}) {
            const auto f = with(kFastIp + 2, uint16_t(t));
            fast += fast_path_agrees(f, f.size() - cut, default_options());
        }
    }
    for (int u : {0, 1, 7, 8, 9, 23, 24, 27, 28, udp - 1, int(udp), udp + 1, 0xFFFF})
        fast += fast_path_agrees(with(kFastUdp + 4, uint16_t(u)), base.size(), default_options());
    for (uint32_t mtu : {0u, 27u, 28u, uint32_t(total - 1), uint32_t(total), 9000u}) {
        ParseOptions opt = default_options();
        opt.max_l3_len = mtu;
        fast += fast_path_agrees(base, base.size(), opt);
    }
    // A short plain-UDP datagram: total 28, UDP length 8, nothing after (frame of 42 bytes).
    auto tiny = with(kFastIp + 2, 28);
    tiny.resize(42);
    set16(tiny, kFastUdp + 2, 53);
    set16(tiny, kFastUdp + 4, 8);
    fix_ipv4_checksum(tiny, kFastIp);
    for (size_t len : {size_t(41), size_t(42)})
        fast += fast_path_agrees(tiny, len, default_options());
    EXPECT_TRUE(fast_path_agrees(tiny, 42, default_options()));
    EXPECT_GE(fast, 5u);
}

// Every TTL, checksum repaired, with and without the checksum check: the port's fast path
// (PortFastPath) takes exactly the frames with a TTL of at least 2 that parse_ipv4_udp_fast takes
// (the worker's plain runs forward them without a TTL test), with the same record; the general
// parser takes TTL 0 and 1 (dropped or punted by the route stage).
TEST(ParserFastPath, PortFastPathLeavesTtlBelowTwoToTheGeneralParser) {
    const auto base = roce_ipv4_frame();
    ParseOptions nocsum = default_options();
    nocsum.verify_ipv4_checksum = false;
    for (const ParseOptions &opt : {default_options(), nocsum}) {
        for (int ttl = 0; ttl <= 255; ttl++) {
            SCOPED_TRACE(ttl);
            auto f = base;
            f[kFastIp + 8] = uint8_t(ttl);
            f[kFastIp + 10] = f[kFastIp + 11] = 0;
            fix_ipv4_checksum(f, kFastIp);
            EXPECT_TRUE(fast_path_agrees(f, f.size(), opt));  // parse_ipv4_udp_fast takes all
            EXPECT_EQ(port_fast_path_takes(f, opt), ttl >= 2);
        }
    }
}

// The IPv4 header checksum as the fast path computes it (word sums modulo 0xFFFF): both zero
// representations in the checksum field, every single-bit error in every header word, and
// errors that cancel in a 16-bit sum only with the carry wrapped around.
TEST(ParserFastPath, AgreesOnIpv4Checksum) {
    const auto base = roce_ipv4_frame();
    const ParseOptions opt = default_options();
    // An identification that makes the correct checksum 0x0000; 0xFFFF in its place is the
    // same one's-complement value, which the general parser accepts too.
    auto zero_sum = base;
    for (uint32_t id = 0; id <= 0xFFFF; ++id) {
        set16(zero_sum, kFastIp + 4, uint16_t(id));
        fix_ipv4_checksum(zero_sum, kFastIp);
        if (zero_sum[kFastIp + 10] == 0 && zero_sum[kFastIp + 11] == 0) break;
    }
    ASSERT_EQ(zero_sum[kFastIp + 10] | zero_sum[kFastIp + 11], 0);
    EXPECT_TRUE(fast_path_agrees(zero_sum, zero_sum.size(), opt));
    set16(zero_sum, kFastIp + 10, 0xFFFF);
    EXPECT_TRUE(fast_path_agrees(zero_sum, zero_sum.size(), opt));
    // A checksum of 0xFFFF (one's-complement sum of the rest 0x0000) is impossible with a
    // nonzero first word; any other value off by one is refused.
    for (uint16_t c : {uint16_t(0x0001), uint16_t(0xFFFE)}) {
        set16(zero_sum, kFastIp + 10, c);
        EXPECT_FALSE(fast_path_agrees(zero_sum, zero_sum.size(), opt));
    }
    // Every single-bit error in the header is refused by both.
    for (size_t bit = 0; bit < 20 * 8; ++bit) {
        auto f = base;
        f[kFastIp + bit / 8] ^= uint8_t(0x80 >> (bit % 8));
        EXPECT_FALSE(fast_path_agrees(f, f.size(), opt)) << "bit " << bit;
    }
    // Swapping 0x0000 and 0xFFFF in a word, or moving 0x0101 from one word to another,
    // keeps the one's-complement sum: whatever the parsers decide, they agree.
    for (size_t w = 0; w < 20; w += 2) {
        auto f = base;
        const uint16_t v = uint16_t(f[kFastIp + w] << 8 | f[kFastIp + w + 1]);
        if (v == 0) {
            set16(f, kFastIp + w, 0xFFFF);
            fast_path_agrees(f, f.size(), opt);
        }
        auto g = base;
        g[kFastIp + w] ^= 0x01;
        g[kFastIp + (w + 2) % 20] ^= 0x01;
        fast_path_agrees(g, g.size(), opt);
    }
}

// Source addresses by first octet: the fast path leaves 127/8, 224/4 and 255/8 to the general
// parser (which refuses 255.255.255.255 but accepts the rest of class E) and takes the others.
TEST(ParserFastPath, AgreesOnSourceAddresses) {
    const auto base = roce_ipv4_frame();
    for (uint32_t src : {0x00000001u, 0x01020304u, 0x7E000001u, 0x7F000001u, 0x7FFFFFFFu,
                         0x80000001u, 0xDFFFFFFFu, 0xE0000001u, 0xEFFFFFFFu, 0xF0000001u,
                         0xFEFFFFFFu, 0xFF000001u, 0xFFFFFFFEu, 0xFFFFFFFFu}) {
        SCOPED_TRACE(src);
        auto f = base;
        for (int i = 0; i < 4; ++i) f[kFastIp + 12 + i] = uint8_t(src >> (24 - 8 * i));
        fix_ipv4_checksum(f, kFastIp);
        const uint8_t o = uint8_t(src >> 24);
        const bool slow = o == 127 || o == 255 || (o >= 224 && o < 240);
        EXPECT_EQ(fast_path_agrees(f, f.size(), default_options()), !slow);
    }
}

// Every first octet of the source and of the destination, with and without the checksum check:
// the port's fast path takes the frames parse_ipv4_udp_fast takes whose octets are both below 224
// (the worker's accept step then has no multicast or broadcast test), with the same record;
// parse_ipv4_udp_fast leaves 127/8, 224/4 and 255/8 sources to the general parser and takes
// every destination.
TEST(ParserFastPath, PortFastPathLeavesOctetsFrom224ToTheGeneralParser) {
    const auto base = roce_ipv4_frame();
    ParseOptions nocsum = default_options();
    nocsum.verify_ipv4_checksum = false;
    for (const ParseOptions &opt : {default_options(), nocsum}) {
        for (size_t at : {kFastIp + 12, kFastIp + 16}) {
            for (int o = 0; o <= 255; o++) {
                SCOPED_TRACE(testing::Message() << "byte " << at << " octet " << o);
                auto f = base;
                f[at] = uint8_t(o);
                f[at + 3] = uint8_t(o * 7 + 1);  // not the limited broadcast unless o is 255
                f[kFastIp + 10] = f[kFastIp + 11] = 0;
                fix_ipv4_checksum(f, kFastIp);
                const bool src = at == kFastIp + 12;
                const bool slow_src = o == 127 || o == 255 || (o >= 224 && o < 240);
                EXPECT_EQ(fast_path_agrees(f, f.size(), opt), !(src && slow_src));
                EXPECT_EQ(port_fast_path_takes(f, opt), o < 224 && !(src && o == 127));
            }
        }
    }
}

// Random headers: a few random bytes anywhere in the first 60, the checksum repaired or not,
// the length cut or not. A fixed seed, so a failure reproduces.
TEST(ParserFastPath, AgreesOnRandomMutations) {
    const auto base = roce_ipv4_frame();
    std::mt19937 rng(20);
    size_t fast = 0;
    for (int i = 0; i < 20000; ++i) {
        auto f = base;
        const int n = 1 + int(rng() % 3);
        for (int k = 0; k < n; ++k) f[rng() % 60] = uint8_t(rng());
        if (rng() % 2) fix_ipv4_checksum(f, kFastIp);
        const size_t len = rng() % 4 ? f.size() : rng() % (f.size() + 1);
        fast += fast_path_agrees(f, len, default_options());
        if (HasFailure()) FAIL() << "iteration " << i;
    }
    EXPECT_GT(fast, 1000u);
}

// The fast path against the general parser on every scapy vector (VLAN, IPv6, ARP, fragments,
// IPv4 options, TCP, plain UDP, RoCEv2, every malformed case) cut at every length, with the
// IPv4 checksum check on and off: a frame the fast path takes is accepted by the general parser
// with a byte-identical meta, and parse_frame always gives the general parser's verdict.
TEST_F(ParserCases, FastPathAgreesOnEveryCase) {
    ParseOptions nocsum = default_options();
    nocsum.verify_ipv4_checksum = false;
    size_t fast = 0, whole = 0;
    for (const ParseOptions &opt : {default_options(), nocsum}) {
        for (const auto &c : *cases_) {
            SCOPED_TRACE("case " + c.name);
            for (size_t len = 0; len <= c.frame.size(); ++len) {
                const bool took = fast_path_agrees(c.frame, len, opt);
                fast += took;
                whole += took && len == c.frame.size();
                if (HasFailure()) FAIL() << "len " << len;
            }
        }
    }
    EXPECT_GT(whole, 10u);  // the plain-UDP and RoCEv2 IPv4 vectors take the fast path
    EXPECT_GT(fast, whole);
}

// The later stages' part of the record (bytes 32..43) after a parse: the options' in_port and
// rx_ns_lo, zero elsewhere, from both parsers (the worker relies on it: it no longer writes them).
TEST_F(ParserCases, RecordCarriesTheReceiveStampAndZeroes) {
    size_t fast = 0;
    for (const auto &c : *cases_) {
        if (c.expect) continue;  // a drop: the record is undefined
        SCOPED_TRACE("case " + c.name);
        PacketMeta g, f;
        std::memset(&g, 0xA5, sizeof g);
        ASSERT_FALSE(parse_frame_general(c.frame.data(), uint32_t(c.frame.size()),
                                         default_options(), &g));
        std::vector<PacketMeta> metas{g};
        std::memset(&f, 0x5A, sizeof f);
        if (parse_ipv4_udp_fast(c.frame.data(), uint32_t(c.frame.size()), default_options(), &f)) {
            metas.push_back(f);
            ++fast;
        }
        for (const PacketMeta &m : metas) {
            EXPECT_EQ(m.in_port, kInPort);
            EXPECT_EQ(m.rx_ns_lo, kRxNsLo);
            EXPECT_EQ(m.nexthop, 0u);
            EXPECT_EQ(m.out_port, 0);
            EXPECT_EQ(m.tc, 0);
            EXPECT_EQ(m.spare, 0);
        }
    }
    EXPECT_GT(fast, 10u);
}

// ---------------------------------------------------------------------------------------------
// The pcap reader itself

std::vector<uint8_t> pcap_bytes(bool big_endian, bool nsec,
                                const std::vector<std::vector<uint8_t>> &recs) {
    std::vector<uint8_t> out;
    auto w32 = [&](uint32_t v) {
        for (int i = 0; i < 4; ++i) {
            out.push_back(uint8_t(big_endian ? v >> (24 - 8 * i) : v >> (8 * i)));
        }
    };
    auto w16 = [&](uint16_t v) {
        out.push_back(uint8_t(big_endian ? v >> 8 : v));
        out.push_back(uint8_t(big_endian ? v : v >> 8));
    };
    w32(nsec ? 0xA1B23C4D : 0xA1B2C3D4);
    w16(2);
    w16(4);
    w32(0);
    w32(0);
    w32(65535);
    w32(1);
    for (const auto &r : recs) {
        w32(1700000000);
        w32(nsec ? 999999999 : 999999);
        w32(uint32_t(r.size()));
        w32(uint32_t(r.size() + 100));  // orig_len may exceed incl_len
        out.insert(out.end(), r.begin(), r.end());
    }
    return out;
}

TEST(PcapReader, BothByteOrdersAndResolutions) {
    const std::vector<std::vector<uint8_t>> recs = {{1, 2, 3}, {}, std::vector<uint8_t>(1600, 7)};
    for (bool be : {false, true}) {
        for (bool ns : {false, true}) {
            SCOPED_TRACE(std::string(be ? "big" : "little") + (ns ? " nsec" : " usec"));
            const auto bytes = pcap_bytes(be, ns, recs);
            uint32_t lt = 0;
            EXPECT_EQ(test::parse_pcap(bytes.data(), bytes.size(), "mem", &lt), recs);
            EXPECT_EQ(lt, 1u);
        }
    }
}

TEST(PcapReader, EmptyCaptureHasNoFrames) {
    const auto bytes = pcap_bytes(false, false, {});
    EXPECT_TRUE(test::parse_pcap(bytes.data(), bytes.size(), "mem").empty());
}

void expect_pcap_error(const std::vector<uint8_t> &bytes, const std::string &needle) {
    try {
        test::parse_pcap(bytes.data(), bytes.size(), "mem");
        ADD_FAILURE() << "no error, wanted one mentioning '" << needle << "'";
    } catch (const std::runtime_error &e) {
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
}

TEST(PcapReader, RejectsBadFiles) {
    const auto good = pcap_bytes(false, false, {{1, 2, 3, 4, 5, 6, 7, 8}});
    expect_pcap_error({}, "too short");
    expect_pcap_error(std::vector<uint8_t>(good.begin(), good.begin() + 23), "too short");
    auto bad_magic = good;
    bad_magic[0] = 0x0A;  // pcapng section header starts 0a 0d 0d 0a
    expect_pcap_error(bad_magic, "bad magic");
    auto bad_version = good;
    bad_version[4] = 9;
    expect_pcap_error(bad_version, "version");
    expect_pcap_error(std::vector<uint8_t>(good.begin(), good.begin() + 24 + 10),
                      "truncated record header");
    expect_pcap_error(std::vector<uint8_t>(good.begin(), good.end() - 1), "truncated record data");
    auto huge = good;
    huge[24 + 8 + 3] = 0x7F;  // incl_len ~ 2 GB
    expect_pcap_error(huge, "not plausible");
    EXPECT_THROW(test::read_pcap("/nonexistent/rocesw.pcap"), std::runtime_error);
}

}  // namespace
}  // namespace rocesw
