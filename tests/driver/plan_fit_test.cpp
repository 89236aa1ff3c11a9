// A plan and a store that do not fit each other are refused before step 0: too few slots or bytes on a
// level, or a different number of levels, raise remat::capacity_error naming both numbers, and no user
// callable has run. The capacity_for helpers build stores that fit by construction.
#define BOOST_TEST_MODULE driver_plan_fit
#include <boost/test/unit_test.hpp>

#include "contains.hpp"
#include "remat/driver/capacity_for.hpp"
#include "remat/driver/run.hpp"
#include "remat/driver/run_online.hpp"
#include "remat/schedule/budget.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <array>
#include <string>
#include <type_traits>

using namespace remat;

namespace {

using state = std::array<double, 4>;

/// Counts every call of the user's callables; a refused run must leave all three at zero.
struct counted_loop {
    int forward = 0;
    int adjoint = 0;
    int asked = 0;
    template <class Store, class Schedule>
    run_report run_with(const Schedule& plan, Store& store)
    {
        state x{1, 2, 3, 4};
        return remat::run(plan, store, x, remat::forward_step([&](step_t, state& s) { ++forward, s[0] += 1; }),
                          remat::adjoint_step([&](step_t, state&) { ++adjoint; }));
    }
    [[nodiscard]] bool untouched() const { return forward == 0 && adjoint == 0 && asked == 0; }
};

template <class F>
std::string capacity_message(F&& f)
{
    try {
        f();
    } catch (const capacity_error& e) {
        return e.what();
    }
    BOOST_FAIL("no capacity_error");
    return {};
}

using remat::test::contains;

} // namespace

BOOST_AUTO_TEST_CASE(too_few_slots_are_refused_before_step_0)
{
    counted_loop loop;
    host_store store(9);
    const std::string what = capacity_message([&] { loop.run_with(revolve(100, 10), store); });
    BOOST_TEST(contains(what, "10 snapshots"), what);
    BOOST_TEST(contains(what, "9 slots"), what);
    BOOST_TEST(loop.untouched());
    BOOST_TEST(store.stats().stores == 0u);
    // The same store runs a plan that fits; revolve(5, 10) uses at most 4 slots.
    BOOST_TEST(loop.run_with(revolve(100, 9), store).reverse_steps == 100u);
    counted_loop small;
    BOOST_TEST(small.run_with(revolve(5, 10), store).peak_slots == 4u);
}

BOOST_AUTO_TEST_CASE(too_few_bytes_are_refused_before_step_0)
{
    counted_loop loop;
    host_store store(level_capacity{.bytes = 9 * sizeof(state)});
    const std::string what = capacity_message([&] { loop.run_with(revolve(100, 10), store); });
    BOOST_TEST(contains(what, "10 snapshots of 32 bytes"), what);
    BOOST_TEST(contains(what, "288 bytes"), what);
    BOOST_TEST(loop.untouched());
    host_store enough(level_capacity{.bytes = 10 * sizeof(state)});
    BOOST_TEST(loop.run_with(revolve(100, 10), enough).peak_slots == 10u);
}

BOOST_AUTO_TEST_CASE(a_plan_over_more_or_fewer_levels_than_the_store_is_refused)
{
    const cost_model two{{{"host", 4, 0, 0}, {"disk", level_spec::unlimited, 5, 5}}};
    const multilevel plan(300, two);
    counted_loop loop;
    host_store one(100);
    std::string what = capacity_message([&] { loop.run_with(plan, one); });
    BOOST_TEST(contains(what, "2 storage levels"), what);
    BOOST_TEST(contains(what, "store has 1"), what);

    tiered_store<host_store, host_store> tiers(host_store(100), host_store(100));
    what = capacity_message([&] { loop.run_with(revolve(300, 10), tiers); });
    BOOST_TEST(contains(what, "1 storage level "), what);
    BOOST_TEST(contains(what, "store has 2"), what);
    BOOST_TEST(loop.untouched());
}

BOOST_AUTO_TEST_CASE(each_level_is_checked_on_its_own)
{
    const cost_model two{{{"host", 4, 0, 0}, {"disk", level_spec::unlimited, 5, 5}}};
    const multilevel plan(300, two);
    const schedule_cost c = plan.cost();
    BOOST_TEST_REQUIRE(c.levels.size() == 2u);
    BOOST_TEST_REQUIRE(c.levels[1].peak_slots > 1);
    const slot_t disk_peak = c.levels[1].peak_slots;
    counted_loop loop;
    tiered_store<host_store, host_store> small_disk(host_store(4), host_store(disk_peak - 1));
    const std::string what = capacity_message([&] { loop.run_with(plan, small_disk); });
    BOOST_TEST(contains(what, "level 1"), what);
    BOOST_TEST(contains(what, std::to_string(disk_peak) + " snapshots"), what);
    BOOST_TEST(contains(what, std::to_string(disk_peak - 1) + " slots"), what);
    BOOST_TEST(loop.untouched());

    // Built from the plan, the levels fit: the slot counts are stated once, in the model.
    tiered_store<host_store, host_store> fitted(host_store(capacity_for(plan, 0)), host_store(capacity_for(plan, 1)));
    BOOST_TEST(fitted.capacity(1).slots == disk_peak);
    BOOST_TEST(loop.run_with(plan, fitted).reverse_steps == 300u);
}

