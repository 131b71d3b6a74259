#include "roce/collective.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace rocesw::roce {

const char *collective_name(Collective c) {
    return c == Collective::ring_allreduce ? "ring_allreduce" : "all_to_all";
}

CollectiveJob make_collective(const CollectiveSpec &s) {
    const uint32_t n = uint32_t(s.hosts.size());
    if (n < 2) throw std::invalid_argument("collective: needs at least two hosts");
    if (s.iterations == 0) throw std::invalid_argument("collective: iterations must be >= 1");
    {
        auto sorted = s.hosts;
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
            throw std::invalid_argument("collective: a host is listed twice");
    }
    CollectiveJob job;
    job.spec = s;
    // Share `total` over `parts` chunks: the first total % parts get one byte more.
    auto share = [](uint64_t total, uint64_t parts, uint64_t i) {
        return total / parts + (i < total % parts ? 1 : 0);
    };
    for (uint32_t it = 0; it < s.iterations; ++it) {
        std::vector<std::vector<std::pair<uint32_t, uint32_t>>> steps;  // (src rank, dst rank)
        std::vector<std::vector<uint64_t>> sizes;
        if (s.kind == Collective::ring_allreduce) {
            for (uint32_t st = 0; st < 2 * (n - 1); ++st) {
                std::vector<std::pair<uint32_t, uint32_t>> v;
                std::vector<uint64_t> sz;
                for (uint32_t i = 0; i < n; ++i) {
                    v.emplace_back(i, (i + 1) % n);
                    // The chunk rank i sends: (i - st) mod n in reduce-scatter step st,
                    // (i + 1 - st') mod n in all-gather step st' = st - (n - 1).
                    const uint32_t c =
                        st < n - 1 ? (i + n - st) % n : (i + 1 + n - (st - (n - 1))) % n;
                    sz.push_back(share(s.bytes_per_rank, n, c));
                }
                steps.push_back(std::move(v));
                sizes.push_back(std::move(sz));
            }
        } else if (s.a2a == AllToAllSchedule::simultaneous) {
            std::vector<std::pair<uint32_t, uint32_t>> v;
            std::vector<uint64_t> sz;
            for (uint32_t i = 0; i < n; ++i)
                for (uint32_t k = 1; k < n; ++k) {
                    v.emplace_back(i, (i + k) % n);
                    sz.push_back(share(s.bytes_per_rank, n - 1, k - 1));
                }
            steps.push_back(std::move(v));
            sizes.push_back(std::move(sz));
        } else {
            for (uint32_t k = 1; k < n; ++k) {
                std::vector<std::pair<uint32_t, uint32_t>> v;
                std::vector<uint64_t> sz;
                for (uint32_t i = 0; i < n; ++i) {
                    v.emplace_back(i, (i + k) % n);
                    sz.push_back(share(s.bytes_per_rank, n - 1, k - 1));
                }
                steps.push_back(std::move(v));
                sizes.push_back(std::move(sz));
            }
        }
        for (uint32_t st = 0; st < steps.size(); ++st) {
            CollectivePhase p;
            p.iteration = it;
            p.step = st;
            p.gap_ns = st == 0 ? s.compute_gap_ns : s.step_gap_ns;
            p.first_flow = uint32_t(job.flows.size());
            for (size_t j = 0; j < steps[st].size(); ++j) {
                CollectiveFlow f;
                f.src = s.hosts[steps[st][j].first];
                f.dst = s.hosts[steps[st][j].second];
                f.size_bytes = sizes[st][j] == 0 ? 1 : sizes[st][j];
                job.flows.push_back(f);
            }
            p.flow_count = uint32_t(job.flows.size()) - p.first_flow;
            job.phases.push_back(p);
        }
    }
    return job;
}

uint32_t CollectiveJob::phase_of(uint32_t flow) const {
    auto it =
        std::upper_bound(phases.begin(), phases.end(), flow,
                         [](uint32_t f, const CollectivePhase &p) { return f < p.first_flow; });
    return uint32_t(it - phases.begin()) - 1;
}

