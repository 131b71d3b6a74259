// The flowlet table: cache-line buckets, tags, lazy aging, full buckets.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "lb/flowlet_table.h"

namespace rocesw {
namespace {

// A hash that lands in table bucket `b` with tag `t`.
uint64_t h(uint32_t b, uint32_t t) {
    return uint64_t(t) << 32 | uint64_t(b) << 12;
}

TEST(FlowletTable, SizeRoundsUpToWholeBuckets) {
    EXPECT_EQ(FlowletTable(64).capacity(), 64u);
    EXPECT_EQ(FlowletTable(65).capacity(), 128u);
    EXPECT_EQ(FlowletTable(1).capacity(), 4u);
}

// smaps' THPeligible for the mapping holding `p`: 1, 0, or -1 when not found.
int thp_eligible(const void *p) {
    auto a = reinterpret_cast<uintptr_t>(p);
    std::ifstream f("/proc/self/smaps");
    std::string line;
    bool in = false;
    while (std::getline(f, line)) {
        uintptr_t lo = 0, hi = 0;
        char dash = 0;
        std::istringstream ls(line);
        if (ls >> std::hex >> lo >> dash >> hi && dash == '-') {
            in = a >= lo && a < hi;
            continue;
        }
        if (in && line.rfind("THPeligible:", 0) == 0) return std::stoi(line.substr(12));
    }
    return -1;
}

// Transparent huge pages on for advised memory ("always" or "madvise" selected).
bool thp_advisable() {
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string s;
    std::getline(f, s);
    return s.find("[always]") != std::string::npos || s.find("[madvise]") != std::string::npos;
}

// The default table (65 536 entries, 1 MiB) is read at random per packet: it gets its own
// 2 MiB-aligned mapping advised for transparent huge pages, zeroed; small tables stay on `new`.
TEST(FlowletTable, LargeTableInTransparentHugePages) {
    FlowletTable big(65536);
    ASSERT_TRUE(big.huge_mapped());
    const FlowletEntry *first = &big.entry(0);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % (uintptr_t(2) << 20), 0u);
    for (uint32_t k = 0; k < big.capacity(); k += 997) {
        EXPECT_EQ(big.entry(k).valid, 0);
        EXPECT_EQ(big.entry(k).tag, 0u);
    }
    EXPECT_EQ(big.entry(big.capacity() - 1).valid, 0);
    if (thp_advisable())
        EXPECT_EQ(thp_eligible(first), 1) << "the kernel offers THP but the table's mapping is not eligible";
    else
        GTEST_LOG_(INFO) << "THP is off on this machine: eligibility not checked";
    // It works as a table like any other.
    bool fresh = false;
    uint64_t aged = 0;
    FlowletEntry *e = big.find_or_insert(h(16383, 9), 5, 1000, fresh, aged);
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(fresh);
    EXPECT_EQ(big.find(h(16383, 9)), e);

