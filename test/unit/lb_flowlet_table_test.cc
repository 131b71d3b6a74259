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
