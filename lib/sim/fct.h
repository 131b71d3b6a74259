// fct.txt in HPCC's format, so HPCC's analysis/fct_analysis.py reads rocesim's results:
//     "%08x %08x %u %u %lu %lu %lu %lu\n"
//     sip dip sport dport size(B) start_time(ns) fct(ns) standalone_fct(ns)
// (fct_analysis.py keeps dport 100 for its normal workload, 200 for incast, and plots
// fct / standalone_fct.)
//
// Standalone (ideal) FCT, exactly as HPCC's third.cc qp_finish computes it:
//     packets        = ceil(size / payload)                     payload = 1000 B by default
//     total_bytes    = size + packets * header_bytes            header = 48 B (see below)
//     base_rtt       = 2 * sum(link delays) + sum over links of floor(payload * 8e9 / rate)
//     standalone_fct = base_rtt + floor(total_bytes * 8e9 / bottleneck_rate)      [ns]
// HPCC's header_bytes is CustomHeader::GetStaticWholeHeaderSize() minus the INT header:
// 14 (L2) + 20 (IPv4) + 8 (UDP) + 4 (seq) + 2 (pg) = 48. It counts neither the FCS nor the
// preamble/IFG, nor RoCE's BTH/RETH/ICRC: rocesim's frames carry the real RoCEv2 headers and
// the link counts the 20 overhead bytes, so a flow alone on an idle path takes slightly longer
// than this "standalone" time (62 + 20 instead of 48 bytes per packet: ~3 % at 1000 B
// payloads); header_bytes can be set to 82 for our own wire. The default matches HPCC, so the
// two simulators' slowdowns share a denominator.
// total_bytes is a uint32_t in HPCC (it wraps above 4 GiB); ours does not.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "sim/routing.h"

namespace rocesw::sim {

struct FctRecord {
    uint32_t sip = 0, dip = 0;
    uint16_t sport = 0, dport = 0;
    uint64_t size_bytes = 0;
    uint64_t start_ns = 0;
    uint64_t fct_ns = 0;
    uint64_t standalone_fct_ns = 0;
};

// One line, with its '\n'.
std::string format_fct_line(const FctRecord &r);

struct StandaloneModel {
    uint32_t payload_bytes = 1000;  // HPCC's PACKET_PAYLOAD_SIZE
    uint32_t header_bytes = 48;     // per packet, see above
};

uint64_t hpcc_base_rtt_ns(const PathInfo &p);
// `p` must come from EcmpRouting::path(src, dst, model.payload_bytes).
uint64_t standalone_fct_ns(uint64_t size_bytes, const PathInfo &p,
                           const StandaloneModel &model = {});

// HPCC gives each host's flows source ports 10000, 10001, ... in start order.
class SourcePorts {
  public:
    explicit SourcePorts(uint32_t nodes) : next_(nodes, 10000) {}
    uint16_t next(uint32_t host) { return next_.at(host)++; }

  private:
    std::vector<uint16_t> next_;
};

// Appends lines to a FILE* (opened by the caller); flushes on destruction.
class FctWriter {
  public:
    explicit FctWriter(std::FILE *f) : f_(f) {}
    ~FctWriter() {
        if (f_) std::fflush(f_);
    }
    FctWriter(const FctWriter &) = delete;
    FctWriter &operator=(const FctWriter &) = delete;
    void write(const FctRecord &r);
    uint64_t lines() const { return lines_; }

  private:
    std::FILE *f_;
    uint64_t lines_ = 0;
};

}  // namespace rocesw::sim
