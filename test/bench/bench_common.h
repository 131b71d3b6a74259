// Shared helpers for the micro-benchmarks: TSC cycles per packet and synthetic RoCEv2 frames.
#pragma once

#include <benchmark/benchmark.h>
#include <rte_cycles.h>

#include <chrono>
#include <cstdint>
#include <vector>

namespace rocesw::bench {

// Sets "cyc/pkt" (TSC cycles per packet) and items/s from the cycles a loop took.
inline void report_cycles(benchmark::State &st, uint64_t cycles, uint64_t packets) {
    st.counters["cyc/pkt"] = packets ? double(cycles) / double(packets) : 0.0;
    st.SetItemsProcessed(int64_t(packets));
}

// Seconds of the steady clock since `t0` (the benchmarks' add rates).
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A RoCEv2 RDMA WRITE (DSCP 26, ECT(0)) from 10.0.1.2 to `dst` (host order), `len` bytes
// without FCS (>= 60), Ethernet destination `dst_mac`, valid IPv4 header checksum.
std::vector<uint8_t> roce_frame(uint32_t dst, uint16_t sport, uint32_t len,
                                const uint8_t dst_mac[6]);

// The same over IPv6 (>= 78 bytes): from fd00:1::2 to 2001:db8:D:D::2, where D:D is `dst`'s 32
// bits, traffic class DSCP 26 ECT(0), hop limit 64, UDP checksum 0.
std::vector<uint8_t> roce_frame6(uint32_t dst, uint16_t sport, uint32_t len,
                                 const uint8_t dst_mac[6]);

// tools/bench's class mix (gen_bench_pcaps.py) over `dests`: `n` frames of `len` bytes, of every
// 10 frames 8 RoCEv2 WRITEs (DSCP 26, ECT(0)), 1 CNP (opcode 0x81, DSCP 48, Not-ECT), 1 plain
// UDP to port 5001 (DSCP 0, Not-ECT); UDP source ports 0xC000 | i; valid IPv4 checksums.
std::vector<std::vector<uint8_t>> mix_frames(uint32_t n, uint32_t len,
                                             const std::vector<uint32_t> &dests,
                                             const uint8_t dst_mac[6]);

// `n` destinations (host order) spread over the /24s 32.0.0.0 .. 32.0.0.0 + routes*256.
std::vector<uint32_t> destinations(uint32_t n, uint32_t routes, uint32_t seed);

}  // namespace rocesw::bench

#include <functional>
#include <memory>
#include <string>

#include "route/fib.h"

namespace rocesw {
namespace bench {
// The large Fib of bench_lpm.cc (/24s over 32.0.0.0/4, next hop 1 = port 1), built once.
const Fib &fib_1m();
// 4096 destinations (host order) covered by fib_1m().
const std::vector<uint32_t> &fib_1m_destinations();
// Another Fib with fib_1m()'s routes (same count and spacing), all to next hop 1 = `nh`;
// `prepare` (may be empty) runs before the routes go in (ECMP groups). `dests` (may be null):
// 4096 destinations covered by it.
std::unique_ptr<Fib> make_fib_1m(const std::string &name, const NextHop &nh,
                                 const std::function<void(Fib &)> &prepare,
                                 std::vector<uint32_t> *dests);
}  // namespace bench
}  // namespace rocesw
