// The resolved QoS plan: what the data path runs with. Built from a QosConfig (qos_config.h) and
// the switch's port list by build_qos_plan(); immutable while workers run. Every table is indexed
// by port index, TC, queue or PG, so the hot path only does array lookups.
//
// Terms: a TC (traffic class, 0..7) is what classification gives a packet; TC_TO_QUEUE picks one
// of the egress port's 8 queues; TC_TO_PRIORITY_GROUP picks the ingress port's PG that lossless
// accounting charges. A TC listed in pfc_enable is lossless: its queue is never tail- or
// WRED-dropped, only an exhausted pool + headroom drops it, and PFC pauses its priority upstream.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace rocesw {

inline constexpr unsigned kNumTc = 8;
inline constexpr unsigned kNumQueues = 8;
inline constexpr unsigned kNumPg = 8;
inline constexpr unsigned kNumDscp = 64;
inline constexpr unsigned kNumDot1p = 8;

// Which header field classifies packets arriving on a port.
enum class Trust : uint8_t { dscp, dot1p };
enum class SchedType : uint8_t { strict, dwrr };
// Where a queue's ECN decision is taken: on the depth a packet sees when it leaves (dequeue,
// fresher feedback) or when it arrives (enqueue).
enum class MarkPoint : uint8_t { dequeue, enqueue };
// What the ECN marker takes as a queue's depth. The port's TX ring (TxRingModel, the wire bytes
// posted to the device and not yet sent) is backlog too: every packet waits behind it, and an
// ASIC, which has no such ring, counts those bytes in its queue. `queue` leaves them out, so a
// congested port marks only once the queue alone reaches Kmin - at a port backlog of Kmin +
// the ring (up to tx_ring_bytes: 25 KB at 10G, 250 KB at 100G by default).
enum class EcnDepth : uint8_t {
    queue_and_tx_ring,  // the queue's bytes + the port's TX ring bytes at the decision
    queue,              // the queue's bytes only
};

// Ingress classification of one port.
struct PortQos {
    Trust trust = Trust::dscp;
    uint8_t default_tc = 0;                        // non-IP (dscp trust), untagged (dot1p trust)
    std::array<uint8_t, kNumDscp> dscp_to_tc{};    // DSCP_TO_TC_MAP
    std::array<uint8_t, kNumDot1p> dot1p_to_tc{};  // DOT1P_TO_TC_MAP
    std::array<uint8_t, kNumTc> tc_to_queue{0, 1, 2, 3, 4, 5, 6, 7};  // TC_TO_QUEUE_MAP
    std::array<uint8_t, kNumTc> tc_to_pg{0, 1, 2, 3, 4, 5, 6, 7};     // TC_TO_PRIORITY_GROUP_MAP
    uint8_t pfc_enable = 0;                                           // bit t set: TC t is lossless
    bool operator==(const PortQos &) const = default;
};

// A WRED curve over the queue depth q (bytes): p = 0 below min_bytes, max_probability_pct% x
// (q - min)/(max - min) from min up to max, 1 at and above max_bytes.
struct WredCurve {
    bool enabled = false;
    uint32_t min_bytes = 0;           // Kmin
    uint32_t max_bytes = 0;           // Kmax
    uint8_t max_probability_pct = 0;  // Pmax, 0..100
    bool operator==(const WredCurve &) const = default;

    // The probability as a double in [0, 1] (tests and documentation; the data path uses
    // threshold32()).
    double probability(uint64_t q) const {
        if (!enabled || q < min_bytes) return 0.0;
        if (q >= max_bytes) return 1.0;
        return max_probability_pct / 100.0 * double(q - min_bytes) / double(max_bytes - min_bytes);
    }
    // The decision threshold on a uniform 32-bit random number: act when rnd < threshold;
    // 2^32 means always.
    uint64_t threshold32(uint64_t q) const {
        if (!enabled || q < min_bytes) return 0;
        if (q >= max_bytes) return uint64_t(1) << 32;
        return uint64_t(probability(q) * 4294967296.0);
    }
};

