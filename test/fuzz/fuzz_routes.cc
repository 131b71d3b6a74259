// Fuzz target: the route-file reader (`route_files` in the switch config, lib/config) on
// arbitrary text. The input becomes a route file that a fixed two-port config lists; loading
// must either return a config whose file routes are consistent, or throw ConfigError naming the
// YAML source or "<file>:<line>"; nothing else may escape. What it must hold for an accepted
// file: every prefix with host bits clear and routed once, gateways of the prefix's family, a
// known port, 1..kMaxRoutePaths paths of weight 1..1000, and no more routes than lines.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>

#include "config/config.h"

namespace {

// The route file lives in memory (memfd), named by its /proc/self/fd path: rewriting a file on
// disk for every input made the target wait on the disk.
struct RouteFile {
    int fd = -1;
    std::string path, yaml;
    RouteFile() {
        fd = ::memfd_create("fuzz.routes", MFD_CLOEXEC);
        if (fd < 0) std::abort();
        path = "/proc/self/fd/" + std::to_string(fd);
        yaml =
            "switch: {name: sw1}\n"
            "ports:\n"
            "  - {name: p0, device: net_null0, mac: '02:00:00:00:01:01',\n"
            "     ipv4: [10.0.1.1/24], ipv6: ['fd00:1::1/64']}\n"
            "  - {name: p1, device: net_null1, mac: '02:00:00:00:02:01',\n"
            "     ipv4: [10.0.2.1/24], ipv6: ['fd00:2::1/64']}\n"
            "route_files: ['" +
            path + "']\n";
    }
    ~RouteFile() { ::close(fd); }
    void write(const uint8_t *data, size_t size) const {
        if (::ftruncate(fd, 0) != 0) std::abort();
        for (size_t off = 0; off < size;) {
            ssize_t n = ::pwrite(fd, data + off, size - off, off_t(off));
            if (n <= 0) std::abort();
            off += size_t(n);
        }
    }
};

void check_prefix(const rocesw::IpPrefix &p, std::set<std::pair<bool, std::string>> &seen) {
    if (p.len > rocesw::max_prefix_len(p.addr)) std::abort();
    if (rocesw::masked(p.addr, p.len) != p.addr) std::abort();
    if (!seen.emplace(p.addr.is_v6, p.str()).second) std::abort();  // routed twice
}

void check_port(const rocesw::Config &c, const std::string &port) {
    if (c.port_index(port) < 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static RouteFile rf;
    rf.write(data, size);
    const std::string &file = rf.path;
    try {
        rocesw::Config c = rocesw::load_config_string(rf.yaml, "fuzz.yaml");
        const size_t lines = size_t(std::count(data, data + size, uint8_t('\n'))) + 1;
        if (c.routes.size() + c.multipath_routes.size() > lines) std::abort();
        std::set<std::pair<bool, std::string>> seen;
        for (const auto &r : c.routes) {
            check_prefix(r.prefix, seen);
            if (r.via.is_v6 != r.prefix.addr.is_v6) std::abort();
            check_port(c, r.port);
        }
        for (const auto &m : c.multipath_routes) {
            check_prefix(m.prefix, seen);
            if (m.paths.empty() || m.paths.size() > rocesw::kMaxRoutePaths) std::abort();
            for (const auto &p : m.paths) {
                if (p.via.is_v6 != m.prefix.addr.is_v6) std::abort();
                if (p.weight < 1 || p.weight > 1000) std::abort();
                check_port(c, p.port);
            }
        }
    } catch (const rocesw::ConfigError &e) {
        const std::string what = e.what();
        if (what.rfind(file + ":", 0) != 0 && what.rfind("fuzz.yaml", 0) != 0) std::abort();
    }
    return 0;
}
