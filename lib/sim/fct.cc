#include "sim/fct.h"

#include <cinttypes>

namespace rocesw::sim {

std::string format_fct_line(const FctRecord &r) {
    char buf[160];
    int n = std::snprintf(buf, sizeof buf,
                          "%08x %08x %u %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
                          r.sip, r.dip, unsigned(r.sport), unsigned(r.dport), r.size_bytes,
                          r.start_ns, r.fct_ns, r.standalone_fct_ns);
    return std::string(buf, size_t(n));
}

uint64_t hpcc_base_rtt_ns(const PathInfo &p) {
    return 2 * p.delay_ns + p.tx_ns;
}

uint64_t standalone_fct_ns(uint64_t size_bytes, const PathInfo &p, const StandaloneModel &m) {
    if (!p.reachable || p.bottleneck_bps == 0 || m.payload_bytes == 0) return 0;
    const uint64_t packets = size_bytes == 0 ? 0 : (size_bytes - 1) / m.payload_bytes + 1;
    const unsigned __int128 total =
        (unsigned __int128)size_bytes + (unsigned __int128)packets * m.header_bytes;
    return hpcc_base_rtt_ns(p) + uint64_t(total * 8000000000ull / p.bottleneck_bps);
}

void FctWriter::write(const FctRecord &r) {
    const std::string s = format_fct_line(r);
    std::fwrite(s.data(), 1, s.size(), f_);
    ++lines_;
}

}  // namespace rocesw::sim
