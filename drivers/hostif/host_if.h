// Host interfaces (doc/control-plane.md): one kernel TAP per data port, in roceswd's network
// namespace, with the port's name, MAC and MTU, and the thread that moves frames between them
// and the data plane:
//   punt queues (one per worker) -> write() to the ingress port's TAP;
//   read() from a TAP -> parse -> network-control class -> the port owner's handoff ring.
// The kernel (and a routing daemon on it: BIRD, FRR) then sees the switch's ports as its own
// interfaces; what it sends on them leaves the data ports.
//
// Threading: the constructor and set_carrier run on the control thread; the hostif thread is
// the only one touching the fds' data; counters are atomics read by any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pkt/addr.h"
#include "pkt/parser.h"

struct rte_mempool;

namespace rocesw {

class Punt;
class Injector;

struct HostIfStats {
    std::atomic<uint64_t> to_kernel{0}, to_kernel_bytes{0};
    std::atomic<uint64_t> to_kernel_failed{0};  // write() refused (interface down, full)
    std::atomic<uint64_t> from_kernel{0}, from_kernel_bytes{0};
    std::atomic<uint64_t> from_kernel_dropped{0};  // no mbuf, too long, handoff ring full
};

// The kernel forwards IPv6 (ip6_forward) only with net.ipv6.conf.all.forwarding on, or, from
// Linux 6.17, with the ingress interface's force_forwarding; a host interface's own
// `forwarding` is not enough. Without it the kernel drops, without a word, what the switch
// punts for it to route: hop limit 1 (ICMPv6 time exceeded), above the egress MTU (packet too
// big), an unresolved next hop (glean). So, under `conf` (/proc/sys/net/ipv6/conf/):
// force_forwarding on each named interface where the kernel has it; else all/forwarding when
// roceswd runs in a network namespace of its own; in the host's namespace, where that would
// turn every interface into a router (no more SLAAC), nothing but a warning.
enum class Ipv6Forwarding { no_ipv6, per_interface, already_on, all_set, left_off };
Ipv6Forwarding enable_ipv6_forwarding(const std::vector<std::string> &names,
                                      const std::string &conf, bool own_namespace);
// Whether the calling thread's network namespace is roceswd's own: a named one (/run/netns,
// `ip netns`), or another than PID 1's (the host's) where that is readable.
bool own_network_namespace();

class HostInterfaces {
  public:
    struct PortSpec {
        std::string name;
        MacAddr mac;
        uint32_t mtu;
        ParseOptions parse;
    };
    // Creates the TAPs (up, MAC, MTU, forwarding on, redirects off). Throws std::runtime_error
    // naming the interface and the reason (no /dev/net/tun, name taken by another device, ...).
    HostInterfaces(std::vector<PortSpec> ports, Punt &punt, Injector &inject,
                   rte_mempool *pool, uint8_t switch_tc);
    ~HostInterfaces();  // stops the thread; closing the fds removes the TAPs
    HostInterfaces(const HostInterfaces &) = delete;
    HostInterfaces &operator=(const HostInterfaces &) = delete;

    void start();
    void stop();

    size_t size() const { return ports_.size(); }
    const std::string &name(uint16_t port) const { return ports_[port].spec.name; }
    int ifindex(uint16_t port) const { return ports_[port].ifindex; }
    std::optional<uint16_t> port_of_ifindex(int ifindex) const;
    // Mirrors the data port's link state on the TAP (carrier), so the kernel and the daemon
    // see a port go down.
    bool set_carrier(uint16_t port, bool up, std::string *err);
    const HostIfStats &stats(uint16_t port) const { return *ports_[port].stats; }

  private:
    struct Port {
        PortSpec spec;
        int fd = -1;
        int ifindex = 0;
        std::unique_ptr<HostIfStats> stats;
    };
    void run();
    void to_kernel();
    size_t from_kernel(uint16_t port, uint8_t *buf, size_t cap);

    std::vector<Port> ports_;
    Punt &punt_;
    Injector &inject_;  // the port owners' way in (TrafficManager::inject)
    rte_mempool *pool_;
    uint8_t switch_tc_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace rocesw