    FlowletTable small(64);
    EXPECT_FALSE(small.huge_mapped());
}

// HugeArray moves its mapping; the moved-from array owns nothing.
TEST(FlowletTable, HugeArrayMoves) {
    HugeArray<uint64_t> a(size_t(1) << 17);  // 1 MiB
    ASSERT_TRUE(a.huge_mapped());
    a[5] = 42;
    HugeArray<uint64_t> b(std::move(a));
    EXPECT_EQ(b[5], 42u);
    EXPECT_EQ(b.size(), size_t(1) << 17);
    EXPECT_TRUE(b.huge_mapped());
    EXPECT_EQ(a.get(), nullptr);
    HugeArray<uint64_t> c(8);
    EXPECT_FALSE(c.huge_mapped());
    c = std::move(b);
    EXPECT_EQ(c[5], 42u);
    EXPECT_EQ(c[0], 0u);
}

TEST(FlowletTable, FindsWhatItInserted) {
    FlowletTable t(64);
    bool fresh = false;
    uint64_t aged = 0;
    FlowletEntry *e = t.find_or_insert(h(3, 7), 100, 1000, fresh, aged);
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(fresh);
    EXPECT_EQ(e->slot, kFlowletPending);
    e->slot = 2;
    FlowletEntry *again = t.find_or_insert(h(3, 7), 150, 1000, fresh, aged);
    EXPECT_EQ(again, e);
    EXPECT_FALSE(fresh);
    EXPECT_EQ(t.used(), 1u);
}

// A flow's bucket is (hash >> 12) & (buckets - 1) (FlowletBuckets::bucket takes its byte
// offset from hash >> 6 in one mask): every bucket of a few table sizes, random high bits.
TEST(FlowletTable, BucketIsTheHashBitsFromTwelveUp) {
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (uint32_t entries : {4u, 64u, 4096u, 65536u}) {
        FlowletTable t(entries);
        const uint32_t n_buckets = t.capacity() / 4;
        for (uint32_t k = 0; k < 4 * n_buckets + 1000; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            const uint64_t hash = k < 4 * n_buckets ? (x & ~((uint64_t(n_buckets) - 1) << 12)) |
                                                          uint64_t(k % n_buckets) << 12
                                                    : x;
            const uint32_t b = uint32_t(hash >> 12) & (n_buckets - 1);
            ASSERT_EQ(&t.buckets().bucket(hash).e[0], &t.entry(b * 4)) << entries << " " << k;
        }
    }
}

TEST(FlowletTable, FullBucketRefusesThenAgedEntriesAreReclaimed) {
    FlowletTable t(64);
    bool fresh;
    uint64_t aged = 0;
    for (uint32_t tag = 1; tag <= 4; tag++) {
        FlowletEntry *e = t.find_or_insert(h(5, tag), 100, 1000, fresh, aged);
        ASSERT_NE(e, nullptr);
        e->slot = 0;
    }
    EXPECT_EQ(t.find_or_insert(h(5, 99), 500, 1000, fresh, aged), nullptr);  // full
    EXPECT_NE(t.find_or_insert(h(6, 99), 500, 1000, fresh, aged), nullptr);  // other bucket
    EXPECT_EQ(aged, 0u);
    // 1001 us later every entry of bucket 5 is older than the age: all four are reclaimed.
    FlowletEntry *e = t.find_or_insert(h(5, 99), 1101, 1000, fresh, aged);
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(fresh);
    EXPECT_EQ(aged, 4u);
    EXPECT_EQ(t.used(), 2u);
}

// The lookup compares the four entries of a bucket at once: a hit in every position, each
// entry found by its own tag, an aged (invalid) entry with the tag not found but replaced.
TEST(FlowletTable, FindsEveryPositionAndIgnoresInvalidEntries) {
    FlowletTable t(64);
    bool fresh;
    uint64_t aged = 0;
    FlowletEntry *e[4];
    for (uint32_t k = 0; k < 4; k++) {
        e[k] = t.find_or_insert(h(9, 0xA0 + k), 100 + k * 100, 1000, fresh, aged);
        ASSERT_NE(e[k], nullptr);
        ASSERT_TRUE(fresh);
        e[k]->slot = uint8_t(k);
    }
    for (uint32_t k = 0; k < 4; k++) {
        EXPECT_EQ(t.find_or_insert(h(9, 0xA0 + k), 500, 1000, fresh, aged), e[k]);
        EXPECT_FALSE(fresh);
    }
    // Another bucket's tags are not this bucket's.
    EXPECT_TRUE(t.find_or_insert(h(10, 0xA1), 500, 1000, fresh, aged) && fresh);
    // At 1150 us entry 0 (last 100) is older than the age: a miss reclaims it and reuses it.
    EXPECT_EQ(t.find_or_insert(h(9, 0xBB), 1150, 1000, fresh, aged), e[0]);
    EXPECT_TRUE(fresh);
    EXPECT_EQ(aged, 1u);
    e[0]->slot = 0;
    // Entry 1 aged too (last 200): made invalid by the next miss, its tag no longer matches.
    EXPECT_EQ(t.find_or_insert(h(9, 0xCC), 1250, 1000, fresh, aged), e[1]);
    EXPECT_EQ(aged, 2u);
    e[1]->slot = 0;
    FlowletEntry *again = t.find_or_insert(h(9, 0xA1), 1250, 2000, fresh, aged);
    EXPECT_EQ(again, nullptr);  // bucket full of live entries (0xBB, 0xCC, 0xA2, 0xA3)
}

// Every invalid entry's group is kFlowletNoGroup, no group's id (the balancer's hit loop takes
// the first entry with a tag whose group is the packet's as valid): a new table's (small: new[],
// large: the huge-page mapping), an aged one's, and find_tag's result is that entry.
TEST(FlowletTable, InvalidEntriesCarryNoGroup) {
    for (uint32_t entries : {64u, 1u << 16}) {
        FlowletTable t(entries);
        for (uint32_t k = 0; k < t.capacity(); k++) {
            ASSERT_EQ(t.entry(k).valid, 0) << entries << " " << k;
            ASSERT_EQ(t.entry(k).group, kFlowletNoGroup) << entries << " " << k;
        }
    }
    FlowletTable t(64);
    bool fresh;
    uint64_t aged = 0;
    for (uint32_t tag = 1; tag <= 2; tag++) {
        FlowletEntry *e = t.find_or_insert(h(3, tag), 100, 1000, fresh, aged);
        ASSERT_NE(e, nullptr);
        e->group = 7;
        e->slot = 0;
    }
    // Both aged at 1200 us: the miss takes entry 0, entry 1 (tag 2) stays invalid.
    ASSERT_NE(t.find_or_insert(h(3, 9), 1200, 1000, fresh, aged), nullptr);
    ASSERT_EQ(aged, 2u);
    const FlowletEntry &e1 = t.entry(3 * 4 + 1);
    EXPECT_EQ(e1.valid, 0);
    EXPECT_EQ(e1.tag, 2u);
    EXPECT_EQ(e1.group, kFlowletNoGroup);
    FlowletBucket &b = t.buckets().bucket(h(3, 2));
    EXPECT_EQ(b.find_tag(2), &b.e[1]);
    EXPECT_EQ(b.find(2), nullptr);
}

TEST(FlowletTable, TimesCompareAcrossTheWrap) {
    FlowletTable t(64);
    bool fresh;
    uint64_t aged = 0;
    FlowletEntry *e = t.find_or_insert(h(1, 1), 0xFFFFFF00u, 1000, fresh, aged);
    e->slot = 0;
    for (uint32_t tag = 2; tag <= 4; tag++)
        t.find_or_insert(h(1, tag), 0xFFFFFF00u, 1000, fresh, aged)->slot = 0;
    // 0x100 + 0x10 us later, across the 32-bit wrap: still young, so the bucket stays full.
    EXPECT_EQ(t.find_or_insert(h(1, 9), 0x10u, 1000, fresh, aged), nullptr);
    EXPECT_EQ(aged, 0u);
}

}  // namespace
}  // namespace rocesw
