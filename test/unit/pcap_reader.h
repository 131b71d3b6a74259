// Minimal reader for classic libpcap files (not pcapng), for test vectors: both byte orders,
// microsecond (0xa1b2c3d4) and nanosecond (0xa1b23c4d) magic. Returns the captured bytes of
// every record, in file order; timestamps are not kept.
//
// Errors (missing file, bad magic, truncated header or record, absurd record length) throw
// std::runtime_error with the file name and the byte offset of the problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rocesw::test {

inline constexpr uint32_t kPcapLinktypeEthernet = 1;
inline constexpr uint32_t kPcapMaxRecordLen = 256 * 1024;  // larger incl_len => corrupt file

// Reads the file at `path`. If `linktype` is non-null it receives the header's link type.
std::vector<std::vector<uint8_t>> read_pcap(const std::string &path, uint32_t *linktype = nullptr);

// Same, from bytes in memory; `what` names the source in error messages.
std::vector<std::vector<uint8_t>> parse_pcap(const uint8_t *data, size_t len,
                                             const std::string &what, uint32_t *linktype = nullptr);

}  // namespace rocesw::test
