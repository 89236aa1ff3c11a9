// The heterogeneous-chain schedule: optimal against the brute force over every legal action sequence on
// small random chains, legal and within budget under an independent replay, its reported cost and peak
// equal to the replay's, revolve's cost on uniform chains, the discretisation gap within its stated bound,
// and clear errors for bad input.
#define BOOST_TEST_MODULE chain
#include <boost/test/unit_test.hpp>

#include "chain_reference.hpp"
#include "random_chain.hpp"

#include "remat/error.hpp"
#include "remat/schedule/any_schedule.hpp"
#include "remat/schedule/chain.hpp"
#include "remat/schedule/chain_greedy.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace remat;

namespace {

// Sanitizer builds (REMAT_QUICK_SEARCH) run the dynamic program some 200 times slower: the cases that plan many
// or large tables check the same properties there on fewer or smaller chains.
#if defined(REMAT_QUICK_SEARCH)
constexpr bool quick = true;
#else
constexpr bool quick = false;
#endif

std::uint64_t largest_step_need(const chain_model& m)
{
    std::uint64_t need = 0;
    for (step_t k = 0; k < m.size(); ++k)
        need = std::max(need, m.adjoint_need(k));
    return need;
}

chain::options byte_exact()
{
    chain::options o;
    o.granularity = 1;
    return o;
}

// Checks a plan under the independent replay: legal, within budget, and reporting what it does.
test::chain_replay check_plan(const chain& plan, const chain_model& m, std::uint64_t budget)
{
    const test::chain_replay r = test::replay_chain_plan(m, plan);
    BOOST_TEST_REQUIRE(!r.error.has_value(), *r.error);
    BOOST_TEST(r.peak_bytes <= budget);
    BOOST_TEST(r.peak_bytes == plan.peak_bytes());
    BOOST_TEST(std::abs(r.cost - plan.cost().predicted_cost) <= 1e-9 * (1 + r.cost));
    BOOST_TEST(r.forward_steps == plan.cost().forward_steps);
    BOOST_TEST(r.stores == plan.cost().stores);
    BOOST_TEST(r.restores == plan.cost().restores);
    return r;
}

} // namespace

BOOST_AUTO_TEST_CASE(optimal_against_every_action_sequence)
{
    std::mt19937_64 rng(16);
    int compared = 0;
    int infeasible = 0;
    for (step_t t = 1; t <= 6; ++t) {
        for (int trial = 0; trial < (t <= 3 ? 40 : 25); ++trial) {
            const chain_model m = test::random_chain(rng, t, test::adjoints_apart(5, trial % 3 == 0 ? 3 : 0));
            const std::uint64_t low = largest_step_need(m);
            for (std::uint64_t budget = low; budget <= m.store_all_bytes() + 1; ++budget) {
                const double best = test::brute_force_chain_optimum(m, budget, true);
                if (std::isinf(best)) {
                    BOOST_CHECK_THROW(chain(m, budget, byte_exact()), capacity_error);
                    ++infeasible;
                    continue;
                }
                const chain plan(m, budget, byte_exact());
                BOOST_TEST_CONTEXT("T=" << t << " trial " << trial << " budget " << budget)
                {
                    BOOST_TEST(plan.exact());
                    BOOST_TEST(plan.lossless());
                    const test::chain_replay r = check_plan(plan, m, budget);
                    BOOST_TEST(r.cost == best);
                }
                ++compared;
            }
        }
    }
    BOOST_TEST(compared > 1000);
    BOOST_TEST(infeasible > 10); // the least budget is found, not assumed
}

