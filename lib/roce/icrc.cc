#include "roce/icrc.h"

#include <array>
#include <cstring>

namespace rocesw::roce {

namespace {

// Slice-by-8 tables for the reflected polynomial 0xEDB88320, built at compile time.
constexpr std::array<std::array<uint32_t, 256>, 8> make_tables() {
    std::array<std::array<uint32_t, 256>, 8> t{};
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int s = 1; s < 8; s++) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
    return t;
}
constexpr auto kTables = make_tables();

}  // namespace

uint32_t crc32_update(uint32_t c, const uint8_t *p, size_t len) {
    while (len >= 8) {
        uint32_t lo = c ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
                           uint32_t(p[3]) << 24);
        c = kTables[7][lo & 0xFF] ^ kTables[6][(lo >> 8) & 0xFF] ^ kTables[5][(lo >> 16) & 0xFF] ^
            kTables[4][lo >> 24] ^ kTables[3][p[4]] ^ kTables[2][p[5]] ^ kTables[1][p[6]] ^
            kTables[0][p[7]];
        p += 8;
        len -= 8;
    }
    while (len--) c = kTables[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c;
}

uint32_t icrc_compute(const uint8_t *l3, size_t len, bool is_v6) {
    // Masked copies of the variant headers: IP (20 or 40 bytes), UDP (8), BTH (12).
    uint8_t hdr[40 + 8 + 12];
    const size_t ip_len = is_v6 ? 40 : size_t(l3[0] & 0x0F) * 4;
    const size_t masked = (is_v6 ? 40 : 20) + 8 + 12;
    uint32_t c = 0xFFFFFFFFu;
    static constexpr uint8_t kLrh[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    c = crc32_update(c, kLrh, 8);
    if (!is_v6 && ip_len != 20) {
        // IPv4 options (never sent by RoCE NICs): mask the fixed part, keep the options.
        std::memcpy(hdr, l3, 20);
        hdr[1] = 0xFF, hdr[8] = 0xFF, hdr[10] = 0xFF, hdr[11] = 0xFF;
        c = crc32_update(c, hdr, 20);
        c = crc32_update(c, l3 + 20, ip_len - 20);
        std::memcpy(hdr, l3 + ip_len, 20);
        hdr[6] = hdr[7] = 0xFF;
        hdr[8 + 4] = 0xFF;
        c = crc32_update(c, hdr, 20);
        return ~crc32_update(c, l3 + ip_len + 20, len - ip_len - 20);
    }
    std::memcpy(hdr, l3, masked);
    size_t udp = is_v6 ? 40 : 20;
    if (is_v6) {
        hdr[0] |= 0x0F;  // traffic class (high nibble) and flow label: all ones
        hdr[1] = hdr[2] = hdr[3] = 0xFF;
        hdr[7] = 0xFF;  // hop limit
    } else {
        hdr[1] = 0xFF;             // TOS
        hdr[8] = 0xFF;             // TTL
        hdr[10] = hdr[11] = 0xFF;  // header checksum
    }
    hdr[udp + 6] = hdr[udp + 7] = 0xFF;  // UDP checksum
    hdr[udp + 8 + 4] = 0xFF;             // BTH reserved byte (FECN, BECN, resv6)
    c = crc32_update(c, hdr, masked);
    return ~crc32_update(c, l3 + masked, len - masked);
}

}  // namespace rocesw::roce
