// Multi-level schedules are optimal: their predicted cost equals the shortest path over every legal
// action sequence (T <= 8, every combination of small level sizes, varied costs), and an independent
// top-down dynamic program on longer loops (T <= 200). One level with zero write cost is revolve.
#define BOOST_TEST_MODULE multilevel_optimality
#include <boost/test/unit_test.hpp>

#include "multilevel_search.hpp"

#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/revolve.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

using namespace remat;

namespace {

constexpr slot_t inf = level_spec::unlimited;

struct prices {
    double step, reverse;
    std::vector<std::pair<double, double>> write_read; // per level
};

// Costs that exercise the model: free fast levels, W != R, slow levels dearer than recomputation,
// forward/backward asymmetry through reverse_cost, a step cost other than 1, and quarters (exact in
// binary, so optima compare exactly).
const std::vector<prices> price_sets{
    {1, 0, {{0, 0}, {2, 3}, {5, 5}}},    {1, 2.5, {{0, 0}, {0.5, 4}, {3, 1}}},
    {2, 0, {{1, 1}, {6, 0.25}, {0, 9}}}, {0.75, 1, {{0.25, 0}, {1.5, 1.5}, {4, 2}}},
    {1, 0, {{3, 0}, {0, 3}, {1, 1}}},
};

cost_model model_of(const std::vector<slot_t>& slots, const prices& p)
{
    cost_model m;
    m.step_cost = p.step;
    m.reverse_cost = p.reverse;
    for (std::size_t i = 0; i < slots.size(); ++i)
        m.levels.push_back({"L" + std::to_string(i), slots[i], p.write_read[i].first, p.write_read[i].second});
    return m;
}

std::string describe(step_t steps, const cost_model& m)
{
    std::ostringstream s;
    s << "T=" << steps << " U=" << m.step_cost << " V=" << m.reverse_cost;
    for (const level_spec& l : m.levels)
        s << " [" << (l.slots == inf ? std::string("inf") : std::to_string(l.slots)) << " W=" << l.write_cost
          << " R=" << l.read_cost << "]";
    return s.str();
}

double exact_cost(step_t steps, const cost_model& m)
{
    multilevel::options o;
    o.how = multilevel::method::exact;
    return multilevel(steps, m, o).cost().predicted_cost;
}

bool same_cost(double a, double b)
{
    return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b));
}

// The unit build tries each combination of level sizes with some of the price sets (rotating, so every
// set meets every size somewhere); the stress build (REMAT_FULL_SEARCH) tries them all, and sanitizer
// builds (REMAT_QUICK_SEARCH), which run the search some 30 times slower, a third as many.
#if defined(REMAT_FULL_SEARCH)
constexpr std::size_t thinning = 0;
#elif defined(REMAT_QUICK_SEARCH)
constexpr std::size_t thinning = 3;
#else
constexpr std::size_t thinning = 1;
#endif

bool in_sample(std::size_t combination, std::size_t price_set, std::size_t every)
{
    return thinning == 0 || (combination + price_set) % (every * thinning) == 0;
}

} // namespace

BOOST_AUTO_TEST_CASE(one_level_equals_exhaustive_search)
{
    for (const prices& p : price_sets)
        for (const slot_t c : {slot_t{1}, slot_t{2}, slot_t{3}, slot_t{4}, inf})
            for (step_t t = 1; t <= 8; ++t) {
                const cost_model m = model_of({c}, p);
                BOOST_TEST_REQUIRE(same_cost(exact_cost(t, m), test::exhaustive_multilevel_optimum(t, m)),
                                   describe(t, m));
            }
}

BOOST_AUTO_TEST_CASE(two_levels_equal_exhaustive_search)
{
    const std::vector<slot_t> sizes{1, 2, 3, inf};
    for (std::size_t a = 0; a < sizes.size(); ++a)
        for (std::size_t b = 0; b < sizes.size(); ++b)
            for (std::size_t p = 0; p < price_sets.size(); ++p)
                for (step_t t = 1; t <= 8 && in_sample(a * sizes.size() + b, p, 2); ++t) {
                    const cost_model m = model_of({sizes[a], sizes[b]}, price_sets[p]);
                    BOOST_TEST_REQUIRE(same_cost(exact_cost(t, m), test::exhaustive_multilevel_optimum(t, m)),
                                       describe(t, m));
                }
}

BOOST_AUTO_TEST_CASE(three_levels_equal_exhaustive_search)
{
    const std::vector<slot_t> sizes{1, 2, inf};
    for (std::size_t a = 0; a < sizes.size(); ++a)
        for (std::size_t b = 0; b < sizes.size(); ++b)
            for (std::size_t c = 0; c < sizes.size(); ++c)
                for (std::size_t p = 0; p < price_sets.size(); ++p)
                    for (step_t t = 1; t <= 6 && in_sample((a * sizes.size() + b) * sizes.size() + c, p, 5); ++t) {
                        const cost_model m = model_of({sizes[a], sizes[b], sizes[c]}, price_sets[p]);
                        BOOST_TEST_REQUIRE(same_cost(exact_cost(t, m), test::exhaustive_multilevel_optimum(t, m)),
                                           describe(t, m));
                    }
}

