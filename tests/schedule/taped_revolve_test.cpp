// Schedules with tapes: optimal against an exhaustive search of every action sequence (T <= 8), legal
// and within their memory under an independent simulator whose counts equal the plan's cost, equal to
// revolve when no tape fits, at the lower bound T when every tape fits, and refused by the driver.
#define BOOST_TEST_MODULE taped_revolve
#include <boost/test/unit_test.hpp>

#include "expect_kind.hpp"
#include "simulator.hpp"
#include "taped_plan_check.hpp"
#include "taped_search.hpp"
#include "taped_simulator.hpp"

#include "remat/driver/run.hpp"
#include "remat/error.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/taped_revolve.hpp"
#include "remat/store/host_store.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <ranges>
#include <string>
#include <vector>

using namespace remat;

static_assert(std::ranges::input_range<taped_revolve>);
static_assert(schedule<taped_revolve>);

namespace {

test::taped_counts replay_and_check(const taped_revolve& plan, double f = 1, double b = 1)
{
    return test::replay_and_check(plan, plan.units(), f, b);
}

} // namespace

BOOST_AUTO_TEST_CASE(every_plan_up_to_eight_steps_is_as_good_as_exhaustive_search)
{
    int compared = 0;
    for (step_t t = 1; t <= 8; ++t)
        for (slot_t u = 1; u <= 3; ++u)
            for (slot_t m = 1; m <= (t - 1) * u + 1; ++m) {
                if (t == 8 && m > 4 && m != (t - 1) * u && m != (t - 1) * u - 1)
                    continue; // the 8-step searches are the slow ones: a few budgets, the edges included
                const taped_revolve plan(t, m, u, 0.69, 1.19);
                const auto best = test::fewest_taped_evaluations(t, m, u);
                BOOST_TEST_REQUIRE(best.has_value());
                BOOST_TEST_REQUIRE(plan.evaluations() == *best, "T=" << t << " M=" << m << " u=" << u);
                replay_and_check(plan, 0.69, 1.19);
                ++compared;
            }
    BOOST_TEST(compared > 150);
}

BOOST_AUTO_TEST_CASE(the_pruned_split_search_finds_what_a_full_scan_finds)
{
    // Beyond exhaustive search: the same recursion with every split point tried (no pruning), O(T^2 M).
    constexpr step_t t_max = 120;
    constexpr slot_t m_max = 40;
    for (slot_t u : {1, 2, 3, 6}) {
        constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();
        std::vector<std::vector<std::uint64_t>> e(m_max + 1, std::vector<std::uint64_t>(t_max + 1, none));
        for (slot_t b = 0; b <= m_max; ++b) {
            auto& row = e[static_cast<std::size_t>(b)];
            row[1] = 1;
            for (step_t l = 2; l <= t_max; ++l) {
                auto& best = row[static_cast<std::size_t>(l)];
                if (b >= u && e[static_cast<std::size_t>(b - u)][static_cast<std::size_t>(l - 1)] != none)
                    best = 1 + e[static_cast<std::size_t>(b - u)][static_cast<std::size_t>(l - 1)];
                for (step_t j = 1; b >= 1 && j < l; ++j) {
                    const std::uint64_t right = e[static_cast<std::size_t>(b - 1)][static_cast<std::size_t>(l - j)];
                    if (right != none)
                        best = std::min(best, static_cast<std::uint64_t>(j) + row[static_cast<std::size_t>(j)] + right);
                }
            }
        }
        for (step_t t = 2; t <= t_max; t += 9)
            for (slot_t m = 1; m <= m_max; ++m)
                BOOST_TEST_REQUIRE(taped_revolve(t, m, u).evaluations() ==
                                       e[static_cast<std::size_t>(m)][static_cast<std::size_t>(t)],
                                   "T=" << t << " M=" << m << " u=" << u);
    }
}

