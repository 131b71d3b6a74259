#include "hostif/host_if.h"

#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>  // not <linux/if.h>: one struct ifreq in the program (LTO's -Wodr)
#include <net/if_arp.h>
#include <poll.h>
#include <rte_mbuf.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "pipeline/punt.h"
#include "pkt/mbuf_meta.h"
#include "egress/injector.h"

namespace rocesw {

namespace {

std::string sys_error(const std::string &what) { return what + ": " + std::strerror(errno); }

// Best effort: a missing sysctl (IPv6 disabled) only loses what it would have enabled.
void write_sysctl(const std::string &path, const char *value) {
    std::ofstream f(path);
    if (f) f << value;
    if (!f) spdlog::warn("host interface: cannot write {} = {}", path, value);
}

bool sysctl_exists(const std::string &path) { return access(path.c_str(), W_OK) == 0; }

bool sysctl_on(const std::string &path) {
    std::ifstream f(path);
    int v = 0;
    return f >> v && v != 0;
}

struct Ctl {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ~Ctl() {
        if (fd >= 0) close(fd);
    }
};

}  // namespace

bool own_network_namespace() {
    struct stat self{}, other{};
    if (stat("/proc/thread-self/ns/net", &self) != 0) return false;
    const auto same = [&] { return self.st_ino == other.st_ino && self.st_dev == other.st_dev; };
    // A named namespace (`ip netns add`, then `ip netns exec`: how the docs run roceswd).
    std::error_code ec;
    for (const auto &e : std::filesystem::directory_iterator("/run/netns", ec))
        if (stat(e.path().c_str(), &other) == 0 && same()) return true;
    // Another than PID 1's (unreadable in some containers: then not known to be our own).
    return stat("/proc/1/ns/net", &other) == 0 && !same();
}

Ipv6Forwarding enable_ipv6_forwarding(const std::vector<std::string> &names,
                                      const std::string &conf, bool own_namespace) {
    if (!sysctl_exists(conf + "all/forwarding")) return Ipv6Forwarding::no_ipv6;
    if (!names.empty() && sysctl_exists(conf + names[0] + "/force_forwarding")) {
        for (const auto &n : names) write_sysctl(conf + n + "/force_forwarding", "1");
        return Ipv6Forwarding::per_interface;
    }
    if (sysctl_on(conf + "all/forwarding")) return Ipv6Forwarding::already_on;
    if (own_namespace) {
        write_sysctl(conf + "all/forwarding", "1");
        spdlog::info("host interfaces: net.ipv6.conf.all.forwarding = 1 in roceswd's network "
                     "namespace (the kernel routes punted IPv6: ICMPv6 errors, unresolved next "
                     "hops)");
        return Ipv6Forwarding::all_set;
    }
    spdlog::warn("host interfaces: net.ipv6.conf.all.forwarding is 0 in the host's network "
                 "namespace and this kernel has no per-interface force_forwarding: punted IPv6 "
                 "packets that the kernel has to route (hop limit 1, above the egress MTU, "
                 "unresolved next hops) are dropped there without an ICMPv6 error; run roceswd "
                 "in a network namespace of its own (doc/control-plane.md) or set it");
    return Ipv6Forwarding::left_off;
}

HostInterfaces::HostInterfaces(std::vector<PortSpec> ports, Punt &punt, Injector &inject,
                               rte_mempool *pool, uint8_t switch_tc)
    : punt_(punt), inject_(inject), pool_(pool), switch_tc_(switch_tc) {
    Ctl ctl;
    if (ctl.fd < 0) throw std::runtime_error(sys_error("host interfaces: socket"));
    for (auto &spec : ports) {
        Port p;
        p.spec = spec;
        p.stats = std::make_unique<HostIfStats>();
        const std::string &name = p.spec.name;
        auto fail = [&](const std::string &what) {
            std::string msg = sys_error("host interface " + name + ": " + what);
            if (p.fd >= 0) close(p.fd);
            throw std::runtime_error(msg);
        };
        p.fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (p.fd < 0) fail("open /dev/net/tun");
        ifreq ifr{};
        ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
        std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name.c_str());
        if (ioctl(p.fd, TUNSETIFF, &ifr) < 0)
            fail("TUNSETIFF (is there another interface of that name in this namespace?)");
        ifr = {};
        std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name.c_str());
        ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
        std::memcpy(ifr.ifr_hwaddr.sa_data, p.spec.mac.b.data(), 6);
        if (ioctl(ctl.fd, SIOCSIFHWADDR, &ifr) < 0) fail("set MAC");
        ifr = {};
        std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name.c_str());
        ifr.ifr_mtu = int(p.spec.mtu);
        if (ioctl(ctl.fd, SIOCSIFMTU, &ifr) < 0) fail("set MTU " + std::to_string(p.spec.mtu));
        ifr = {};
        std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name.c_str());
        if (ioctl(ctl.fd, SIOCGIFINDEX, &ifr) < 0) fail("get ifindex");
        p.ifindex = ifr.ifr_ifindex;
        // Before the interface is up, so IPv6 comes up as a router (no SLAAC on our ports).
        write_sysctl("/proc/sys/net/ipv4/conf/" + name + "/forwarding", "1");
        write_sysctl("/proc/sys/net/ipv4/conf/" + name + "/send_redirects", "0");
        write_sysctl("/proc/sys/net/ipv6/conf/" + name + "/forwarding", "1");
        write_sysctl("/proc/sys/net/ipv6/conf/" + name + "/accept_ra", "0");
        ifr = {};
        std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name.c_str());
        if (ioctl(ctl.fd, SIOCGIFFLAGS, &ifr) < 0) fail("get flags");
        ifr.ifr_flags |= IFF_UP;
        if (ioctl(ctl.fd, SIOCSIFFLAGS, &ifr) < 0) fail("set up");
        spdlog::info("host interface {} (ifindex {}): MAC {}, MTU {}", name, p.ifindex,
                     p.spec.mac.str(), p.spec.mtu);
        ports_.push_back(std::move(p));
    }
    std::vector<std::string> names;
    for (const auto &p : ports_) names.push_back(p.spec.name);
    enable_ipv6_forwarding(names, "/proc/sys/net/ipv6/conf/", own_network_namespace());
}