BOOST_AUTO_TEST_CASE(longer_loops_equal_an_independent_dynamic_program)
{
    struct instance {
        std::vector<slot_t> slots;
        std::size_t prices;
    };
    const std::vector<instance> instances{
        {{3, inf}, 0}, {{1, inf}, 1}, {{4, 6}, 2}, {{2, 3}, 3}, {{5, 2}, 4}, {{2, 2, inf}, 0}, {{1, 3, 4}, 1},
    };
    for (const instance& in : instances)
        for (const step_t t : {9, 23, 64, 120, 200}) {
            if (in.slots.size() == 3 && t > (thinning == 0 ? 200 : 120 / static_cast<step_t>(thinning)))
                continue; // the reference is slow there
            const cost_model m = model_of(in.slots, price_sets[in.prices]);
            BOOST_TEST_REQUIRE(same_cost(exact_cost(t, m), test::reference_multilevel_optimum(t, m)), describe(t, m));
        }
}

BOOST_AUTO_TEST_CASE(the_method_used_is_optimal_whatever_is_asked)
{
    // automatic, and near-optimal with a horizon covering the loop, use the exact table.
    const cost_model m = model_of({3, inf}, price_sets[1]);
    multilevel::options near;
    near.how = multilevel::method::near_optimal;
    near.only = multilevel::structure::spine;
    near.horizon = 100;
    const multilevel a(60, m), b(60, m, near);
    BOOST_TEST((a.method_used() == multilevel::method::exact));
    BOOST_TEST((b.method_used() == multilevel::method::exact));
    BOOST_TEST(same_cost(a.cost().predicted_cost, test::reference_multilevel_optimum(60, m)));
    BOOST_TEST(same_cost(b.cost().predicted_cost, a.cost().predicted_cost));
}

BOOST_AUTO_TEST_CASE(one_free_level_reduces_to_revolve)
{
    // One level with zero write cost: automatic hands out revolve's own actions, and the exact table
    // (forced) finds the same cost: U * revolve's forward steps + R * (T-1) restores.
    for (const double read : {0.0, 2.5})
        for (const slot_t s : {1, 2, 3, 7})
            for (step_t t = 1; t <= 120; t += (t < 20 ? 1 : 17)) {
                cost_model m{{{"memory", s, 0.0, read}}};
                m.step_cost = 1.5;
                const multilevel plan(t, m);
                BOOST_TEST_REQUIRE((plan.method_used() == multilevel::method::binomial));
                const revolve reference(t, s);
                std::vector<action> ours, theirs;
                std::ranges::copy(plan, std::back_inserter(ours));
                std::ranges::copy(reference, std::back_inserter(theirs));
                BOOST_TEST_REQUIRE((ours == theirs), "T=" << t << " s=" << s);
                const schedule_cost c = plan.cost();
                const double expected = 1.5 * static_cast<double>(reference.cost().forward_steps) +
                                        read * static_cast<double>(reference.cost().restores);
                BOOST_TEST_REQUIRE(same_cost(c.predicted_cost, expected));
                BOOST_TEST_REQUIRE(same_cost(exact_cost(t, m), expected), "T=" << t << " s=" << s);
            }
}

BOOST_AUTO_TEST_CASE(dear_stores_on_one_level_beat_revolve)
{
    // With a write cost, fewer stores and more recomputation can be cheaper than revolve's schedule;
    // the exact table finds that (and never anything worse than revolve priced the same way).
    bool cheaper_somewhere = false;
    for (step_t t = 2; t <= 60; ++t) {
        const cost_model m{{{"memory", 4, 6.0, 1.0}}};
        const schedule_cost r = revolve(t, 4).cost();
        const double revolve_price = predicted_cost(r, m);
        const double ours = exact_cost(t, m);
        BOOST_TEST_REQUIRE(ours <= revolve_price + 1e-9);
        cheaper_somewhere |= ours < revolve_price - 1e-9;
    }
    BOOST_TEST(cheaper_somewhere);
}

BOOST_AUTO_TEST_CASE(a_level_holding_every_snapshot_makes_dearer_levels_useless)
{
    // The planner drops a level that another one, holding T-1 snapshots or more, beats on both costs (any
    // schedule moved there stays legal and costs no more): the optimum over all the levels, found by the
    // independent search with every level in play, is still what it plans.
    struct instance {
        std::vector<slot_t> slots;
        std::vector<std::pair<double, double>> write_read;
    };
    const std::vector<instance> instances{
        {{2, inf, 3}, {{0, 0}, {1, 1}, {4, 4}}},             // an unlimited host beside a dearer, finite disk
        {{1, 40, inf}, {{0, 0}, {0.5, 2}, {0.5, 2}}},        // equal costs: the later level is the useless one
        {{2, inf, inf}, {{0, 0}, {2, 1}, {1.5, 0.25}}},      // the faster unlimited level is the dearer one
        {{inf, 3, 2}, {{0.25, 0.25}, {1, 0.25}, {0.25, 3}}}, // level 0 holds everything
    };
    for (const instance& in : instances)
        for (const step_t t : {7, 23, 41}) {
            prices p{1, 0.5, in.write_read};
            const cost_model m = model_of(in.slots, p);
            const multilevel plan(t, m);
            BOOST_TEST_REQUIRE(same_cost(plan.cost().predicted_cost, test::reference_multilevel_optimum(t, m)),
                               describe(t, m));
            BOOST_TEST_REQUIRE(same_cost(exact_cost(t, m), plan.cost().predicted_cost), describe(t, m));
        }
}