JobTracker::JobTracker(const CollectiveJob &job, uint64_t job_start_ns)
    : job_(job),
      start_ns_(job_start_ns),
      n_(job.spec.hosts.size()),
      phases_(job.phases.size()),
      pending_(n_ * phases_, 0),
      last_(n_ * phases_, 0),
      at_(n_, 0),
      ready_(n_, job_start_ns + (job.phases.empty() ? 0 : job.phases[0].gap_ns)),
      sent_(job.flows.size(), 0),
      received_(job.flows.size(), 0),
      ranks_done_(phases_, 0),
      phase_end_(phases_, 0),
      iteration_end_(job.spec.iterations, 0) {
    for (size_t p = 0; p < phases_; ++p) {
        const CollectivePhase &ph = job.phases[p];
        for (uint32_t f = ph.first_flow; f < ph.first_flow + ph.flow_count; ++f) {
            pending_[rank_of(job.flows[f].src) * phases_ + p]++;
            pending_[rank_of(job.flows[f].dst) * phases_ + p]++;
        }
    }
}

uint32_t JobTracker::rank_of(uint32_t host) const {
    const auto &h = job_.spec.hosts;
    return uint32_t(std::find(h.begin(), h.end(), host) - h.begin());
}

void JobTracker::start_phase(uint32_t rank, uint32_t phase, uint64_t at_ns,
                             std::vector<Start> &out) const {
    const CollectivePhase &ph = job_.phases[phase];
    const uint32_t host = job_.spec.hosts[rank];
    for (uint32_t f = ph.first_flow; f < ph.first_flow + ph.flow_count; ++f)
        if (job_.flows[f].src == host) out.push_back({f, at_ns});
}

std::vector<JobTracker::Start> JobTracker::initial() const {
    std::vector<Start> out;
    if (phases_ == 0) return out;
    for (uint32_t r = 0; r < n_; ++r) start_phase(r, 0, ready_[r], out);
    // The flows of phase 0 in flow order (every rank's at once).
    std::sort(out.begin(), out.end(),
              [](const Start &a, const Start &b) { return a.flow < b.flow; });
    return out;
}

std::vector<JobTracker::Start> JobTracker::on_sent(uint32_t flow, uint64_t t_ns) {
    if (flow >= sent_.size() || sent_[flow])
        throw std::logic_error("JobTracker: flow sent twice or unknown");
    const uint32_t rank = rank_of(job_.flows[flow].src);
    if (at_[rank] < job_.phase_of(flow))
        throw std::logic_error("JobTracker: flow sent before its phase could start");
    sent_[flow] = 1;
    return on_event(flow, rank, t_ns);
}

std::vector<JobTracker::Start> JobTracker::on_received(uint32_t flow, uint64_t t_ns) {
    if (flow >= received_.size() || received_[flow])
        throw std::logic_error("JobTracker: flow received twice or unknown");
    const uint32_t src_rank = rank_of(job_.flows[flow].src);
    if (at_[src_rank] < job_.phase_of(flow))
        throw std::logic_error("JobTracker: flow received before its phase could start");
    received_[flow] = 1;
    return on_event(flow, rank_of(job_.flows[flow].dst), t_ns);
}

std::vector<JobTracker::Start> JobTracker::on_event(uint32_t flow, uint32_t rank, uint64_t t_ns) {
    const uint32_t p = job_.phase_of(flow);
    const size_t k = rank * phases_ + p;
    pending_[k]--;
    last_[k] = std::max(last_[k], t_ns);
    std::vector<Start> out;
    // The rank moves on while its current phase has nothing left (a receive of a later phase
    // may have come first: it waits in that phase's count).
    while (at_[rank] < phases_ && pending_[rank * phases_ + at_[rank]] == 0) {
        const uint32_t q = at_[rank];
        const uint64_t end = std::max(last_[rank * phases_ + q], ready_[rank]);
        phase_end_[q] = std::max(phase_end_[q], end);
        if (++ranks_done_[q] == n_) {
            ++phases_done_;
            if (q + 1 == phases_ || job_.phases[q + 1].iteration != job_.phases[q].iteration)
                iteration_end_[job_.phases[q].iteration] = phase_end_[q];
        }
        at_[rank] = q + 1;
        if (q + 1 < phases_) {
            ready_[rank] = end + job_.phases[q + 1].gap_ns;
            start_phase(rank, q + 1, ready_[rank], out);
        }
    }
    return out;
}

