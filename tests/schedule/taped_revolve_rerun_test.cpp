// taped_revolve with rerun_units: a reverse from a state holds its re-run's graph (a tape, as PyTorch holds
// it) while it runs. Optimal against the exhaustive search priced the same way (T <= 8) and against a full
// scan of the recursion without the split search's pruning; legal and within its units under the
// independent simulator, whose peak it reports; revolve's plan with the units the re-runs leave when no tape
// fits; and checkpoint_sequential's own schedule on 1000 GRU steps, priced by the same simulator, fits the
// units it measures in PyTorch and re-runs no fewer steps than the plan.
#define BOOST_TEST_MODULE taped_revolve_rerun
#include <boost/test/unit_test.hpp>

#include "expect_kind.hpp"
#include "taped_plan_check.hpp"
#include "taped_search.hpp"
#include "taped_simulator.hpp"

#include "remat/error.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/taped_revolve.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

using namespace remat;

namespace {

taped_revolve held(step_t t, slot_t units, slot_t tape_units, slot_t rerun_units)
{
    return taped_revolve(t, units, tape_units, 1.0, 1.0, taped_revolve::default_work_limit, rerun_units);
}

// checkpoint_sequential's schedule with segments of `length` steps as remat actions: x_s of every segment but
// the last stored; the last run taped but for its last step; each earlier segment's input restored and freed
// (its tape holds it), its steps taped but the last, which its reverse re-runs.
std::vector<action> segments_actions(step_t t, step_t length)
{
    std::vector<action> out;
    std::vector<step_t> starts;
    for (step_t s = 0; s < t; s += length)
        starts.push_back(s);
    const auto taped_segment = [&](step_t from, step_t to) {
        for (step_t k = from; k + 1 < to; ++k)
            out.emplace_back(advance{k, k + 1, true});
        out.emplace_back(reverse{to - 1});
        for (step_t k = to - 1; k-- > from;)
            out.emplace_back(reverse{k});
    };
    for (std::size_t i = 0; i + 1 < starts.size(); ++i) {
        out.emplace_back(store{0, static_cast<slot_t>(i), starts[i]});
        out.emplace_back(advance{starts[i], starts[i + 1], false});
    }
    taped_segment(starts.back(), t);
    for (std::size_t i = starts.size() - 1; i-- > 0;) {
        out.emplace_back(restore{0, static_cast<slot_t>(i), starts[i]});
        out.emplace_back(free_slot{0, static_cast<slot_t>(i)});
        taped_segment(starts[i], starts[i + 1]);
    }
    return out;
}

struct action_list {
    step_t t;
    std::vector<action> actions;
    [[nodiscard]] step_t steps() const { return t; }
    [[nodiscard]] auto begin() const { return actions.begin(); }
    [[nodiscard]] auto end() const { return actions.end(); }
};

} // namespace

BOOST_AUTO_TEST_CASE(every_plan_up_to_eight_steps_is_as_good_as_exhaustive_search)
{
    int compared = 0;
    for (step_t t = 1; t <= 8; ++t)
        for (slot_t u = 1; u <= 3; ++u)
            for (slot_t w : {slot_t{1}, (u + 1) / 2, u}) {
                const slot_t least = t == 1 ? std::max<slot_t>(w, 1) : w + 1;
                for (slot_t m = least; m <= (t - 1) * u + w + 1; ++m) {
                    if (t >= 7 && m > least + 2 && m < (t - 1) * u + w - 1)
                        continue; // the long searches are the slow ones: a few budgets, the edges included
                    const taped_revolve plan = held(t, m, u, w);
                    const auto best = test::fewest_taped_evaluations(t, m, u, w);
                    BOOST_TEST_REQUIRE(best.has_value(), "T=" << t << " M=" << m << " u=" << u << " w=" << w);
                    BOOST_TEST_REQUIRE(plan.evaluations() == *best,
                                       "T=" << t << " M=" << m << " u=" << u << " w=" << w);
                    test::replay_and_check(plan, m);
                    ++compared;
                }
                // Below the least no schedule fits, and the planner says so.
                if (least > 1) {
                    BOOST_TEST_REQUIRE(!test::fewest_taped_evaluations(t, least - 1, u, w).has_value(),
                                       "T=" << t << " M=" << least - 1 << " u=" << u << " w=" << w);
                    test::refused_naming<capacity_error>([&] { return held(t, least - 1, u, w); }, "expected at least");
                }
            }
    BOOST_TEST(compared > 150);
}

