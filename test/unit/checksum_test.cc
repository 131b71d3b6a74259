// Incremental checksum updates must equal a full recomputation, for every TTL and TOS value.
#include <gtest/gtest.h>

#include <array>
#include <random>

#include "pkt/checksum.h"

using namespace rocesw;

namespace {

std::array<uint8_t, 20> make_header(std::mt19937 &rng) {
    std::array<uint8_t, 20> h{};
    for (auto &b : h) b = uint8_t(rng());
    h[0] = 0x45;
    h[10] = h[11] = 0;
    wr16(&h[10], csum_finish(csum_partial(h.data(), 20)));
    return h;
}

uint16_t full_checksum(std::array<uint8_t, 20> h) {
    h[10] = h[11] = 0;
    return csum_finish(csum_partial(h.data(), 20));
}

}  // namespace

TEST(Checksum, KnownHeaderVerifies) {
    // RFC 1071 style example: a real IPv4 header (checksum 0xb861).
    std::array<uint8_t, 20> h = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                                 0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
    EXPECT_TRUE(ipv4_header_checksum_ok(h.data(), 20));
    EXPECT_EQ(full_checksum(h), 0xb861);
    h[11] ^= 1;
    EXPECT_FALSE(ipv4_header_checksum_ok(h.data(), 20));
}

TEST(Checksum, TtlDecrementMatchesFullRecomputeForEveryTtl) {
    std::mt19937 rng(1);
    for (int ttl = 1; ttl <= 255; ttl++) {
        for (int rep = 0; rep < 20; rep++) {
            auto h = make_header(rng);
            h[8] = uint8_t(ttl);
            wr16(&h[10], full_checksum(h));
            ipv4_decrement_ttl(h.data());
            EXPECT_EQ(h[8], ttl - 1);
            EXPECT_EQ(rd16(&h[10]), full_checksum(h)) << "ttl " << ttl;
            EXPECT_TRUE(ipv4_header_checksum_ok(h.data(), 20));
        }
    }
}

// The one-word form against the byte-wise update it replaced (the 16-bit checksum + 1 with the
// end-around carry, the TTL byte - 1), for every checksum word, every TTL from 1 and two
// protocols: the edge checksums 0xFFFE and 0xFFFF (read little-endian) included, which random
// headers almost never hit.
TEST(Checksum, TtlDecrementWordIsTheBytewiseUpdate) {
    for (uint32_t c = 0; c < 0x10000; c++)
        for (int ttl = 1; ttl <= 255; ttl++)
            for (uint8_t proto : {uint8_t(6), uint8_t(17)}) {
                std::array<uint8_t, 20> h{};
                h[0] = 0x45;
                h[8] = uint8_t(ttl);
                h[9] = proto;
                h[10] = uint8_t(c >> 8);
                h[11] = uint8_t(c);
                std::array<uint8_t, 20> want = h;
                uint32_t sum = uint32_t(rd16(&want[10])) + 0x0100;
                sum += sum >= 0xFFFF;
                wr16(&want[10], uint16_t(sum));
                want[8]--;
                ipv4_decrement_ttl(h.data());
                ASSERT_EQ(h, want) << "checksum " << c << " ttl " << ttl;
            }
}

TEST(Checksum, TosRewriteMatchesFullRecomputeForEveryTos) {
    std::mt19937 rng(2);
    for (int tos = 0; tos < 256; tos++) {
        auto h = make_header(rng);
        ipv4_set_tos(h.data(), uint8_t(tos));
        EXPECT_EQ(h[1], tos);
        EXPECT_TRUE(ipv4_header_checksum_ok(h.data(), 20)) << "tos " << tos;
    }
}

TEST(Checksum, UpdateHandlesChecksumOfAllOnes) {
    // RFC 1624's corner case: the result must never be the ambiguous +0 form when
    // recomputation gives 0xFFFF... check equivalence with full recompute on crafted words.
    for (uint32_t old_w = 0; old_w < 0x10000; old_w += 257) {
        std::array<uint8_t, 20> h{};
        h[0] = 0x45;
        wr16(&h[2], uint16_t(old_w));
        wr16(&h[10], full_checksum(h));
        uint16_t new_w = uint16_t(old_w + 1);
        wr16(&h[10], csum_update16(rd16(&h[10]), rd16(&h[2]), new_w));
        wr16(&h[2], new_w);
        EXPECT_TRUE(ipv4_header_checksum_ok(h.data(), 20)) << old_w;
    }
}

// An ICMPv6 echo request from fe80::1 to fe80::2 (id 0x1234, seq 1, payload "abcd"): a
// receiver's sum over the pseudo-header (addresses, length 12, next header 58) and the message
// with the checksum in place is 0xFFFF.
TEST(Checksum, Icmp6ChecksumCoversThePseudoHeader) {
    std::array<uint8_t, 40 + 12> p{};
    p[0] = 0x60;
    p[5] = 12;  // payload length
    p[6] = kProtoIcmpv6;
    p[7] = 255;
    p[8] = 0xfe, p[9] = 0x80, p[23] = 1;    // source fe80::1
    p[24] = 0xfe, p[25] = 0x80, p[39] = 2;  // destination fe80::2
    uint8_t *icmp = p.data() + 40;
    const uint8_t msg[12] = {128, 0, 0, 0, 0x12, 0x34, 0, 1, 'a', 'b', 'c', 'd'};
    std::copy(std::begin(msg), std::end(msg), icmp);
    uint16_t c = icmp6_checksum(p.data(), icmp, 12);
    wr16(icmp + 2, c);
    uint32_t sum = csum_partial(p.data() + 8, 32);
    sum += 12 + kProtoIcmpv6;
    EXPECT_EQ(csum_fold(csum_partial(icmp, 12, sum)), 0xFFFF);
    EXPECT_NE(c, 0);
}

// The header check (word sums modulo 0xFFFF) against the RFC 1071 fold, on random headers of
// every length with options, checksums right, off by one and in the other zero representation,
// and the all-zero header (a sum of zero is not 0xFFFF).
TEST(Checksum, HeaderCheckMatchesFoldedSum) {
    std::mt19937 rng(7);
    auto folded_ok = [](const uint8_t *h, size_t len) {
        return csum_fold(csum_partial(h, len)) == 0xFFFF;
    };
    for (int i = 0; i < 20000; ++i) {
        const size_t len = 20 + 4 * (rng() % 11);
        std::array<uint8_t, 60> h{};
        for (size_t k = 0; k < len; ++k) h[k] = uint8_t(rng() % 4 ? rng() : (rng() % 2) * 0xFF);
        h[0] = uint8_t(0x40 | len / 4);
        if (rng() % 2) {
            h[10] = h[11] = 0;
            uint16_t c = csum_finish(csum_partial(h.data(), len));
            if (c == 0 && rng() % 2) c = 0xFFFF;
            c = uint16_t(c + int(rng() % 3) - 1);
            wr16(&h[10], c);
        }
        ASSERT_EQ(ipv4_header_checksum_ok(h.data(), len), folded_ok(h.data(), len))
            << "iteration " << i << " len " << len;
    }
    const std::array<uint8_t, 20> zero{};
    EXPECT_FALSE(ipv4_header_checksum_ok(zero.data(), 20));
}
