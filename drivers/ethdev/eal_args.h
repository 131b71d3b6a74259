// Turns the switch configuration into EAL arguments: lcores for the control thread and the
// workers, the file prefix, one -a (PCI) or --vdev per port, and memory. Without reserved
// hugepages the EAL runs with --no-huge and -m <memory_mb>. Pure: testable without EAL.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace rocesw {

// True for "0000:03:00.0" or "03:00.0", optionally followed by ",devargs".
bool is_pci_device(const std::string &device);
// The ethdev name DPDK gives the device: the vdev name before ',' or the full PCI address.
std::string ethdev_name(const std::string &device);

struct EalPlan {
    std::vector<std::string> args;  // argv[1..] for rte_eal_init
    bool no_huge = false;
};

// `allowed_cpus`: CPUs this process may run on (sched_getaffinity); `free_hugepages`: count.
EalPlan plan_eal(const Config &cfg, const std::vector<unsigned> &allowed_cpus,
                 unsigned long free_hugepages);

// MiB of EAL memory the switch needs: FIB copies, the mbuf pool and a margin for DPDK itself.
uint64_t required_memory_mb(const Config &cfg, uint64_t fib_bytes);

// memif server ports (role=server, socket-abstract=no): the socket file must not be served by
// another process (two switches configured with one socket path); a stale one left by a killed
// process is removed (DPDK's memif would refuse to bind it). Throws std::runtime_error
// "<file>: ports[i].device: memif socket <path>: another process is using it". Call before
// rte_eal_init (the probe would fail with a less helpful message).
void memif_preflight(const Config &cfg);
// The EAL file prefix: a running DPDK primary process holding the same prefix (its runtime
// directory's config lock) makes rte_eal_init fail with "Cannot create lock"; this says which
// process and which field instead. Throws std::runtime_error. Files in the runtime directory
// that no process holds were left by one that died (roceswd removes them when it exits, see
// remove_runtime_files): they are removed, with a log line naming them.
void file_prefix_preflight(const Config &cfg);
// DPDK's runtime directory for the config's file prefix: /var/run/dpdk/<prefix> for root.
std::string eal_runtime_dir(const Config &cfg);
// Removes the files (not subdirectories) of that directory; returns their names, sorted. For a
// primary's clean exit after rte_eal_cleanup (which leaves config, fbarray_* behind), and for a
// dead one's files.
std::vector<std::string> remove_runtime_files(const Config &cfg);

// Whether the mbuf pool packs its objects (create_mbuf_pool, lib/pkt/mbuf_meta.h): without
// hugepages, when every port copies frames (memif without zero-copy, TAP, pcap, null, ring,
// af_packet); not with a PCI device or AF_XDP (DMA, a umem of page-contained frames).
bool mbuf_pool_packs(const Config &cfg, bool hugepages);

// What the EAL could run on: free pages of the default hugepage size (/proc/meminfo) and
// whether a hugetlbfs of that size is mounted (/proc/mounts); the EAL needs both.
struct HugepageState {
    unsigned long free_pages = 0;
    uint64_t page_bytes = 0;
    bool mounted = false;
};
HugepageState hugepage_state();
// The free hugepages the switch runs on: 0, with the reason in `why`, when none are free, no
// hugetlbfs is mounted, or they hold less than `need_mb` MiB (the EAL would start and the pools
// would fail); then the switch runs with --no-huge.
unsigned long usable_hugepages(const HugepageState &h, uint64_t need_mb, std::string &why);
std::vector<unsigned> allowed_cpus();  // from sched_getaffinity

}  // namespace rocesw
