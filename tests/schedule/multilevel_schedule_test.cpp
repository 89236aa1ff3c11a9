// Multi-level schedules replayed by the independent simulator: legal with per-level capacities, their
// counts per level equal to cost(), predicted_cost equal to the cost recomputed from the replayed counts;
// near-optimal plans (grid, spine, nested, layered) never beat the exact optimum and the spine stays close
// to it (schedule_multilevel_gap_test holds the layered one to 1%); huge T works.
#define BOOST_TEST_MODULE multilevel_schedule
#include <boost/test/unit_test.hpp>

#include "multilevel_search.hpp"
#include "simulator.hpp"

#include "remat/error.hpp"
#include "remat/schedule/any_schedule.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"

#include <algorithm>
#include <cmath>
#include <ranges>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

using namespace remat;

static_assert(std::ranges::input_range<multilevel>);
static_assert(schedule<multilevel>);

namespace {

constexpr slot_t inf = level_spec::unlimited;

// Replays the plan and checks every count against cost(); `exact_repetition` false accepts an upper bound.
void check_replay(const multilevel& plan, bool track_steps = true)
{
    const cost_model& m = plan.model();
    const std::string what = test::describe(plan.steps(), m);
    test::replay_counts n;
    const auto e = test::replay(plan, test::level_capacities(m), n, track_steps);
    BOOST_TEST_REQUIRE(!e.has_value(), what << ": " << e.value_or(""));
    const schedule_cost c = plan.cost();
    BOOST_TEST_REQUIRE(n.forward_steps == c.forward_steps, what);
    BOOST_TEST_REQUIRE(n.reverse_steps == c.reverse_steps, what);
    BOOST_TEST_REQUIRE(n.stores == c.stores, what);
    BOOST_TEST_REQUIRE(n.restores == c.restores, what);
    BOOST_TEST_REQUIRE(n.peak_slots == c.peak_slots, what);
    BOOST_TEST_REQUIRE(c.levels.size() == m.levels.size(), what);
    for (std::size_t i = 0; i < m.levels.size(); ++i) {
        BOOST_TEST_REQUIRE(n.stores_per_level[i] == c.levels[i].stores, what << " level " << i);
        BOOST_TEST_REQUIRE(n.restores_per_level[i] == c.levels[i].restores, what << " level " << i);
        BOOST_TEST_REQUIRE(n.peak_per_level[i] == c.levels[i].peak_slots, what << " level " << i);
    }
    if (track_steps) {
        const bool exact_repetition = plan.structure_used() != multilevel::structure::nested;
        if (exact_repetition)
            BOOST_TEST_REQUIRE(n.max_advances_of_one_step == c.repetition, what);
        else
            BOOST_TEST_REQUIRE(n.max_advances_of_one_step <= c.repetition, what);
    }
    const double replayed = test::replayed_price(n, m);
    BOOST_TEST_REQUIRE(std::abs(c.predicted_cost - replayed) <= 1e-9 * std::max(1.0, replayed), what);
}

multilevel exact(step_t steps, const cost_model& m)
{
    multilevel::options o;
    o.how = multilevel::method::exact;
    return multilevel(steps, m, o);
}

multilevel near(step_t steps, const cost_model& m, multilevel::structure only, step_t horizon)
{
    multilevel::options o;
    o.how = multilevel::method::near_optimal;
    o.only = only;
    if (only == multilevel::structure::grid)
        o.grid = horizon;
    else
        o.horizon = horizon;
    return multilevel(steps, m, o);
}

const std::vector<cost_model> models{
    {{{"host", 3, 0, 0}, {"disk", inf, 2, 2}}, 1, 0},
    {{{"host", 1, 0.5, 0.25}, {"disk", inf, 4, 1}}, 1, 3},
    {{{"host", 4, 0, 0}, {"disk", 5, 3, 3}}, 1, 0},
    {{{"device", 2, 0, 0}, {"host", 3, 1, 1}, {"disk", inf, 6, 4}}, 1, 0},
    {{{"device", 1, 0, 0.5}, {"host", 2, 1, 2}, {"disk", 3, 4, 4}}, 2, 1},
    {{{"memory", 3, 5, 0}}, 1, 0},
    {{{"memory", 1, 2, 1}}, 1, 0},
};

} // namespace