BOOST_AUTO_TEST_CASE(tapes_beat_states_where_the_search_says_so)
{
    // 4 steps, 3 units, tapes of 1: tape steps 0..2, reverse 3 from x_3: 4 evaluations, T itself;
    // states only (revolve, 3 slots) need 3 advances and 4 re-runs.
    BOOST_TEST(taped_revolve(4, 3, 1).evaluations() == 4u);
    BOOST_TEST(test::fewest_taped_evaluations(4, 3, 1).value() == 4u);
    BOOST_TEST(revolve(4, 3).cost().forward_steps + 4 == 7u);
    // With tapes of 2 units, 3 units hold one tape and one snapshot.
    const taped_revolve plan(4, 3, 2);
    BOOST_TEST(plan.evaluations() == test::fewest_taped_evaluations(4, 3, 2).value());
    BOOST_TEST(plan.cost().taped_steps > 0u);
}

BOOST_AUTO_TEST_CASE(plans_on_a_larger_grid_are_legal_and_priced_as_replayed)
{
    for (step_t t : {2, 3, 9, 17, 40, 77})
        for (slot_t u : {1, 2, 3, 6})
            for (slot_t m : {1, 2, 3, 5, 8, 13, 30, 100})
                replay_and_check(taped_revolve(t, m, u, 0.69, 1.19), 0.69, 1.19);
}

BOOST_AUTO_TEST_CASE(more_memory_never_costs_more)
{
    for (step_t t : {10, 33})
        for (slot_t u : {1, 2, 5}) {
            std::uint64_t previous = std::numeric_limits<std::uint64_t>::max();
            for (slot_t m = 1; m <= (t - 1) * u + 2; ++m) {
                const std::uint64_t e = taped_revolve(t, m, u).evaluations();
                BOOST_TEST_REQUIRE(e <= previous, "T=" << t << " u=" << u << " M=" << m);
                previous = e;
            }
        }
}

BOOST_AUTO_TEST_CASE(when_no_tape_fits_it_is_revolve)
{
    for (step_t t = 1; t <= 120; t += 7)
        for (slot_t m = 1; m <= 12; ++m) {
            const taped_revolve plan(t, m, m + 1); // a tape is larger than the whole budget
            const std::uint64_t binomial = revolve(t, m).cost().forward_steps;
            BOOST_TEST_REQUIRE(plan.evaluations() == binomial + static_cast<std::uint64_t>(t), "T=" << t << " M=" << m);
            BOOST_TEST_REQUIRE(plan.cost().taped_steps == 0u);
            BOOST_TEST_REQUIRE(plan.cost().forward_steps == binomial);
            replay_and_check(plan);
        }
}

BOOST_AUTO_TEST_CASE(the_lower_bound_is_reached_exactly_when_every_tape_but_the_last_fits)
{
    // Every step runs forward at least once (step T-1 in its reverse) and is reversed once: T (F + B). With
    // fewer than (T-1) u units some step k < T-1 is reversed from a state, so it ran twice.
    const double f = 0.69;
    const double b = 1.19;
    for (step_t t : {1, 2, 5, 50, 300})
        for (slot_t u : {1, 3, 6}) {
            const slot_t enough = std::max<slot_t>((t - 1) * u, 1);
            const taped_revolve full(t, enough, u, f, b);
            BOOST_TEST_REQUIRE(full.evaluations() == static_cast<std::uint64_t>(t));
            BOOST_TEST_REQUIRE(std::abs(full.cost().predicted_cost - static_cast<double>(t) * (f + b)) <=
                               1e-9 * static_cast<double>(t));
            replay_and_check(full, f, b);
            BOOST_TEST_REQUIRE(taped_revolve(t, enough + 1000, u).evaluations() == static_cast<std::uint64_t>(t));
            if (t >= 2 && enough >= 2) {
                const taped_revolve less(t, enough - 1, u, f, b);
                BOOST_TEST_REQUIRE(less.evaluations() > static_cast<std::uint64_t>(t), "T=" << t << " u=" << u);
                BOOST_TEST_REQUIRE(less.cost().predicted_cost > static_cast<double>(t) * (f + b));
            }
        }
}

