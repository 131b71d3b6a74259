#include "pcap_reader.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace rocesw::test {

namespace {

constexpr uint32_t kMagicUsec = 0xA1B2C3D4;
constexpr uint32_t kMagicNsec = 0xA1B23C4D;
constexpr size_t kGlobalHeaderLen = 24;
constexpr size_t kRecordHeaderLen = 16;

uint32_t swap32(uint32_t v) {
    return (v >> 24) | ((v >> 8) & 0xFF00) | ((v << 8) & 0xFF0000) | (v << 24);
}

uint32_t load_le32(const uint8_t *p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

[[noreturn]] void fail(const std::string &what, size_t offset, const std::string &msg) {
    throw std::runtime_error("pcap " + what + ": " + msg + " (at byte " + std::to_string(offset) +
                             ")");
}

}  // namespace

std::vector<std::vector<uint8_t>> parse_pcap(const uint8_t *data, size_t len,
                                             const std::string &what, uint32_t *linktype) {
    if (len < kGlobalHeaderLen) {
        fail(what, 0,
             "file too short for the 24-byte global header (" + std::to_string(len) + " bytes)");
    }
    const uint32_t magic_le = load_le32(data);
    bool swapped;
    if (magic_le == kMagicUsec || magic_le == kMagicNsec) {
        swapped = false;
    } else if (swap32(magic_le) == kMagicUsec || swap32(magic_le) == kMagicNsec) {
        swapped = true;
    } else {
        char buf[16];
        snprintf(buf, sizeof buf, "0x%08x", magic_le);
        fail(what, 0, std::string("bad magic ") + buf + " (not a classic pcap file; pcapng?)");
    }
    auto rd32 = [swapped](const uint8_t *p) {
        const uint32_t v = load_le32(p);
        return swapped ? swap32(v) : v;
    };
    auto rd16 = [swapped](const uint8_t *p) {
        return static_cast<uint16_t>(swapped ? (p[0] << 8 | p[1]) : (p[1] << 8 | p[0]));
    };
    const uint16_t major = rd16(data + 4);
    if (major != 2) fail(what, 4, "unsupported version major " + std::to_string(major));
    if (linktype) *linktype = rd32(data + 20) & 0x0FFFFFFF;  // upper bits: FCS flags

    std::vector<std::vector<uint8_t>> frames;
    size_t off = kGlobalHeaderLen;
    while (off < len) {
        if (len - off < kRecordHeaderLen) {
            fail(what, off,
                 "truncated record header (record " + std::to_string(frames.size()) + ")");
        }
        const uint32_t incl = rd32(data + off + 8);
        if (incl > kPcapMaxRecordLen) {
            fail(what, off,
                 "record " + std::to_string(frames.size()) + " length " + std::to_string(incl) +
                     " is not plausible");
        }
        off += kRecordHeaderLen;
        if (len - off < incl) {
            fail(what, off,
                 "truncated record data (record " + std::to_string(frames.size()) + " wants " +
                     std::to_string(incl) + " bytes, " + std::to_string(len - off) + " left)");
        }
        frames.emplace_back(data + off, data + off + incl);
        off += incl;
    }
    return frames;
}

std::vector<std::vector<uint8_t>> read_pcap(const std::string &path, uint32_t *linktype) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("pcap " + path + ": cannot open file");
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    if (in.bad()) throw std::runtime_error("pcap " + path + ": read error");
    return parse_pcap(bytes.data(), bytes.size(), path, linktype);
}

}  // namespace rocesw::test
