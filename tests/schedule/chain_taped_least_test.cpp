// remat::plan_taped_chain_least (the least peak of a taped chain in true bytes, and a plan at it): on small random
// chains, the least equals the least budget within which the exhaustive search of tests/support finds a schedule
// (where every tape is at least its a_k; never above it otherwise), and the plan is legal under that file's
// independent replay with exactly that peak, as remat::price_taped_chain prices it; on random chains of up to 40
// steps (tests/support/random_chain.hpp; tapes of their own size on some, below their inputs on others), the least
// equals remat::plan_taped_chain's least budget at one byte a unit; sizes whose sums pass 64 bits give the least of
// the same chain in small units, scaled; bad input is refused as the planner refuses it; the header's example.
#define BOOST_TEST_MODULE chain_taped_least
#include <boost/test/unit_test.hpp>

#include "chain_taped_reference.hpp"
#include "random_chain.hpp"

#include "remat/error.hpp"
#include "remat/schedule/chain_taped.hpp"
#include "remat/schedule/chain_taped_least.hpp"
#include "remat/schedule/chain_taped_price.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <string>

using namespace remat;

namespace {

// The least budget remat::plan_taped_chain names at one byte a unit.
std::uint64_t the_planners_least(const chain_model& m)
{
    return plan_taped_chain(m, all_taped_bytes(m), 1).least_budget_bytes;
}

// The least budget within which the exhaustive search finds a schedule: by halving, as a schedule within a budget
// fits every larger one (the all-taped plan fits its own peak).
std::uint64_t brute_force_least(const chain_model& m)
{
    std::uint64_t lo = 1, hi = all_taped_bytes(m);
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (std::isinf(test::brute_force_taped_chain_optimum(m, mid)))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

// The plan is legal under the independent replay and under price_taped_chain, and its peak is the least.
void plan_peaks_at_the_least(const chain_model& m, const taped_chain_plan& least)
{
    BOOST_TEST(least.peak_bytes == least.least_budget_bytes);
    BOOST_TEST(least.granularity == 1u);
    const test::chain_replay r = test::replay_taped_chain(m, least.actions);
    BOOST_TEST(!r.error.has_value(), (r.error ? *r.error : std::string()));
    BOOST_TEST(r.peak_bytes == least.least_budget_bytes);
    BOOST_TEST(r.cost == least.cost);
    const taped_chain_price p = price_taped_chain(m, least.actions);
    BOOST_TEST(p.peak_bytes == least.least_budget_bytes);
    BOOST_TEST(p.forward_steps == least.forward_steps);
    BOOST_TEST(p.taped_steps == least.taped_steps);
}

} // namespace

BOOST_AUTO_TEST_CASE(equals_the_exhaustive_searchs_least_budget)
{
    // Default tapes, and tapes of their own size from a_k up (where the recurrence's schedules are every schedule's
    // best: docs/heterogeneous.md); some adjoints below their forward, as the planner's own tests draw them.
    std::mt19937_64 rng(3870);
    int compared = 0, taped = 0, below_all_taped = 0;
    for (step_t t = 1; t <= 6; ++t)
        for (int trial = 0; trial < (t <= 4 ? 40 : 12); ++trial) {
            chain_model m = test::random_chain(rng, t, {.adjoint_below_forward = true});
            if (trial % 2 == 1)
                test::give_tape_sizes(rng, m, true);
            BOOST_TEST_CONTEXT("T=" << t << " trial " << trial)
            {
                const taped_chain_plan least = plan_taped_chain_least(m);
                BOOST_TEST(least.least_budget_bytes == brute_force_least(m));
                plan_peaks_at_the_least(m, least);
                taped += least.taped_steps > 0 ? 1 : 0;
                below_all_taped += least.least_budget_bytes < all_taped_bytes(m) ? 1 : 0;
                ++compared;
            }
        }
    BOOST_TEST(compared == 184);
    BOOST_TEST(taped > 10);           // plans that tape some step at the least
    BOOST_TEST(below_all_taped > 50); // and least budgets below plain autograd's
}

BOOST_AUTO_TEST_CASE(tapes_below_their_adjoint_bytes_are_never_below_the_exhaustive_search)
{
    // A tape below a_k lets a schedule outside the recurrence fit less (docs/heterogeneous.md): the least is then
    // the recurrence's, never below the exhaustive search's, and its plan still peaks exactly there.
    std::mt19937_64 rng(3871);
    int compared = 0;
    for (step_t t = 2; t <= 5; ++t)
        for (int trial = 0; trial < 15; ++trial) {
            chain_model m = test::random_chain(rng, t);
            test::give_tape_sizes(rng, m, false);
            BOOST_TEST_CONTEXT("T=" << t << " trial " << trial)
            {
                const taped_chain_plan least = plan_taped_chain_least(m);
                BOOST_TEST(least.least_budget_bytes >= brute_force_least(m));
                plan_peaks_at_the_least(m, least);
                ++compared;
            }
        }
    BOOST_TEST(compared == 60);
}

BOOST_AUTO_TEST_CASE(equals_the_planners_least_budget_at_one_byte)
{
    // Chains of up to 40 steps (the planner's dense, runs and memory-at-a-time tables), small and wider sizes, tapes
    // of their own size on half: plan_taped_chain at one byte a unit plans the least and refuses a byte less.
    std::mt19937_64 rng(3872);
    int compared = 0;
    for (const step_t t : {1, 2, 3, 4, 5, 7, 12, 20, 26, 33, 40})
        for (int trial = 0; trial < (t <= 5 ? 60 : 6); ++trial) {
            const bool wide = trial % 3 == 2;
            chain_model m = test::random_chain(
                rng, t, {.most_state_bytes = wide ? 40u : 9u, .most_adjoint_bytes = wide ? 60u : 4u});
            if (trial % 3 == 1)
                test::give_tape_sizes(rng, m, false);
            if (trial % 3 == 2)
                test::give_tapes_below_inputs(rng, m);
            BOOST_TEST_CONTEXT("T=" << t << " trial " << trial)
            {
                const taped_chain_plan least = plan_taped_chain_least(m);
                BOOST_TEST(least.least_budget_bytes == the_planners_least(m));
                BOOST_TEST(plan_taped_chain(m, least.least_budget_bytes, 1).peak_bytes <= least.least_budget_bytes);
                BOOST_CHECK_THROW((void)plan_taped_chain(m, least.least_budget_bytes - 1, 1), capacity_error);
                plan_peaks_at_the_least(m, least);
                ++compared;
            }
        }
    BOOST_TEST(compared == 336);
}

BOOST_AUTO_TEST_CASE(tapes_below_their_inputs_equal_the_planners_least_budget)
{
    // Where a tape is below its input (storage shared with a neighbour's tape), the part before a split may hold
    // less than x_s and the steps the split's advance runs: the advance's own peak, x_s and the widest state it
    // passes, then decides (about one chain in 200 here). Many small chains, against plan_taped_chain at one byte.
    std::mt19937_64 rng(3874);
    int compared = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        const step_t t = 2 + trial % 10;
        chain_model m = test::random_chain(rng, t, {.most_state_bytes = 9, .most_adjoint_bytes = 4});
        test::give_tapes_below_inputs(rng, m);
        const taped_chain_plan least = plan_taped_chain_least(m);
        const std::uint64_t planners = the_planners_least(m);
        if (least.least_budget_bytes != planners || least.peak_bytes != planners)
            BOOST_ERROR("T=" << t << " trial " << trial << ": least " << least.least_budget_bytes << ", peak "
                             << least.peak_bytes << ", the planner's " << planners);
        ++compared;
    }
    BOOST_TEST(compared == 3000);
}

