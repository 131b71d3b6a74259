// The flowlet table: per-flow state of one worker, in cache-line buckets of four 16-byte
// entries (the VPP flow-table shape), indexed and tagged by the flow hash. A lookup touches one
// line. Entries idle longer than the age are reclaimed lazily, when their bucket is next
// visited; a bucket whose four entries are all live is full, and the caller falls back to the
// hash bucket table (counted). Single writer (the owning worker); no atomics.
//
// Times are microseconds in 32 bits (now_ns / 1000, computed once per burst). The comparisons
// are modular, so they hold across the 71-minute wrap for any gap shorter than that; an entry
// untouched for longer may look young once, which at worst keeps a flow on its current path.
#pragma once

#include <cstdint>
#include <memory>

#include "common/counters.h"
#include "common/huge_array.h"

namespace rocesw {

inline constexpr uint8_t kFlowletPending = 0xFE;  // slot being chosen in the current burst
// The group of every invalid entry (never valid: no ECMP group has this id), so that an entry
// whose group is a real id is valid without a test of `valid` (FlowletBucket::find_tag).
inline constexpr uint16_t kFlowletNoGroup = 0xFFFF;

struct FlowletEntry {
    uint32_t tag;      // high 32 bits of the flow hash
    uint32_t last_us;  // last packet
    uint16_t group = kFlowletNoGroup;  // ECMP group id the slot belongs to (valid entries)
    uint8_t slot;      // member slot, or kFlowletPending
    uint8_t valid;
    uint16_t pending;  // request index while slot == kFlowletPending
    uint16_t member;   // lb_member_fp of its slot's member (set with the slot)
};
static_assert(sizeof(FlowletEntry) == 16);

// The tag of a flow's entry: the flow hash's high half (its low bits pick the bucket).
inline uint32_t flowlet_tag(uint64_t hash) { return uint32_t(hash >> 32); }

struct alignas(kCacheLine) FlowletBucket {
    FlowletEntry e[4];

    // The valid entry tagged `tag`, or null. Only reads.
    FlowletEntry *find(uint32_t tag) {
#pragma GCC unroll 4
        for (auto &x : e)
            if (x.tag == tag && x.valid) return &x;
        return nullptr;
    }
    // The first entry tagged `tag`, valid or not, or null: where its group is a group's id
    // (not kFlowletNoGroup) it is valid and find()'s result; otherwise find() may differ.
    FlowletEntry *find_tag(uint32_t tag) {
#pragma GCC unroll 4
        for (auto &x : e)
            if (x.tag == tag) return &x;
        return nullptr;
    }
};
static_assert(sizeof(FlowletBucket) == kCacheLine);

// The table's buckets as values, for a burst loop to keep in registers: its stores (entry
// times, outputs) could otherwise alias the table's own fields and force reloads.
struct FlowletBuckets {
    FlowletBucket *base;
    uint64_t byte_mask;  // the bucket mask << 6: a bucket's byte offset

    // Bucket (hash >> 12) & mask, its byte offset taken from hash >> 6 in one mask (no shift
    // back).
    FlowletBucket &bucket(uint64_t hash) const {
        static_assert(sizeof(FlowletBucket) == 64);
        return *reinterpret_cast<FlowletBucket *>(reinterpret_cast<char *>(base) +
                                                  ((hash >> 6) & byte_mask));
    }
    // The flow's entry, or null. Only reads.
    FlowletEntry *find(uint64_t hash) const { return bucket(hash).find(flowlet_tag(hash)); }
    // Starts loading the flow's bucket (the balancer hashes a whole burst first).
    void prefetch(uint64_t hash) const { __builtin_prefetch(&bucket(hash), 1); }
};

class FlowletTable {
  public:
    explicit FlowletTable(uint32_t entries);  // rounded up to a power of two, >= 4

    FlowletBuckets buckets() { return {buckets_.get(), uint64_t(mask_) << 6}; }
    FlowletEntry *find(uint64_t hash) { return buckets().find(hash); }

    // A fresh entry for a flow find() did not find (tag set, valid, the rest for the caller), or
    // null when its bucket is full of live entries. Reclaims aged entries of the bucket, adding
    // their number to `aged`.
    FlowletEntry *insert(uint64_t hash, uint32_t now_us, uint32_t age_us, uint64_t &aged) {
        FlowletBucket &b = buckets().bucket(hash);
        FlowletEntry *free_e = nullptr;
        for (auto &e : b.e) {
            if (e.valid && now_us - e.last_us > age_us && e.slot != kFlowletPending) {
                e.valid = 0;
                e.group = kFlowletNoGroup;
                aged++;
                used_--;
            }
            if (!e.valid && !free_e) free_e = &e;
        }
        if (!free_e) return nullptr;
        *free_e = FlowletEntry{flowlet_tag(hash), now_us, 0, kFlowletPending, 1, 0, 0};
        used_++;
        return free_e;
    }

    // find(), else insert() (fresh = true).
    FlowletEntry *find_or_insert(uint64_t hash, uint32_t now_us, uint32_t age_us, bool &fresh,
                                 uint64_t &aged) {
        fresh = false;
        if (FlowletEntry *e = find(hash)) return e;
        FlowletEntry *e = insert(hash, now_us, age_us, aged);
        fresh = e != nullptr;
        return e;
    }

    void prefetch(uint64_t hash) { buckets().prefetch(hash); }

    uint32_t capacity() const { return (mask_ + 1) * 4; }
    // The buckets sit in their own huge-page-advised mapping (tables of 512 KiB and up).
    bool huge_mapped() const { return buckets_.huge_mapped(); }
    // Valid entries (aged ones count until their bucket is visited again). Owning worker only;
    // others read occupancy from LbWorkerCounters.
    uint32_t used() const { return used_; }
    // Entry k (< capacity()), for tests that compare tables.
    const FlowletEntry &entry(uint32_t k) const { return buckets_[k / 4].e[k % 4]; }

  private:

    HugeArray<FlowletBucket> buckets_;  // transparent huge pages from 512 KiB (common/huge_array.h)
    uint32_t mask_;
    uint32_t used_ = 0;
};

}  // namespace rocesw
