// checkpoint_sequential as a plan (remat::taped_uniform): legal and within its memory under the
// independent simulator, its counts equal to the replay's, its evaluations and memory equal to the
// closed forms, never better than the optimal remat::taped_revolve in the same memory, fit() equal to a
// search over every written plan, its few-spacings choice (fit_every) equal to a scan of all T spacings up
// to T = 10^6, and bad input refused naming the value.
#define BOOST_TEST_MODULE taped_uniform
#include <boost/test/unit_test.hpp>

#include "expect_kind.hpp"
#include "taped_plan_check.hpp"

#include "remat/error.hpp"
#include "remat/schedule/taped_revolve.hpp"
#include "remat/schedule/taped_uniform.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <ranges>
#include <string>
#include <vector>

using namespace remat;

static_assert(std::ranges::input_range<taped_uniform>);
static_assert(schedule<taped_uniform>);

namespace {

// The closed forms, written from the plan's description (PyTorch's checkpoint_sequential): every
// segment but the last runs twice, the last once.
std::uint64_t expected_evaluations(step_t t, step_t k)
{
    const step_t segments = (t + k - 1) / k;
    return static_cast<std::uint64_t>(t + (segments - 1) * k);
}

// Every spacing 1..T priced in the closed form (what fit() did before it skipped spacings).
std::vector<slot_t> price_every_spacing(step_t t, slot_t u)
{
    std::vector<slot_t> need(static_cast<std::size_t>(t) + 1);
    for (step_t k = 1; k <= t; ++k)
        need[static_cast<std::size_t>(k)] = taped_uniform::peak_units_for(t, k, u);
    return need;
}

// The full scan's choice: the longest last segment (fewest evaluations), then the fewest units, then the
// smallest spacing (0 when none fits); and the least units any spacing needs.
struct scan_result {
    step_t every = 0;
    slot_t least = std::numeric_limits<slot_t>::max();
};

scan_result scan_every_spacing(step_t t, slot_t units, const std::vector<slot_t>& need)
{
    scan_result r;
    step_t best_last = -1;
    slot_t best_units = 0;
    for (step_t k = 1; k <= t; ++k) {
        const slot_t n = need[static_cast<std::size_t>(k)];
        r.least = std::min(r.least, n);
        const step_t last = t - ((t + k - 1) / k - 1) * k;
        if (n <= units && (last > best_last || (last == best_last && n < best_units))) {
            r.every = k;
            best_last = last;
            best_units = n;
        }
    }
    return r;
}

// fit_every against the full scan, for one (T, units, u).
void check_against_the_scan(step_t t, slot_t units, slot_t u, const scan_result& scan)
{
    BOOST_TEST_INFO("T " << t << " units " << units << " u " << u);
    if (scan.every == 0) {
        BOOST_CHECK_EXCEPTION(
            (void)taped_uniform::fit_every(t, units, u), capacity_error, [&](const capacity_error& e) {
                return std::string(e.what()).find("at least " + std::to_string(scan.least) + " units") !=
                       std::string::npos;
            });
        return;
    }
    BOOST_TEST_REQUIRE(taped_uniform::fit_every(t, units, u) == scan.every);
}

} // namespace

BOOST_AUTO_TEST_CASE(every_spacing_is_legal_and_counted_as_replayed)
{
    for (step_t t = 1; t <= 40; ++t)
        for (step_t k = 1; k <= t + 1; ++k)
            for (const slot_t u : {1, 2, 3, 6}) {
                BOOST_TEST_INFO("T " << t << " k " << k << " u " << u);
                const taped_uniform plan(t, k, u, 0.69, 1.19);
                const test::taped_counts n = test::replay_and_check(plan, plan.peak_units(), 0.69, 1.19);
                BOOST_TEST_REQUIRE(plan.evaluations() == expected_evaluations(t, std::min(k, t)));
                BOOST_TEST_REQUIRE(plan.peak_units() == taped_uniform::peak_units_for(t, k, u));
                BOOST_TEST_REQUIRE(plan.cost().repetition <= 2u);
                // One segment is plain back-propagation: every step but the last taped, T evaluations.
                if (k >= t)
                    BOOST_TEST_REQUIRE(n.taped_steps == static_cast<std::uint64_t>(t - 1));
            }
}

BOOST_AUTO_TEST_CASE(the_optimal_plan_never_needs_more_evaluations_in_the_same_memory)
{
    int strictly_better = 0, cases = 0;
    for (step_t t = 2; t <= 60; t += 3)
        for (step_t k = 1; k <= t; k += 2)
            for (const slot_t u : {1, 2, 5}) {
                const taped_uniform baseline(t, k, u);
                const taped_revolve best(t, baseline.peak_units(), u);
                BOOST_TEST_INFO("T " << t << " k " << k << " u " << u);
                BOOST_TEST_REQUIRE(best.evaluations() <= baseline.evaluations());
                strictly_better += best.evaluations() < baseline.evaluations() ? 1 : 0;
                ++cases;
            }
    BOOST_TEST(strictly_better > cases / 4); // the comparison is not vacuous
}

