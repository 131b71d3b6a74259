#include "ethdev/eal_args.h"

#include "afxdp/af_xdp.h"
#include "common/strings.h"
#include "common/unix_socket.h"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cctype>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rocesw {

bool is_pci_device(const std::string &device) {
    // [DDDD:]BB:DD.F with hex digits, optionally followed by ",devargs".
    std::string a = device.substr(0, device.find(','));
    auto hex = [&](size_t from, size_t n) {
        for (size_t i = from; i < from + n; i++)
            if (i >= a.size() || !std::isxdigit(static_cast<unsigned char>(a[i]))) return false;
        return true;
    };
    size_t o = a.size() == 12 ? 5 : 0;  // with or without the domain
    if (a.size() != 7 && a.size() != 12) return false;
    if (o && (!hex(0, 4) || a[4] != ':')) return false;
    return hex(o, 2) && a[o + 2] == ':' && hex(o + 3, 2) && a[o + 5] == '.' && a[o + 6] >= '0' &&
           a[o + 6] <= '7';
}

std::string ethdev_name(const std::string &device) {
    std::string name = device.substr(0, device.find(','));
    if (is_pci_device(device) && name.size() == 7) name = "0000:" + name;
    return name;
}

static std::string cpu_set_str(const std::vector<unsigned> &cpus) {
    std::ostringstream s;
    for (size_t i = 0; i < cpus.size(); i++) s << (i ? "," : "") << cpus[i];
    return s.str();
}

EalPlan plan_eal(const Config &cfg, const std::vector<unsigned> &allowed, unsigned long hugepages) {
    EalPlan plan;
    auto &a = plan.args;
    // lcore 0 is the control thread, lcores 1..N the workers. Each floats over the CPU set
    // (configured or allowed), so N workers run on fewer cores and several switches can share
    // a two-core machine; pin with switch.cpus for production.
    const std::vector<unsigned> &cpus = cfg.sw.cpus.empty() ? allowed : cfg.sw.cpus;
    // Appended piece by piece: GCC 12 at -O3 reports a bogus -Wrestrict overlap in the
    // literal + std::string prepend (operator+ into the temporary).
    std::string set = "(";
    set += cpu_set_str(cpus.empty() ? std::vector<unsigned>{0} : cpus);
    set += ')';
    std::string lcores;
    for (uint32_t l = 0; l <= cfg.sw.workers; l++) {
        if (l) lcores += ',';
        lcores += std::to_string(l);
        lcores += '@';
        lcores += set;
    }
    a.push_back("rocesw");
    a.push_back("--lcores=" + lcores);
    a.push_back("--file-prefix=" + cfg.sw.file_prefix);
    a.push_back("--proc-type=primary");
    bool any_pci = false;
    for (const auto &p : cfg.ports) {
        if (is_pci_device(p.device)) {
            any_pci = true;
            a.push_back("-a");
        } else {
            a.push_back("--vdev");
        }
        // AF_XDP: the PMD loads rocesw's XDP program (doc/ports.md); empty path = none built,
        // which afxdp_preflight reports before the EAL starts.
        std::string xdp = p.af_xdp ? afxdp_program_path() : "";
        a.push_back(xdp.empty() ? p.device : p.device + ",xdp_prog=" + xdp);
    }
    if (!any_pci) a.push_back("--no-pci");
    if (hugepages == 0) {
        plan.no_huge = true;
        a.push_back("--no-huge");
        a.push_back("-m");
        a.push_back(std::to_string(cfg.sw.memory_mb));
    }
    if (!cfg.sw.telemetry) a.push_back("--no-telemetry");
    for (const auto &e : cfg.sw.eal_args) a.push_back(e);
    return plan;
}

uint64_t required_memory_mb(const Config &cfg, uint64_t fib_bytes) {
    uint32_t max_mtu = 0;
    for (const auto &p : cfg.ports) max_mtu = std::max(max_mtu, p.mtu);
    // Per mbuf: data room (see EthdevPorts), headroom, private area, mbuf and mempool headers.
    uint64_t room = std::max<uint64_t>(2048, max_mtu + 26) + 128 + 64 + 128 + 64;
    uint64_t bytes = fib_bytes + uint64_t(cfg.sw.mbufs) * room + (64ull << 20);
    return (bytes + (1 << 20) - 1) >> 20;
}

// The value of `key=` among a vdev string's comma-separated arguments ("" when absent).
static std::string devarg(const std::string &device, const std::string &key) {
    std::stringstream ss(device);
    std::string item;
    std::getline(ss, item, ',');  // the device name
    while (std::getline(ss, item, ','))
        if (item.rfind(key + "=", 0) == 0) return item.substr(key.size() + 1);
    return "";
}

void memif_preflight(const Config &cfg) {
    for (size_t i = 0; i < cfg.ports.size(); i++) {
        const std::string &d = cfg.ports[i].device;
        if (d.rfind("net_memif", 0) != 0 || devarg(d, "role") == "client" ||
            devarg(d, "socket-abstract") != "no")
            continue;
        std::string path = devarg(d, "socket");
        if (path.empty()) path = "/run/memif.sock";  // DPDK's default
        std::string err;
        bool stale = false;
        if (!claim_unix_socket(path, "another process (a switch or host with the same memif "
                                     "socket?)",
                               &err, &stale, /*connect_probe=*/false))
            throw std::runtime_error(cfg.source + ": ports[" + std::to_string(i) +
                                     "].device: memif socket: " + err);
        if (stale) spdlog::info("port {}: removed stale memif socket {}", cfg.ports[i].name, path);
    }
}

