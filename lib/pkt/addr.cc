#include "pkt/addr.h"

#include <arpa/inet.h>

#include <cctype>
#include <charconv>
#include <cstdio>

namespace rocesw {

IpAddr masked(const IpAddr &a, uint8_t len) {
    IpAddr r = a;
    if (!a.is_v6) {
        r.v4 = len == 0 ? 0 : len >= 32 ? a.v4 : a.v4 & (~0u << (32 - len));
        return r;
    }
    for (size_t i = 0; i < r.v6.size(); i++) {
        int keep = int(len) - int(8 * i);
        if (keep >= 8) continue;
        r.v6[i] = keep <= 0 ? uint8_t(0) : uint8_t(r.v6[i] & (0xff << (8 - keep)));
    }
    return r;
}

std::string MacAddr::str() const {
    char buf[18];
    std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4],
                  b[5]);
    return buf;
}

std::string IpAddr::str() const {
    char buf[INET6_ADDRSTRLEN];
    if (is_v6) {
        inet_ntop(AF_INET6, v6.data(), buf, sizeof buf);
    } else {
        uint32_t n = htonl(v4);
        inet_ntop(AF_INET, &n, buf, sizeof buf);
    }
    return buf;
}

bool IpPrefix::contains(const IpAddr &a) const {
    return a.is_v6 == addr.is_v6 && masked(a, len) == masked(addr, len);
}

std::string IpPrefix::str() const {
    return addr.str() + "/" + std::to_string(len);
}

IpPrefix IfAddr::subnet() const {
    return IpPrefix{masked(addr, len), len};
}

std::string IfAddr::str() const {
    return addr.str() + "/" + std::to_string(len);
}

std::optional<MacAddr> parse_mac(const std::string &s) {
    if (s.size() != 17) return std::nullopt;
    MacAddr m;
    for (size_t i = 0; i < 6; i++) {
        if (i > 0 && s[3 * i - 1] != ':') return std::nullopt;
        const char *p = s.data() + 3 * i;
        if (!std::isxdigit(uint8_t(p[0])) || !std::isxdigit(uint8_t(p[1]))) return std::nullopt;
        std::from_chars(p, p + 2, m.b[i], 16);
    }
    return m;
}

std::optional<IpAddr> parse_ip(const std::string &s) {
    IpAddr a;
    if (s.find(':') != std::string::npos) {
        if (inet_pton(AF_INET6, s.c_str(), a.v6.data()) != 1) return std::nullopt;
        a.is_v6 = true;
        return a;
    }
    uint32_t n;
    if (inet_pton(AF_INET, s.c_str(), &n) != 1) return std::nullopt;
    a.v4 = ntohl(n);
    return a;
}

bool split_addr_len(const std::string &s, IpAddr &addr, unsigned &len) {
    size_t slash = s.find('/');
    if (slash == std::string::npos) return false;
    std::string a = s.substr(0, slash), l = s.substr(slash + 1);
    if (l.empty() || l.size() > 3 || l.find_first_not_of("0123456789") != std::string::npos)
        return false;
    auto ip = parse_ip(a);
    if (!ip) return false;
    addr = *ip;
    len = unsigned(std::stoul(l));
    return true;
}

std::optional<IfAddr> parse_if_addr(const std::string &s) {
    IfAddr ifa;
    unsigned len = 0;
    if (!split_addr_len(s, ifa.addr, len) || len > max_prefix_len(ifa.addr)) return std::nullopt;
    ifa.len = uint8_t(len);
    return ifa;
}

std::optional<IpPrefix> parse_prefix(const std::string &s) {
    auto ifa = parse_if_addr(s);
    if (!ifa || masked(ifa->addr, ifa->len) != ifa->addr) return std::nullopt;
    return IpPrefix{ifa->addr, ifa->len};
}

}  // namespace rocesw
