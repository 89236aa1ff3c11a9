// plan_for_budget against its definition: floor(budget / state) slots, the binomial schedule's own cost
// with them, and refusals that name the values as given.
#define BOOST_TEST_MODULE budget
#include <boost/test/unit_test.hpp>

#include "remat/error.hpp"
#include "remat/schedule/budget.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/taped_revolve.hpp"
#include "taped_simulator.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

using namespace remat;

BOOST_AUTO_TEST_CASE(the_plan_is_revolve_with_the_slots_the_budget_holds)
{
    for (const step_t t : {1, 2, 3, 10, 1000})
        for (const std::uint64_t budget : {128u, 129u, 255u, 256u, 1000u, 100000u}) {
            const memory_plan p = plan_for_budget(t, budget, 128);
            BOOST_TEST(p.slots == static_cast<slot_t>(budget / 128));
            const schedule_cost expected = revolve(t, p.slots).cost();
            BOOST_TEST(p.cost.forward_steps == expected.forward_steps);
            BOOST_TEST(p.cost.peak_slots == expected.peak_slots);
            BOOST_TEST(p.peak_snapshot_bytes == expected.peak_slots * 128);
            BOOST_TEST(p.peak_snapshot_bytes <= budget);
        }
}

BOOST_AUTO_TEST_CASE(a_budget_without_room_for_one_snapshot_is_refused_for_every_T)
{
    // T = 1 used to get one slot that the 10-byte budget cannot hold.
    for (const step_t t : {1, 2, 1000}) {
        try {
            (void)plan_for_budget(t, 10, 128);
            BOOST_ERROR("no exception for T = " << t);
        } catch (const capacity_error& e) {
            const std::string m = e.what();
            BOOST_TEST(m.find("10 bytes") != std::string::npos, m);
            BOOST_TEST(m.find("128 bytes") != std::string::npos, m);
        }
    }
    BOOST_CHECK_THROW((void)plan_for_budget(10, 1000, 0), argument_error);
    BOOST_CHECK_THROW((void)plan_for_budget(0, 1000, 8), argument_error);
}

// taped_units_for_budget against its definition: floor(budget / state) units and the least whole number of
// states that holds a tape.
BOOST_AUTO_TEST_CASE(taped_units_round_the_tape_up_and_the_plan_fits_the_bytes)
{
    const taped_units example = taped_units_for_budget(10 << 20, 64 << 10, 378 << 10); // the header's
    BOOST_TEST(example.units == 160);
    BOOST_TEST(example.tape_units == 6);
    for (const std::uint64_t state : {1u, 7u, 128u})
        for (const std::uint64_t tape : {1u, 6u, 7u, 8u, 128u, 129u, 1000u})
            for (const std::uint64_t budget : {128u, 1000u, 5000u}) {
                if (budget < state)
                    continue;
                const taped_units u = taped_units_for_budget(budget, state, tape);
                BOOST_TEST(u.units == static_cast<slot_t>(budget / state));
                BOOST_TEST(static_cast<std::uint64_t>(u.tape_units) * state >= tape);    // holds a tape
                BOOST_TEST(static_cast<std::uint64_t>(u.tape_units - 1) * state < tape); // and no more
                // The plan, replayed by the independent simulator, keeps snapshots + tape_units x tapes within
                // the units at every moment; a snapshot is a state's bytes and a tape at most tape_units
                // states' bytes, so what it holds at once never exceeds units x state <= budget bytes.
                const taped_revolve plan(40, u.units, u.tape_units);
                remat::test::taped_simulator sim(40, u.units, u.tape_units);
                for (const action& a : plan) {
                    const std::optional<std::string> why = sim.apply(a);
                    BOOST_TEST_REQUIRE(!why.has_value(), *why);
                }
                BOOST_TEST_REQUIRE(!sim.finish().has_value());
                BOOST_TEST(static_cast<std::uint64_t>(sim.counts().peak_units) * state <= budget);
            }
    // Huge sizes neither overflow nor wrap: the counts saturate.
    const taped_units huge = taped_units_for_budget(UINT64_MAX, 1, UINT64_MAX);
    BOOST_TEST(huge.units == std::numeric_limits<slot_t>::max());
    BOOST_TEST(huge.tape_units == std::numeric_limits<slot_t>::max());
    BOOST_TEST(taped_units_for_budget(UINT64_MAX, 3, UINT64_MAX).tape_units == static_cast<slot_t>(UINT64_MAX / 3));
}

BOOST_AUTO_TEST_CASE(taped_units_refuse_zero_sizes_and_a_budget_without_a_state)
{
    try {
        (void)taped_units_for_budget(10, 128, 256);
        BOOST_ERROR("no exception for a 10-byte budget");
    } catch (const capacity_error& e) {
        const std::string m = e.what();
        BOOST_TEST(m.find("10 bytes") != std::string::npos, m);
        BOOST_TEST(m.find("128 bytes") != std::string::npos, m);
    }
    BOOST_CHECK_THROW((void)taped_units_for_budget(1000, 0, 8), argument_error);
    BOOST_CHECK_THROW((void)taped_units_for_budget(1000, 8, 0), argument_error);
}
