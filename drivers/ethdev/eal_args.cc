#include "ethdev/eal_args.h"

#include <sched.h>

#include <fstream>
#include <regex>
#include <sstream>

namespace rocesw {

bool is_pci_device(const std::string &device) {
    static const std::regex pci(R"(^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7](,.*)?$)");
    return std::regex_match(device, pci);
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

EalPlan plan_eal(const Config &cfg, const std::vector<unsigned> &allowed,
                 unsigned long hugepages) {
    EalPlan plan;
    auto &a = plan.args;
    // lcore 0 is the control thread, lcores 1..N the workers. Each floats over the CPU set
    // (configured or allowed), so N workers run on fewer cores and several switches can share
    // a two-core machine; pin with switch.cpus for production.
    const std::vector<unsigned> &cpus = cfg.sw.cpus.empty() ? allowed : cfg.sw.cpus;
    std::string set = "(" + cpu_set_str(cpus.empty() ? std::vector<unsigned>{0} : cpus) + ")";
    std::string lcores;
    for (uint32_t l = 0; l <= cfg.sw.workers; l++)
        lcores += (l ? "," : "") + std::to_string(l) + "@" + set;
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
        a.push_back(p.device);
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

unsigned long free_hugepages() {
    std::ifstream f("/proc/meminfo");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("HugePages_Free:", 0) == 0) return std::stoul(line.substr(15));
    }
    return 0;
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
