// The action adaptors of composed planners (src/schedule/action_rewrite.hpp) against the action format's own
// definitions (remat/schedule/action.hpp): each adaptor on each kind of action, and the composition a nested
// multi-level plan uses on a real revolve schedule, checked by replaying both streams side by side.
#define BOOST_TEST_MODULE action_rewrite
#include <boost/test/unit_test.hpp>

#include "action_rewrite.hpp"

#include "remat/schedule/revolve.hpp"

#include <utility>
#include <vector>

using namespace remat;
using detail::on_levels;
using detail::rebased;
using detail::relabelled;
using detail::scaled;

namespace {

const std::vector<action> every_kind{advance{2, 5}, store{1, 3, 4}, restore{2, 0, 7}, free_slot{1, 3}, reverse{6}};

} // namespace

BOOST_AUTO_TEST_CASE(rebasing_moves_every_step_and_keeps_every_slot)
{
    const std::vector<action> expected{advance{12, 15}, store{1, 3, 14}, restore{2, 0, 17}, free_slot{1, 3},
                                       reverse{16}};
    for (std::size_t i = 0; i < every_kind.size(); ++i)
        BOOST_TEST((rebased(every_kind[i], 10) == expected[i]), to_string(every_kind[i]));
}

BOOST_AUTO_TEST_CASE(scaling_multiplies_steps_clamps_the_last_advance_and_leaves_a_reverse)
{
    // Units of 4 steps over a loop of 18: unit 5 ends at step 18, not 20.
    const std::vector<action> expected{advance{8, 18}, store{1, 3, 16}, restore{2, 0, 28}, free_slot{1, 3}, reverse{6}};
    for (std::size_t i = 0; i < every_kind.size(); ++i)
        BOOST_TEST((scaled(every_kind[i], 4, 18) == expected[i]), to_string(every_kind[i]));
    const action unclamped = advance{4, 12};
    BOOST_TEST((scaled(advance{1, 3}, 4) == unclamped)); // no end: nothing clamped
}

BOOST_AUTO_TEST_CASE(relabelling_maps_level_and_slot_of_slot_actions_only)
{
    const auto where = [](level_t level, slot_t slot) { return std::pair{level_t{level + 1}, slot_t{slot * 10}}; };
    const std::vector<action> expected{advance{2, 5}, store{2, 30, 4}, restore{3, 0, 7}, free_slot{2, 30}, reverse{6}};
    for (std::size_t i = 0; i < every_kind.size(); ++i)
        BOOST_TEST((relabelled(every_kind[i], where) == expected[i]), to_string(every_kind[i]));
    const std::vector<level_t> store_levels{4, 7, 9};
    const std::vector<action> moved{advance{2, 5}, store{7, 3, 4}, restore{9, 0, 7}, free_slot{7, 3}, reverse{6}};
    const auto level_of = [&](level_t j) { return store_levels[static_cast<std::size_t>(j)]; };
    for (std::size_t i = 0; i < every_kind.size(); ++i)
        BOOST_TEST((on_levels(every_kind[i], level_of) == moved[i]), to_string(every_kind[i]));
}

BOOST_AUTO_TEST_CASE(a_schedule_over_segments_becomes_the_same_schedule_in_steps_on_another_level)
{
    // revolve(9, 3) over segments of 5 steps, on level 2: every action as the format defines it, step for step.
    constexpr step_t k = 5;
    for (const action& a : revolve(9, 3)) {
        const action b = on_levels(scaled(a, k), [](level_t) { return level_t{2}; });
        action want = a; // a segment's reverse is the composed planner's to expand
        if (const auto* v = std::get_if<advance>(&a))
            want = advance{v->from * k, v->to * k};
        else if (const auto* s = std::get_if<store>(&a))
            want = store{2, s->slot, s->step * k};
        else if (const auto* r = std::get_if<restore>(&a))
            want = restore{2, r->slot, r->step * k};
        else if (const auto* f = std::get_if<free_slot>(&a))
            want = free_slot{2, f->slot};
        BOOST_TEST((b == want), to_string(a));
    }
}