HostInterfaces::~HostInterfaces() {
    stop();
    for (auto &p : ports_)
        if (p.fd >= 0) close(p.fd);
}

std::optional<uint16_t> HostInterfaces::port_of_ifindex(int ifindex) const {
    for (size_t i = 0; i < ports_.size(); i++)
        if (ports_[i].ifindex == ifindex) return uint16_t(i);
    return std::nullopt;
}

bool HostInterfaces::set_carrier(uint16_t port, bool up, std::string *err) {
    int on = up ? 1 : 0;
    if (ioctl(ports_[port].fd, TUNSETCARRIER, &on) < 0) {
        if (err) *err = sys_error("TUNSETCARRIER");
        return false;
    }
    return true;
}

void HostInterfaces::start() {
    stop_ = false;
    thread_ = std::thread([this] { run(); });
}

void HostInterfaces::stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

// Punted frames, every worker's queue, to the ingress port's TAP.
void HostInterfaces::to_kernel() {
    constexpr size_t kBurst = 64;
    rte_mbuf *m[kBurst];
    for (uint16_t w = 0; w < punt_.workers(); w++) {
        size_t n;
        while ((n = punt_.take(w, m, kBurst)) > 0) {
            for (size_t i = 0; i < n; i++) {
                const uint16_t port = meta_of(m[i])->in_port;
                if (port >= ports_.size()) continue;
                Port &p = ports_[port];
                const uint32_t len = rte_pktmbuf_data_len(m[i]);
                if (write(p.fd, rte_pktmbuf_mtod(m[i], const void *), len) == ssize_t(len)) {
                    p.stats->to_kernel.fetch_add(1, std::memory_order_relaxed);
                    p.stats->to_kernel_bytes.fetch_add(len, std::memory_order_relaxed);
                } else {
                    p.stats->to_kernel_failed.fetch_add(1, std::memory_order_relaxed);
                }
            }
            rte_pktmbuf_free_bulk(m, unsigned(n));
        }
    }
}

// Up to a burst of frames the kernel sent on `port`'s TAP, into the port's handoff ring.
size_t HostInterfaces::from_kernel(uint16_t port, uint8_t *buf, size_t cap) {
    constexpr size_t kBurst = 32;
    Port &p = ports_[port];
    rte_mbuf *out[kBurst];
    unsigned n = 0;
    size_t seen = 0;
    while (n < kBurst) {
        ssize_t len = read(p.fd, buf, cap);
        if (len <= 0) break;
        seen++;
        rte_mbuf *m = rte_pktmbuf_alloc(pool_);
        if (!m || size_t(len) > rte_pktmbuf_tailroom(m)) {
            if (m) rte_pktmbuf_free(m);
            p.stats->from_kernel_dropped.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        uint8_t *d = reinterpret_cast<uint8_t *>(rte_pktmbuf_append(m, uint16_t(len)));
        std::memcpy(d, buf, size_t(len));
        PacketMeta *meta = meta_of(m);
        // Parse once, as for a received frame, so the egress stage (ECN, accounting) has its
        // record; frames the parser does not route (LLDP, LACP, ...) still leave the port.
        if (parse_frame(d, uint32_t(len), p.spec.parse, meta)) {
            std::memset(meta, 0, sizeof(*meta));
            meta->l3 = L3Type::none;
        }
        meta->tc = switch_tc_;
        meta->in_port = uint8_t(port);
        meta->out_port = uint8_t(port);
        out[n++] = m;
        p.stats->from_kernel.fetch_add(1, std::memory_order_relaxed);
        p.stats->from_kernel_bytes.fetch_add(uint64_t(len), std::memory_order_relaxed);
    }
    if (n) {
        unsigned k = inject_.inject(port, out, n);
        if (k < n) {
            p.stats->from_kernel_dropped.fetch_add(n - k, std::memory_order_relaxed);
            p.stats->from_kernel.fetch_sub(n - k, std::memory_order_relaxed);
            rte_pktmbuf_free_bulk(out + k, n - k);
        }
    }
    return seen;
}

void HostInterfaces::run() {
    std::vector<pollfd> pfds(ports_.size());
    for (size_t i = 0; i < ports_.size(); i++) pfds[i] = pollfd{ports_[i].fd, POLLIN, 0};
    std::vector<uint8_t> buf(65536);
    bool busy = false;
    while (!stop_.load(std::memory_order_relaxed)) {
        to_kernel();
        // Sleep at most 1 ms while idle: the longest a punted frame waits for the kernel.
        int rc = poll(pfds.data(), pfds.size(), busy ? 0 : 1);
        busy = false;
        if (rc <= 0) continue;
        for (size_t i = 0; i < pfds.size(); i++)
            if (pfds[i].revents & POLLIN)
                busy |= from_kernel(uint16_t(i), buf.data(), buf.size()) > 0;
    }
    to_kernel();  // free what is still queued
}

}  // namespace rocesw
