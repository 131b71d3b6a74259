// Fuzz target: nl::parse on arbitrary bytes. Whatever it returns, it must not read past the
// buffer (ASan) or hit undefined behaviour (UBSan), and what it accepts must be consistent:
// prefixes within their family's length with host bits clear, addresses of the right family.
#include <cstdint>
#include <cstdlib>
#include <variant>
#include <vector>

#include <sys/socket.h>

#include "ctrl/netlink_msg.h"

namespace {

void check_prefix(const rocesw::IpPrefix &p) {
    if (p.len > (p.addr.is_v6 ? 128 : 32)) std::abort();
    if (!p.contains(p.addr)) std::abort();
    if (p.addr.is_v6) return;
    // 64-bit: a /0 shifts by 32. IPv4 only: an IPv6 length would shift by a negative count
    // (UBSan found it in the kernel captures' IPv6 routes).
    const uint64_t host_mask = (uint64_t(1) << (32 - p.len)) - 1;
    if (p.addr.v4 & host_mask) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // An exactly-sized copy, so any read past the end is caught.
    std::vector<uint8_t> buf(data, data + size);
    const auto r = rocesw::nl::parse(buf);
    for (const auto &m : r.msgs) {
        if (const auto *rt = std::get_if<rocesw::nl::RouteMsg>(&m)) {
            if (rt->family != AF_INET && rt->family != AF_INET6) std::abort();
            if (rt->dst.addr.is_v6 != (rt->family == AF_INET6)) std::abort();
            check_prefix(rt->dst);
            for (const auto &h : rt->nexthops)
                if (h.weight < 1 || h.weight > 256) std::abort();
        } else if (const auto *a = std::get_if<rocesw::nl::AddrMsg>(&m)) {
            if (a->addr.len > (a->addr.addr.is_v6 ? 128 : 32)) std::abort();
        } else if (const auto *n = std::get_if<rocesw::nl::NeighMsg>(&m)) {
            if (n->usable() && !n->mac) std::abort();
        }
    }
    (void)rocesw::nl::rt_protocol_name(size ? data[0] : 0);
    return 0;
}