BOOST_AUTO_TEST_CASE(least_budget_is_the_first_that_fits)
{
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 40; ++trial) {
        const chain_model m = test::random_chain(rng, 5, test::adjoints_apart(6, 2));
        const chain plan(m, m.store_all_bytes(), byte_exact());
        const std::uint64_t least = plan.least_budget_bytes();
        BOOST_TEST(!std::isinf(test::brute_force_chain_optimum(m, least, true)));
        BOOST_TEST(std::isinf(test::brute_force_chain_optimum(m, least - 1, true)));
        BOOST_CHECK_NO_THROW(chain(m, least, byte_exact()));
        if (least - 1 >= largest_step_need(m))
            BOOST_CHECK_THROW(chain(m, least - 1, byte_exact()), capacity_error);
    }
}

BOOST_AUTO_TEST_CASE(uniform_chains_cost_what_revolve_costs)
{
    constexpr std::uint64_t m = 4096;
    // Quick: every slot count up to T = 24, then T = 30, 45, 70 at the fewest slots, half of T and T, T + 1.
    const auto in_grid = [](step_t t, slot_t s) {
        return !quick || t <= 24 || ((t == 30 || t == 45 || t == 70) && (s <= 3 || s == t / 2 || s >= t));
    };
    for (step_t t = 1; t <= 70; ++t) {
        for (slot_t s = 1; s <= t + 1; ++s) {
            if (!in_grid(t, s))
                continue;
            const chain_model model = chain_model::uniform(t, 1.0, 2.5, m);
            const chain plan(model, static_cast<std::uint64_t>(s + 1) * m);
            const schedule_cost binomial = revolve(t, s).cost();
            BOOST_TEST_CONTEXT("T=" << t << " s=" << s)
            {
                BOOST_TEST(plan.lossless());
                BOOST_TEST(plan.granularity() == m);
                BOOST_TEST(plan.cost().forward_steps == binomial.forward_steps);
                BOOST_TEST(plan.cost().predicted_cost ==
                           static_cast<double>(binomial.forward_steps) + 2.5 * static_cast<double>(t));
                BOOST_TEST(plan.cost().peak_slots <= s);
                if (t <= 30)
                    check_plan(plan, model, static_cast<std::uint64_t>(s + 1) * m);
            }
        }
    }
}

// Tables of at most 16 units, 256 units or more take different code (vector registers, by split, by sampled
// candidate); a chain whose sizes are all multiples of k is the same problem at k times the units, so its plan must
// be the same action for action at every scale. Chains long enough for the rows of a start to fill several groups.
BOOST_AUTO_TEST_CASE(narrow_tables_plan_what_finer_units_plan)
{
    std::mt19937_64 rng(1616);
    int compared = 0;
    const int trials = quick ? 12 : 24; // quick: T = 9 .. 31
    for (int trial = 0; trial < trials; ++trial) {
        const auto t = static_cast<step_t>(9 + trial * 2);
        const chain_model m = test::random_chain(rng, t, test::adjoints_apart(4, trial % 2 == 0 ? 2 : 0));
        const std::uint64_t low = largest_step_need(m);
        for (std::uint64_t budget = low; budget <= std::min<std::uint64_t>(15, m.store_all_bytes()); ++budget) {
            std::optional<chain> narrow;
            try {
                narrow.emplace(m, budget, byte_exact());
            } catch (const capacity_error&) {
                continue;
            }
            const auto actions = [](const chain& plan) {
                std::vector<action> out;
                for (const action& a : plan)
                    out.push_back(a);
                return out;
            };
            const std::vector<action> expected = actions(*narrow);
            for (const std::uint64_t k : {5U, 20U}) { // 16 to 80 units; 64 to 300
                chain_model scaled = m;
                for (chain_step& s : scaled.steps) {
                    s.state_bytes *= k;
                    s.adjoint_bytes *= k;
                }
                scaled.final_state_bytes *= k;
                const chain finer(scaled, budget * k, byte_exact());
                BOOST_TEST_CONTEXT("T=" << t << " trial " << trial << " budget " << budget << " scale " << k)
                {
                    BOOST_TEST(finer.units() == narrow->units() * k);
                    BOOST_TEST(finer.cost().predicted_cost == narrow->cost().predicted_cost);
                    BOOST_TEST((actions(finer) == expected));
                }
            }
            check_plan(*narrow, m, budget);
            ++compared;
        }
    }
    BOOST_TEST(compared > 100);
}

