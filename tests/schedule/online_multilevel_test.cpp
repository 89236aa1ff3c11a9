// online_multilevel against independent references: every action stream of a grid of (fast slots, slow
// slots, period, T, convention) replayed by the simulator with the levels' capacities; cost() against the
// replayed counts; the predicted cost against remat::multilevel's offline optimum for the T the loop found
// (the figures quoted in docs/online.md); the cursor protocol and bad input.
#define BOOST_TEST_MODULE online_multilevel
#include <boost/test/unit_test.hpp>

#include "online_replay_check.hpp"
#include "simulator.hpp"

#include "remat/error.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/online_multilevel.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/store/storage_level.hpp"

#include <cstdio>
#include <string>
#include <vector>

using namespace remat;

static_assert(schedule<online_multilevel_replay>);

namespace {

cost_model two_levels(slot_t fast, slot_t slow, double write, double read)
{
    return cost_model{{{"host", fast, 0, 0}, {"disk", slow, write, read}}};
}

} // namespace

BOOST_AUTO_TEST_CASE(every_stream_of_a_grid_is_legal_and_costed_exactly)
{
    int runs = 0;
    for (slot_t fast = 1; fast <= 4; ++fast)
        for (const slot_t slow : {slot_t{1}, slot_t{2}, slot_t{5}, level_spec::unlimited})
            for (const step_t period : {0, 1, 2, 3, 7})
                for (const online_end end : {online_end::at_last_step, online_end::after_last_step})
                    for (step_t T = 1; T <= 70; ++T) {
#if defined(REMAT_SANITIZED) // 150 s there: every T up to 24, then every eighth; the optimised build checks all
                        if (T > 24 && T % 8 != 0)
                            continue;
#endif
                        const cost_model m = two_levels(fast, slow, 3, 2);
                        const online_multilevel plan(m, {.period = period});
                        BOOST_TEST_CONTEXT("fast " << fast << " slow " << slow << " period " << plan.period() << " T "
                                                   << T << " end " << static_cast<int>(end))
                        {
                            test::replay_counts c;
                            const auto error = test::check_online_replay(plan.replay(T, end),
                                                                         {m.levels[0].slots, m.levels[1].slots}, c);
                            BOOST_TEST_REQUIRE(!error.has_value(), error.value_or(""));
                            const schedule_cost k = plan.cost(T, end);
                            BOOST_TEST(k.forward_steps == c.forward_steps);
                            BOOST_TEST(k.reverse_steps == static_cast<std::uint64_t>(T));
                            BOOST_TEST(k.levels.at(0).stores == c.stores_per_level.at(0));
                            BOOST_TEST(k.levels.at(1).stores == c.stores_per_level.at(1));
                            BOOST_TEST(k.levels.at(0).restores == c.restores_per_level.at(0));
                            BOOST_TEST(k.levels.at(1).restores == c.restores_per_level.at(1));
                            BOOST_TEST(k.levels.at(0).peak_slots <= fast);
                            BOOST_TEST(k.levels.at(1).peak_slots <= slow);
                            BOOST_TEST(k.predicted_cost == predicted_cost(k, m));
                            ++runs;
                        }
                    }
#if defined(REMAT_SANITIZED)
    BOOST_TEST(runs == 4 * 4 * 5 * 2 * (24 + 5)); // T = 1..24 and 32, 40, ..., 64
#else
    BOOST_TEST(runs == 4 * 4 * 5 * 2 * 70);
#endif
}

BOOST_AUTO_TEST_CASE(spills_only_when_the_fast_level_has_run_a_period)
{
    // Period 10 on 2 fast slots: x_0, x_10, x_20, ... go to the slow level; with room for 3 the loop keeps
    // going on the fast level alone after x_20.
    const cost_model m = two_levels(2, 3, 4, 4);
    const online_multilevel plan(m, {.period = 10});
    std::vector<step_t> spilled;
    for (const action& a : plan.replay(45))
        if (const auto* s = std::get_if<store>(&a); s != nullptr && s->level == 1)
            spilled.push_back(s->step);
    BOOST_TEST((spilled == std::vector<step_t>{0, 10, 20}));
    // a slow level that holds any number: one spill per period
    const online_multilevel unlimited(two_levels(2, level_spec::unlimited, 4, 4), {.period = 10});
    BOOST_TEST(unlimited.cost(45).levels.at(1).stores == 5u);
    BOOST_TEST((unlimited.slot_bounds() == std::vector<slot_t>{2, level_capacity::unlimited_slots}));
}