BOOST_AUTO_TEST_CASE(fit_is_the_best_spacing_a_full_search_finds)
{
    for (step_t t = 1; t <= 50; t += 7)
        for (const slot_t u : {1, 3, 6})
            for (slot_t units = 1; units <= 3 * t * u; units += 1 + units / 4) {
                std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
                slot_t least = std::numeric_limits<slot_t>::max();
                for (step_t k = 1; k <= t; ++k) {
                    const taped_uniform plan(t, k, u); // written out and replayed, not the closed form
                    least = std::min(least, plan.peak_units());
                    if (plan.peak_units() <= units)
                        best = std::min(best, plan.evaluations());
                }
                BOOST_TEST_INFO("T " << t << " u " << u << " units " << units);
                if (best == std::numeric_limits<std::uint64_t>::max()) {
                    BOOST_CHECK_EXCEPTION(
                        (void)taped_uniform::fit(t, units, u), capacity_error, [&](const capacity_error& e) {
                            return std::string(e.what()).find("at least " + std::to_string(least) + " units") !=
                                   std::string::npos;
                        });
                    continue;
                }
                const taped_uniform fitted = taped_uniform::fit(t, units, u);
                BOOST_TEST_REQUIRE(fitted.peak_units() <= units);
                BOOST_TEST_REQUIRE(fitted.evaluations() == best);
                BOOST_TEST_REQUIRE(fitted.every() == taped_uniform::fit_every(t, units, u));
            }
}

BOOST_AUTO_TEST_CASE(fit_prices_a_few_spacings_and_chooses_as_a_scan_of_every_spacing)
{
    // fit_every prices only the first spacing of each segment count; a scan over all T spacings must
    // choose the same one (and, when none fits, name the same least units). Every T up to 120 with every
    // budget from 1 to (T - 1) u + 1, then larger T with budgets around the least and around plain
    // back-propagation's (T - 1) u, and at random between.
    for (step_t t = 1; t <= 120; ++t)
        for (const slot_t u : {1, 2, 3, 7}) {
            const std::vector<slot_t> need = price_every_spacing(t, u);
            for (slot_t units = 1; units <= (t - 1) * u + 1; ++units)
                check_against_the_scan(t, units, u, scan_every_spacing(t, units, need));
        }
    std::mt19937_64 random(20261129);
    for (const step_t t : {997, 1000, 4096, 65537, 100000, 999983, 1000000})
        for (const slot_t u : {1, 6, 1000}) {
            const std::vector<slot_t> need = price_every_spacing(t, u);
            const slot_t least = scan_every_spacing(t, 1, need).least;
            const slot_t most = (t - 1) * u;
            std::vector<slot_t> budgets{least - 1, least, least + 1, 2 * least, most - 1, most};
            for (int i = 0; i < 10; ++i)
                budgets.push_back(least + static_cast<slot_t>(random() % static_cast<std::uint64_t>(most - least)));
            for (const slot_t units : budgets)
                check_against_the_scan(t, units, u, scan_every_spacing(t, units, need));
        }
    // A peak that overflows is refused either way.
    BOOST_CHECK_THROW((void)price_every_spacing(10, std::numeric_limits<slot_t>::max()), overflow_error);
    BOOST_CHECK_THROW((void)taped_uniform::fit_every(10, 5, std::numeric_limits<slot_t>::max()), overflow_error);
}

BOOST_AUTO_TEST_CASE(a_thousand_gru_steps_in_thirteen_step_segments)
{
    // docs/tapes.md's comparison: T = 1000, tapes of 6 states, 13-step segments: 2T - L evaluations (the
    // last segment of 1000 - 76 x 13 = 12 steps runs once); at most 75 inputs and 12 tapes held while a
    // full segment is re-run (a segment's last step needs no tape): 75 + 12 x 6 = 147 units.
    const taped_uniform plan(1000, 13, 6, 0.69, 1.19);
    BOOST_TEST(plan.evaluations() == 1988u);
    BOOST_TEST(plan.peak_units() == 147);
    test::replay_and_check(plan, 147, 0.69, 1.19);
    BOOST_TEST(taped_revolve(1000, 147, 6).evaluations() <= plan.evaluations());
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused_naming_the_value)
{
    test::refused_naming([] { return taped_uniform(0, 3, 2); }, "steps = 0");
    test::refused_naming([] { return taped_uniform(-4, 3, 2); }, "steps = -4");
    test::refused_naming([] { return taped_uniform(std::numeric_limits<step_t>::max(), 3, 2); }, "steps = ");
    test::refused_naming([] { return taped_uniform(10, 0, 2); }, "every = 0");
    test::refused_naming([] { return taped_uniform(10, 3, 0); }, "tape_units = 0");
    test::refused_naming([] { return taped_uniform(10, 3, 2, -1.0, 1.0); }, "forward_cost = -1");
    test::refused_naming([] { return taped_uniform::fit(10, 0, 2); }, "units = 0");
    BOOST_CHECK_THROW((void)taped_uniform::peak_units_for(10, 5, std::numeric_limits<slot_t>::max()), overflow_error);
}
