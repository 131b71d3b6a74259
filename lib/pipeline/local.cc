#include "pipeline/local.h"

#include <cstring>

#include "pkt/bytes.h"
#include "pkt/checksum.h"

namespace rocesw {

namespace {

constexpr uint8_t kIcmpEchoRequest = 8, kIcmpEchoReply = 0;
constexpr uint8_t kIcmp6EchoRequest = 128, kIcmp6EchoReply = 129;
constexpr uint8_t kNdNs = 135, kNdNa = 136;

void set_reply_macs(uint8_t *f, const MacAddr &port_mac) {
    std::memcpy(f, f + 6, 6);
    std::memcpy(f + 6, port_mac.b.data(), 6);
}

bool owns_v4(std::span<const IfAddr> addrs, uint32_t ip) {
    for (const auto &a : addrs)
        if (!a.addr.is_v6 && a.addr.v4 == ip) return true;
    return false;
}

bool owns_v6(std::span<const IfAddr> addrs, const uint8_t *ip) {
    for (const auto &a : addrs)
        if (a.addr.is_v6 && std::memcmp(a.addr.v6.data(), ip, 16) == 0) return true;
    return false;
}

}  // namespace

uint32_t local_arp(uint8_t *f, uint32_t len, const PacketMeta &m, const MacAddr &port_mac,
                   std::span<const IfAddr> addrs) {
    uint8_t *a = f + m.l3_offset;
    // Ethernet/IPv4 ARP request only.
    if (rd16(a) != 1 || rd16(a + 2) != kEtherTypeIpv4 || a[4] != 6 || a[5] != 4 || rd16(a + 6) != 1)
        return 0;
    uint32_t target = rd32(a + 24);
    if (!owns_v4(addrs, target)) return 0;
    uint8_t sha[6], spa[4];
    std::memcpy(sha, a + 8, 6);
    std::memcpy(spa, a + 14, 4);
    wr16(a + 6, 2);                            // reply
    std::memcpy(a + 8, port_mac.b.data(), 6);  // sender: us
    wr32(a + 14, target);
    std::memcpy(a + 18, sha, 6);  // target: the asker
    std::memcpy(a + 24, spa, 4);
    set_reply_macs(f, port_mac);
    return len;
}

bool is_neighbour_solicitation(const uint8_t *f, const PacketMeta &m) {
    if (m.l3 != L3Type::ipv6 || m.ip_proto != kProtoIcmpv6 || m.ttl != 255) return false;
    if (m.l3_len < 40 + 24) return false;
    return f[m.l3_offset + 40] == kNdNs;
}

uint32_t local_ip(uint8_t *f, uint32_t len, uint32_t cap, const PacketMeta &m,
                  const MacAddr &port_mac, std::span<const IfAddr> addrs) {
    uint8_t *ip = f + m.l3_offset;
    if (m.l3 == L3Type::ipv4) {
        uint32_t hl = (ip[0] & 0x0F) * 4u;
        if (m.ip_proto != kProtoIcmp || (m.flags & kFlagFragment) || m.l3_len < hl + 8) return 0;
        uint8_t *icmp = ip + hl;
        if (icmp[0] != kIcmpEchoRequest || icmp[1] != 0) return 0;
        if (!owns_v4(addrs, m.dst_ip4)) return 0;
        // Type 8 -> 0 changes one 16-bit word of the ICMP message.
        uint16_t old_word = rd16(icmp);
        icmp[0] = kIcmpEchoReply;
        wr16(icmp + 2, csum_update16(rd16(icmp + 2), old_word, rd16(icmp)));
        uint8_t tmp[4];
        std::memcpy(tmp, ip + 12, 4);
        std::memcpy(ip + 12, ip + 16, 4);
        std::memcpy(ip + 16, tmp, 4);
        ip[8] = 64;
        wr16(ip + 10, 0);
        wr16(ip + 10, csum_finish(csum_partial(ip, hl)));
        set_reply_macs(f, port_mac);
        return len;
    }
    if (m.l3 != L3Type::ipv6 || m.ip_proto != kProtoIcmpv6 || m.l3_len < 40 + 8) return 0;
    uint8_t *icmp = ip + 40;
    uint32_t icmp_len = m.l3_len - 40u;
    if (icmp[0] == kIcmp6EchoRequest && icmp[1] == 0) {
        if (!owns_v6(addrs, ip + 24)) return 0;
        uint8_t tmp[16];
        std::memcpy(tmp, ip + 8, 16);
        std::memcpy(ip + 8, ip + 24, 16);
        std::memcpy(ip + 24, tmp, 16);
        ip[7] = 64;
        icmp[0] = kIcmp6EchoReply;
        wr16(icmp + 2, 0);
        wr16(icmp + 2, icmp6_checksum(ip, icmp, icmp_len));
        set_reply_macs(f, port_mac);
        return len;
    }
    if (icmp[0] == kNdNs && icmp[1] == 0 && ip[7] == 255 && icmp_len >= 24) {
        const uint8_t *target = icmp + 8;
        if (!owns_v6(addrs, target)) return 0;
        static constexpr uint8_t kUnspecified[16] = {};
        if (std::memcmp(ip + 8, kUnspecified, 16) == 0) return 0;  // DAD probe: stay quiet
        // NA: 24 bytes + target link-layer address option (8 bytes).
        const uint32_t na_len = 32;
        uint32_t new_len = m.l3_offset + 40u + na_len;
        if (new_len > cap) return 0;
        uint8_t tgt[16];
        std::memcpy(tgt, target, 16);
        std::memcpy(ip + 24, ip + 8, 16);  // to the solicitor
        std::memcpy(ip + 8, tgt, 16);      // from the target address
        wr16(ip + 4, na_len);
        ip[7] = 255;
        std::memset(icmp, 0, na_len);
        icmp[0] = kNdNa;
        icmp[4] = 0x60;  // solicited, override
        std::memcpy(icmp + 8, tgt, 16);
        icmp[24] = 2;  // target link-layer address
        icmp[25] = 1;  // length in 8-byte units
        std::memcpy(icmp + 26, port_mac.b.data(), 6);
        wr16(icmp + 2, icmp6_checksum(ip, icmp, na_len));
        set_reply_macs(f, port_mac);
        return new_len;
    }
    return 0;
}

}  // namespace rocesw
