#include "afxdp/af_xdp.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "afxdp/xdp_abi.h"

namespace rocesw {

namespace {

std::string port_path(const Config &cfg, size_t i, const std::string &field) {
    return cfg.source + ": ports[" + std::to_string(i) + "].af_xdp." + field;
}

// The kernel interface's queues. DPDK's net_af_xdp (22.11 to 24.x) accepts a queue_count up to
// the ethtool *combined* channels only, 1 when the interface reports none - veth, for one, has
// separate RX/TX channels and no combined ones, so the PMD gives it one queue whatever
// `numrxqueues` says. rx_queues is what the kernel may steer frames to.
struct InterfaceQueues {
    uint32_t pmd_max = 1;    // queue_count the PMD accepts: combined channels, at least 1
    uint32_t rx_queues = 1;  // RX queues frames can arrive on: max(combined, rx), else sysfs
};

InterfaceQueues interface_queues(const std::string &ifname) {
    InterfaceQueues q;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd >= 0) {
        ethtool_channels ch{};
        ch.cmd = ETHTOOL_GCHANNELS;
        ifreq ifr{};
        std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
        ifr.ifr_data = reinterpret_cast<char *>(&ch);
        int rc = ioctl(fd, SIOCETHTOOL, &ifr);
        close(fd);
        if (rc == 0 && ch.combined_count) q.pmd_max = ch.combined_count;
        if (rc == 0 && (ch.combined_count || ch.rx_count)) {
            q.rx_queues = std::max(ch.combined_count, ch.rx_count);
            return q;
        }
    }
    uint32_t n = 0;
    std::error_code ec;
    for (auto &e : std::filesystem::directory_iterator("/sys/class/net/" + ifname + "/queues", ec))
        if (e.path().filename().string().rfind("rx-", 0) == 0) n++;
    q.rx_queues = std::max(n, 1u);
    return q;
}

std::string interface_driver(const std::string &ifname) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) return "";
    ethtool_drvinfo di{};
    di.cmd = ETHTOOL_GDRVINFO;
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
    ifr.ifr_data = reinterpret_cast<char *>(&di);
    int rc = ioctl(fd, SIOCETHTOOL, &ifr);
    close(fd);
    return rc == 0 ? std::string(di.driver) : "";
}

std::string prog_name(uint32_t id) {
    int fd = bpf_prog_get_fd_by_id(id);
    if (fd < 0) return "";
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    std::string name;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) name = info.name;
    close(fd);
    return name;
}

uint32_t attached_prog(int ifindex) {
    uint32_t id = 0;
    if (bpf_xdp_query_id(ifindex, 0, &id) != 0) return 0;
    return id;
}

// The XDP_FLAGS_*_MODE bit of the program attached to the interface, 0 when none: a detach
// without it means the driver's (native) slot on an interface that has one, and would leave a
// generic program in place.
uint32_t attached_mode_flag(int ifindex) {
    bpf_xdp_query_opts q{};
    q.sz = sizeof(q);
    if (bpf_xdp_query(ifindex, 0, &q) != 0) return 0;
    switch (q.attach_mode) {
        case XDP_ATTACHED_DRV:
            return XDP_FLAGS_DRV_MODE;
        case XDP_ATTACHED_SKB:
            return XDP_FLAGS_SKB_MODE;
        case XDP_ATTACHED_HW:
            return XDP_FLAGS_HW_MODE;
        default:
            return 0;
    }
}

int detach_prog(int ifindex) {
    return bpf_xdp_detach(ifindex, attached_mode_flag(ifindex), nullptr);
}

}  // namespace

std::string afxdp_program_path() {
    if (const char *e = std::getenv("ROCESW_XDP_PROG"); e && *e) return e;
    for (const char *p : {ROCESW_XDP_BUILD_PATH, ROCESW_XDP_INSTALL_PATH})
        if (*p && std::filesystem::exists(p)) return p;
    return "";
}

const std::vector<std::string> &afxdp_reason_names() {
    static const std::vector<std::string> names = {
        "to_switch_all", "to_switch_mac",         "to_switch_arp",
        "to_switch_nd",  "to_switch_mac_control", "to_switch_lldp",
        "pass_kernel",   "pass_no_socket",        "pass_unconfigured"};
    static_assert(RSW_XDP_REASONS == 9);
    return names;
}

