// How close the online schedule comes to the offline optimum, and what its actions cost to generate.
//
// Part 1 sweeps every T from 1 to a limit for several slot counts s and prints, per range of T between
// binomial thresholds C(s+k,k), the largest ratio online/offline forward steps and the largest excess in
// steps. Both termination conventions come from one sweep: a loop that learns its end only at x_T costs
// exactly what a loop of T+1 steps costs when it knows its last step (checked in schedule_online_revolve_test),
// so its ratio is cost(T+1)/offline(T).
// Part 2 prints sample rows through the public cost() (the numbers docs/online.md quotes).
// Part 3 times action generation: ns per action of a replay of the online schedule against the offline
// revolve cursor for the same T and s (the baseline, measured in the same run), median of repeats.
//
//     ./build/bench/online_ratio [max_steps_per_s] [repeats]
#include "program_help.hpp"

#include "bench_util.hpp"

#include "remat/detail/online_placement.hpp"
#include "remat/schedule/binomial.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/revolve.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using remat::slot_t;
using remat::step_t;

constexpr std::uint64_t unlimited_work = UINT64_MAX;

std::uint64_t segment_cost(step_t length, slot_t slots)
{
    return length <= 1 ? 0 : remat::binomial::min_forward_steps(length, slots);
}

struct range_stats {
    std::uint64_t from = 0, to = 0; // T in (from, to]
    double worst = 1.0;             // online / offline, T known at x_{T-1}
    std::uint64_t worst_at = 0;
    std::uint64_t excess = 0;           // largest online - offline, in forward steps
    double worst_after = 1.0;           // T learned at x_T: cost(T+1) / offline(T)
    std::int64_t extra_max = INT64_MIN; // largest and smallest cost(T+1) - cost(T): the price of learning
    std::int64_t extra_min = INT64_MAX; // the end at x_T (negative where a store at x_T helps the reversal)
};

std::uint64_t fallbacks_seen = 0; // placement decisions that found no mergeable pair (docs: never)

// Every T in [1, limit]: the online cost from the snapshots held at x_{T-1}, reversal summed per segment.
std::vector<range_stats> sweep(slot_t s, step_t limit)
{
    std::vector<range_stats> ranges;
    std::uint64_t lo = 0;
    for (std::uint64_t k = 2;; ++k) {
        // One row per range C(s+k-1,k-1) < T <= C(s+k,k) up to k = 6, then one for the rest.
        const std::uint64_t hi = k <= 6 ? std::min<std::uint64_t>(remat::binomial::max_steps(s, k), limit)
                                        : static_cast<std::uint64_t>(limit);
        ranges.push_back(range_stats{lo, hi});
        if (hi >= static_cast<std::uint64_t>(limit))
            break;
        lo = hi;
    }
    remat::detail::online_placement place(s);
    std::vector<step_t> held;
    std::uint64_t full = 0; // reverse cost of all segments but the last
    std::uint64_t previous = 0;
    bool have_previous = false;
    auto range_of = [&](std::uint64_t t) -> range_stats& {
        for (auto& r : ranges)
            if (t <= r.to)
                return r;
        return ranges.back();
    };
    for (step_t p = 0; p <= limit; ++p) {
        // x_p is current: a loop with T = p+1 ends here (at_last_step); one with T = p learned it at x_p.
        std::uint64_t online = static_cast<std::uint64_t>(p);
        if (!held.empty())
            online += full + segment_cost(p - held.back(), s - static_cast<slot_t>(held.size()) + 1);
        const auto t = static_cast<std::uint64_t>(p) + 1;
        if (t <= static_cast<std::uint64_t>(limit)) {
            const std::uint64_t offline = remat::binomial::min_forward_steps(static_cast<step_t>(t), s);
            range_stats& r = range_of(t);
            const double ratio = offline == 0 ? 1.0 : static_cast<double>(online) / static_cast<double>(offline);
            if (ratio > r.worst) {
                r.worst = ratio;
                r.worst_at = t;
            }
            r.excess = std::max(r.excess, online - offline);
        }
        if (p >= 1) { // T = p learned at x_p costs `online`; T = p known in time cost `previous`
            const auto tp = static_cast<std::uint64_t>(p);
            const std::uint64_t offline = remat::binomial::min_forward_steps(p, s);
            range_stats& r = range_of(tp);
            if (offline > 0)
                r.worst_after = std::max(r.worst_after, static_cast<double>(online) / static_cast<double>(offline));
            if (have_previous) {
                const auto extra = static_cast<std::int64_t>(online) - static_cast<std::int64_t>(previous);
                r.extra_max = std::max(r.extra_max, extra);
                r.extra_min = std::min(r.extra_min, extra);
            }
        }
        previous = online;
        have_previous = true;
        if (p == limit)
            break;
        if (place.decide(p).store) {
            held = place.positions();
            full = 0;
            for (std::size_t i = 0; i + 1 < held.size(); ++i)
                full += segment_cost(held[i + 1] - held[i], s - static_cast<slot_t>(i));
        }
    }
    fallbacks_seen += place.fallbacks();
    return ranges;
}