BOOST_AUTO_TEST_CASE(exact_schedules_are_legal_and_counted_exactly)
{
    for (const cost_model& m : models)
        for (step_t t = 1; t <= 150; t += (t < 40 ? 1 : 11))
            check_replay(exact(t, m));
}

BOOST_AUTO_TEST_CASE(near_optimal_schedules_are_legal_counted_and_never_below_the_optimum)
{
    // Every structure with small horizons (spine, nested) and grids, so that T spans many segments and
    // super-steps, including short last ones.
    using structure = multilevel::structure;
    for (const cost_model& m : models)
        for (const structure s : {structure::grid, structure::spine, structure::nested}) {
            const bool finite = m.levels.back().slots != inf;
            if ((s == structure::nested && !finite) || (s == structure::spine && finite))
                continue;
            for (const step_t size : {3, 8, 20})
                for (step_t t = size + 1; t <= 400; t += 37) {
                    const multilevel p = near(t, m, s, size);
                    // A slowest level with room for T-1 snapshots is unlimited: no nested plan then. A grid
                    // needs a slot besides its start's (segments of several super-steps), so one single
                    // slot gets another structure.
                    const bool applies = (s != structure::nested || m.levels.back().slots < t - 1) &&
                                         (s != structure::grid || m.levels.size() > 1 || m.levels[0].slots > 1);
                    BOOST_TEST_REQUIRE((p.structure_used() == s || !applies), test::describe(t, m));
                    BOOST_TEST_REQUIRE((p.method_used() == multilevel::method::near_optimal || !applies));
                    check_replay(p);
                    if (t <= 200)
                        BOOST_TEST_REQUIRE(p.cost().predicted_cost >= exact(t, m).cost().predicted_cost - 1e-9,
                                           test::describe(t, m));
                }
        }
}

BOOST_AUTO_TEST_CASE(layered_schedules_are_legal_counted_and_never_below_the_optimum)
{
    // Leaves of at most K steps and outer units of g steps, small enough that loops span many leaves and
    // units (g > 1: two outer tables, the loop's last unit shorter); every outer level is tried.
    using structure = multilevel::structure;
    struct sizes {
        step_t leaf, unit;
    };
    for (const cost_model& m : models)
        for (const sizes z : {sizes{3, 1}, sizes{8, 2}, sizes{20, 3}, sizes{20, 1}, sizes{12, 5}})
            for (step_t t = 3; t <= 400; t += (t < 30 ? 1 : 37)) {
                multilevel::options o;
                o.how = multilevel::method::near_optimal;
                o.only = structure::layered;
                o.horizon = z.leaf;
                o.grid = z.unit;
                const multilevel p(t, m, o);
                // The slowest level as the outer one applies whenever it has a second slot and a unit fits a
                // leaf (a single slot holds x_0 and leaves no room for a split).
                const bool applies = m.levels.size() > 1 && m.levels.back().slots >= 2 && z.unit < t;
                BOOST_TEST_REQUIRE((p.structure_used() == structure::layered || !applies), test::describe(t, m));
                if (p.structure_used() == structure::layered) {
                    BOOST_TEST_REQUIRE(p.horizon() == std::min(z.leaf, t), test::describe(t, m));
                    BOOST_TEST_REQUIRE(p.period() == z.unit, test::describe(t, m));
                    BOOST_TEST_REQUIRE(p.outer_level() >= 0, test::describe(t, m));
                }
                check_replay(p);
                if (t <= 200)
                    BOOST_TEST_REQUIRE(p.cost().predicted_cost >= exact(t, m).cost().predicted_cost - 1e-9,
                                       test::describe(t, m) << " leaf " << z.leaf << " unit " << z.unit);
            }
}