void afxdp_preflight(const Config &cfg) {
    for (size_t i = 0; i < cfg.ports.size(); i++) {
        const PortConfig &pc = cfg.ports[i];
        if (!pc.af_xdp) continue;
        const AfXdpConfig &ax = *pc.af_xdp;
        int ifindex = int(if_nametoindex(ax.interface.c_str()));
        if (ifindex == 0)
            throw std::runtime_error(port_path(cfg, i, "interface") + ": no interface '" +
                                     ax.interface + "' in roceswd's network namespace");
        const InterfaceQueues q = interface_queues(ax.interface);
        if (ax.queue_count > q.pmd_max)
            throw std::runtime_error(
                port_path(cfg, i, "queue_count") + ": " + std::to_string(ax.queue_count) +
                " is more than the " + std::to_string(q.pmd_max) + " queue(s) DPDK's net_af_xdp " +
                "takes on " + ax.interface + " (its combined channels, ethtool -l)" +
                (q.rx_queues > q.pmd_max
                     ? "; " + ax.interface + " has " + std::to_string(q.rx_queues) +
                           " RX queues but no combined channels (veth), so one queue only"
                     : ""));
        const std::string driver = interface_driver(ax.interface);
        // In generic mode a veth hands every frame to the program as queue 0: without native
        // XDP it receives through netif_rx, which records no RX queue (doc/ports.md, "Queues").
        const bool one_queue_seen = ax.xdp_mode == XdpAttach::generic && driver == "veth";
        if (ax.queue_count < q.rx_queues && !one_queue_seen)
            spdlog::warn(
                "port {}: {} has {} RX queues and queue_count is {}: frames the kernel steers to "
                "queues {}..{} reach no socket and pass to the kernel (XDP counter "
                "pass_no_socket); give queue_count: {} or fewer queues (ethtool -L {} combined {}; "
                "on veth: rx {} tx {})",
                pc.name, ax.interface, q.rx_queues, ax.queue_count, ax.queue_count, q.rx_queues - 1,
                std::min(q.rx_queues, q.pmd_max), ax.interface, ax.queue_count, ax.queue_count,
                ax.queue_count);
        if (driver == "veth")
            spdlog::warn(
                "port {}: {} is a veth: turn TX checksum offload off on its peer (ethtool -K "
                "<peer> tx off), or TCP/UDP the peer sends reaches the far host with an "
                "unfinished checksum and is dropped there (doc/ports.md, 'veth')",
                pc.name, ax.interface);
        if (afxdp_program_path().empty())
            throw std::runtime_error(
                port_path(cfg, i, "mode") +
                ": rocesw's XDP program is missing: roceswd was built without clang for the BPF "
                "target (install clang, reconfigure with meson) or set ROCESW_XDP_PROG");
        if (uint32_t id = attached_prog(ifindex)) {
            std::string name = prog_name(id);
            // Ours, or libxdp's default socket program (DPDK's when no xdp_prog is given), left
            // by a run that could not detach it (SIGKILL): the PMD refuses a busy interface.
            if (name == RSW_XDP_PROG_NAME || name == "xsk_def_prog") {
                spdlog::warn(
                    "port {}: interface {} still has XDP program '{}' (id {}) from an "
                    "earlier run that did not detach it; replacing it",
                    pc.name, ax.interface, name, id);
                if (detach_prog(ifindex) != 0)
                    throw std::runtime_error(port_path(cfg, i, "interface") +
                                             ": cannot detach the stale XDP program from " +
                                             ax.interface);
            } else {
                throw std::runtime_error(port_path(cfg, i, "interface") + ": " + ax.interface +
                                         " already runs XDP program '" + name + "' (id " +
                                         std::to_string(id) +
                                         "), not rocesw's: detach it (ip link set dev " +
                                         ax.interface + " xdp off) or use another interface");
            }
        }
    }
}

