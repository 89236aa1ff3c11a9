// remat::plan_taped_chain (chains with taped advances): on small random chains, at every budget from the
// least to the all-taped plan's peak, the plan is legal and within the budget under the independent replay,
// costs what it says, and costs exactly the optimum of an exhaustive search over every schedule of the
// model; never more than remat::chain's (states only); with room for every tape, it is plain autograd's
// (sum of b_k, no step run twice), where remat::chain re-runs every step but the last. On longer chains (where
// the planner bounds its search over splits instead of pricing each), the same optimum and the same plan as
// the plain recurrence (chain_taped_recurrence.hpp); the three forms of the table (dense, runs, a memory at a time)
// agree entry by entry; and the work the bounded searches take, far below the plain recurrence's.
#define BOOST_TEST_MODULE chain_taped
#include <boost/test/unit_test.hpp>

#include "chain_taped_recurrence.hpp"
#include "chain_taped_reference.hpp"
#include "chain_taped_table.hpp" // src/schedule: the two forms of the table, compared entry by entry
#include "random_chain.hpp"

#include "remat/error.hpp"
#include "remat/schedule/chain.hpp"
#include "remat/schedule/chain_taped.hpp"
#include "remat/schedule/chain_taped_least.hpp"
#include "remat/schedule/chain_taped_price.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace remat;

namespace {

// Adjoints at least their forward on most (tests/support/random_chain.hpp).
chain_model random_chain(std::mt19937_64& rng, step_t steps)
{
    return test::random_chain(rng, steps, {.adjoint_below_forward = true});
}

// The all-taped plan written out: every step but the last advanced keeping its tape, then every step reversed.
std::vector<action> all_taped_actions(step_t steps)
{
    std::vector<action> out;
    for (step_t k = 0; k + 1 < steps; ++k)
        out.emplace_back(advance{k, k + 1, true});
    for (step_t k = steps - 1; k >= 0; --k)
        out.emplace_back(reverse{k});
    return out;
}

// Plans m within budget at units of g and checks the plan against the plain recurrence's (the same cost and
// the same actions, ties included; refused alike where nothing fits). Returns whether a plan was compared.
bool plans_as_the_plain_recurrence(const chain_model& m, std::uint64_t budget, std::uint64_t g)
{
    const test::recurrence_plan want = test::plain_taped_recurrence(m, budget, g);
    if (std::isinf(want.cost)) {
        BOOST_CHECK_THROW((void)plan_taped_chain(m, budget, g), capacity_error);
        return false;
    }
    const taped_chain_plan plan = plan_taped_chain(m, budget, g);
    BOOST_TEST(plan.cost == want.cost);
    BOOST_TEST((plan.actions == want.actions));
    return true;
}

} // namespace

// Plans m at units of one byte at every budget from 1 to past its all-taped peak and checks each plan against the
// exhaustive search (the same cost; refused where it finds none) and the replay (legal, within the budget, its
// peak and cost), and its least budget (the first budget planned); also(plan, budget) checks more. Returns the
// plans compared.
template <class Also>
int equals_the_exhaustive_search(const chain_model& m, Also also)
{
    int compared = 0;
    std::uint64_t least = 0;
    for (std::uint64_t budget = 1; budget <= all_taped_bytes(m) + 2; ++budget) {
        BOOST_TEST_CONTEXT("budget " << budget)
        {
            const double best = test::brute_force_taped_chain_optimum(m, budget);
            if (std::isinf(best)) {
                BOOST_CHECK_THROW((void)plan_taped_chain(m, budget, 1), capacity_error);
                continue;
            }
            const taped_chain_plan plan = plan_taped_chain(m, budget, 1);
            if (least == 0)
                least = budget;
            BOOST_TEST(plan.least_budget_bytes == least);
            const test::chain_replay r = test::replay_taped_chain(m, plan.actions);
            BOOST_TEST(!r.error.has_value(), (r.error ? *r.error : std::string()));
            BOOST_TEST(r.peak_bytes <= budget);
            BOOST_TEST(r.peak_bytes == plan.peak_bytes);
            BOOST_TEST(r.cost == plan.cost);
            BOOST_TEST(plan.cost == best);
            ++compared;
            also(plan, budget);
        }
    }
    return compared;
}