std::string eal_runtime_dir(const Config &cfg) {
    // DPDK's runtime directory (eal_create_runtime_dir): /var/run/dpdk for root, else
    // $XDG_RUNTIME_DIR/dpdk or /tmp/dpdk.
    std::string base = "/var/run";
    if (getuid() != 0) {
        const char *x = std::getenv("XDG_RUNTIME_DIR");
        base = x ? x : "/tmp";
    }
    return base + "/dpdk/" + cfg.sw.file_prefix;
}

std::vector<std::string> remove_runtime_files(const Config &cfg) {
    std::error_code ec;
    std::vector<std::string> removed;
    for (const auto &e : std::filesystem::directory_iterator(eal_runtime_dir(cfg), ec)) {
        if (e.is_directory(ec)) continue;
        if (std::filesystem::remove(e.path(), ec)) removed.push_back(e.path().filename());
    }
    std::sort(removed.begin(), removed.end());
    return removed;
}

void file_prefix_preflight(const Config &cfg) {
    // The primary holds a write lock on <runtime dir>/config.
    const std::string dir = eal_runtime_dir(cfg);
    const std::string path = dir + "/config";
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;  // no such prefix yet, or the last switch exited cleanly (no files)
    struct flock lk{};
    lk.l_type = F_WRLCK;
    lk.l_whence = SEEK_SET;
    const bool held = ::fcntl(fd, F_GETLK, &lk) == 0 && lk.l_type != F_UNLCK;
    ::close(fd);
    if (held)
        throw std::runtime_error(cfg.source + ": switch.file_prefix: '" + cfg.sw.file_prefix +
                                 "' is in use by DPDK process " + std::to_string(lk.l_pid) +
                                 " (another switch with this name or prefix? give each its own "
                                 "switch.name or switch.file_prefix)");
    // Nobody holds the lock, yet the files are there: roceswd removes them when it exits
    // (main, after rte_eal_cleanup), so the process that made them died (kill -9, a crash).
    const std::vector<std::string> removed = remove_runtime_files(cfg);
    const std::string names = join(removed);
    if (!removed.empty())
        spdlog::info("switch.file_prefix '{}': removed {} stale file(s) of a DPDK process that "
                     "died from {}: {}",
                     cfg.sw.file_prefix, removed.size(), dir, names);
}

bool mbuf_pool_packs(const Config &cfg, bool hugepages) {
    if (hugepages) return false;  // packed inside each hugepage already; DMA needs no crossing
    static const char *const copying[] = {"net_memif", "net_tap", "net_pcap", "net_null",
                                          "net_ring", "net_af_packet"};
    for (const auto &p : cfg.ports) {
        const std::string name = ethdev_name(p.device);
        bool ok = false;
        for (const char *c : copying)
            if (name.rfind(c, 0) == 0) ok = true;
        if (!ok || p.af_xdp || p.device.find("zero-copy=yes") != std::string::npos) return false;
    }
    return true;
}

HugepageState hugepage_state() {
    HugepageState h;
    std::ifstream f("/proc/meminfo");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("HugePages_Free:", 0) == 0) h.free_pages = std::stoul(line.substr(15));
        if (line.rfind("Hugepagesize:", 0) == 0) h.page_bytes = std::stoull(line.substr(13)) << 10;
    }
    // A hugetlbfs without pagesize= is of the default size; one with it, of that size.
    std::ifstream m("/proc/mounts");
    while (std::getline(m, line)) {
        std::istringstream ls(line);
        std::string dev, dir, type, opts;
        if (!(ls >> dev >> dir >> type >> opts) || type != "hugetlbfs") continue;
        size_t at = opts.find("pagesize=");
        if (at == std::string::npos) {
            h.mounted = true;
            continue;
        }
        std::string v = opts.substr(at + 9, opts.find(',', at) - at - 9);
        uint64_t bytes = std::strtoull(v.c_str(), nullptr, 10);
        char unit = v.empty() ? 0 : char(std::toupper(static_cast<unsigned char>(v.back())));
        bytes <<= unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0;
        if (bytes == h.page_bytes) h.mounted = true;
    }
    return h;
}

unsigned long usable_hugepages(const HugepageState &h, uint64_t need_mb, std::string &why) {
    why.clear();
    if (h.free_pages == 0) return 0;
    const uint64_t have_mb = (h.free_pages * h.page_bytes) >> 20;
    std::ostringstream s;
    if (!h.mounted)
        s << h.free_pages << " free hugepages but no hugetlbfs of their size ("
          << (h.page_bytes >> 10) << " kB) mounted";
    else if (have_mb < need_mb)
        s << h.free_pages << " free hugepages hold " << have_mb << " MiB, the switch needs about "
          << need_mb;
    why = s.str();
    return why.empty() ? h.free_pages : 0;
}

std::vector<unsigned> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<unsigned> out;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return out;
    for (unsigned c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) out.push_back(c);
    return out;
}

}  // namespace rocesw