BOOST_AUTO_TEST_CASE(steps_not_taped_in_the_first_sweep_run_twice)
{
    // Before the first reverse (of step T-1) every step 0..T-2 has run, and every tape taken on a step's
    // first run is still held: at most floor(M/u) of them. The other steps run at least twice, so a plan
    // makes at least 2T - 1 - floor(M/u) evaluations (and at least T). The optimum comes close to it.
    for (step_t t : {2, 7, 30, 120})
        for (slot_t u : {1, 2, 6})
            for (slot_t m : {1, 2, 5, 12, 40, 100}) {
                const taped_revolve plan(t, m, u);
                const auto bound = std::max<std::int64_t>(t, 2 * t - 1 - m / u);
                BOOST_TEST_REQUIRE(plan.evaluations() >= static_cast<std::uint64_t>(bound),
                                   "T=" << t << " M=" << m << " u=" << u);
            }
    for (step_t t = 1; t <= 7; ++t)
        for (slot_t m = 1; m <= 8; ++m) {
            const auto bound = std::max<std::int64_t>(t, 2 * t - 1 - m / 2);
            BOOST_TEST_REQUIRE(test::fewest_taped_evaluations(t, m, 2).value() >= static_cast<std::uint64_t>(bound));
        }
}

BOOST_AUTO_TEST_CASE(a_thousand_gru_steps_at_checkpoint_sequentials_memory)
{
    // docs/tapes.md's case: T = 1000, tapes of 6 states, 154 units (checkpoint_sequential with 13-step
    // segments: 13 x 5.9 + 77 states).
    // checkpoint_sequential itself makes 2T - L = 1987 evaluations (every segment but the last re-run).
    const taped_revolve plan(1000, 154, 6, 0.69, 1.19);
    BOOST_TEST(plan.evaluations() >= 2 * 1000u - 1 - 154 / 6);
    BOOST_TEST(plan.evaluations() <= 1987u);
    BOOST_TEST(plan.evaluations() <= revolve(1000, 154).cost().forward_steps + 1000u);
    replay_and_check(plan, 0.69, 1.19);
}

BOOST_AUTO_TEST_CASE(a_million_steps_are_planned_in_closed_form_when_no_tape_or_every_tape_fits)
{
    // Both were refused (T > 90000) before; now no table is made: planning_work() is 0.
    constexpr step_t t = 1'000'000;
    const taped_revolve no_tape(t, 8, 16, 0.69, 1.19);
    BOOST_TEST(no_tape.planning_work() == 0u);
    BOOST_TEST(no_tape.evaluations() == revolve(t, 8).cost().forward_steps + static_cast<std::uint64_t>(t));
    BOOST_TEST(no_tape.cost().taped_steps == 0u);
    replay_and_check(no_tape, 0.69, 1.19);
    const taped_revolve every_tape(t, 2 * (t - 1), 2);
    BOOST_TEST(every_tape.planning_work() == 0u);
    BOOST_TEST(every_tape.evaluations() == static_cast<std::uint64_t>(t));
    replay_and_check(every_tape);
}

BOOST_AUTO_TEST_CASE(a_table_plan_stays_within_its_deterministic_work_bound)
{
    // T = 20000 with 8 units and tapes of 2: the table's work, not the wall clock, is bounded.
    const taped_revolve plan(20000, 8, 2);
    BOOST_TEST(plan.planning_work() > 20000u * 8u); // every entry of the table counted
    BOOST_TEST(plan.planning_work() <= taped_revolve::default_work_limit);
    BOOST_TEST(plan.evaluations() >= 2 * 20000u - 1 - 8 / 2);
    BOOST_TEST(plan.evaluations() <= revolve(20000, 8).cost().forward_steps + 20000u);
    replay_and_check(plan);
    // The same plan under a limit just below its work is refused, naming the limit; at its work, made.
    const std::uint64_t work = plan.planning_work();
    test::refused_naming([&] { return taped_revolve(20000, 8, 2, 1, 1, work - 1); },
                         ("work_limit = " + std::to_string(work - 1)).c_str());
    BOOST_TEST(taped_revolve(20000, 8, 2, 1, 1, work).evaluations() == plan.evaluations());
}