BOOST_AUTO_TEST_CASE(sizes_whose_sums_pass_64_bits)
{
    // Every size times 2^58, 2^59 or 2^60: where the chain's bytes fit 64 bits (remat::validate's bound: every state
    // and tape, the largest state and a_k), the least is the small chain's times that (max, min and sums scale); where
    // its tapes add up past 2^64 - 1, both planners refuse it alike (wrapped, a tape on top of a part's peak would look
    // small).
    std::mt19937_64 rng(3873);
    int compared = 0, refused = 0;
    for (int trial = 0; trial < 120; ++trial) {
        const step_t t = 4 + trial % 3;
        chain_model m = test::random_chain(rng, t, {.most_state_bytes = 1u + trial % 2, .most_adjoint_bytes = 8});
        std::uint64_t bytes = m.final_state_bytes, largest = m.final_state_bytes, largest_adjoint = 0;
        for (step_t k = 0; k < t; ++k) {
            const chain_step& st = m.steps[static_cast<std::size_t>(k)];
            bytes += st.state_bytes + m.tape_bytes(k) - st.state_bytes * (st.tape_bytes == 0 ? 1 : 0);
            largest = std::max(largest, st.state_bytes);
            largest_adjoint = std::max(largest_adjoint, st.adjoint_bytes);
        }
        bytes += largest + largest_adjoint;
        const std::uint64_t small = plan_taped_chain_least(m).least_budget_bytes;
        BOOST_TEST_REQUIRE(small == brute_force_least(m));
        const int shift = 58 + trial % 5 / 2; // 58, 58, 59, 59, 60
        const std::uint64_t scale = std::uint64_t{1} << shift;
        for (chain_step& st : m.steps) {
            st.state_bytes *= scale;
            st.adjoint_bytes *= scale;
            st.tape_bytes *= scale;
        }
        m.final_state_bytes *= scale;
        BOOST_TEST_CONTEXT("trial " << trial << ", " << bytes << " x 2^" << shift << " bytes")
        {
            if (bytes < (std::uint64_t{1} << (64 - shift))) {
                const taped_chain_plan least = plan_taped_chain_least(m);
                BOOST_TEST(least.least_budget_bytes == small * scale);
                BOOST_TEST(price_taped_chain(m, least.actions).peak_bytes == small * scale);
                ++compared;
            } else {
                BOOST_CHECK_THROW((void)plan_taped_chain_least(m), argument_error);
                BOOST_CHECK_THROW((void)plan_taped_chain(m, small * 2), argument_error);
                ++refused;
            }
        }
    }
    BOOST_TEST_MESSAGE(compared << " compared, " << refused << " refused");
    BOOST_TEST(compared > 10);
    BOOST_TEST(refused > 10);
}