uint32_t JobRunner::add(const CollectiveSpec &spec, uint64_t start_ns) {
    jobs_.push_back(make_collective(spec));
    trackers_.emplace_back(jobs_.back(), start_ns);
    return uint32_t(jobs_.size() - 1);
}

std::vector<JobRunner::Start> JobRunner::tag(uint32_t job, std::vector<JobTracker::Start> s) const {
    std::vector<Start> out;
    out.reserve(s.size());
    for (const auto &x : s) out.push_back({job, x.flow, x.at_ns});
    return out;
}

std::vector<JobRunner::Start> JobRunner::initial() const {
    std::vector<Start> out;
    for (uint32_t j = 0; j < trackers_.size(); ++j) {
        auto s = tag(j, trackers_[j].initial());
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}

void JobRunner::bind(uint32_t engine_flow, uint32_t job, uint32_t flow) {
    if (bind_.size() <= engine_flow) bind_.resize(engine_flow + 1);
    bind_[engine_flow] = {job, flow, true};
}

std::vector<JobRunner::Start> JobRunner::on_sent(uint32_t engine_flow, uint64_t t_ns) {
    const Binding *b = binding(engine_flow);
    return b ? tag(b->job, trackers_[b->job].on_sent(b->flow, t_ns)) : std::vector<Start>{};
}

std::vector<JobRunner::Start> JobRunner::on_received(uint32_t engine_flow, uint64_t t_ns) {
    const Binding *b = binding(engine_flow);
    return b ? tag(b->job, trackers_[b->job].on_received(b->flow, t_ns)) : std::vector<Start>{};
}

bool JobRunner::done() const {
    for (const auto &t : trackers_)
        if (!t.done()) return false;
    return true;
}

JobRunner::Totals JobRunner::totals() const {
    Totals t;
    for (const auto &tr : trackers_) {
        t.jobs++;
        t.jobs_completed += tr.done();
        t.iterations += tr.iteration_end_ns().size();
        for (uint64_t e : tr.iteration_end_ns()) t.iterations_completed += e != 0;
    }
    return t;
}

void JobRunner::write_csv(std::FILE *f) const {
    std::fprintf(f, "job,kind,ranks,bytes_per_rank,iteration,start_ns,end_ns,duration_ns\n");
    for (size_t j = 0; j < jobs_.size(); j++) {
        const CollectiveSpec &sp = jobs_[j].spec;
        const JobTracker &tr = trackers_[j];
        const char *kind = collective_name(sp.kind);
        uint64_t prev = tr.start_ns();
        for (size_t i = 0; i < tr.iteration_end_ns().size(); i++) {
            const uint64_t e = tr.iteration_end_ns()[i];
            if (!e) break;
            std::fprintf(f, "%zu,%s,%zu,%lu,%zu,%lu,%lu,%lu\n", j, kind, sp.hosts.size(),
                         (unsigned long)sp.bytes_per_rank, i, (unsigned long)prev, (unsigned long)e,
                         (unsigned long)(e - prev));
            prev = e;
        }
        const uint64_t c = tr.completion_ns();
        std::fprintf(f, "%zu,%s,%zu,%lu,all,%lu,%lu,%lu\n", j, kind, sp.hosts.size(),
                     (unsigned long)sp.bytes_per_rank, (unsigned long)tr.start_ns(),
                     (unsigned long)c, (unsigned long)(c ? c - tr.start_ns() : 0));
    }
}

void JobRunner::write_flows_csv(std::FILE *f) const {
    std::fprintf(f, "flow,job,job_flow,iteration,step,size_bytes\n");
    for (size_t i = 0; i < bind_.size(); i++) {
        if (!bind_[i].bound) continue;
        const CollectiveJob &j = jobs_[bind_[i].job];
        const CollectivePhase &p = j.phases[j.phase_of(bind_[i].flow)];
        std::fprintf(f, "%zu,%u,%u,%u,%u,%lu\n", i, bind_[i].job, bind_[i].flow, p.iteration,
                     p.step, (unsigned long)j.flows[bind_[i].flow].size_bytes);
    }
}

}  // namespace rocesw::roce
