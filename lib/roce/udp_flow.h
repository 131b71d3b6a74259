// UDP flows: constant-rate UDP senders beside the RoCE traffic (a scenario's `udp_flows`: a
// lossy background, or a class of its own). rocesim's UdpHost (sim/sim_host.h) and rocehost's
// hosts (roce/host_set.h) both send and count them with this code, so the two engines put the
// same frames on the wire on the same schedule and write the same udp_flows.csv.
//
// Frame: Ethernet / IPv4 (DSCP, ECT(0) when ecn, DF, id = the packet's sequence) / UDP (no
// checksum, which IPv4 allows) / payload
//   magic 'RSIM' (4) | flow id (4) | sequence (8) | generation time in ps (8) | zero fill.
// Schedule: packet k is generated at t_k = start + floor(k * (frame + 24) * 8 * 1e12 / rate)
// ps for t_k < stop. `rate` counts wire bits (frame, FCS 4, preamble/SFD/IFG 20), so rate =
// line rate is back to back. The frame carries t_k, so a packet's one-way delay includes the
// time it waited in its host (behind its own earlier packets, or while paused).
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

#include "pkt/addr.h"

namespace rocesw::roce {

inline constexpr uint32_t kUdpFlowMagic = 0x5253494d;  // "RSIM"
inline constexpr uint32_t kUdpFlowHeaders = 14 + 20 + 8;
inline constexpr uint32_t kUdpFlowMinFrame = kUdpFlowHeaders + 24;
inline constexpr uint64_t kUdpNever = std::numeric_limits<uint64_t>::max();

// What a UDP flow's frame says about itself.
struct UdpFlowStamp {
    uint32_t flow = 0;
    uint64_t seq = 0;
    uint64_t sent_ps = 0;  // generation time t_seq
};

// The addresses and class of a flow's frames (IPv4 in host byte order).
struct UdpFlowAddr {
    MacAddr dst_mac, src_mac;
    uint32_t src_ip = 0, dst_ip = 0;
    uint8_t dscp = 0;
    bool ecn = false;  // ECT(0)
    uint16_t sport = 10000, dport = 100;
};

// The frame length for `frame_bytes` (Ethernet header to payload end, FCS excluded).
inline uint32_t udp_flow_frame_len(uint32_t frame_bytes) {
    return frame_bytes < kUdpFlowMinFrame ? kUdpFlowMinFrame : frame_bytes;
}
// Writes the frame into b[0..len) (len = udp_flow_frame_len(...)).
void build_udp_flow_frame(uint8_t *b, uint32_t len, const UdpFlowAddr &a, const UdpFlowStamp &s);
// A UDP flow's frame (IPv4, UDP, the magic): its stamp.
bool parse_udp_flow_frame(const uint8_t *b, uint32_t len, UdpFlowStamp *s);

// One flow's packet times (see above), in ps on the sender's clock.
class UdpSchedule {
  public:
    UdpSchedule() = default;
    UdpSchedule(uint64_t start_ps, uint64_t stop_ps, uint32_t frame_bytes, uint64_t rate_bps);
    uint64_t seq() const { return k_; }
    uint64_t due_ps() const { return t_; }  // kUdpNever: done
    void advance();

  private:
    uint64_t start_ = 0, stop_ = kUdpNever, rate_ = 0;
    unsigned __int128 bits_ps_ = 0;  // wire bits x 1e12 per packet
    uint64_t k_ = 0, t_ = kUdpNever;
};

// Per-flow results and (optionally) every delivery; times in ps.
struct UdpFlowStats {
    uint64_t sent = 0, received = 0, alloc_failed = 0;
    uint64_t out_of_order = 0;
    uint64_t next_seq = 0;
    uint64_t min_delay = kUdpNever, max_delay = 0;
    unsigned __int128 sum_delay = 0;
};
struct UdpDelivery {
    uint32_t flow;
    uint64_t seq;
    uint64_t sent, received;
};
class UdpRecorder {
  public:
    explicit UdpRecorder(size_t flows = 0) : stats_(flows) {}
    void on_sent(uint32_t flow) {
        if (flow < stats_.size()) stats_[flow].sent++;
    }
    void on_delivery(uint32_t flow, uint64_t seq, uint64_t sent_ps, uint64_t now_ps);
    void keep_deliveries(bool on) { keep_ = on; }
    const std::vector<UdpFlowStats> &stats() const { return stats_; }
    std::vector<UdpFlowStats> &stats() { return stats_; }
    const std::vector<UdpDelivery> &deliveries() const { return deliveries_; }
    uint64_t sent() const;
    uint64_t received() const;

  private:
    std::vector<UdpFlowStats> stats_;
    std::vector<UdpDelivery> deliveries_;
    bool keep_ = true;
};

// udp_flows.csv: flow,src,dst,sport,dport,sent,received,out_of_order,min_delay_ps,
// mean_delay_ps,max_delay_ps; rows[i] names flow i's ends (rocesim: node ids; rocehost: host
// indexes).
struct UdpFlowRow {
    uint32_t src = 0, dst = 0;
    uint16_t sport = 0, dport = 0;
};
void write_udp_flows_csv(std::FILE *f, const std::vector<UdpFlowRow> &rows,
                         const UdpRecorder &rec);

}  // namespace rocesw::roce
