#include "roce/collective.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>

using namespace rocesw::roce;

TEST(Collective, RingAllReduceStepsAndChunks) {
    CollectiveSpec s;
    s.hosts = {10, 11, 12, 13};
    s.bytes_per_rank = 10;  // chunks 3, 3, 2, 2
    auto job = make_collective(s);
    ASSERT_EQ(job.phases.size(), 6u);  // 2 (n - 1)
    ASSERT_EQ(job.flows.size(), 24u);
    for (const auto &p : job.phases) {
        uint64_t sum = 0;
        for (uint32_t f = p.first_flow; f < p.first_flow + p.flow_count; ++f) {
            const auto &x = job.flows[f];
            EXPECT_EQ(x.dst - 10, (x.src - 10 + 1) % 4);  // to the next rank
            sum += x.size_bytes;
            EXPECT_EQ(job.phase_of(f), uint32_t(&p - job.phases.data()));
        }
        EXPECT_EQ(sum, 10u) << "step " << p.step;  // every chunk once per step
    }
    // Step 0: rank i sends chunk i.
    EXPECT_EQ(job.flows[0].size_bytes, 3u);
    EXPECT_EQ(job.flows[3].size_bytes, 2u);
}

TEST(Collective, AllToAllSchedules) {
    CollectiveSpec s;
    s.kind = Collective::all_to_all;
    s.hosts = {0, 1, 2, 3};
    s.bytes_per_rank = 300;
    auto sim = make_collective(s);
    ASSERT_EQ(sim.phases.size(), 1u);
    EXPECT_EQ(sim.flows.size(), 12u);
    for (auto &f : sim.flows) EXPECT_EQ(f.size_bytes, 100u);
    s.a2a = AllToAllSchedule::pairwise;
    auto pw = make_collective(s);
    ASSERT_EQ(pw.phases.size(), 3u);
    EXPECT_EQ(pw.phases[1].flow_count, 4u);
    EXPECT_EQ(pw.flows[pw.phases[1].first_flow].dst, 2u);  // step 2: rank 0 -> rank 2
    s.hosts = {0, 1, 0};
    EXPECT_THROW(make_collective(s), std::invalid_argument);
    s.hosts = {0};
    EXPECT_THROW(make_collective(s), std::invalid_argument);
}

namespace {
// Runs a job where every flow's message arrives `recv_ns` after it starts and its last ACK
// `sent_ns` after it starts, except the flows `slow` says (flow -> extra ns on both).
JobTracker run(const CollectiveJob &job, uint64_t recv_ns, uint64_t sent_ns,
               std::map<uint32_t, uint64_t> slow = {},
               std::map<uint32_t, uint64_t> *started = nullptr) {
    JobTracker tr(job, 0);
    std::multimap<uint64_t, std::pair<uint32_t, bool>> events;  // t -> (flow, sent?)
    auto post = [&](const std::vector<JobTracker::Start> &v) {
        for (const auto &st : v) {
            if (started) (*started)[st.flow] = st.at_ns;
            const uint64_t extra = slow.count(st.flow) ? slow[st.flow] : 0;
            events.insert({st.at_ns + recv_ns + extra, {st.flow, false}});
            events.insert({st.at_ns + sent_ns + extra, {st.flow, true}});
        }
    };
    post(tr.initial());
    while (!events.empty()) {
        auto [t, e] = *events.begin();
        events.erase(events.begin());
        post(e.second ? tr.on_sent(e.first, t) : tr.on_received(e.first, t));
    }
    return tr;
}
}  // namespace

