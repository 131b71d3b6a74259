// The flowlet table: cache-line buckets, tags, lazy aging, full buckets.
#include <gtest/gtest.h>

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
