// plan_for_budget against its definition: floor(budget / state) slots, the binomial schedule's own cost
// with them, and refusals that name the values as given.
#define BOOST_TEST_MODULE budget
#include <boost/test/unit_test.hpp>

#include "remat/error.hpp"
#include "remat/schedule/budget.hpp"
#include "remat/schedule/revolve.hpp"

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
