// AF_XDP ports with rocesw's XDP program (doc/ports.md). The net_af_xdp PMD loads the program
// (its xdp_prog= argument) and creates the sockets; this code, over libbpf, does what the PMD
// does not: checks the kernel interface before the EAL starts (present, enough queues, a stale
// program from a killed run replaced), writes the program's configuration (mode, the port's
// MAC and addresses) once the port runs, reads its per-reason counters and detaches it on exit.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"

namespace rocesw {

// The compiled XDP program roceswd gives the PMD: $ROCESW_XDP_PROG, else the build tree's,
// else the installed one. Empty when none exists (built without clang).
std::string afxdp_program_path();

// Before rte_eal_init, for every port with an `af_xdp:` section: throws std::runtime_error
// "<file>: ports[i].af_xdp.<field>: problem" for a missing interface, a queue count above the
// interface's, a missing program or a foreign XDP program on the interface; detaches a stale
// rocesw (or libxdp default) program left by a killed run, with a log line.
void afxdp_preflight(const Config &cfg);

// Counter names, in enum rsw_xdp_reason order (xdp_abi.h).
const std::vector<std::string> &afxdp_reason_names();

class AfXdpProgram {
  public:
    // After the port started: finds the program on the interface, moves it to generic mode when
    // the port's xdp_mode asks (DPDK 22.11's PMD attaches it native where the driver can), and
    // writes its configuration.
    // Throws std::runtime_error naming the port when the program or its maps are not there.
    AfXdpProgram(const PortConfig &pc, bool host_interfaces);
    ~AfXdpProgram();  // detaches the program if it is still rocesw's
    AfXdpProgram(const AfXdpProgram &) = delete;
    AfXdpProgram &operator=(const AfXdpProgram &) = delete;

    // Packets per reason, summed over CPUs (control thread; a map lookup syscall).
    std::vector<uint64_t> counters() const;
    const std::string &mode() const { return mode_; }
    // Where the kernel runs it: "native" (the driver's XDP) or "generic" (SKB mode).
    const std::string &attach() const { return attach_; }
    uint32_t prog_id() const { return prog_id_; }

  private:
    // Moves the program to the slot `want` asks for (generic: out of the driver's) and sets
    // attach_; returns what went wrong (native asked but only generic possible, a failed
    // move), empty when nothing did.
    std::string place_program(XdpAttach want, const std::string &port, int prog_fd);

    std::string interface_, mode_, attach_;
    int ifindex_ = 0;
    uint32_t prog_id_ = 0;
    int stats_fd_ = -1;
};

}  // namespace rocesw