AfXdpProgram::AfXdpProgram(const PortConfig &pc, bool host_interfaces)
    : interface_(pc.af_xdp->interface),
      mode_(pc.af_xdp->mode == AfXdpMode::shared ? "shared" : "dedicated") {
    auto fail = [&](const std::string &what) {
        throw std::runtime_error("port " + pc.name + " (AF_XDP on " + interface_ + "): " + what);
    };
    ifindex_ = int(if_nametoindex(interface_.c_str()));
    if (!ifindex_) fail("interface gone");
    prog_id_ = attached_prog(ifindex_);
    if (!prog_id_) fail("no XDP program attached after start");
    int prog_fd = bpf_prog_get_fd_by_id(prog_id_);
    if (prog_fd < 0) fail("cannot open XDP program id " + std::to_string(prog_id_));
    std::array<uint32_t, 8> map_ids{};
    bpf_prog_info info{};
    info.nr_map_ids = map_ids.size();
    info.map_ids = reinterpret_cast<uint64_t>(map_ids.data());
    uint32_t len = sizeof(info);
    int rc = bpf_obj_get_info_by_fd(prog_fd, &info, &len);
    if (rc != 0 || std::string(info.name) != RSW_XDP_PROG_NAME) close(prog_fd);
    if (rc != 0) fail("cannot read the XDP program's information");
    if (std::string(info.name) != RSW_XDP_PROG_NAME)
        fail(std::string("the attached XDP program is '") + info.name + "', not rocesw's");
    const std::string placed = place_program(pc.af_xdp->xdp_mode, pc.name, prog_fd);
    close(prog_fd);
    if (!placed.empty()) fail(placed);
    int cfg_fd = -1;
    for (uint32_t m = 0; m < std::min<uint32_t>(info.nr_map_ids, map_ids.size()); m++) {
        int fd = bpf_map_get_fd_by_id(map_ids[m]);
        if (fd < 0) continue;
        bpf_map_info mi{};
        uint32_t mlen = sizeof(mi);
        if (bpf_obj_get_info_by_fd(fd, &mi, &mlen) == 0) {
            if (std::string(mi.name) == RSW_XDP_CFG_MAP) {
                cfg_fd = fd;
                continue;
            }
            if (std::string(mi.name) == RSW_XDP_STATS_MAP) {
                stats_fd_ = fd;
                continue;
            }
        }
        close(fd);
    }
    if (cfg_fd < 0 || stats_fd_ < 0)
        fail("the XDP program has no " RSW_XDP_CFG_MAP " or " RSW_XDP_STATS_MAP " map");
    rsw_xdp_cfg c{};
    c.mode = pc.af_xdp->mode == AfXdpMode::shared ? RSW_XDP_SHARED : RSW_XDP_DEDICATED;
    c.flags = host_interfaces ? RSW_XDP_F_LLDP : 0;
    std::memcpy(c.mac, pc.mac.b.data(), 6);
    for (const auto &a : pc.ipv4)
        if (c.n_v4 < RSW_XDP_MAX_V4) c.v4[c.n_v4++] = htonl(a.addr.v4);
    for (const auto &a : pc.ipv6)
        if (c.n_v6 < RSW_XDP_MAX_V6) std::memcpy(c.v6[c.n_v6++], a.addr.v6.data(), 16);
    if (pc.ipv4.size() > RSW_XDP_MAX_V4 || pc.ipv6.size() > RSW_XDP_MAX_V6)
        spdlog::warn(
            "port {}: shared-mode XDP program knows only the first {} IPv4 and {} IPv6 "
            "addresses; ARP/ND for the others go to the kernel",
            pc.name, RSW_XDP_MAX_V4, RSW_XDP_MAX_V6);
    uint32_t key = 0;
    rc = bpf_map_update_elem(cfg_fd, &key, &c, BPF_ANY);
    close(cfg_fd);
    if (rc != 0) fail("cannot write the XDP program's configuration");
    spdlog::info("port {}: XDP program {} (id {}) on {} in {} mode, attached {}", pc.name,
                 RSW_XDP_PROG_NAME, prog_id_, interface_, mode_, attach_);
}

std::string AfXdpProgram::place_program(XdpAttach want, const std::string &port, int prog_fd) {
    const uint32_t flag = attached_mode_flag(ifindex_);
    if (flag == XDP_FLAGS_SKB_MODE && want == XdpAttach::native)
        return "xdp_mode is native, but the kernel attached the XDP program in generic mode: " +
               interface_ + " (driver '" + interface_driver(interface_) +
               "') has no native XDP; use xdp_mode generic or auto";
    if (flag == XDP_FLAGS_DRV_MODE && want == XdpAttach::generic) {
        // DPDK 22.11's net_af_xdp attached the program in the kernel's choice of mode (native
        // on a driver with an XDP hook) and has no argument to ask otherwise. The sockets are
        // bound to (interface, queue) in copy mode and the xsks_map belongs to the program, so
        // the same program moved to the generic slot keeps redirecting to them. Native and
        // generic cannot be attached together: detach first. In between frames go to the
        // kernel, as they do anyway until the configuration is written.
        int rc = bpf_xdp_detach(ifindex_, XDP_FLAGS_DRV_MODE, nullptr);
        if (rc == 0)
            rc = bpf_xdp_attach(ifindex_, prog_fd, XDP_FLAGS_SKB_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST,
                                nullptr);
        if (rc != 0)
            return std::string("cannot move the XDP program to generic mode: ") + strerror(-rc);
        spdlog::info("port {}: XDP program moved from native to generic (SKB) mode on {}", port,
                     interface_);
    }
    const uint32_t now = attached_mode_flag(ifindex_);
    attach_ = now == XDP_FLAGS_SKB_MODE   ? "generic"
              : now == XDP_FLAGS_DRV_MODE ? "native"
                                          : "offloaded";
    return "";
}

AfXdpProgram::~AfXdpProgram() {
    if (stats_fd_ >= 0) close(stats_fd_);
    // The PMD detaches on close, but only from the driver's slot (its detach names no mode);
    // this covers the generic slot and a close that did not happen or failed.
    if (ifindex_ && attached_prog(ifindex_) == prog_id_ && prog_id_) {
        if (detach_prog(ifindex_) == 0)
            spdlog::info("interface {}: XDP program detached", interface_);
    }
}

std::vector<uint64_t> AfXdpProgram::counters() const {
    std::vector<uint64_t> out(RSW_XDP_REASONS, 0);
    int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0 || stats_fd_ < 0) return out;
    std::vector<uint64_t> per_cpu(size_t(ncpu), 0);
    for (uint32_t r = 0; r < RSW_XDP_REASONS; r++) {
        if (bpf_map_lookup_elem(stats_fd_, &r, per_cpu.data()) != 0) continue;
        for (uint64_t v : per_cpu) out[r] += v;
    }
    return out;
}

}  // namespace rocesw