BOOST_AUTO_TEST_CASE(the_pruned_split_search_finds_what_a_full_scan_finds)
{
    // The recursion with every split point tried (no pruning) and E(1, b) = 1 only where b >= w.
    constexpr step_t t_max = 100;
    constexpr slot_t m_max = 45;
    constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();
    for (slot_t u : {1, 2, 3, 6})
        for (slot_t w : {u, slot_t{1}}) {
            std::vector<std::vector<std::uint64_t>> e(m_max + 1, std::vector<std::uint64_t>(t_max + 1, none));
            for (slot_t b = 0; b <= m_max; ++b) {
                auto& row = e[static_cast<std::size_t>(b)];
                row[1] = b >= w ? 1 : none;
                for (step_t l = 2; l <= t_max; ++l) {
                    auto& best = row[static_cast<std::size_t>(l)];
                    if (b >= u && e[static_cast<std::size_t>(b - u)][static_cast<std::size_t>(l - 1)] != none)
                        best = 1 + e[static_cast<std::size_t>(b - u)][static_cast<std::size_t>(l - 1)];
                    for (step_t j = 1; b >= 1 && j < l; ++j) {
                        const std::uint64_t left = row[static_cast<std::size_t>(j)];
                        const std::uint64_t right = e[static_cast<std::size_t>(b - 1)][static_cast<std::size_t>(l - j)];
                        if (left != none && right != none)
                            best = std::min(best, static_cast<std::uint64_t>(j) + left + right);
                    }
                }
            }
            for (step_t t = 2; t <= t_max; t += 7)
                for (slot_t m = w + 1; m <= m_max; ++m) {
                    const taped_revolve plan = held(t, m, u, w);
                    BOOST_TEST_REQUIRE(plan.evaluations() ==
                                           e[static_cast<std::size_t>(m)][static_cast<std::size_t>(t)],
                                       "T=" << t << " M=" << m << " u=" << u << " w=" << w);
                    test::replay_and_check(plan, m);
                }
        }
}

BOOST_AUTO_TEST_CASE(when_no_tape_fits_beside_a_re_run_it_is_revolve_with_the_units_left)
{
    for (step_t t = 2; t <= 120; t += 7)
        for (slot_t w : {1, 4})
            for (slot_t m = w + 1; m <= w + 12; ++m) {
                const taped_revolve plan = held(t, m, std::max(m - w + 1, w), w); // a tape beside a re-run exceeds m
                const std::uint64_t binomial = revolve(t, m - w).cost().forward_steps;
                BOOST_TEST_REQUIRE(plan.evaluations() == binomial + static_cast<std::uint64_t>(t),
                                   "T=" << t << " M=" << m);
                BOOST_TEST_REQUIRE(plan.cost().taped_steps == 0u);
                test::replay_and_check(plan, m);
            }
}

BOOST_AUTO_TEST_CASE(no_step_runs_twice_exactly_from_every_tape_but_the_last_and_a_re_run)
{
    for (step_t t : {2, 5, 50, 300})
        for (slot_t u : {1, 3, 7}) {
            const slot_t enough = (t - 1) * u + u;
            BOOST_TEST_REQUIRE(held(t, enough, u, u).evaluations() == static_cast<std::uint64_t>(t));
            test::replay_and_check(held(t, enough, u, u), enough);
            if (enough - 1 >= u + 1) // else below the least (refused, above)
                BOOST_TEST_REQUIRE(held(t, enough - 1, u, u).evaluations() > static_cast<std::uint64_t>(t), "T=" << t);
        }
}

BOOST_AUTO_TEST_CASE(a_thousand_gru_steps_within_checkpoint_sequentials_measured_units)
{
    // bench/python/loop_bench.py's loop: a GRUCell step's tape is 7 states (its input among them), and so is
    // the graph of a step re-run for its reverse. Its segments of L steps measure, in PyTorch, the units this
    // replay of their schedule holds at its peak (254 states at L = 32, 709 at L = 100); at those units the
    // plan fits and re-runs no more steps than they do (every segment's but the last's).
    constexpr step_t t = 1000;
    constexpr slot_t u = 7;
    for (const step_t length : {10, 20, 32, 50, 100, 200}) {
        const action_list segments{t, segments_actions(t, length)};
        test::taped_counts n;
        const auto error = test::replay_taped(segments, 10'000, u, n, u);
        BOOST_TEST_REQUIRE(!error.has_value(), error.value_or(""));
        const step_t last = t - length * ((t - 1) / length); // the last segment's steps, run once
        BOOST_TEST_REQUIRE(n.evaluations() == static_cast<std::uint64_t>(2 * t - last), "L=" << length);
        if (length == 32)
            BOOST_TEST(n.peak_units == 254);
        if (length == 100)
            BOOST_TEST(n.peak_units == 709);
        const taped_revolve plan = held(t, n.peak_units, u, u);
        BOOST_TEST_REQUIRE(plan.evaluations() <= n.evaluations(), "L=" << length << ": " << plan.evaluations() << " > "
                                                                       << n.evaluations() << " at " << n.peak_units
                                                                       << " units");
        test::replay_and_check(plan, n.peak_units);
    }
}

BOOST_AUTO_TEST_CASE(a_negative_re_run_is_refused_naming_it)
{
    test::refused_naming([] { return held(10, 30, 2, -1); }, "rerun_units = -1");
    test::refused_naming([] { return held(10, 30, 2, 3); }, "rerun_units = 3");
    test::refused_naming<capacity_error>([] { return held(10, 2, 2, 2); }, "expected at least 3");
    // one step: no snapshot beside the re-run, x_0's is its input
    test::refused_naming<capacity_error>([] { return held(1, 1, 2, 2); },
                                         "expected at least 2: x_0's snapshot, inside");
}
