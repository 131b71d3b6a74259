#include "sim/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>
#include <vector>

using namespace rocesw::sim;

TEST(EventQueue, PopsInTimeOrder) {
    EventQueue q;
    q.schedule(30, 1);
    q.schedule(10, 2);
    q.schedule(20, 3);
    EXPECT_EQ(q.pop().kind, 2);
    EXPECT_EQ(q.now(), 10u);
    EXPECT_EQ(q.pop().kind, 3);
    EXPECT_EQ(q.pop().kind, 1);
    EXPECT_TRUE(q.empty());
}

TEST(EventQueue, TiesRunInInsertionOrder) {
    EventQueue q;
    for (uint32_t i = 0; i < 100; ++i) q.schedule(5, 0, i);
    for (uint32_t i = 0; i < 100; ++i) EXPECT_EQ(q.pop().node, i);
}

TEST(EventQueue, MatchesSortByTimeThenSequenceUnderInterleavedPushPop) {
    EventQueue q;
    uint64_t x = 12345;
    auto rnd = [&] { return x = x * 6364136223846793005ull + 1442695040888963407ull; };
    std::vector<std::tuple<uint64_t, uint64_t>> expect;  // (time, seq) of everything popped
    std::vector<std::tuple<uint64_t, uint64_t>> got;
    std::vector<std::tuple<uint64_t, uint64_t>> pending;
    uint64_t seq = 0;
    for (int round = 0; round < 2000; ++round) {
        int pushes = int(rnd() >> 61);  // 0..7
        for (int i = 0; i < pushes; ++i) {
            uint64_t t = q.now() + (rnd() >> 58);  // small range: many ties
            q.schedule(t, 0, 0, 0, seq);
            pending.emplace_back(t, seq++);
        }
        int pops = int(rnd() >> 62);
        for (int i = 0; i < pops && !q.empty(); ++i) {
            auto it = std::min_element(pending.begin(), pending.end());
            expect.push_back(*it);
            pending.erase(it);
            Event e = q.pop();
            got.emplace_back(e.time, e.arg);
        }
    }
    EXPECT_EQ(got, expect);
}

TEST(EventQueue, CancelledEventsNeverPop) {
    EventQueue q;
    q.schedule(10, 1);
    auto id = q.schedule(20, 2);
    q.schedule(30, 3);
    EXPECT_TRUE(q.cancel(id));
    EXPECT_FALSE(q.cancel(id));  // twice
    EXPECT_EQ(q.pop().kind, 1);
    EXPECT_EQ(q.pop().kind, 3);
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.cancelled_pending(), 0u);
}

TEST(EventQueue, CancelOfAnEventAlreadyRunIsRefused) {
    EventQueue q;
    auto a = q.schedule(10, 1);
    auto b = q.schedule(10, 2);
    q.pop();
    EXPECT_FALSE(q.cancel(a));
    EXPECT_TRUE(q.cancel(b));
    EXPECT_TRUE(q.empty());
    EXPECT_FALSE(q.cancel(EventQueue::Id{99, 99}));  // never issued
}

TEST(EventQueue, SchedulingInThePastThrows) {
    EventQueue q;
    q.schedule(100, 0);
    q.pop();
    EXPECT_THROW(q.schedule(99, 0), std::logic_error);
    EXPECT_NO_THROW(q.schedule(100, 0));  // now is allowed
}

TEST(EventQueue, NanosecondViewRoundsDown) {
    EXPECT_EQ(ns(1999), 1u);
    EXPECT_EQ(from_ns(3), 3000u);
    EXPECT_EQ(kPsPerS, 1000000000000ull);
}