BOOST_AUTO_TEST_CASE(equals_the_exhaustive_search_at_every_budget)
{
    std::mt19937_64 rng(38);
    int compared = 0;
    int cheaper_than_states_only = 0;
    for (step_t t = 1; t <= 6; ++t)
        for (int trial = 0; trial < (t <= 4 ? 40 : 12); ++trial) {
            const chain_model m = random_chain(rng, t);
            BOOST_TEST_CONTEXT("T=" << t << " trial " << trial)
            {
                compared += equals_the_exhaustive_search(m, [&](const taped_chain_plan& plan, std::uint64_t budget) {
                    if (budget < m.adjoint_need(0))
                        return;
                    try {
                        const chain states_only(m, budget, [] {
                            chain::options o;
                            o.granularity = 1;
                            return o;
                        }());
                        const double theirs = test::replay_chain_plan(m, states_only).cost;
                        BOOST_TEST(plan.cost <= theirs);
                        cheaper_than_states_only += plan.cost < theirs ? 1 : 0;
                    } catch (const capacity_error&) {
                    } catch (const argument_error&) {
                    }
                });
            }
        }
    BOOST_TEST(compared > 1000);
    BOOST_TEST(cheaper_than_states_only > 100);
}

BOOST_AUTO_TEST_CASE(room_for_every_tape_is_plain_autograd)
{
    std::mt19937_64 rng(7);
    for (step_t t = 1; t <= 40; t += 3) {
        chain_model m = random_chain(rng, t);
        // Every step runs once: f_k + max(0, b_k - f_k) for the taped ones, b_T-1 for the last.
        double sum_b = 0;
        for (std::size_t k = 0; k + 1 < m.steps.size(); ++k)
            sum_b += m.steps[k].forward + std::max(0.0, m.steps[k].adjoint - m.steps[k].forward);
        sum_b += m.steps.back().adjoint;
        const taped_chain_plan plan = plan_taped_chain(m, all_taped_bytes(m));
        BOOST_TEST(plan.cost == sum_b);
        BOOST_TEST(plan.peak_bytes <= all_taped_bytes(m));
        const test::chain_replay r = test::replay_taped_chain(m, plan.actions);
        BOOST_TEST(!r.error.has_value());
        BOOST_TEST(r.cost == sum_b);
    }
}

BOOST_AUTO_TEST_CASE(a_budget_below_the_least_names_it)
{
    const chain_model m = chain_model::uniform(6, 1, 3, 100, 50);
    const taped_chain_plan roomy = plan_taped_chain(m, all_taped_bytes(m));
    try {
        (void)plan_taped_chain(m, roomy.least_budget_bytes - 1);
        BOOST_FAIL("expected capacity_error");
    } catch (const capacity_error& e) {
        BOOST_TEST(std::string(e.what()).find("at least " + std::to_string(roomy.least_budget_bytes) + " bytes") !=
                       std::string::npos,
                   e.what());
    }
    BOOST_TEST(plan_taped_chain(m, roomy.least_budget_bytes).peak_bytes <= roomy.least_budget_bytes);
}

