// Addresses as the configuration, the control plane and the tables name them: MAC, IPv4/IPv6
// address, prefix and interface address, with their text parsers. Not the data path's
// representation (that reads the parsed PacketMeta); these are for tables and messages.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace rocesw {

struct MacAddr {
    std::array<uint8_t, 6> b{};
    bool operator==(const MacAddr &) const = default;
    bool is_multicast() const { return b[0] & 1; }
    bool is_zero() const { return b == std::array<uint8_t, 6>{}; }
    std::string str() const;
};

// An IPv4 or IPv6 address; IPv4 is kept in host byte order in v4, IPv6 as 16 bytes.
struct IpAddr {
    bool is_v6 = false;
    uint32_t v4 = 0;
    std::array<uint8_t, 16> v6{};
    bool operator==(const IpAddr &) const = default;
    std::string str() const;
};

struct IpPrefix {
    IpAddr addr;  // host bits cleared (parse_prefix refuses them)
    uint8_t len = 0;
    bool operator==(const IpPrefix &) const = default;
    bool contains(const IpAddr &a) const;
    std::string str() const;
};

// An interface address: the switch's own address plus the connected subnet length.
struct IfAddr {
    IpAddr addr;
    uint8_t len = 0;
    IpPrefix subnet() const;
    std::string str() const;
};

// fe80::/10, for the 16 bytes of an IPv6 address as they stand in a packet. Every IPv6
// interface has such an address, so it names no port by itself and is never routed.
inline bool is_link_local_v6(const uint8_t *a16) {
    return a16[0] == 0xfe && (a16[1] & 0xc0) == 0x80;
}
inline bool is_link_local(const IpAddr &a) {
    return a.is_v6 && is_link_local_v6(a.v6.data());
}

// 32 for IPv4, 128 for IPv6.
inline uint8_t max_prefix_len(const IpAddr &a) {
    return a.is_v6 ? 128 : 32;
}

// `a` with the bits past `len` cleared. The other family's storage stays zero, so == compares
// correctly.
IpAddr masked(const IpAddr &a, uint8_t len);

// Parsers for config files, rocectl and tests; nullopt on bad syntax.
std::optional<MacAddr> parse_mac(const std::string &s);  // "aa:bb:cc:dd:ee:ff"
std::optional<IpAddr> parse_ip(const std::string &s);    // "10.0.0.1", "fd00::1"
std::optional<IfAddr> parse_if_addr(const std::string &s);   // "10.0.0.1/24"
std::optional<IpPrefix> parse_prefix(const std::string &s);  // host bits must be zero

// "addr/len" split into a parsed address and a length that is only syntax-checked (at most
// three digits); family and range are left to the caller so that its message can say which
// failed. False on bad syntax.
bool split_addr_len(const std::string &s, IpAddr &addr, unsigned &len);

}  // namespace rocesw