struct QueuePlan {
    SchedType sched = SchedType::dwrr;
    uint8_t weight = 1;     // DWRR weight 1..255 (quantum = weight x dwrr_quantum_bytes)
    bool lossless = false;  // some TC in pfc_enable maps here
    // Buffer (BUFFER_QUEUE -> BUFFER_PROFILE -> BUFFER_POOL). pool < 0: the queue is in no pool
    // and only its packet capacity bounds it.
    int8_t pool = -1;
    uint32_t reserved_bytes = 0;  // BUFFER_PROFILE.size: always admitted up to this depth
    bool dynamic = true;          // dynamic_th (alpha = 2^dynamic_th) or static_th
    int8_t dynamic_th = 0;
    uint64_t static_th_bytes = 0;  // queue depth limit with a static profile
    // WRED/ECN (QUEUE.wred_profile).
    bool ecn = false;  // ECT packets are marked on `mark`
    MarkPoint mark_point = MarkPoint::dequeue;
    WredCurve mark;  // marking curve for ECT packets (green_* thresholds)
    WredCurve drop;  // drop curve for Not-ECT (and ECT without ecn), lossy only
    bool operator==(const QueuePlan &) const = default;
};

// A priority group of an ingress port, for PFC generation (doc/pfc.md). Only PGs that carry a
// lossless TC (priorities != 0) generate PFC.
struct PgPlan {
    uint8_t priorities = 0;  // PFC priorities it pauses: the lossless TCs mapped to it
    int8_t pool = -1;        // ingress pool (QosPlan::ingress_pools), -1: none (static only)
    uint32_t reserved_bytes = 0;  // BUFFER_PROFILE.size
    bool dynamic = false;         // threshold = reserved + 2^dynamic_th x free shared bytes
    int8_t dynamic_th = 0;
    uint64_t static_th_bytes = 0;  // threshold when not dynamic
    uint64_t headroom_bytes = 0;   // BUFFER_PROFILE.xoff: admitted above the threshold
    uint64_t xon_bytes = 0;        // resume at or below max(xon, threshold - xon_offset)
    uint64_t xon_offset_bytes = 0;
    bool automatic = false;           // no BUFFER_PG row: threshold and headroom calculated
    uint64_t headroom_needed = 0;     // what the calculator says this port needs
    bool operator==(const PgPlan &) const = default;

    uint64_t threshold(uint64_t pool_free_shared) const {
        if (!dynamic) return static_th_bytes;
        return reserved_bytes + (dynamic_th >= 0 ? pool_free_shared << dynamic_th
                                                 : pool_free_shared >> -dynamic_th);
    }
    uint64_t xon_threshold(uint64_t threshold) const {
        uint64_t off = threshold > xon_offset_bytes ? threshold - xon_offset_bytes : 0;
        return off > xon_bytes ? off : xon_bytes;
    }
};

// PFC watchdog of a port (PFC_WD).
struct PfcWdPlan {
    bool enabled = false;
    uint64_t detection_ns = 0, restoration_ns = 0;
    bool drop = true;  // false: forward (ignore PFC while stormed)
    bool operator==(const PfcWdPlan &) const = default;
};

