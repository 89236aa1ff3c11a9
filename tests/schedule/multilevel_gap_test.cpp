// The layered multi-level structure against the exact optimum (the dynamic program that
// schedule_multilevel_optimality_test checks against exhaustive search): over a grid of level sizes — small finite
// slowest levels of 1 to 16 slots included — and costs (writes and reads of 0.5 to 50 forward steps, never
// equal; a faster level dearer to write than the slowest one), two and three levels, every layered plan
// replays legally with the counts it predicts, never costs less than the optimum, and costs at most 1% more.
// With two levels, the slowest one strictly dearest both ways, the exact plans also show the structure the layered one
// rests on: every store into the slowest level happens while the faster level is empty. (With three
// levels that holds in most exact plans but not all; the layered plans still match the optimum there.)
// The unit build runs a grid that takes seconds; the stress build (REMAT_GAP_STRESS) longer loops and
// more sizes; sanitizer builds (REMAT_QUICK_SEARCH) a thinned grid.
#define BOOST_TEST_MODULE multilevel_gap
#include <boost/test/unit_test.hpp>

#include "multilevel_search.hpp"
#include "simulator.hpp"

#include "remat/schedule/multilevel.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

using namespace remat;

namespace {

constexpr slot_t inf = level_spec::unlimited;

#if defined(REMAT_GAP_STRESS)
constexpr step_t two_level_steps = 2000;
constexpr step_t three_level_steps = 500;
constexpr std::size_t thinning = 1;
#elif defined(REMAT_QUICK_SEARCH)
constexpr step_t two_level_steps = 300;
constexpr step_t three_level_steps = 120;
constexpr std::size_t thinning = 4;
#else
constexpr step_t two_level_steps = 400;
constexpr step_t three_level_steps = 150;
constexpr std::size_t thinning = 1;
#endif

struct price {
    double write, read;
};

// The slowest level's costs: both cheap, writes dearer, reads dearer, both dear, and the extremes.
const std::vector<price> slow_prices{{0.5, 2}, {2, 0.5}, {5, 50}, {50, 5}, {0.5, 50}, {50, 0.5}};

struct tally {
    double worst = 0;
    std::string where;
    int plans = 0;
};

// Stores into the slowest level made while a faster level holds a snapshot (the layered structure makes
// none: its slowest-level snapshots sit above every faster one).
int slow_stores_under_faster_ones(const multilevel& plan)
{
    const auto slowest = static_cast<level_t>(plan.model().levels.size() - 1);
    std::int64_t faster_held = 0;
    int under = 0;
    for (const action& a : plan) {
        if (const auto* s = std::get_if<store>(&a)) {
            if (s->level == slowest)
                under += faster_held > 0 ? 1 : 0;
            else
                ++faster_held;
        } else if (const auto* f = std::get_if<free_slot>(&a); f != nullptr && f->level != slowest) {
            --faster_held;
        }
    }
    return under;
}

// Whether every faster level costs less than the slowest one to write and to read. (Where reads cost the
// same, host 1/0.5 and disk 2/0.5, 30 exact plans of this grid do store on the disk under host snapshots.)
bool slowest_is_dearest(const cost_model& m)
{
    const level_spec& slowest = m.levels.back();
    return std::all_of(m.levels.begin(), m.levels.end() - 1, [&](const level_spec& l) {
        return l.write_cost < slowest.write_cost && l.read_cost < slowest.read_cost;
    });
}

// Plans the layered structure with the default limits, replays it, and compares it with the exact optimum.
// `structure_check`: also asserts that the exact plan stores on the slowest level only while the faster
// levels are empty, the observation the layered structure rests on.
void check(step_t steps, const cost_model& m, tally& t, bool structure_check = false)
{
    const std::string what = test::describe(steps, m);
    multilevel::options o;
    o.how = multilevel::method::near_optimal;
    o.only = multilevel::structure::layered;
    const multilevel layered(steps, m, o);
    BOOST_TEST_REQUIRE((layered.structure_used() == multilevel::structure::layered), what);
    test::replay_counts n;
    const auto error = test::replay(layered, test::level_capacities(m), n, false);
    BOOST_TEST_REQUIRE(!error.has_value(), what << ": " << error.value_or(""));
    const schedule_cost c = layered.cost();
    BOOST_TEST_REQUIRE(n.forward_steps == c.forward_steps, what);
    for (std::size_t i = 0; i < m.levels.size(); ++i) {
        BOOST_TEST_REQUIRE(n.stores_per_level[i] == c.levels[i].stores, what << " level " << i);
        BOOST_TEST_REQUIRE(n.restores_per_level[i] == c.levels[i].restores, what << " level " << i);
        BOOST_TEST_REQUIRE(n.peak_per_level[i] == c.levels[i].peak_slots, what << " level " << i);
    }
    const double replayed = test::replayed_price(n, m);
    BOOST_TEST_REQUIRE(std::abs(c.predicted_cost - replayed) <= 1e-9 * replayed, what);

    multilevel::options e;
    e.how = multilevel::method::exact;
    const multilevel optimum(steps, m, e);
    const double best = optimum.cost().predicted_cost;
    if (structure_check)
        BOOST_TEST(slow_stores_under_faster_ones(optimum) == 0, what);
    BOOST_TEST_REQUIRE(replayed >= best * (1 - 1e-12), what << ": " << replayed << " below the optimum " << best);
    BOOST_TEST(replayed <= best * 1.01, what << ": " << replayed << " vs the optimum " << best);
    const double gap = replayed / best - 1;
    if (gap > t.worst) {
        t.worst = gap;
        t.where = what;
    }
    ++t.plans;
}

} // namespace

