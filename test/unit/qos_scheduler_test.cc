// DwrrScheduler as pure logic: strict before DWRR (highest queue first), byte shares that follow
// the weights whatever the frame sizes, deficits forfeited on empty and kept while paused.
#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <random>

#include "qos/scheduler.h"

namespace rocesw {
namespace {

std::array<QueuePlan, kNumQueues> queues(std::array<int, kNumQueues> weights) {
    std::array<QueuePlan, kNumQueues> q{};
    for (unsigned i = 0; i < kNumQueues; i++) {
        if (weights[i] == 0) {
            q[i].sched = SchedType::strict;
        } else {
            q[i].sched = SchedType::dwrr;
            q[i].weight = uint8_t(weights[i]);
        }
    }
    return q;
}

TEST(DwrrScheduler, StrictQueuesFirstHighestNumberFirst) {
    DwrrScheduler s(queues({1, 1, 1, 1, 1, 0, 0, 0}), 1024);
    auto len = [](int) { return 100u; };
    EXPECT_EQ(s.pick(0xFF, len), 7);
    EXPECT_EQ(s.pick(0x7F, len), 6);
    EXPECT_EQ(s.pick(0x3F, len), 5);
    EXPECT_EQ(s.pick(0x21, len), 5);
    EXPECT_EQ(s.pick(0x00, len), -1);
    int q = s.pick(0x1F, len);
    EXPECT_GE(q, 0);
    EXPECT_LE(q, 4);
}

// Always-backlogged DWRR queues with their own frame sizes: byte shares match the weights.
TEST(DwrrScheduler, ByteSharesFollowWeightsWhateverTheFrameSizes) {
    const std::array<int, kNumQueues> w = {10, 20, 30, 40, 1, 1, 1, 1};
    const std::array<uint32_t, kNumQueues> size = {64, 1500, 9000, 300, 64, 64, 64, 64};
    DwrrScheduler s(queues(w), 1024);
    std::array<uint64_t, kNumQueues> bytes{};
    uint64_t total = 0;
    while (total < 200'000'000) {
        int q = s.pick(0x0F, [&](int i) { return size[size_t(i)]; });
        ASSERT_GE(q, 0);
        ASSERT_LT(q, 4);
        s.charge(q, size[size_t(q)]);
        bytes[size_t(q)] += size[size_t(q)];
        total += size[size_t(q)];
    }
    for (int q = 0; q < 4; q++) {
        double share = double(bytes[size_t(q)]) / double(total);
        double want = w[size_t(q)] / 100.0;
        EXPECT_NEAR(share / want, 1.0, 0.01) << "queue " << q;
    }
}

TEST(DwrrScheduler, EmptiedQueueForfeitsItsDeficit) {
    DwrrScheduler s(queues({1, 1, 1, 1, 1, 1, 1, 1}), 1000);
    // Queue 0 alone with small frames: it accumulates credit, then empties.
    auto small = [](int) { return 100u; };
    int q = s.pick(0x01, small);
    ASSERT_EQ(q, 0);
    s.charge(0, 100);
    s.emptied(0);
    // Queues 0 and 1 now both backlogged with 1000-byte frames: strict alternation, queue 0
    // gets no leftover credit from before.
    auto big = [](int) { return 1000u; };
    std::array<int, 2> count{};
    for (int i = 0; i < 1000; i++) {
        q = s.pick(0x03, big);
        s.charge(q, 1000);
        count[size_t(q)]++;
    }
    EXPECT_EQ(count[0], 500);
    EXPECT_EQ(count[1], 500);
}

TEST(DwrrScheduler, JumboFrameInLowWeightQueueStillGoes) {
    DwrrScheduler s(queues({1, 255, 1, 1, 1, 1, 1, 1}), 64);
    // Queue 0 has weight 1 (64 B quantum) and a 9000 B frame: it takes 141 rounds to earn it,
    // but it is never starved.
    bool sent0 = false;
    for (int i = 0; i < 100000 && !sent0; i++) {
        int q = s.pick(0x03, [](int i) { return i == 0 ? 9000u : 64u; });
        s.charge(q, q == 0 ? 9000 : 64);
        sent0 = q == 0;
    }
    EXPECT_TRUE(sent0);
}

// order_of() against pick() and emptied() themselves (QosEgress::cut_through_mixed's order):
// random strict/DWRR plans and quanta, turns, deficits (mostly 0, as an idle port's) and queues'
// bytes (some beyond their quantum); where order_of() gives an order it is pick()'s, each DWRR
// queue's deficit covers its bytes at its pick, and served_in_order() leaves pick()'s turn and
// deficits; where it gives none, a DWRR queue's deficit is not 0 or its quantum short.
TEST(DwrrScheduler, OrderFromTheMasksIsPicksOrder) {
    std::mt19937 rng(7);
    auto pick_n = [&](uint32_t n) { return uint32_t(rng() % n); };
    unsigned ordered = 0, declined = 0;
    for (int trial = 0; trial < 20000; trial++) {
        std::array<int, kNumQueues> w{};
        for (int &x : w) x = pick_n(3) == 0 ? 0 : 1 + int(pick_n(pick_n(2) ? 2 : 255));
        const uint32_t quantum = pick_n(2) ? 1024 : 64;
        DwrrScheduler a(queues(w), quantum);
        a.set_turn(pick_n(kNumQueues));
        for (int q = 0; q < int(kNumQueues); q++)
            if (w[size_t(q)] && pick_n(5) == 0) a.set_deficit(q, pick_n(4000));
        const uint8_t eligible = uint8_t(1 + pick_n(255));
        std::array<uint32_t, kNumQueues> bytes{}, head{};
        for (unsigned q = 0; q < kNumQueues; q++) {
            bytes[q] = 1 + pick_n(pick_n(2) ? 3000 : 300);
            head[q] = 1 + pick_n(bytes[q]);
        }
        DwrrScheduler b = a;
        uint8_t order[kNumQueues];
        const unsigned n = b.order_of(eligible, [&](unsigned q) { return bytes[q]; }, order);
        if (!n) {
            declined++;
            bool short_or_owed = false;
            for (unsigned q = 0; q < kNumQueues; q++)
                if ((eligible >> q & 1) && w[q])
                    short_or_owed |= a.deficit(int(q)) != 0 || int64_t(quantum) * w[q] < bytes[q];
            EXPECT_TRUE(short_or_owed) << "trial " << trial;
            continue;
        }
        ordered++;
        b.served_in_order(eligible, order, n);
        unsigned k = 0;
        for (uint8_t left = eligible; left; k++) {
            const int q = a.pick(left, [&](int i) { return head[size_t(i)]; });
            ASSERT_LT(k, n) << "trial " << trial;
            ASSERT_EQ(q, order[k]) << "trial " << trial << ", pick " << k;
            if (w[size_t(q)]) {
                EXPECT_GE(a.deficit(q), int64_t(bytes[size_t(q)])) << "trial " << trial;
            }
            a.emptied(q);
            left = uint8_t(left & ~(1u << q));
        }
        EXPECT_EQ(k, n) << "trial " << trial;
        EXPECT_EQ(a.turn(), b.turn()) << "trial " << trial;
        for (int q = 0; q < int(kNumQueues); q++)
            EXPECT_EQ(a.deficit(q), b.deficit(q)) << "trial " << trial << ", queue " << q;
    }
    EXPECT_GT(ordered, 5000u);
    EXPECT_GT(declined, 2000u);
}

}  // namespace
}  // namespace rocesw
