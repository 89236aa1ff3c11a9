// Replays a plan with taped advances under the independent taped_simulator and checks every count of
// its cost against the replay's (tests only; Boost.Test assertions).
#pragma once

#include "taped_simulator.hpp"

#include "remat/schedule/cost.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>

namespace remat::test {

/// Replays `plan` within `units` units and checks it against its own cost (F, B price it); returns the
/// counts. The plan must have steps(), cost(), evaluations(), peak_units() and tape_units().
template <class Plan>
taped_counts replay_and_check(const Plan& plan, slot_t units, double f = 1, double b = 1)
{
    taped_counts n;
    slot_t rerun_units = 0;
    if constexpr (requires { plan.rerun_units(); })
        rerun_units = plan.rerun_units();
    const auto error = replay_taped(plan, units, plan.tape_units(), n, rerun_units);
    BOOST_TEST_REQUIRE(!error.has_value(), "T=" << plan.steps() << " M=" << units << " u=" << plan.tape_units() << ": "
                                                << error.value_or(""));
    const schedule_cost c = plan.cost();
    BOOST_TEST_REQUIRE(n.evaluations() == plan.evaluations());
    BOOST_TEST_REQUIRE(n.forward_steps == c.forward_steps);
    BOOST_TEST_REQUIRE(n.taped_steps == c.taped_steps);
    BOOST_TEST_REQUIRE(n.tape_reverses == c.taped_steps);
    BOOST_TEST_REQUIRE(n.stores == c.stores);
    BOOST_TEST_REQUIRE(n.restores == c.restores);
    BOOST_TEST_REQUIRE(n.peak_slots == c.peak_slots);
    BOOST_TEST_REQUIRE(n.peak_tapes == c.peak_tapes);
    BOOST_TEST_REQUIRE(n.peak_units == plan.peak_units());
    BOOST_TEST_REQUIRE(n.peak_units <= units);
    BOOST_TEST_REQUIRE(c.reverse_steps == static_cast<std::uint64_t>(plan.steps()));
    // Priced from the replay's own counts: F per evaluation, B per step.
    const double counted =
        f * static_cast<double>(n.forward_steps + n.reruns) + b * static_cast<double>(n.reruns + n.tape_reverses);
    BOOST_TEST_REQUIRE(std::abs(c.predicted_cost - counted) <= 1e-9 * counted);
    return n;
}

} // namespace remat::test
