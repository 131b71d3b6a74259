// QoS configuration in SONiC's table names (DSCP_TO_TC_MAP, DOT1P_TO_TC_MAP, TC_TO_QUEUE_MAP,
// TC_TO_PRIORITY_GROUP_MAP, SCHEDULER, WRED_PROFILE, BUFFER_POOL, BUFFER_PROFILE,
// PORT_QOS_MAP, QUEUE, BUFFER_QUEUE) plus one table of rocesw settings (ROCESW). doc/qos.md
// describes every field.
//
// Two steps, both at load time only, both throwing ConfigError ("<source>: <path>: <problem>",
// the format of lib/config):
//   load_qos_file/load_qos_string: parse and validate everything the file alone determines
//     (ranges, Kmin <= Kmax, complete maps, references between tables);
//   build_qos_plan: bind the PORT_QOS_MAP/QUEUE/BUFFER_QUEUE entries to the switch's ports
//     (named entries beat the 'default' entry) and produce the immutable QosPlan.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "config/config.h"  // ConfigError
#include "qos/plan.h"

namespace rocesw {

template <size_t N>
struct QosMap {
    std::string name;
    std::array<uint8_t, N> to{};  // key -> value
    bool operator==(const QosMap &) const = default;
};

struct QosScheduler {
    std::string name;
    SchedType type = SchedType::dwrr;
    uint8_t weight = 1;
    bool operator==(const QosScheduler &) const = default;
};

struct QosWredProfile {
    std::string name;
    bool ecn = false;  // ecn: any mode that includes green
    MarkPoint mark_point = MarkPoint::dequeue;
    WredCurve mark;  // green_* thresholds (enabled when ecn)
    WredCurve drop;  // wred_green_enable: drop_* if given, else green_*
    bool operator==(const QosWredProfile &) const = default;
};

struct QosBufferPool {
    std::string name;
    bool ingress = false;  // type: ingress pools hold PG (lossless) accounting
    bool dynamic = true;   // mode
    uint64_t size_bytes = 0;
    uint64_t xoff_bytes = 0;  // headroom pool for lossless traffic
    bool operator==(const QosBufferPool &) const = default;
};

struct QosBufferProfile {
    std::string name;
    int pool = -1;            // index into QosConfig::pools
    uint32_t size_bytes = 0;  // reserved
    bool dynamic = true;
    int8_t dynamic_th = 0;
    uint64_t static_th_bytes = 0;
    // Ingress (lossless PG) profiles: xoff = headroom bytes after the pause threshold,
    // xon = resume below this many bytes, xon_offset = resume this far below the threshold.
    uint32_t xon_bytes = 0, xoff_bytes = 0, xon_offset_bytes = 0;
    bool has_xon = false, has_xon_offset = false;
    bool operator==(const QosBufferProfile &) const = default;
};

struct QosPortEntry {
    std::string port;  // port name or "default"
    Trust trust = Trust::dscp;
    uint8_t default_tc = 0;
    int dscp_to_tc = -1, dot1p_to_tc = -1, tc_to_queue = -1, tc_to_pg = -1;  // map indices
    uint8_t pfc_enable = 0;
    bool shaper = true;
    uint32_t shaper_burst_bytes = 0;  // 0: automatic
    uint32_t tx_ring_bytes = 0;       // 0: automatic
    bool tx_ring_unlimited = false;
    bool ecn_depth_set = false;  // ecn_depth given; otherwise the port's default (QosPortInfo)
    EcnDepth ecn_depth = EcnDepth::queue_and_tx_ring;
    // PFC (doc/pfc.md).
    uint16_t pfc_quanta = 0xFFFF;   // pause time the switch advertises
    bool honor_pause = false;       // 802.3x global PAUSE: honor (ports without PFC) or ignore
    uint32_t cable_length_m = 100;  // for the headroom calculator
    bool operator==(const QosPortEntry &) const = default;
};

// One QUEUE, BUFFER_QUEUE or BUFFER_PG row: "<port>[,<port>...]|<q>[-<q>]" (for BUFFER_PG the
// numbers are priority groups).
struct QosQueueEntry {
    std::string path;  // e.g. "QUEUE.default|3-4", for messages
    std::vector<std::string> ports;
    uint8_t queues = 0;  // bit mask
    int scheduler = -1;  // QUEUE
    int wred = -1;       // QUEUE
    int profile = -1;    // BUFFER_QUEUE, BUFFER_PG
    bool operator==(const QosQueueEntry &) const = default;
};

// One PFC_WD row: "<port>" or "default".
struct QosPfcWd {
    std::string port;
    uint32_t detection_ms = 200;
    uint32_t restoration_ms = 200;
    bool drop = true;  // action: drop, or forward
    bool operator==(const QosPfcWd &) const = default;
};

struct QosConfig {
    std::string source;
    std::vector<QosMap<kNumDscp>> dscp_to_tc;
    std::vector<QosMap<kNumDot1p>> dot1p_to_tc;
    std::vector<QosMap<kNumTc>> tc_to_queue;
    std::vector<QosMap<kNumTc>> tc_to_pg;
    std::vector<QosScheduler> schedulers;
    std::vector<QosWredProfile> wred;
    std::vector<QosBufferPool> pools;
    std::vector<QosBufferProfile> profiles;
    std::vector<QosPortEntry> port_qos;
    std::vector<QosQueueEntry> queue;
    std::vector<QosQueueEntry> buffer_queue;
    std::vector<QosQueueEntry> buffer_pg;
    std::vector<QosPfcWd> pfc_wd;
    // ROCESW
    uint8_t switch_tc = 7;
    uint32_t queue_packets = 8192;
    uint32_t handoff_ring_packets = 4096;
    uint32_t wire_overhead_bytes = 24;
    uint32_t dwrr_quantum_bytes = 1024;
    uint64_t seed = 1;
    bool cut_through = true;
    bool operator==(const QosConfig &) const = default;
};

QosConfig load_qos_file(const std::string &path);
QosConfig load_qos_string(const std::string &yaml, const std::string &source = "<string>");

// What the plan needs to know about each switch port, in port-index order.
struct QosPortInfo {
    std::string name;
    uint64_t speed_mbps = 10000;
    uint32_t mtu = 1500;  // L3 MTU (headroom calculation)
    uint16_t burst = 32;  // worker RX burst (headroom calculation)
    // PORT_QOS_MAP ecn_depth when the entry does not say: the switch's ports have a device TX
    // ring whose bytes are backlog; the simulator's (sim_qos_plan) have none - its ring model
    // holds only the frame on the wire, which an ASIC's queue depth does not count either.
    EcnDepth ecn_depth = EcnDepth::queue_and_tx_ring;
};

QosPlan build_qos_plan(const QosConfig &cfg, std::span<const QosPortInfo> ports);

// The SONiC default profile (config/qos/sonic-default.yaml), built in, for a switch config
// that names no QoS file.
QosConfig default_qos_config();

}  // namespace rocesw