BOOST_AUTO_TEST_CASE(refuses_what_the_planner_refuses)
{
    const chain_model good = chain_model::uniform(3, 1.0, 2.0, 4, 1);
    const auto refused_alike = [](const chain_model& m, const std::string& says) {
        BOOST_CHECK_THROW((void)plan_taped_chain(m, 1 << 20, 1), argument_error);
        try {
            (void)plan_taped_chain_least(m);
            BOOST_ERROR("not refused: " << says);
        } catch (const argument_error& e) {
            BOOST_TEST(std::string(e.what()).find(says) != std::string::npos, e.what());
        }
    };
    refused_alike(chain_model{}, "at least one step");
    chain_model m = good;
    m.steps[1].state_bytes = 0;
    refused_alike(m, "step 1: state_bytes must be at least 1");
    m = good;
    m.final_state_bytes = 0;
    refused_alike(m, "final_state_bytes must be at least 1");
    m = good;
    m.steps[2].forward = std::numeric_limits<double>::quiet_NaN();
    refused_alike(m, "step 2: forward cost must be finite");
    m = good;
    m.steps[0].adjoint = -1;
    refused_alike(m, "step 0: adjoint cost must be finite and >= 0");
    m = good;
    m.steps[0].tape_bytes = std::numeric_limits<std::uint64_t>::max() - 4;
    refused_alike(m, "more than 2^64-1 bytes");
}

// The example of include/remat/schedule/chain_taped_least.hpp, as it stands there.
BOOST_AUTO_TEST_CASE(the_headers_example)
{
    remat::chain_model m = remat::chain_model::uniform(100, 1.0, 2.0, 1 << 20, 1 << 20);
    remat::taped_chain_plan least = remat::plan_taped_chain_least(m);
    // least.peak_bytes: no plan of m fits a smaller budget; the cheapest plan within it:
    remat::taped_chain_plan best = remat::plan_taped_chain(m, least.peak_bytes, 1 << 20);
    BOOST_TEST(best.peak_bytes <= least.peak_bytes);
    BOOST_TEST(best.least_budget_bytes == least.peak_bytes);
    BOOST_TEST(best.cost <= least.cost);
}