BOOST_AUTO_TEST_CASE(an_online_schedule_with_more_slots_than_the_store_is_refused)
{
    counted_loop loop;
    host_store store(4);
    state x{};
    const std::string what = capacity_message([&] {
        run_online(online_revolve(8), store, x, remat::forward_step([&](step_t, state&) { ++loop.forward; }),
                   remat::adjoint_step([&](step_t, state&) { ++loop.adjoint; }), [&](step_t k, const state&) {
                       ++loop.asked;
                       return k == 20;
                   });
    });
    BOOST_TEST(contains(what, "8 snapshots"), what);
    BOOST_TEST(contains(what, "4 slots"), what);
    BOOST_TEST(loop.untouched());
}

BOOST_AUTO_TEST_CASE(capacity_for_states_the_slots_once)
{
    const revolve plan(1000, 12);
    BOOST_TEST(capacity_for(plan).slots == 12);
    BOOST_TEST(capacity_for(plan).bytes == level_capacity::unlimited_bytes);
    BOOST_TEST(capacity_for(revolve(3, 12)).slots == 2); // x_0 and x_1: the most a 3-step loop holds
    BOOST_TEST(capacity_for(uniform(100, 10)).slots == uniform(100, 10).cost().peak_slots);
    BOOST_CHECK_THROW((void)capacity_for(plan, 1), schedule_error);
    BOOST_CHECK_THROW((void)capacity_for(plan, -1), schedule_error);

    const memory_plan budget = plan_for_budget(1000, 10 * 800 + 5, 800);
    const level_capacity c = capacity_for(budget);
    BOOST_TEST(c.slots == 10);
    BOOST_TEST(c.bytes == 8005u);

    BOOST_TEST((capacity_for(level_spec{"disk", level_spec::unlimited, 1, 1}) == level_capacity{}));
    BOOST_TEST(capacity_for(level_spec{"host", 7, 0, 0}).slots == 7);
    const slot_t negative = -2; // a slot_t count goes in without a cast, and is refused naming it
    BOOST_CHECK_EXCEPTION(
        (void)capacity_for(level_spec{"host", negative, 0, 0}), argument_error,
        [](const argument_error& e) { return std::string(e.what()).find("got -2") != std::string::npos; });

    counted_loop loop;
    host_store store(capacity_for(plan));
    BOOST_TEST(loop.run_with(plan, store).peak_slots == 12u);
}

BOOST_AUTO_TEST_CASE(a_plans_peak_is_a_slot_count)
{
    // The cost's peaks have the type of a capacity's slots: a brace-init takes them without a cast (an
    // unsigned peak is a narrowing error here), and a peak compares with a slot count directly.
    static_assert(std::is_same_v<decltype(schedule_cost::peak_slots), slot_t>);
    static_assert(std::is_same_v<decltype(level_cost::peak_slots), slot_t>);
    const slot_t host_slots = 3;
    const multilevel plan(300, cost_model{{{"host", host_slots, 0, 0}, {"disk", level_spec::unlimited, 5, 5}}});
    const schedule_cost c = plan.cost();
    BOOST_TEST_REQUIRE(c.levels.size() == 2u);
    BOOST_TEST(c.levels[0].peak_slots <= host_slots);
    BOOST_TEST(c.levels[1].peak_slots > 1);
    counted_loop loop;
    tiered_store<host_store, host_store> exact(host_store(level_capacity{.slots = c.levels[0].peak_slots}),
                                               host_store(level_capacity{.slots = c.levels[1].peak_slots}));
    const run_report r = loop.run_with(plan, exact);
    BOOST_TEST(r.levels.at(1).peak_slots == c.levels[1].peak_slots);
}

BOOST_AUTO_TEST_CASE(negative_and_zero_capacities_name_the_value_given)
{
    auto message = [](auto&& make) -> std::string {
        try {
            make();
        } catch (const argument_error& e) {
            return e.what();
        }
        return "no argument_error";
    };
    BOOST_TEST(message([] { host_store s(-3); }) == "host_store needs at least 1 slot, got -3");
    BOOST_TEST(message([] { host_store s(0); }) == "host_store needs at least 1 slot, got 0");
    BOOST_TEST(message([] { host_store s(level_capacity{.slots = -1}); }) ==
               "host_store needs room for at least one snapshot, got -1 slots and unlimited bytes");
    BOOST_TEST(message([] { host_store s(level_capacity{.bytes = 0}); }) ==
               "host_store needs room for at least one snapshot, got unlimited slots and 0 bytes");
}
