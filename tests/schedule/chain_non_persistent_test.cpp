// chain::options::non_persistent: on small random chains, at every budget, the plan is legal and within the
// budget under the independent replay, costs what the memoised extended recurrence says (its own optimum),
// never more than the persistent optimum and never less than the optimum over every schedule (both by
// exhaustive search), and is strictly cheaper than the persistent plan where the extension applies.
#define BOOST_TEST_MODULE chain_non_persistent
#include <boost/test/unit_test.hpp>

#include "chain_reference.hpp"
#include "chain_refetch_reference.hpp"
#include "random_chain.hpp"

#include "remat/schedule/chain.hpp"

#include <cmath>
#include <random>
#include <string>

using namespace remat;

namespace {

chain::options with(std::uint64_t granularity, bool non_persistent)
{
    chain::options o;
    o.granularity = granularity;
    o.non_persistent = non_persistent;
    return o;
}

} // namespace

BOOST_AUTO_TEST_CASE(between_every_schedule_and_the_persistent_optimum_and_equal_to_its_recurrence)
{
    std::mt19937_64 rng(37);
    int compared = 0;
    int cheaper = 0;
    for (step_t t = 1; t <= 7; ++t)
        for (int trial = 0; trial < 30; ++trial) {
            const chain_model m = test::random_chain(rng, t, test::adjoints_apart(5, 3));
            const std::uint64_t least = chain(m, m.store_all_bytes(), with(1, false)).least_budget_bytes();
            for (std::uint64_t budget = least; budget <= m.store_all_bytes(); ++budget) {
                const chain persistent(m, budget, with(1, false));
                const chain plan(m, budget, with(1, true));
                BOOST_TEST_CONTEXT("T=" << t << " trial " << trial << " budget " << budget)
                {
                    const test::chain_replay r = test::replay_chain_plan(m, plan);
                    BOOST_TEST_REQUIRE(!r.error.has_value(), *r.error);
                    BOOST_TEST(r.peak_bytes <= budget);
                    BOOST_TEST(r.peak_bytes == plan.peak_bytes());
                    BOOST_TEST(r.cost == plan.cost().predicted_cost);
                    BOOST_TEST(r.forward_steps == plan.cost().forward_steps);
                    const double general = test::brute_force_chain_optimum(m, budget, false);
                    BOOST_TEST(r.cost >= general);
                    BOOST_TEST(r.cost <= persistent.cost().predicted_cost);
                    BOOST_TEST(r.cost == test::refetch_recurrence_cost(m, budget, true));
                    if (r.cost < persistent.cost().predicted_cost) {
                        BOOST_TEST(std::string(plan.method()) == "dynamic program, non-persistent");
                        ++cheaper;
                    } else {
                        BOOST_TEST(std::string(plan.method()) == "dynamic program");
                    }
                }
                ++compared;
            }
        }
    BOOST_TEST(compared > 1000);
    BOOST_TEST(cheaper > 10); // the extension does close gaps
}

BOOST_AUTO_TEST_CASE(coarse_units_still_fit_the_budget_in_true_bytes)
{
    // Sizes rounded up to units of 3 bytes: the plan is made for the units, then checked in bytes.
    std::mt19937_64 rng(38);
    int cheaper = 0;
    for (int trial = 0; trial < 60; ++trial) {
        const chain_model m = test::random_chain(rng, 6, test::adjoints_apart(9, 6));
        const std::uint64_t least = chain(m, m.store_all_bytes() + 30, with(3, false)).least_budget_bytes();
        for (std::uint64_t budget = least; budget <= m.store_all_bytes() + 6; budget += 2) {
            const chain persistent(m, budget, with(3, false));
            const chain plan(m, budget, with(3, true));
            const test::chain_replay r = test::replay_chain_plan(m, plan);
            BOOST_TEST_REQUIRE(!r.error.has_value(), *r.error);
            BOOST_TEST(r.peak_bytes <= budget);
            BOOST_TEST(r.cost <= persistent.cost().predicted_cost);
            BOOST_TEST(r.cost >= test::brute_force_chain_optimum(m, budget, false));
            cheaper += r.cost < persistent.cost().predicted_cost ? 1 : 0;
        }
    }
    BOOST_TEST(cheaper > 0);
}