BOOST_AUTO_TEST_CASE(layered_leaves_reach_beyond_a_table_over_steps)
{
    // With 10^6 iterations a table over steps for host 8 + the leaf's start (9 rows, 2 levels: 9 K^2) reaches
    // K = 333 steps, for device 2 + host 4 (15 rows, 3 levels) K = 210; the optimum's leaves are longer, so
    // the grid inner tables (units of g steps, exact within) win, and their leaves reach further.
    struct instance {
        cost_model model;
        step_t steps;
        step_t over_steps;
    };
    for (const instance& x :
         {instance{{{{"host", 8, 0, 0}, {"disk", 2, 2, 2}}, 1, 0}, 3000, 333},
          instance{{{{"host", 8, 0, 0}, {"disk", 2, 2, 2}}, 1, 0}, 4999, 333},
          instance{{{{"device", 2, 0, 0}, {"host", 4, 0, 0}, {"disk", 2, 5, 5}}, 1, 0}, 2000, 210}}) {
        multilevel::options o;
        o.how = multilevel::method::near_optimal;
        o.only = multilevel::structure::layered;
        o.near_optimal_work_limit = 1'000'000;
        const multilevel p(x.steps, x.model, o);
        BOOST_TEST_REQUIRE((p.structure_used() == multilevel::structure::layered), test::describe(x.steps, x.model));
        BOOST_TEST(p.horizon() > x.over_steps, test::describe(x.steps, x.model));
        BOOST_TEST(p.period() >= 2, test::describe(x.steps, x.model));
        check_replay(p);
    }
}

BOOST_AUTO_TEST_CASE(layered_plans_leave_slots_unused_when_a_unit_outgrows_the_leaf_table)
{
    // With 10^5 iterations the outer tables' smallest unit is longer than a leaf table over steps reaches (device 2 +
    // host 4, 15 rows), and a table over one unit does not fit twice the limit with every host slot. Then the outer
    // tables use fewer disk slots (finer units) where the leaves keep every slot (T = 8,669: two of the disk's three),
    // else the leaves use fewer host slots (T = 10,488: two of four); before, the layered structure did not apply.
    const cost_model m{{{"device", 2, 0, 0}, {"host", 4, 1, 1}, {"disk", 3, 4, 4}}, 1, 0};
    multilevel::options o;
    o.how = multilevel::method::near_optimal;
    o.only = multilevel::structure::layered;
    o.near_optimal_work_limit = 100'000;
    for (const auto& [steps, level] : {std::pair{step_t{8'669}, 2}, std::pair{step_t{10'488}, 1}}) {
        const multilevel p(steps, m, o);
        BOOST_TEST_REQUIRE((p.structure_used() == multilevel::structure::layered), test::describe(steps, m));
        BOOST_TEST(p.cost().levels[static_cast<std::size_t>(level)].peak_slots == 2, test::describe(steps, m));
        check_replay(p);
    }
}

BOOST_AUTO_TEST_CASE(spine_plans_are_within_one_percent_of_the_optimum)
{
    // With an unlimited slowest level (the gaps bench/multilevel_dp measures at T = 10^4; here T = 1500
    // with a horizon of 200).
    for (std::size_t i : {0, 1, 3}) {
        const cost_model& m = models[i];
        const double best = exact(1500, m).cost().predicted_cost;
        const double spine = near(1500, m, multilevel::structure::spine, 200).cost().predicted_cost;
        BOOST_TEST(spine <= best * 1.01, test::describe(1500, m) << ": " << spine << " vs " << best);
    }
}