std::string range_name(const range_stats& r, slot_t s)
{
    for (std::uint64_t k = 2; k <= 6; ++k)
        if (remat::binomial::max_steps(s, k) == r.to)
            return std::to_string(r.from) + " < T <= C(s+" + std::to_string(k) + "," + std::to_string(k) +
                   ") = " + std::to_string(r.to);
    return std::to_string(r.from) + " < T <= " + std::to_string(r.to);
}

// The reversal the schedule uses keeps every held snapshot; the best one could do with the same snapshots
// may give some up first (so that later segments get more slots). Dynamic program over which to keep.
std::uint64_t best_reversal_dropping(const std::vector<step_t>& held, step_t end, slot_t s)
{
    const std::size_t m = held.size();
    // best[j][i]: reverse [held[j], end) with held[j] kept as the i-th snapshot (i earlier ones kept).
    std::vector<std::vector<std::uint64_t>> best(m, std::vector<std::uint64_t>(m, 0));
    for (std::size_t j = m; j-- > 0;)
        for (std::size_t i = 0; i <= j; ++i) {
            const slot_t sigma = s - static_cast<slot_t>(i);
            std::uint64_t b = segment_cost(end - held[j], sigma);
            for (std::size_t k = j + 1; k < m; ++k)
                b = std::min(b, segment_cost(held[k] - held[j], sigma) + best[k][i + 1]);
            best[j][i] = b;
        }
    return m == 0 ? 0 : best[0][0];
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: online_ratio [max_steps_per_s] [repeats]\n"
            "How close the online schedule comes to the offline optimum, and what its actions cost to generate.\n"))
        return 0;
    const step_t limit = argc > 1 ? std::stoll(argv[1]) : 3'000'000;
    const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;

    std::printf("## 1. online / offline forward steps, every T up to min(%lld, C(s+k,k)) swept\n\n",
                static_cast<long long>(limit));
    std::printf("| s | range of T | worst ratio, T learned at x_{T-1} | at T | worst excess (steps) | worst ratio, "
                "T learned at x_T | extra steps for learning at x_T (min..max) |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (const slot_t s : {2, 4, 8, 16, 32}) {
        const std::uint64_t reach = remat::binomial::max_steps(s, s == 2 ? 200 : (s == 4 ? 40 : (s == 8 ? 14 : 7)));
        const auto ranges = sweep(s, static_cast<step_t>(std::min<std::uint64_t>(reach, limit)));
        for (const range_stats& r : ranges)
            std::printf("| %d | %s | %.6f | %s | %llu | %.6f | %lld..%lld |\n", static_cast<int>(s),
                        range_name(r, s).c_str(), r.worst, r.worst_at == 0 ? "-" : std::to_string(r.worst_at).c_str(),
                        static_cast<unsigned long long>(r.excess), r.worst_after, static_cast<long long>(r.extra_min),
                        static_cast<long long>(r.extra_max));
    }

    std::printf("\nplacement decisions without a mergeable pair (fallbacks) in these sweeps: %llu\n",
                static_cast<unsigned long long>(fallbacks_seen));

    std::printf("\n## 2. sample loops through online_revolve::cost()\n\n");
    std::printf("| s | T | offline | online | ratio | learned at x_T | ratio |\n|---|---|---|---|---|---|---|\n");
    for (const slot_t s : {4, 8, 16, 32}) {
        const remat::online_revolve plan(s);
        std::vector<step_t> samples;
        for (std::uint64_t k = 2; k <= 5; ++k) {
            const std::uint64_t b = remat::binomial::max_steps(s, k);
            samples.push_back(static_cast<step_t>(b));
            samples.push_back(static_cast<step_t>(b + b / 3));
        }
        samples.push_back(1'000'000);
        samples.push_back(100'000'000);
        for (const step_t t : samples) {
            const std::uint64_t offline = remat::binomial::min_forward_steps(t, s);
            // Some samples replay more than cost()'s default work limit: the bench lifts it.
            const std::uint64_t at = plan.cost(t, remat::online_end::at_last_step, unlimited_work).forward_steps;
            const std::uint64_t after = plan.cost(t, remat::online_end::after_last_step, unlimited_work).forward_steps;
            std::printf("| %d | %lld | %llu | %llu | %.6f | %llu | %.6f |\n", static_cast<int>(s),
                        static_cast<long long>(t), static_cast<unsigned long long>(offline),
                        static_cast<unsigned long long>(at), static_cast<double>(at) / static_cast<double>(offline),
                        static_cast<unsigned long long>(after),
                        static_cast<double>(after) / static_cast<double>(offline));
        }
    }

    std::printf("\n## 3. would giving up snapshots before the reverse sweep help?\n\n");
    std::printf("| s | T swept | T where it helps | largest saving (forward steps) |\n|---|---|---|---|\n");
    for (const slot_t s : {2, 3, 4, 6, 8, 12}) {
        const auto last = static_cast<step_t>(std::min<std::uint64_t>(remat::binomial::max_steps(s, 5), 4000));
        remat::detail::online_placement place(s);
        std::uint64_t helps = 0, saving = 0;
        for (step_t p = 0; p < last; ++p) { // x_p current: the loop may end with step p
            const std::vector<step_t> held = place.positions();
            std::uint64_t kept = 0;
            for (std::size_t i = 0; i < held.size(); ++i)
                kept += segment_cost((i + 1 < held.size() ? held[i + 1] : p) - held[i], s - static_cast<slot_t>(i));
            const std::uint64_t dropping = best_reversal_dropping(held, p, s);
            if (dropping < kept) {
                ++helps;
                saving = std::max(saving, kept - dropping);
            }
            (void)place.decide(p);
        }
        std::printf("| %d | 1..%lld | %llu | %llu |\n", static_cast<int>(s), static_cast<long long>(last),
                    static_cast<unsigned long long>(helps), static_cast<unsigned long long>(saving));
    }

    std::printf("\n## 4. action generation, ns per action (median of %d), offline revolve as the baseline\n\n",
                repeats);
    std::printf("| T | s | revolve actions | revolve ns/action | online actions | online ns/action | ratio |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (const slot_t s : {10, 100, 1000}) {
        const step_t t = 10'000'000;
        std::uint64_t offline_actions = 0, online_actions = 0;
        const double offline = remat::bench::ns_per_action(remat::revolve(t, s), repeats, offline_actions);
        const double online = remat::bench::ns_per_action(remat::online_revolve(s).replay(t), repeats, online_actions);
        std::printf("| %lld | %d | %llu | %.2f | %llu | %.2f | %.2f |\n", static_cast<long long>(t),
                    static_cast<int>(s), static_cast<unsigned long long>(offline_actions), offline,
                    static_cast<unsigned long long>(online_actions), online, online / offline);
    }
    const auto cost_runs = remat::bench::time_runs(repeats, [] {
        remat::bench::keep(remat::online_revolve(64)
                               .cost(1'000'000'000, remat::online_end::at_last_step, unlimited_work)
                               .forward_steps);
    });
    std::printf("\nonline_revolve(64).cost(1e9): %.3f s (median), %llu store decisions replayed (estimate)\n",
                remat::bench::median(cost_runs),
                static_cast<unsigned long long>(remat::online_revolve(64).replay_decisions(1'000'000'000)));
    return 0;
}
