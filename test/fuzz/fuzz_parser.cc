// Fuzz target: parse_frame on arbitrary bytes, at two MTUs. Whatever it returns, it must not
// read past the frame (ASan) or hit undefined behaviour (UBSan), and a frame it accepts must
// have self-consistent metadata.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "pkt/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // An exactly-sized copy, so any read past the end is caught.
    std::vector<uint8_t> frame(data, data + size);
    for (uint32_t mtu : {1500u, 9000u}) {
        rocesw::ParseOptions opt;
        opt.max_l3_len = mtu;
        rocesw::PacketMeta m, fast;
        // The inline fast path must agree with the general parser wherever it accepts.
        if (rocesw::parse_ipv4_udp_fast(frame.data(), uint32_t(frame.size()), opt, &fast)) {
            rocesw::PacketMeta general;
            if (rocesw::parse_frame_general(frame.data(), uint32_t(frame.size()), opt, &general) ||
                std::memcmp(&fast, &general, sizeof fast) != 0)
                std::abort();
        }
        if (rocesw::parse_frame(frame.data(), uint32_t(frame.size()), opt, &m)) continue;
        if (m.l3 == rocesw::L3Type::ipv4 || m.l3 == rocesw::L3Type::ipv6) {
            if (m.l3_offset + m.l3_len > frame.size() || m.l3_len > mtu) std::abort();
            if ((m.flags & rocesw::kFlagL4) && m.l4_offset + 4u > frame.size()) std::abort();
        }
        if (m.l3 == rocesw::L3Type::none) std::abort();
    }
    return 0;
}