BOOST_AUTO_TEST_CASE(discretisation_costs_at_most_the_stated_gap)
{
    std::mt19937_64 rng(3);
    int bounded = 0;
    for (int trial = 0; trial < 150; ++trial) {
        const step_t t = 2 + trial % 5;
        const chain_model m = test::random_chain(rng, t, test::adjoints_apart(60, trial % 2 == 0 ? 20 : 0));
        const std::uint64_t granularity = std::vector<std::uint64_t>{3, 5, 8}[static_cast<std::size_t>(trial % 3)];
        chain::options o;
        o.granularity = granularity;
        for (std::uint64_t budget = largest_step_need(m); budget <= m.store_all_bytes() + (t + 3) * granularity;
             budget += 7) {
            BOOST_TEST_CONTEXT("trial " << trial << " budget " << budget << " granularity " << granularity)
            {
                const double best = test::brute_force_chain_optimum(m, budget, true);
                try {
                    const chain plan(m, budget, o);
                    BOOST_TEST((plan.discretisation_gap_bytes() == (static_cast<std::uint64_t>(t) + 3) * granularity ||
                                plan.lossless()));
                    const test::chain_replay r = check_plan(plan, m, budget);
                    BOOST_TEST(r.cost >= best);
                    const std::uint64_t gap = plan.discretisation_gap_bytes();
                    if (budget >= gap) {
                        const double reduced = test::brute_force_chain_optimum(m, budget - gap, true);
                        BOOST_TEST(r.cost <= reduced);
                        bounded += std::isinf(reduced) ? 0 : 1;
                    }
                } catch (const capacity_error&) {
                    // nothing fits the rounded model: then nothing fits the budget less the gap either
                    BOOST_TEST((budget < (static_cast<std::uint64_t>(t) + 3) * granularity ||
                                std::isinf(test::brute_force_chain_optimum(
                                    m, budget - (static_cast<std::uint64_t>(t) + 3) * granularity, true))));
                }
            }
        }
    }
    BOOST_TEST(bounded > 200);
}