struct PortQosPlan {
    std::string name;
    PortQos cls;  // ingress classification and egress TC -> queue
    std::array<QueuePlan, kNumQueues> queues;
    uint64_t rate_bps = 0;            // port speed: the shaper rate and the device drain rate
    bool shaper = true;               // false: no token bucket (the TX ring cap still applies)
    uint32_t shaper_burst_bytes = 0;  // token bucket depth, wire bytes
    uint32_t tx_ring_bytes = 0;       // cap on wire bytes in the device TX ring (0: no cap)
    EcnDepth ecn_depth = EcnDepth::queue_and_tx_ring;  // what the ECN marker sees (PORT_QOS_MAP)
    // PFC (doc/pfc.md). Priority p is TC p: it is lossless when pfc_enable has bit p, and it
    // pauses queue cls.tc_to_queue[p] of this port.
    std::array<PgPlan, kNumPg> pgs;
    uint16_t pfc_quanta = 0xFFFF;  // advertised pause time
    bool honor_pause = false;      // 802.3x PAUSE on a port without PFC
    PfcWdPlan wd;
    uint8_t lossless_queues() const {
        uint8_t m = 0;
        for (unsigned p = 0; p < kNumTc; p++)
            if (cls.pfc_enable >> p & 1) m = uint8_t(m | 1u << cls.tc_to_queue[p]);
        return m;
    }
    bool operator==(const PortQosPlan &) const = default;
};

struct PoolPlan {
    std::string name;
    uint64_t size_bytes = 0;  // shared + reserved bytes
    uint64_t xoff_bytes = 0;  // headroom only lossless queues may use
    bool dynamic = true;
    bool operator==(const PoolPlan &) const = default;
};

struct QosPlan {
    std::string source;                    // the QoS file, for messages
    std::vector<PortQosPlan> ports;        // by port index
    std::vector<PoolPlan> pools;           // egress pools, by QueuePlan::pool
    std::vector<PoolPlan> ingress_pools;   // ingress pools, by PgPlan::pool
    std::vector<std::string> warnings;     // e.g. headroom below what the calculator needs
    uint8_t switch_tc = 7;                 // TC of traffic the switch originates (network control)
    uint32_t queue_packets = 8192;         // packet slots per queue (power of two)
    uint32_t handoff_ring_packets = 4096;  // per-port multi-producer ring (power of two)
    uint32_t wire_overhead_bytes = 24;     // preamble+SFD 8, IFG 12, FCS 4 (mbufs lack the FCS)
    uint32_t min_frame_bytes = 60;         // frames shorter than this are padded on the wire
    uint32_t dwrr_quantum_bytes = 1024;    // DWRR quantum per unit of weight
    uint64_t seed = 1;                     // WRED random generator seed (mixed with the worker id)
    bool cut_through = true;               // an idle port's burst may leave at enqueue
    // Not configurable: false makes QosEgress admit every burst per packet (its admission in
    // sums is an optimisation; the tests compare the two).
    bool sum_admission = true;
    // Not configurable: false makes QosEgress test every frame of a dequeue run against the
    // deficit, the shaper, the TX ring model and the marking depth (skipping the tests for a run
    // that bounds show none can stop or mark is an optimisation; the tests compare the two).
    bool run_tests_once = true;
    // Not configurable: false makes PfcEngine::generate evaluate every lossless PG at every
    // flush (skipping a PG, or a port, whose inputs are those of its last XOFF-off evaluation is
    // an optimisation; the tests compare the two).
    bool pfc_skip = true;
    // Not configurable: false makes QosEgress check every feature on every port (no
    // TrafficManager::Port::ct_plain or pfc_inert: the cut-through checks, PFC honoring and the
    // full service() of an idle port run whether the feature is on or not; skipping them for
    // features that are off is an optimisation; the tests compare the two).
    bool plain_skip = true;
    // Not configurable: false makes QosEgress ignore the BurstSummary of enqueue_summed (every
    // packet's class and length read again in admit_cut_through; taking them from the summary is
    // an optimisation; the tests compare the two).
    bool burst_summary = true;
    // Not configurable: false makes QosEgress leave a final burst of several queues for an idle
    // port queued for the flush (cutting it through in the order service() would send it is an
    // optimisation; the tests compare the two).
    bool mixed_cut_through = true;
    bool operator==(const QosPlan &) const = default;

    uint32_t wire_bytes(uint32_t frame_len) const {
        return (frame_len < min_frame_bytes ? min_frame_bytes : frame_len) + wire_overhead_bytes;
    }
};

}  // namespace rocesw