TEST(Collective, StepsStartAfterTheRanksSendAndReceivePlusGaps) {
    CollectiveSpec s;
    s.hosts = {0, 1, 2, 3};
    s.bytes_per_rank = 1000;
    s.iterations = 2;
    s.compute_gap_ns = 10'000;
    s.step_gap_ns = 1'000;
    auto job = make_collective(s);
    ASSERT_EQ(job.phases.size(), 12u);
    JobTracker tr0(job, 0);
    auto first = tr0.initial();
    ASSERT_EQ(first.size(), 4u);
    EXPECT_EQ(first[0].at_ns, 10'000u);
    // Every message arrives after 4 us, its last ACK after 5 us: a step takes 5 us.
    auto tr = run(job, 4'000, 5'000);
    ASSERT_TRUE(tr.done());
    // Iteration: 10 us compute + 6 steps x 5 us + 5 gaps x 1 us = 45 us.
    EXPECT_EQ(tr.iteration_end_ns()[0], 45'000u);
    EXPECT_EQ(tr.iteration_end_ns()[1], 90'000u);
    EXPECT_EQ(tr.completion_ns(), 90'000u);
    EXPECT_THROW(tr.on_sent(0, 1), std::logic_error);
    EXPECT_THROW(tr.on_received(0, 1), std::logic_error);
}

TEST(Collective, ASlowTransferDelaysItsEndsFirstThenTheRing) {
    // Ring 0 -> 1 -> 2 -> 3 -> 0; step 0's flow 0 -> 1 (flow 0) takes 20 us more.
    CollectiveSpec s;
    s.hosts = {0, 1, 2, 3};
    s.bytes_per_rank = 1000;
    auto job = make_collective(s);
    std::map<uint32_t, uint64_t> started;
    auto tr = run(job, 4'000, 5'000, {{0, 20'000}}, &started);
    ASSERT_TRUE(tr.done());
    const uint32_t step1 = job.phases[1].first_flow;  // rank i's step-1 flow is step1 + i
    // Rank 0 waits for its own send (25 us), rank 1 for its receive (24 us); ranks 2 and 3
    // are not held by flow 0 and start step 1 at 5 us.
    EXPECT_EQ(started[step1 + 0], 25'000u);
    EXPECT_EQ(started[step1 + 1], 24'000u);
    EXPECT_EQ(started[step1 + 2], 5'000u);
    EXPECT_EQ(started[step1 + 3], 5'000u);
    // Step 2: rank 2 waits for rank 1's step-1 message (24 + 4 us); rank 3 for nothing slow.
    const uint32_t step2 = job.phases[2].first_flow;
    EXPECT_EQ(started[step2 + 2], 28'000u);
    EXPECT_EQ(started[step2 + 3], 10'000u);
}

TEST(Collective, TrackerRefusesAFlowWhosePhaseHasNotStarted) {
    CollectiveSpec s;
    s.hosts = {0, 1};
    auto job = make_collective(s);
    JobTracker tr(job, 0);
    EXPECT_THROW(tr.on_sent(job.phases[1].first_flow, 5), std::logic_error);
    EXPECT_THROW(tr.on_received(job.phases[1].first_flow, 5), std::logic_error);
}

TEST(Collective, RunnerMapsEngineFlowsAndWritesJobsCsv) {
    JobRunner r;
    CollectiveSpec s;
    s.hosts = {5, 6};
    s.bytes_per_rank = 100;  // 2 steps, one flow each way per step
    r.add(s, 1000);
    auto st = r.initial();
    ASSERT_EQ(st.size(), 2u);
    uint32_t next_id = 7;  // the engine's own flow ids (other flows came first)
    std::map<uint32_t, uint32_t> id_of;
    for (const auto &x : st) {
        EXPECT_EQ(x.at_ns, 1000u);
        id_of[x.flow] = next_id;
        r.bind(next_id++, x.job, x.flow);
    }
    EXPECT_TRUE(r.on_sent(3, 1500).empty());  // not a job flow
    EXPECT_TRUE(r.on_received(id_of[0], 1400).empty());
    EXPECT_TRUE(r.on_sent(id_of[0], 1500).empty());  // rank 5 still waits for its receive
    auto more = r.on_sent(id_of[1], 1500);           // rank 6: sent, and received at 1400
    ASSERT_EQ(more.size(), 1u);
    auto rank5 = r.on_received(id_of[1], 1450);  // rank 5: received, and sent at 1500
    ASSERT_EQ(rank5.size(), 1u);
    more.push_back(rank5[0]);
    EXPECT_FALSE(r.done());
    for (const auto &x : more) {
        EXPECT_EQ(x.at_ns, 1500u);
        r.bind(next_id++, x.job, x.flow);
    }
    r.on_received(9, 2000);
    r.on_received(10, 2000);
    r.on_sent(9, 2100);
    r.on_sent(10, 2200);
    EXPECT_TRUE(r.done());
    auto t = r.totals();
    EXPECT_EQ(t.jobs_completed, 1u);
    EXPECT_EQ(t.iterations_completed, 1u);
    char buf[512] = {};
    std::FILE *f = fmemopen(buf, sizeof(buf), "w");
    r.write_csv(f);
    std::fclose(f);
    EXPECT_EQ(std::string(buf),
              "job,kind,ranks,bytes_per_rank,iteration,start_ns,end_ns,duration_ns\n"
              "0,ring_allreduce,2,100,0,1000,2200,1200\n"
              "0,ring_allreduce,2,100,all,1000,2200,1200\n");
}