BOOST_AUTO_TEST_CASE(a_budget_beyond_store_all_plans_as_store_all_does)
{
    // Memory past what storing every state needs is never used, so it must not change the plan or its report:
    // it coarsened the automatic units (4 GiB for a chain of 26 KiB: lossless lost, the least budget reported
    // 900 times too large) and, at a given granularity, grew the table until the horizon shrank.
    std::mt19937_64 rng(11);
    for (int trial = 0; trial < 30; ++trial) {
        chain_model m = test::random_chain(rng, 2 + trial % 9, test::adjoints_apart(6, trial % 2 == 0 ? 3 : 0));
        for (chain_step& s : m.steps) { // sizes of whole KiB, and a divisor of 512 bytes
            s.state_bytes *= 1024;
            s.adjoint_bytes *= 512;
        }
        m.final_state_bytes *= 1024;
        const std::uint64_t all = m.store_all_bytes();
        chain::options given;
        given.granularity = 512;
        for (const chain::options& o : {chain::options{}, given}) {
            const chain at(m, all, o);
            for (const std::uint64_t budget : {all + 1, 3 * all, 1000 * all, std::uint64_t{1} << 40}) {
                BOOST_TEST_CONTEXT("trial " << trial << " granularity " << o.granularity << " budget " << budget)
                {
                    const chain beyond(m, budget, o);
                    BOOST_TEST(beyond.granularity() == at.granularity());
                    BOOST_TEST(beyond.lossless());
                    BOOST_TEST(beyond.exact());
                    BOOST_TEST(beyond.least_budget_bytes() == at.least_budget_bytes());
                    BOOST_TEST(beyond.units() <= at.units());
                    BOOST_TEST(beyond.table_bytes() == at.table_bytes());
                    BOOST_TEST(beyond.cost().predicted_cost == at.cost().predicted_cost);
                    check_plan(beyond, m, budget);
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(an_automatic_granularity_uses_the_roundings_slack)
{
    // Sizes of thousands of bytes with no useful common divisor: the automatic granularity rounds them up.
    std::mt19937_64 rng(5);
    int cheaper = 0;
    for (int trial = 0; trial < 6; ++trial) {
        const step_t t = 100 + 20 * trial;
        const chain_model m = test::random_chain(rng, t, test::adjoints_apart(100000, 20000));
        const std::uint64_t budget = largest_step_need(m) + m.store_all_bytes() / (trial % 2 == 0 ? 2 : 5);
        BOOST_TEST_CONTEXT("T=" << t << " budget " << budget)
        {
            chain::options small; // tables of 2^22 entries (quick: 2^20): quicker, and just as rounded
            small.max_table_entries = std::uint64_t{1} << (quick ? 20 : 22);
            const chain with_slack(m, budget, small);
            BOOST_TEST_REQUIRE(!with_slack.lossless());
            BOOST_TEST(with_slack.planned_units() >= with_slack.units());
            check_plan(with_slack, m, budget); // legal, within the true budget, reporting what it does
            // The same tables' plan walked from the budget's own units: never cheaper.
            chain::options o = small;
            o.granularity = with_slack.granularity();
            o.horizon = with_slack.horizon();
            const chain without(m, budget, o);
            BOOST_TEST(without.planned_units() == without.units());
            BOOST_TEST(with_slack.cost().predicted_cost <= without.cost().predicted_cost);
            cheaper += with_slack.cost().predicted_cost < without.cost().predicted_cost ? 1 : 0;
        }
    }
    BOOST_TEST(cheaper >= 3); // the slack is used, not merely allowed
}

BOOST_AUTO_TEST_CASE(a_chain_planned_in_blocks_is_legal_and_never_beats_the_exact_plan)
{
    std::mt19937_64 rng(23);
    int planned = 0;
    int refused = 0;
    for (int trial = 0; trial < 60; ++trial) {
        const step_t t = 5 + trial % 36;
        const chain_model m = test::random_chain(rng, t, test::adjoints_apart(40, trial % 3 == 0 ? 30 : 0));
        const std::uint64_t least = chain(m, m.store_all_bytes(), byte_exact()).least_budget_bytes();
        for (const std::uint64_t budget : {least + (m.store_all_bytes() - least) / 3, m.store_all_bytes()}) {
            chain::options o = byte_exact();
            o.block_steps = 1 + trial % t; // blocks of 1 .. T steps, the last shorter
            BOOST_TEST_CONTEXT("trial " << trial << " T=" << t << " budget " << budget << " blocks of "
                                        << o.block_steps)
            {
                const chain exact(m, budget, byte_exact());
                try {
                    const chain blocks(m, budget, o);
                    ++planned;
                    BOOST_TEST(blocks.block_steps() == o.block_steps);
                    BOOST_TEST(blocks.steps() == t);
                    const test::chain_replay r = check_plan(blocks, m, budget); // legal, within the true budget
                    BOOST_TEST(r.cost >= exact.cost().predicted_cost - 1e-9);
                } catch (const capacity_error&) {
                    // a block's adjoint holds its states at once, and an advance through a block may hold a
                    // wider inner state than its ends (reserved from the budget): blocks may not fit
                    ++refused;
                }
            }
        }
    }
    BOOST_TEST_MESSAGE(planned << " planned in blocks, " << refused << " refused");
    BOOST_TEST(planned > 50);
}

// Memory for every state: a chain in blocks keeps each block's states from the first sweep (its adjoint restores
// them), so it costs what storing everything costs; re-running each block inside its adjoint, as the plan in
// blocks did before it could keep them, runs most steps twice.
BOOST_AUTO_TEST_CASE(a_chain_in_blocks_with_room_for_every_state_runs_each_step_once)
{
    std::mt19937_64 rng(31);
    for (int trial = 0; trial < 40; ++trial) {
        const step_t t = 12 + trial;
        const chain_model m = test::random_chain(rng, t, test::adjoints_apart(40, trial % 2 == 0 ? 30 : 0));
        chain::options o = byte_exact();
        o.block_steps = 2 + trial % 6;
        BOOST_TEST_CONTEXT("trial " << trial << " T=" << t << " blocks of " << o.block_steps)
        {
            const chain plan(m, m.store_all_bytes(), o);
            check_plan(plan, m, m.store_all_bytes());
            double all = 0; // storing everything: every step but the last forward once, every adjoint
            for (step_t k = 0; k < t; ++k)
                all += (k + 1 < t ? m.steps[static_cast<std::size_t>(k)].forward : 0.0) +
                       m.steps[static_cast<std::size_t>(k)].adjoint;
            BOOST_TEST(plan.cost().predicted_cost == all, boost::test_tools::tolerance(1e-9)); // (some f_k are 0)
        }
    }
}

// Chains like bench/chain_plan's (costs and sizes drawn, wide and narrow states), planned in blocks, against
// the simple plans priced by the same model: checkpointing every k-th state at the best k that fits, revolve
// treating the chain as uniform (the most slots of the largest state that fit) and the greedy memory/compute
// ranking. In blocks that are re-run inside their adjoint, all three beat the plan (bench/chain_plan at
// T = 10000); where the greedy ranking still does, it is the plan (method()).
BOOST_AUTO_TEST_CASE(a_chain_in_blocks_is_never_dearer_than_every_kth_state_revolve_or_the_greedy_ranking)
{
    std::mt19937_64 rng(2026);
    std::uniform_real_distribution<double> f(0.5, 2.0);
    std::uniform_real_distribution<double> ratio(1.5, 3.0);
    std::uniform_int_distribution<std::uint64_t> pages(16, 1024);
    int compared = 0;
    int fell_back = 0;
    // Each plan fills a table of 2^25 entries whatever T: quick plans one chain.
    for (const step_t t : quick ? std::vector<step_t>{200} : std::vector<step_t>{200, 400}) {
        chain_model m;
        for (step_t k = 0; k < t; ++k) {
            const double forward = f(rng);
            const std::uint64_t bytes = 64 * pages(rng);
            m.steps.push_back({forward, forward * ratio(rng), bytes, k % 4 == 3 ? bytes : 0});
        }
        m.final_state_bytes = 64 * pages(rng);
        std::uint64_t largest = m.final_state_bytes;
        for (const chain_step& s : m.steps)
            largest = std::max(largest, s.state_bytes);
        for (const int percent : {10, 20, 30, 50}) {
            const std::uint64_t budget = m.store_all_bytes() * static_cast<std::uint64_t>(percent) / 100;
            chain::options o;
            o.block_steps = 10;
            const chain plan(m, budget, o);
            const test::chain_replay r = check_plan(plan, m, budget);
            double every_k = std::numeric_limits<double>::infinity();
            for (step_t k = 1; k <= t; ++k) {
                const chain_evaluation e = evaluate(m, uniform(t, k));
                if (e.peak_bytes <= budget)
                    every_k = std::min(every_k, e.cost);
            }
            double as_uniform = std::numeric_limits<double>::infinity();
            for (auto slots = static_cast<slot_t>(budget / largest); slots >= 1; --slots) {
                const chain_evaluation e = evaluate(m, revolve(t, slots));
                if (e.peak_bytes <= budget) {
                    as_uniform = e.cost;
                    break;
                }
            }
            const listed_plan greedy = greedy_ranking(m, budget);
            const double by_greedy =
                greedy.empty() ? std::numeric_limits<double>::infinity() : greedy.cost().predicted_cost;
            BOOST_TEST_CONTEXT("T=" << t << " budget " << percent << "%: plan " << r.cost << " (" << plan.method()
                                    << "), every k-th " << every_k << ", revolve as uniform " << as_uniform
                                    << ", greedy ranking " << by_greedy)
            {
                BOOST_TEST(r.cost <= every_k); // (infinite where none fits)
                BOOST_TEST(r.cost <= as_uniform);
                BOOST_TEST(r.cost <= by_greedy);
                compared += std::isfinite(every_k) ? 1 : 0;
                // the greedy ranking's plan is taken only where it costs less than the tables' own
                if (std::string(plan.method()) == "greedy ranking") {
                    ++fell_back;
                    BOOST_TEST(r.cost == by_greedy);
                } else {
                    BOOST_TEST(std::string(plan.method()) == "dynamic program");
                }
            }
        }
    }
    BOOST_TEST(compared >= (quick ? 3 : 6)); // every k-th state fits at 20% and more
    BOOST_TEST_MESSAGE(fell_back << " of " << (quick ? 4 : 8) << " plans are the greedy ranking's");
}

BOOST_AUTO_TEST_CASE(a_short_horizon_is_legal_and_never_beats_the_exact_plan)
{
    std::mt19937_64 rng(11);
    const int trials = quick ? 15 : 30;
    for (int trial = 0; trial < trials; ++trial) {
        const step_t t = quick ? 25 + 2 * trial : 40 + trial; // longer than the longest horizon tried
        const chain_model m = test::random_chain(rng, t, test::adjoints_apart(50, 10));
        const std::uint64_t budget = largest_step_need(m) + m.store_all_bytes() / 4;
        const chain exact(m, budget);
        BOOST_TEST(exact.exact());
        check_plan(exact, m, budget);
        for (step_t k : {1, 3, 8, 20}) {
            chain::options o;
            o.horizon = k;
            o.granularity = exact.granularity();
            try {
                const chain near(m, budget, o);
                BOOST_TEST(!near.exact());
                BOOST_TEST(near.horizon() == k);
                const test::chain_replay r = check_plan(near, m, budget);
                BOOST_TEST(r.cost >= exact.cost().predicted_cost - 1e-6 * r.cost);
            } catch (const capacity_error&) {
                BOOST_TEST(k < 8); // only very short horizons may find nothing
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused_naming_the_value)
{
    chain_model m = chain_model::uniform(4, 1, 2, 100);
    auto message = [](auto&& make) -> std::string {
        try {
            make();
        } catch (const error& e) {
            return e.what();
        }
        return "no error";
    };
    m.steps[2].forward = -1;
    BOOST_TEST(message([&] { chain(m, 1000); }).find("step 2: forward cost must be finite and >= 0, got -1") !=
               std::string::npos);
    m.steps[2].forward = -1e-9; // named as it is, not rounded to six decimals ("-0.000000")
    BOOST_TEST(message([&] { chain(m, 1000); }) == "step 2: forward cost must be finite and >= 0, got -1e-09");
    m.steps[2].forward = std::numeric_limits<double>::quiet_NaN();
    BOOST_CHECK_THROW(chain(m, 1000), argument_error);
    m.steps[2].forward = 1;
    m.steps[1].adjoint = std::numeric_limits<double>::infinity();
    BOOST_TEST(message([&] { chain(m, 1000); }).find("step 1: adjoint cost") != std::string::npos);
    m.steps[1].adjoint = 1;
    m.steps[3].state_bytes = 0;
    BOOST_TEST(message([&] { chain(m, 1000); }).find("step 3: state_bytes must be at least 1, got 0") !=
               std::string::npos);
    m.steps[3].state_bytes = 100;
    m.final_state_bytes = 0;
    BOOST_CHECK_THROW(chain(m, 1000), argument_error);
    m.final_state_bytes = 100;
    m.steps[3].adjoint_bytes = 500;
    BOOST_TEST(message([&] { chain(m, 599); }).find("below what step 3 alone needs") != std::string::npos);
    // x_0 stays stored while step 3's adjoint runs
    BOOST_TEST(message([&] { chain(m, 650); }) ==
               "no schedule of this chain fits a budget of 650 bytes at a granularity of 100 bytes; it needs at "
               "least 700 bytes");
    BOOST_CHECK_NO_THROW(chain(m, 700));
    // Two units of 2^64-1 bytes: the least budget named was their product wrapped, 18446744073709551614 bytes
    chain::options widest;
    widest.granularity = UINT64_MAX;
    BOOST_TEST(message([&] { chain(m, 700, widest); }) ==
               "no schedule of this chain fits a budget of 700 bytes at a granularity of 18446744073709551615 bytes; "
               "it needs more than 2^64-1 bytes at this granularity");
    BOOST_CHECK_THROW(chain(chain_model{}, 1000), argument_error);
    chain::options tiny;
    tiny.granularity = 1;
    tiny.max_table_entries = 100;
    BOOST_CHECK_THROW(chain(m, 100000, tiny), capacity_error);
}

BOOST_AUTO_TEST_CASE(costs_past_the_float_tables_are_refused_not_reported_as_no_fit)
{
    // Finite costs past a float (the tables' type) made every entry infinite: "no schedule of this chain fits a
    // budget of 100 bytes ...; it needs at least 30 bytes", of a chain that store-all plans in 20.
    const chain_model huge = chain_model::uniform(2, 1e100, 1, 10);
    try {
        (void)chain(huge, 100);
        BOOST_ERROR("planned");
    } catch (const argument_error& e) {
        BOOST_TEST(std::string(e.what()).find("too large for the planner's float tables") != std::string::npos,
                   e.what());
    }
    // T * (sum of forward costs) + (sum of adjoint costs) within a float: planned, legal, and the plan of the same
    // chain at costs 1e30 times smaller.
    chain_model large = chain_model::uniform(6, 1e36, 2e36, 10);
    large.steps[2].forward = 3e36;
    chain_model small = chain_model::uniform(6, 1e6, 2e6, 10);
    small.steps[2].forward = 3e6;
    for (const std::uint64_t budget : {30, 40, 70}) {
        const chain plan(large, budget);
        (void)check_plan(plan, large, budget);
        BOOST_TEST(plan.cost().forward_steps == chain(small, budget).cost().forward_steps);
    }
}

BOOST_AUTO_TEST_CASE(evaluate_prices_other_schedules_like_the_replay)
{
    std::mt19937_64 rng(21);
    const int trials = quick ? 20 : 40;
    for (int trial = 0; trial < trials; ++trial) {
        const step_t t = 1 + trial;
        const chain_model m = test::random_chain(rng, t, test::adjoints_apart(1000, 300));
        for (const any_schedule& plan : {any_schedule(revolve(t, 1 + trial % 4)),
                                         any_schedule(uniform(t, 1 + trial % 5)), any_schedule(store_all(t, t))}) {
            const chain_evaluation e = evaluate(m, plan);
            const test::chain_replay r = test::replay_chain_plan(m, plan);
            BOOST_TEST_REQUIRE(!r.error.has_value());
            BOOST_TEST(e.cost == r.cost);
            BOOST_TEST(e.peak_bytes == r.peak_bytes);
            BOOST_TEST(e.counts.forward_steps == r.forward_steps);
        }
        // store_all_bytes() is what running every step forward once needs (each snapshot freed at its restore,
        // which remat::store_all does only after the adjoint)
        const chain all(m, m.store_all_bytes(), byte_exact());
        BOOST_TEST(all.cost().forward_steps == static_cast<std::uint64_t>(t - 1));
        BOOST_TEST(all.peak_bytes() == m.store_all_bytes());
        BOOST_TEST(evaluate(m, store_all(t, t)).peak_bytes >= m.store_all_bytes());
    }
    BOOST_CHECK_THROW((void)evaluate(chain_model::uniform(5, 1, 1, 8), revolve(6, 2)), argument_error);
}