BOOST_AUTO_TEST_CASE(ten_thousand_steps_in_64_units_plan_within_the_default_work)
{
    // The range bound of the split search (least increments over a range) makes this table fit the default
    // work; with the bound of increments 1 and 0 alone it needed several times more and was refused.
    const taped_revolve plan(10000, 64, 4);
    BOOST_TEST(plan.planning_work() <= taped_revolve::default_work_limit);
    BOOST_TEST(plan.evaluations() >= 2 * 10000u - 1 - 64 / 4);
    BOOST_TEST(plan.evaluations() <= revolve(10000, 64).cost().forward_steps + 10000u);
    replay_and_check(plan);
}

BOOST_AUTO_TEST_CASE(the_issues_slow_case_is_refused_after_at_most_the_default_work)
{
    // taped_revolve(90000, 64, 2) planned for 104 s before; its exact table needs far more than the
    // default limit (about 1 s), so it is refused, naming the limit and what to do instead.
    test::refused_naming([] { return taped_revolve(90000, 64, 2); },
                         ("work_limit = " + std::to_string(taped_revolve::default_work_limit)).c_str());
    test::refused_naming([] { return taped_revolve(90001, 64, 2); }, "at most 90000 steps");
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused_naming_the_value)
{
    test::refused_naming([] { return taped_revolve(0, 3, 2); }, "steps = 0");
    test::refused_naming([] { return taped_revolve(-5, 3, 2); }, "steps = -5");
    test::refused_naming([] { return taped_revolve(10, 0, 2); }, "units = 0");
    test::refused_naming([] { return taped_revolve(10, 3, 0); }, "tape_units = 0");
    test::refused_naming([] { return taped_revolve(10, 3, -1); }, "tape_units = -1");
    test::refused_naming([] { return taped_revolve(10, 3, 2, -1.0, 1.0); }, "forward_cost = -1");
    test::refused_naming([] { return taped_revolve(10, 3, 2, 1.0, std::nan("")); }, "backward_cost = nan");
    test::refused_naming([] { return taped_revolve(10, 3, 2, std::numeric_limits<double>::infinity(), 1.0); },
                         "forward_cost = inf");
    test::refused_naming([] { return taped_revolve(80000, 5000, 6); }, "entries");
    test::refused_naming([] { return taped_revolve(std::numeric_limits<step_t>::max(), 5, 6); }, "steps = ");
    test::refused_naming([] { return taped_revolve(1'000'001, 5, 6); }, "steps = 1000001");
}

BOOST_AUTO_TEST_CASE(the_driver_without_tapes_and_the_state_only_simulator_refuse_taped_plans)
{
    const taped_revolve plan(6, 10, 2);
    BOOST_TEST_REQUIRE(plan.cost().taped_steps > 0u);
    host_store store(10);
    std::vector<double> x{1.0};
    int steps_run = 0;
    auto f = [&](step_t, std::vector<double>& s) { s[0] += 1, ++steps_run; };
    auto a = [](step_t, std::vector<double>&) {};
    BOOST_CHECK_EXCEPTION(
        (void)run(plan, store, x, forward_step(f), adjoint_step(a)), schedule_error, [](const schedule_error& e) {
            return std::string(e.what()).find("need the tape callables, remat::with_tapes") != std::string::npos;
        });
    BOOST_TEST(steps_run == 0);
    BOOST_TEST(store.stats().slots_in_use == 0u);
    test::replay_counts counts;
    const auto error = test::replay(plan, {10}, counts);
    BOOST_TEST_REQUIRE(error.has_value());
    BOOST_TEST(error->find("taped advance") != std::string::npos, *error);
}