BOOST_AUTO_TEST_CASE(stacked_schedules_are_legal_counted_and_never_below_the_optimum)
{
    // Revolve over the slots of all levels, the dearest at the bottom: every model (finite and unlimited
    // slowest levels, one level with priced transfers), short loops against the exact optimum, and long
    // ones replayed in full (the counts come from revolve's task tree, the actions from its cursor).
    for (const cost_model& m : models)
        for (step_t t = 2; t <= 400; t += (t < 40 ? 1 : 23)) {
            const multilevel p = near(t, m, multilevel::structure::stacked, 0);
            BOOST_TEST_REQUIRE((p.structure_used() == multilevel::structure::stacked), test::describe(t, m));
            check_replay(p);
            if (t <= 200)
                BOOST_TEST_REQUIRE(p.cost().predicted_cost >= exact(t, m).cost().predicted_cost - 1e-9,
                                   test::describe(t, m));
        }
    for (const cost_model& m : models) {
        const multilevel p = near(123'457, m, multilevel::structure::stacked, 0);
        BOOST_TEST_REQUIRE((p.structure_used() == multilevel::structure::stacked), test::describe(123'457, m));
        check_replay(p, false);
    }
}

BOOST_AUTO_TEST_CASE(long_loops_replay_in_full)
{
    // Tables kept small (the structures, not the table sizes, are under test here).
    multilevel::options o;
    o.near_optimal_work_limit = 20'000'000;
    for (std::size_t i : {0, 2, 4}) {
        const multilevel p(100'000, models[i], o);
        BOOST_TEST((p.method_used() == multilevel::method::near_optimal));
        check_replay(p, false);
    }
}

BOOST_AUTO_TEST_CASE(layered_long_loops_replay_in_full)
{
    // Outer tables over units of g > 1 steps (the limit keeps them small), replayed to the end.
    multilevel::options o;
    o.how = multilevel::method::near_optimal;
    o.only = multilevel::structure::layered;
    o.near_optimal_work_limit = 5'000'000;
    for (std::size_t i : {2, 3, 4}) {
        const multilevel p(100'001, models[i], o);
        BOOST_TEST_REQUIRE((p.structure_used() == multilevel::structure::layered), test::describe(100'001, models[i]));
        BOOST_TEST(p.period() > 1);
        check_replay(p, false);
    }
    // Beyond the reach of its tables (a unit longer than any leaf) the layered structure does not apply and
    // another one is planned.
    const multilevel far(1'000'000'000'000, models[2], o);
    BOOST_TEST((far.structure_used() != multilevel::structure::layered));
}

BOOST_AUTO_TEST_CASE(astronomical_step_counts_are_counted_and_start_legally)
{
    // T = 10^15: the cost is exact in closed form, and the first 200,000 actions are a legal prefix.
    for (std::size_t i : {0, 3, 4}) {
        const step_t t = 1'000'000'000'000'000;
        multilevel::options o;
        o.near_optimal_work_limit = 20'000'000;
        const multilevel p(t, models[i], o);
        const schedule_cost c = p.cost();
        BOOST_TEST(c.forward_steps >= static_cast<std::uint64_t>(t - 1));
        BOOST_TEST(c.predicted_cost > 0);
        test::simulator sim(t, test::level_capacities(models[i]), false);
        auto cursor = p.cursor();
        action a;
        for (int k = 0; k < 200'000 && cursor.next(a); ++k) {
            if (const auto e = sim.apply(a)) // assert on failure only: 200,000 actions per case
                BOOST_FAIL(to_string(a) << ": " << *e);
        }
        for (std::size_t L = 0; L < models[i].levels.size(); ++L)
            BOOST_TEST(sim.counts().peak_per_level[L] <= c.levels[L].peak_slots);
    }
}

BOOST_AUTO_TEST_CASE(revolve_reverses_segments_with_all_its_slots_held)
{
    // The nested plan counts its peaks assuming that revolve(N, d) reverses some stored and
    // (when it has any) some unstored step before the last while all of its slots are held. Checked here.
    for (slot_t d = 1; d <= 12; ++d)
        for (step_t n = 2; n <= 600; n += (n < 100 ? 1 : 7)) {
            const revolve plan(n, d);
            slot_t held = 0;
            slot_t stored_max = 0, unstored_max = 0;
            std::vector<bool> stored(static_cast<std::size_t>(n), false);
            for (const action& a : plan) {
                if (const auto* s = std::get_if<store>(&a)) {
                    ++held;
                    stored[static_cast<std::size_t>(s->step)] = true;
                } else if (std::holds_alternative<free_slot>(a)) {
                    --held;
                } else if (const auto* r = std::get_if<reverse>(&a); r != nullptr && r->step < n - 1) {
                    auto& m = stored[static_cast<std::size_t>(r->step)] ? stored_max : unstored_max;
                    m = std::max(m, held);
                }
            }
            const schedule_cost c = plan.cost();
            BOOST_TEST_REQUIRE(stored_max == c.peak_slots, "N=" << n << " d=" << d);
            if (static_cast<std::uint64_t>(n - 1) > c.stores)
                BOOST_TEST_REQUIRE(unstored_max == c.peak_slots, "N=" << n << " d=" << d);
        }
}

BOOST_AUTO_TEST_CASE(single_level_schedules_predict_their_forward_steps)
{
    for (const any_schedule& plan :
         {any_schedule(revolve(1000, 7)), any_schedule(uniform(1000, 30)), any_schedule(store_all(100, 99))}) {
        const schedule_cost c = plan.cost();
        BOOST_TEST(c.predicted_cost == static_cast<double>(c.forward_steps));
        BOOST_TEST(predicted_cost(c, cost_model::single_level(7)) == static_cast<double>(c.forward_steps));
    }
}

BOOST_AUTO_TEST_CASE(bad_models_are_refused_naming_the_level)
{
    auto message = [](const cost_model& m) -> std::string {
        try {
            (void)multilevel(10, m);
        } catch (const argument_error& e) {
            return e.what();
        }
        return "no error";
    };
    BOOST_TEST(message({{}, 1, 0}).find("at least one level") != std::string::npos);
    BOOST_TEST(message({{{"host", 0, 0, 0}}, 1, 0}).find("level 0 (host)") != std::string::npos);
    // Slot counts are slot_t, the type of a slot index: a count computed as one goes in without a cast, and
    // a negative one is refused naming it (as std::uint64_t, -3 became 2^64 - 3: an unlimited level).
    static_assert(std::is_same_v<decltype(level_spec::slots), slot_t>);
    const slot_t computed = -3;
    BOOST_TEST(message({{{"host", computed, 0, 0}}, 1, 0}).find("level 0 (host) must hold at least 1 slot, got -3") !=
               std::string::npos);
    BOOST_TEST(message({{{"host", 2, 0, 0}, {"disk", -1, 1, 1}}, 1, 0}).find("level 1 (disk)") != std::string::npos);
    BOOST_TEST(message(cost_model::single_level(-7)).find("got -7") != std::string::npos);
    BOOST_TEST(message({{{"host", 2, 0, 0}, {"disk", inf, -1, 0}}, 1, 0}).find("level 1 (disk)") != std::string::npos);
    BOOST_TEST(message({{{"host", 2, 0, std::nan("")}}, 1, 0}).find("read cost") != std::string::npos);
    BOOST_TEST(message({{{"host", 2, 0, 0}}, 0, 0}).find("step cost") != std::string::npos);
    BOOST_TEST(message({std::vector<level_spec>(9, level_spec{"x", 1, 0, 0}), 1, 0}).find("at most 8") !=
               std::string::npos);
    BOOST_CHECK_THROW((void)multilevel(0, models[0]), argument_error);
    multilevel::options o;
    o.how = multilevel::method::exact;
    o.max_table_entries = 1000;
    BOOST_CHECK_THROW((void)multilevel(1000, models[0], o), capacity_error);
}

BOOST_AUTO_TEST_CASE(costs_beyond_a_double_are_refused_not_planned_as_nonsense)
{
    // 100 steps writing and reading at 1e307 on one unlimited level: every plan costs more than 1.8e308, every
    // table entry was infinite, and the plan was a lone `reverse 0` (no forward steps, cost 0).
    for (const cost_model& m :
         {cost_model{{{"disk", inf, 1e307, 1e307}}, 1, 0}, cost_model{{{"disk", inf, 1.7e308, 1.7e308}}, 1, 0},
          cost_model{{{"host", 2, 1e307, 1e307}, {"disk", inf, 1e307, 1e307}}, 1, 0},
          cost_model{{{"disk", inf, 0, 0}}, 1e307, 0}}) {
        const std::string what = test::describe(100, m);
        try {
            (void)multilevel(100, m);
            BOOST_ERROR(what << ": planned");
        } catch (const argument_error& e) {
            BOOST_TEST(std::string(e.what()).find("costs more than the largest double") != std::string::npos,
                       what << ": " << e.what());
        }
    }
    // Just below: one store and 99 reads at 1e306 cost 1e308, a legal plan counted exactly; a reverse cost that
    // overflows alone never changes the schedule and is not refused.
    check_replay(multilevel(100, {{{"disk", inf, 1e306, 1e306}}, 1, 0}));
    check_replay(multilevel(100, {{{"host", 2, 1e306, 1e306}, {"disk", inf, 1e306, 1e306}}, 1, 0}));
    const multilevel reversed(100, {{{"host", 2, 0, 0}, {"disk", inf, 1, 1}}, 1, 1e308});
    BOOST_TEST(reversed.cost().forward_steps ==
               multilevel(100, {{{"host", 2, 0, 0}, {"disk", inf, 1, 1}}, 1, 0}).cost().forward_steps);
}