BOOST_AUTO_TEST_CASE(two_levels_within_one_percent)
{
    // A free host (or a priced one, also one dearer to write than the disk) and a small finite disk.
    const std::vector<price> host_prices{{0, 0}, {1, 0.5}, {2, 2}};
    tally t;
    std::size_t index = 0;
    for (const slot_t host : {1, 2, 3, 4, 8, 16})
        for (const slot_t disk : {1, 2, 3, 4, 8, 16})
            for (const price h : host_prices)
                for (const price d : slow_prices)
                    if (index++ % thinning == 0) {
                        const cost_model m{{{"host", host, h.write, h.read}, {"disk", disk, d.write, d.read}}};
                        check(two_level_steps, m, t, slowest_is_dearest(m));
                    }
    BOOST_TEST_MESSAGE("two levels: " << t.plans << " plans, worst gap " << 100 * t.worst << "% at " << t.where);
}

BOOST_AUTO_TEST_CASE(three_levels_within_one_percent)
{
    tally t;
    std::size_t index = 0;
    for (const slot_t device : {1, 2, 4})
        for (const slot_t host : {2, 4, 8})
            for (const slot_t disk : {1, 2, 4, 8})
                for (const price d : slow_prices)
                    if (index++ % thinning == 0)
                        check(three_level_steps,
                              cost_model{
                                  {{"device", device, 0, 0}, {"host", host, 1, 0.5}, {"disk", disk, d.write, d.read}}},
                              t);
    BOOST_TEST_MESSAGE("three levels: " << t.plans << " plans, worst gap " << 100 * t.worst << "% at " << t.where);
}

BOOST_AUTO_TEST_CASE(unlimited_slowest_level_within_one_percent)
{
    // The outer recurrence over an unlimited level (one free-slot row): the spine's case, without its period.
    tally t;
    for (const slot_t host : {1, 3, 8})
        for (const price d : slow_prices)
            check(two_level_steps, cost_model{{{"host", host, 0, 0}, {"disk", inf, d.write, d.read}}}, t);
    BOOST_TEST_MESSAGE("unlimited disk: " << t.plans << " plans, worst gap " << 100 * t.worst << "% at " << t.where);
}
