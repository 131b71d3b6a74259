// Fuzz target: parse_mac_control (802.1Qbb PFC and 802.3x PAUSE frames) on arbitrary bytes. It
// must not read past the frame (ASan), and what it accepts must be what the frame says: a PFC
// frame built again from the parsed fields (scapy-independent check: build_pfc_frame) parses to
// the same fields, and PAUSE speaks for every priority with one time.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "pfc/frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // An exactly-sized copy, so any read past the end is caught.
    const std::vector<uint8_t> frame(data, data + size);
    rocesw::MacControlFrame f;
    const rocesw::MacControlError err =
        rocesw::parse_mac_control(frame.data(), uint32_t(frame.size()), &f);
    if (err != rocesw::MacControlError::none) {
        if (size_t(err) >= rocesw::kMacControlErrorCount) std::abort();
        return 0;
    }
    if (size < rocesw::kMacControlFrameLen) std::abort();
    if (std::memcmp(frame.data(), rocesw::kMacControlDst.data(), 6) != 0) std::abort();
    if (!f.pfc) {
        if (f.enable != 0xFF || rocesw::rd16(&frame[16]) != f.quanta[0]) std::abort();
        for (uint32_t p = 1; p < rocesw::kNumPriorities; p++)
            if (f.quanta[p]) std::abort();
        return 0;
    }
    if (rocesw::rd16(&frame[16]) != f.enable) std::abort();
    std::array<uint8_t, 6> src;
    std::memcpy(src.data(), &frame[6], 6);
    uint8_t again[rocesw::kMacControlFrameLen];
    rocesw::build_pfc_frame(again, src, f.enable, f.quanta);
    rocesw::MacControlFrame g;
    if (rocesw::parse_mac_control(again, sizeof again, &g) != rocesw::MacControlError::none ||
        !g.pfc || g.enable != f.enable)
        std::abort();
    for (uint32_t p = 0; p < rocesw::kNumPriorities; p++)
        if (g.quanta[p] != ((f.enable >> p) & 1 ? f.quanta[p] : 0)) std::abort();
    return 0;
}