BOOST_AUTO_TEST_CASE(long_chains_below_the_least_name_it_in_bounded_memory)
{
    // The least budget of a refusal came from a table reaching the all-taped plan at units that rounded every
    // size up, T units at least: from about 250 steps past the table's 2^23 entries, filled all the same (300
    // steps: 430 MB, and a least of 7,338 bytes where 2,500 plan; 1,000: bad_alloc). Now the least in true
    // bytes (remat::plan_taped_chain_least), which plan_taped_chain plans where no size is rounded.
#if defined(REMAT_SANITIZED) // 6 s there with 1,000 steps; 300 take the same path
    for (const step_t t : {300}) {
#else
    for (const step_t t : {300, 1000}) {
#endif
        BOOST_TEST_CONTEXT("T=" << t)
        {
            const chain_model m = chain_model::uniform(t, 1, 2, 1000, 500);
            const std::uint64_t least = plan_taped_chain_least(m).least_budget_bytes;
            try {
                (void)plan_taped_chain(m, least - 1, 500);
                BOOST_FAIL("expected capacity_error");
            } catch (const capacity_error& e) {
                BOOST_TEST(std::string(e.what()).find("at least " + std::to_string(least) + " bytes") !=
                               std::string::npos,
                           e.what());
            }
            BOOST_TEST(plan_taped_chain(m, least, 500).peak_bytes <= least);
        }
    }
}

BOOST_AUTO_TEST_CASE(chains_too_long_for_any_table_are_refused_not_searched)
{
    // From 2,365 steps three memories of every part pass the table's 2^23 entries, and a chain of two steps or
    // more needs two units: no granularity plans it. The search for one never ended from 4,096 steps (the rows
    // alone pass the table), and below took the least budget's table past any memory (bad_alloc).
    for (const step_t t : {2365, 4096}) {
        const chain_model m = chain_model::uniform(t, 1, 2, 1000, 500);
        for (const std::uint64_t g : {std::uint64_t{0}, std::uint64_t{500}})
            for (const std::uint64_t budget : {std::uint64_t{1} << 27, std::numeric_limits<std::uint64_t>::max()})
                BOOST_CHECK_EXCEPTION((void)plan_taped_chain(m, budget, g), capacity_error,
                                      [](const capacity_error& e) {
                                          return std::string(e.what()).find("at most 2364 steps") != std::string::npos;
                                      });
    }
}

BOOST_AUTO_TEST_CASE(tapes_that_add_up_past_64_bits_are_refused_not_wrapped)
{
    // Twenty default tapes of m_k + a_k = 1 + 2^60 bytes: each fits, together they pass 2^64-1, and the all-taped
    // peak, the plan's pricing and the tables sum them (a wrapped sum would name a small all-taped peak).
    const chain_model m = chain_model::uniform(20, 1, 2, 1, std::uint64_t{1} << 60);
    BOOST_CHECK_THROW((void)all_taped_bytes(m), argument_error);
    BOOST_CHECK_THROW((void)plan_taped_chain(m, std::uint64_t{1} << 62), argument_error);
    std::vector<action> every_step_taped; // plain autograd's plan: its peak holds 19 tapes
    for (step_t k = 0; k + 1 < 20; ++k)
        every_step_taped.emplace_back(advance{k, k + 1, true});
    for (step_t k = 20; k-- > 0;)
        every_step_taped.emplace_back(reverse{k});
    BOOST_CHECK_THROW((void)price_taped_chain(m, every_step_taped), argument_error);
    // Fourteen fit: the all-taped peak is every earlier tape and the last step's run on top of them.
    const chain_model fits = chain_model::uniform(14, 1, 2, 1, std::uint64_t{1} << 60);
    BOOST_TEST(all_taped_bytes(fits) == 13 * ((std::uint64_t{1} << 60) + 1) + 1 + (std::uint64_t{1} << 60));
}

BOOST_AUTO_TEST_CASE(costs_past_a_double_are_refused_not_reported_as_no_fit)
{
    // Three steps at 1.7e308 each: their sums are infinite, and a budget that fits every tape was refused as "no
    // schedule of this chain fits a budget of 30 bytes ...; it needs at least 30 bytes".
    const chain_model huge = chain_model::uniform(3, 1.7e308, 1.7e308, 10);
    BOOST_CHECK_EXCEPTION((void)plan_taped_chain(huge, 30), argument_error, [](const argument_error& e) {
        return std::string(e.what()).find("too large for the planner's double tables") != std::string::npos;
    });
    const taped_chain_plan plan = plan_taped_chain(chain_model::uniform(3, 1e300, 1e300, 10), 30);
    // Two steps taped (f_0 + f_1, their reverses max(0, b - f) = 0) and the last reversed where it stands (b_2).
    BOOST_TEST(std::abs(plan.cost - 3e300) <= 1e-12 * 3e300, plan.cost);
}

BOOST_AUTO_TEST_CASE(a_least_budget_beyond_64_bits_is_named_not_wrapped)
{
    // Two units of 2^64-1 bytes: the least budget named was their product wrapped, 18446744073709551614 bytes.
    const chain_model m = chain_model::uniform(4, 1, 2, 100);
    BOOST_CHECK_EXCEPTION((void)plan_taped_chain(m, 700, UINT64_MAX), capacity_error, [](const capacity_error& e) {
        return std::string(e.what()) == "no schedule of this chain fits a budget of 700 bytes at a granularity of "
                                        "18446744073709551615 bytes; it needs more than 2^64-1 bytes at this "
                                        "granularity";
    });
}

BOOST_AUTO_TEST_CASE(long_chains_get_units_that_fit_the_table)
{
    // 70 steps of odd sizes: the automatic units are capped by the table (2^23 entries), and rounding every
    // size up takes the all-taped peak past them; the plan must still be made, legal and within budget.
    std::mt19937_64 rng(70);
    std::uniform_int_distribution<std::uint64_t> bytes(1'000'001, 9'000'001);
    chain_model m;
    for (step_t k = 0; k < 70; ++k)
        m.steps.push_back({1.0 + static_cast<double>(k % 3), 4.0, bytes(rng), 4 * bytes(rng)});
    m.final_state_bytes = bytes(rng);
    for (const std::uint64_t budget : {all_taped_bytes(m) * 10, all_taped_bytes(m) / 3}) {
        const taped_chain_plan plan = plan_taped_chain(m, budget);
        const test::chain_replay r = test::replay_taped_chain(m, plan.actions);
        BOOST_TEST(!r.error.has_value());
        BOOST_TEST(r.peak_bytes <= budget);
        BOOST_TEST(r.cost == plan.cost);
    }
}

BOOST_AUTO_TEST_CASE(long_chains_plan_as_the_plain_recurrence)
{
    // Rows longer than 25 steps search their splits by branch and bound: chains of 26 to 60 steps, quarter costs
    // with zeros (many ties, which must break as the plain recurrence breaks them), at budgets from the least to
    // past the all-taped peak, in units of 1, 2 and 3 bytes.
    std::mt19937_64 rng(3800);
    int compared = 0;
#if defined(REMAT_SANITIZED) // the sanitizers are slow; the optimised build plans every length
    for (const step_t t : {26, 33, 41}) {
#else
    for (const step_t t : {26, 29, 33, 41, 60}) {
#endif
        for (int trial = 0; trial < (t < 40 ? 3 : 1); ++trial) {
            chain_model m = random_chain(rng, t);
            if (trial == 1) // a few large states among small ones: rows whose splits the advance's width limits
                for (std::size_t k = 0; k < m.steps.size(); k += 7)
                    m.steps[k].state_bytes += 9;
            const std::uint64_t top = all_taped_bytes(m);
            for (const std::uint64_t g : {1, 2, 3}) {
                if (g > 1 && t > 40)
                    continue;
                for (const double fraction : {0.1, 0.2, 0.35, 0.5, 0.7, 0.9, 1.1}) {
                    const auto budget = static_cast<std::uint64_t>(fraction * static_cast<double>(top));
                    BOOST_TEST_CONTEXT("T=" << t << " trial " << trial << " g=" << g << " budget " << budget)
                    {
                        compared += plans_as_the_plain_recurrence(m, budget, g) ? 1 : 0;
                    }
                }
            }
        }
    }
    BOOST_TEST(compared > 60);
}

namespace {

// States of 20-90 bytes and the adjoints' extra bytes 25 times theirs: hundreds of units a step at units of one byte,
// where the table is held as runs of equal entries.
void widen(std::mt19937_64& rng, chain_model& m)
{
    std::uniform_int_distribution<std::uint64_t> bytes(20, 90);
    for (chain_step& st : m.steps) {
        st.state_bytes = bytes(rng);
        st.adjoint_bytes = st.adjoint_bytes * 25;
    }
    m.final_state_bytes = bytes(rng);
}

// plans_as_the_plain_recurrence at units of one byte, at budgets from 15% of the all-taped peak to all of it.
int plans_as_the_plain_recurrence_in_bytes(const chain_model& m)
{
    int compared = 0;
    for (const double fraction : {0.15, 0.3, 0.5, 0.75, 1.0}) {
        const auto budget = static_cast<std::uint64_t>(fraction * static_cast<double>(all_taped_bytes(m)));
        BOOST_TEST_CONTEXT("budget " << budget)
        {
            compared += plans_as_the_plain_recurrence(m, budget, 1) ? 1 : 0;
        }
    }
    return compared;
}

} // namespace

BOOST_AUTO_TEST_CASE(many_units_a_step_plan_as_the_plain_recurrence)
{
    // Hundreds of units a step: the table is held as runs of equal entries (from 32 units a step), and must
    // plan as the plain recurrence does, ties included.
    std::mt19937_64 rng(3801);
    int compared = 0;
    for (const step_t t : {1, 2, 5, 9, 14}) {
        chain_model m = random_chain(rng, t);
        widen(rng, m);
        BOOST_TEST_CONTEXT("T=" << t)
        {
            compared += plans_as_the_plain_recurrence_in_bytes(m);
        }
    }
    BOOST_TEST(compared > 10);
}

BOOST_AUTO_TEST_CASE(the_three_tables_agree_entry_by_entry)
{
    // The three forms of the table over the same chains, every memory of every part: the same optimum of the whole
    // chain and the same options everywhere (the dense one's bounded search in rows over 25 steps too; the one
    // filled a memory at a time finds its options again when asked). Some chains with large states among small
    // ones (rows whose splits the advance's width limits), some with costs all alike (ties everywhere), some of
    // steps drawn from a few kinds that differ in one field each (the runs form fills a part alike one further left
    // once: a field it failed to compare would show here), one of identical steps, one with tapes of their own size.
    std::mt19937_64 rng(3802);
#if defined(REMAT_SANITIZED) // the sanitizers are slow; the optimised build compares 55 steps too
    for (const step_t t : {2, 7, 30}) {
#else
    for (const step_t t : {2, 7, 30, 55}) {
#endif
        for (int variant = 0; variant < 6; ++variant) {
            chain_model m = random_chain(rng, t);
            if (variant == 1)
                for (std::size_t k = 0; k < m.steps.size(); k += 5)
                    m.steps[k].state_bytes += 7;
            if (variant == 2)
                for (chain_step& st : m.steps) {
                    st.forward = 1;
                    st.adjoint = 2;
                }
            if (variant == 3) {
                const chain_step base{1, 2.5, 3, 2};
                std::vector<chain_step> kinds(6, base);
                kinds[1].forward = 1.5;
                kinds[2].adjoint = 3;
                kinds[3].state_bytes = 4;
                kinds[4].adjoint_bytes = 4;
                kinds[5].tape_bytes = 2;
                std::uniform_int_distribution<std::size_t> pick(0, kinds.size() - 1);
                for (chain_step& st : m.steps)
                    st = kinds[pick(rng) < 3 ? 0 : pick(rng)];
            }
            if (variant == 4)
                for (chain_step& st : m.steps)
                    st = m.steps.front();
            if (variant == 5) // tapes of their own size (chain_step::tape_bytes)
                test::give_tape_sizes(rng, m);
            for (const std::uint64_t g : {1, 2}) {
                const detail::taped_unit_chain units(m, g);
                const std::uint64_t top = units.all_taped() + 3;
                const detail::taped_chain_runs runs(units, top);
                const detail::taped_chain_table dense(units, top);
                const detail::taped_chain_layers layers(units, top);
                // The least memory the runs form reads off its rows and thresholds, against the first finite entry
                std::uint64_t first_finite = 0;
                while (std::isinf(dense.whole(first_finite)))
                    ++first_finite;
                BOOST_TEST(runs.least(top) == first_finite, "T=" << t << " variant " << variant << " g=" << g);
                for (std::uint64_t mem = 0; mem <= top; ++mem) {
                    BOOST_TEST_CONTEXT("T=" << t << " variant " << variant << " g=" << g << " m=" << mem)
                    {
                        BOOST_TEST(runs.whole(mem) == dense.whole(mem));
                        BOOST_TEST(layers.whole(mem) == dense.whole(mem));
                    }
                    for (std::size_t s = 0; s < m.steps.size(); ++s)
                        for (std::size_t l = 2; s + l <= m.steps.size(); ++l) {
                            const std::uint16_t want = dense.code(s, l, mem);
                            if (runs.code(s, l, mem) != want || layers.code(s, l, mem) != want)
                                BOOST_ERROR("T=" << t << " variant " << variant << " g=" << g << " entry " << s << " "
                                                 << l << " " << mem);
                        }
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(chains_of_50_steps_and_more_plan_as_the_plain_recurrence)
{
    // From 50 steps (below 32 units a step) the table is filled a memory at a time, every split priced in vector
    // loops: the same cost and the same actions as the plain recurrence, ties included, at budgets from the least to
    // past the all-taped peak; and no more split points priced than the plain recurrence prices.
    std::mt19937_64 rng(3804);
    int compared = 0;
#if defined(REMAT_SANITIZED)
    for (const step_t t : {50}) {
#else
    for (const step_t t : {50, 71}) {
#endif
        for (int trial = 0; trial < 2; ++trial) {
            chain_model m = random_chain(rng, t);
            if (trial == 1)
                for (chain_step& st : m.steps)
                    st.forward = 0.5; // flat costs: ties among the splits everywhere
            const std::uint64_t top = all_taped_bytes(m);
            for (const double fraction : {0.1, 0.3, 0.6, 1.1}) {
                const auto budget = static_cast<std::uint64_t>(fraction * static_cast<double>(top));
                BOOST_TEST_CONTEXT("T=" << t << " trial " << trial << " budget " << budget)
                {
                    compared += plans_as_the_plain_recurrence(m, budget, 1) ? 1 : 0;
                }
            }
        }
    }
    BOOST_TEST(compared > 4);
}

BOOST_AUTO_TEST_CASE(far_fewer_split_points_than_the_plain_recurrence)
{
    // The plain recurrence prices every split of every entry, sum over rows (s, l) of the l - 1 splits times the
    // memories where each fits: about T^3 U / 6. The runs and the dense table's bounded search price a small part
    // of that: 24 steps in 4,095 units (runs, the plan's) and 120 steps in ~150 units (the dense table, built
    // here: the plan fills the table of 120 steps a memory at a time, pricing every split, at most the plain
    // count), at 30% and 60% of the all-taped peak.
    std::mt19937_64 rng(3803);
    std::uniform_int_distribution<std::uint64_t> mib(1, 8);
    std::uniform_real_distribution<double> cost(1, 3);
#if defined(REMAT_SANITIZED) // 120 steps take 20 s there; the optimised build checks both
    for (const step_t t : {24}) {
#else
    for (const step_t t : {24, 120}) {
#endif
        chain_model m;
        for (step_t k = 0; k < t; ++k) {
            const double f = cost(rng);
            m.steps.push_back({f, 2 * f + cost(rng), (mib(rng) << 20) + k, (4 * mib(rng) << 20) + 3 * k});
        }
        m.final_state_bytes = mib(rng) << 20;
        for (const double fraction : {0.3, 0.6}) {
            const auto budget = static_cast<std::uint64_t>(fraction * static_cast<double>(all_taped_bytes(m)));
            const taped_chain_plan plan = plan_taped_chain(m, budget);
            const detail::taped_unit_chain units(m, plan.granularity);
            const std::uint64_t top = budget / plan.granularity;
            std::uint64_t plain = 0;
            for (std::size_t s = 0; s < m.steps.size(); ++s) {
                std::uint64_t widest = 0;
                for (std::size_t j = 1; s + j < m.steps.size(); ++j) {
                    widest = std::max(widest, units.p[s + j - 1]);
                    const std::uint64_t fits = units.u[s] + widest;
                    const std::uint64_t each = fits <= top ? top - fits + 1 : 0;
                    plain += each * (m.steps.size() - s - j); // every longer row from s prices split j
                }
            }
            BOOST_TEST_CONTEXT("T=" << t << " at " << fraction << ": " << top << " units")
            {
                BOOST_TEST(plain > 1'000'000u);
                if (t == 24) {
                    BOOST_TEST(plan.work * 10 < plain, plan.work << " against " << plain);
                } else {
                    const detail::taped_chain_table dense(units, top);
                    BOOST_TEST(dense.work() * 3 < plain, dense.work() << " against " << plain);
                    BOOST_TEST(plan.work <= plain, plan.work << " against " << plain);
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(given_tape_sizes_equal_the_exhaustive_search_at_every_budget)
{
    // Steps with tapes of their own size, below and above m_k + a_k: the plan against the exhaustive search and the
    // replay (both read the tape's size on their own), at every budget; all_taped_bytes against the replayed peak
    // of the all-taped plan.
    std::mt19937_64 rng(3839);
    int compared = 0, below = 0, above = 0;
    for (step_t t = 1; t <= 6; ++t)
        for (int trial = 0; trial < (t <= 4 ? 25 : 8); ++trial) {
            chain_model m = random_chain(rng, t);
            const auto [b, a] = test::give_tape_sizes(rng, m, true);
            below += b;
            above += a;
            const std::uint64_t top = all_taped_bytes(m);
            const test::chain_replay all = test::replay_taped_chain(m, all_taped_actions(t));
            BOOST_TEST(!all.error.has_value());
            BOOST_TEST(all.peak_bytes == top, "T=" << t << " trial " << trial);
            BOOST_TEST_CONTEXT("T=" << t << " trial " << trial)
            {
                compared += equals_the_exhaustive_search(m, [](const taped_chain_plan&, std::uint64_t) {});
            }
        }
    BOOST_TEST(compared > 500);
    BOOST_TEST(below > 50);
    BOOST_TEST(above > 10);
}

BOOST_AUTO_TEST_CASE(given_tape_sizes_plan_as_the_plain_recurrence)
{
    // The same with tapes of their own size on longer chains, in each form of the table: dense with its bounded
    // search (26, 33 steps), runs (hundreds of units a step), a memory at a time (50 steps); units of 1 and 3 bytes.
    std::mt19937_64 rng(3840);
    int compared = 0;
    for (const step_t t : {9, 26, 33, 50}) {
        chain_model m = random_chain(rng, t);
        test::give_tape_sizes(rng, m);
        const std::uint64_t top = all_taped_bytes(m);
        for (const std::uint64_t g : {1, 3})
            for (const double fraction : {0.15, 0.35, 0.6, 0.9, 1.1}) {
                const auto budget = static_cast<std::uint64_t>(fraction * static_cast<double>(top));
                BOOST_TEST_CONTEXT("T=" << t << " g=" << g << " budget " << budget)
                {
                    compared += plans_as_the_plain_recurrence(m, budget, g) ? 1 : 0;
                }
            }
    }
    for (const step_t t : {5, 14}) {
        chain_model m = random_chain(rng, t);
        widen(rng, m);
        test::give_tape_sizes(rng, m);
        BOOST_TEST_CONTEXT("T=" << t << " (runs)")
        {
            compared += plans_as_the_plain_recurrence_in_bytes(m);
        }
    }
    BOOST_TEST(compared > 35);
}

BOOST_AUTO_TEST_CASE(tapes_below_their_adjoint_bytes_plan_legally)
{
    // A tape below a_k lets a schedule take step k's tape early and re-run the step untaped later, the tape held,
    // which the recurrence does not consider: there the plan (still the plain recurrence's, above) is legal, within
    // the budget and priced as the replay prices it, and never cheaper than the exhaustive search's optimum.
    std::mt19937_64 rng(3841);
    int compared = 0;
    for (step_t t = 2; t <= 5; ++t)
        for (int trial = 0; trial < 10; ++trial) {
            chain_model m = random_chain(rng, t);
            test::give_tape_sizes(rng, m);
            const std::uint64_t top = all_taped_bytes(m);
            for (std::uint64_t budget = 1; budget <= top + 2; ++budget) {
                const double best = test::brute_force_taped_chain_optimum(m, budget);
                taped_chain_plan plan;
                try {
                    plan = plan_taped_chain(m, budget, 1);
                } catch (const capacity_error&) {
                    continue;
                }
                BOOST_TEST_CONTEXT("T=" << t << " trial " << trial << " budget " << budget)
                {
                    const test::chain_replay r = test::replay_taped_chain(m, plan.actions);
                    BOOST_TEST(!r.error.has_value(), (r.error ? *r.error : std::string()));
                    BOOST_TEST(r.peak_bytes <= budget);
                    BOOST_TEST(r.peak_bytes == plan.peak_bytes);
                    BOOST_TEST(r.cost == plan.cost);
                    BOOST_TEST(plan.cost >= best);
                    ++compared;
                }
            }
        }
    BOOST_TEST(compared > 300);
}
