// A small frame builder for pipeline tests. Parsing correctness is tested against scapy-made
// frames (test/unit/parser_test.cc); here the builder only has to make valid input.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "pkt/bytes.h"
#include "pkt/checksum.h"

namespace rocesw::test {

using Bytes = std::vector<uint8_t>;
using Mac = std::array<uint8_t, 6>;
using Ip6 = std::array<uint8_t, 16>;

inline Ip6 ip6(uint16_t a, uint16_t b, uint16_t last) {
    Ip6 r{};
    wr16(&r[0], a);
    wr16(&r[2], b);
    wr16(&r[14], last);
    return r;
}

inline void put(Bytes &b, const void *p, size_t n) {
    auto *c = static_cast<const uint8_t *>(p);
    b.insert(b.end(), c, c + n);
}
inline void put16(Bytes &b, uint16_t v) {
    b.push_back(uint8_t(v >> 8));
    b.push_back(uint8_t(v));
}
inline void put32(Bytes &b, uint32_t v) {
    put16(b, uint16_t(v >> 16));
    put16(b, uint16_t(v));
}

inline Bytes eth(const Mac &dst, const Mac &src, uint16_t type, int vlan_pcp = -1) {
    Bytes b;
    put(b, dst.data(), 6);
    put(b, src.data(), 6);
    if (vlan_pcp >= 0) {
        put16(b, kEtherTypeVlan);
        put16(b, uint16_t(vlan_pcp << 13 | 100));
    }
    put16(b, type);
    return b;
}

inline Bytes udp_payload(uint16_t sport, uint16_t dport, size_t payload) {
    Bytes b;
    put16(b, sport);
    put16(b, dport);
    put16(b, uint16_t(8 + payload));
    put16(b, 0);
    for (size_t i = 0; i < payload; i++) b.push_back(uint8_t(i));
    return b;
}

inline Bytes ipv4(uint32_t src, uint32_t dst, uint8_t proto, const Bytes &l4, uint8_t ttl = 64,
                  uint8_t tos = 0) {
    Bytes b;
    b.push_back(0x45);
    b.push_back(tos);
    put16(b, uint16_t(20 + l4.size()));
    put16(b, 0x1234);
    put16(b, 0x4000);
    b.push_back(ttl);
    b.push_back(proto);
    put16(b, 0);
    put32(b, src);
    put32(b, dst);
    wr16(&b[10], csum_finish(csum_partial(b.data(), 20)));
    b.insert(b.end(), l4.begin(), l4.end());
    return b;
}

inline Bytes ipv6(const Ip6 &src, const Ip6 &dst, uint8_t nh, const Bytes &l4, uint8_t hlim = 64) {
    Bytes b;
    put32(b, 0x60000000);
    put16(b, uint16_t(l4.size()));
    b.push_back(nh);
    b.push_back(hlim);
    put(b, src.data(), 16);
    put(b, dst.data(), 16);
    b.insert(b.end(), l4.begin(), l4.end());
    return b;
}

inline Bytes cat(Bytes a, const Bytes &b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

inline uint32_t v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
    return uint32_t(a) << 24 | uint32_t(b) << 16 | uint32_t(c) << 8 | d;
}

// The ARP part (no Ethernet header) of an Ethernet/IPv4 ARP request from `sha` (sender `spa`)
// for `tpa`.
inline Bytes arp_request(const Mac &sha, uint32_t spa, uint32_t tpa) {
    Bytes arp;
    put16(arp, 1);
    put16(arp, kEtherTypeIpv4);
    arp.push_back(6);
    arp.push_back(4);
    put16(arp, 1);
    put(arp, sha.data(), 6);
    put32(arp, spa);
    put(arp, Mac{}.data(), 6);
    put32(arp, tpa);
    return arp;
}

}  // namespace rocesw::test