BOOST_AUTO_TEST_CASE(one_segment_is_online_revolve_with_one_more_slot)
{
    // Before the first spill the schedule is online_revolve over fast + 1 slots, the extra one being x_0's
    // copy on the slow level: the same forward steps.
    for (slot_t fast = 1; fast <= 5; ++fast) {
        const online_multilevel plan(two_levels(fast, level_spec::unlimited, 1, 1), {.period = 1000});
        for (step_t T = 1; T <= 300; T += 7)
            BOOST_TEST(plan.cost(T).forward_steps == online_revolve(fast + 1).cost(T).forward_steps);
    }
}

BOOST_AUTO_TEST_CASE(cost_against_the_offline_multilevel_optimum)
{
    // The online schedule cannot know T; remat::multilevel plans for the T the loop found. The ratio of
    // their predicted costs (docs/online.md quotes this table).
    struct row {
        slot_t fast;
        double disk;
        step_t steps;
        double bound;
    };
    const row rows[] = {{4, 2, 100, 1.2},   {4, 2, 1000, 1.2},    {4, 10, 1000, 1.2}, {8, 5, 1000, 1.2},
                        {8, 5, 10000, 1.2}, {16, 20, 10000, 1.2}, {2, 1, 2000, 1.2}};
    for (const row& r : rows) {
#if defined(REMAT_SANITIZED)
        if (r.steps > 2000)
            continue; // the offline plan at 10^4 steps takes minutes in the sanitizers' Debug build
#endif
        const cost_model m = two_levels(r.fast, level_spec::unlimited, r.disk, r.disk);
        const online_multilevel online(m);
        const schedule_cost on = online.cost(r.steps);
        const schedule_cost off = multilevel(r.steps, m).cost();
        const double ratio = on.predicted_cost / off.predicted_cost;
        std::printf("fast %2llu, disk W = R = %4.1f, T = %6lld: online %10.1f (period %5lld), offline %10.1f, ratio "
                    "%.3f\n",
                    static_cast<unsigned long long>(r.fast), r.disk, static_cast<long long>(r.steps), on.predicted_cost,
                    static_cast<long long>(online.period()), off.predicted_cost, ratio);
        BOOST_TEST_CONTEXT("fast " << r.fast << " disk " << r.disk << " T " << r.steps)
        {
            BOOST_TEST(ratio >= 1.0 - 1e-12); // the offline optimum is a lower bound
            BOOST_TEST(ratio <= r.bound);
        }
    }
}

BOOST_AUTO_TEST_CASE(protocol_and_bad_input)
{
    BOOST_CHECK_THROW(online_multilevel(cost_model::single_level(4)), argument_error);
    BOOST_CHECK_THROW(online_multilevel(two_levels(level_spec::unlimited, level_spec::unlimited, 1, 1)),
                      argument_error);
    BOOST_CHECK_THROW(online_multilevel(two_levels(2, 2, 1, 1), {.period = -1}), argument_error);
    BOOST_CHECK_THROW(online_multilevel(two_levels(2, 2, 1, 1), {.max_period = 0}), argument_error);
    BOOST_CHECK_THROW(online_multilevel(two_levels(2, 2, -1, 1)), argument_error);
    BOOST_CHECK_EXCEPTION(online_multilevel(two_levels(-4, 2, 1, 1)), argument_error, [](const argument_error& e) {
        return std::string(e.what()).find("got -4") != std::string::npos;
    });
    const online_multilevel plan(two_levels(2, 2, 1, 1), {.period = 3});
    BOOST_CHECK_THROW((void)plan.replay(0), argument_error);
    auto c = plan.cursor();
    BOOST_CHECK_THROW(c.end_state(), schedule_error); // at x_0
    c.answer(false);
    BOOST_CHECK_THROW(c.answer(false), schedule_error); // actions still queued
    action a;
    while (c.next(a)) {
    }
    c.answer(true);
    BOOST_TEST(c.steps() == 2);
    BOOST_CHECK_THROW(c.answer(false), schedule_error); // the loop has ended
}
