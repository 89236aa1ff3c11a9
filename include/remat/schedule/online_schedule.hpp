// remat/schedule/online_schedule.hpp — the concept of a schedule that decides during the forward sweep, for
// loops that learn their length only when they end (docs/online.md; remat::run_online drives one).
//
// An online schedule S models remat::online_schedule when, for s of type const S& and c of its cursor
// type (a remat::action_cursor):
//
//     | expression        | type                | meaning                                                   |
//     |-------------------|---------------------|-----------------------------------------------------------|
//     | s.cursor()        | an online cursor    | a new run, at x_0, awaiting the first answer              |
//     | s.slot_bounds()   | std::vector<slot_t> | per level, the most slots held at once for any T (checked |
//     |                   |                     | against the store before step 0; unlimited:               |
//     |                   |                     | level_capacity::unlimited_slots)                          |
//     | c.position()      | step_t              | k while x_k is the forward sweep's current state          |
//     | c.answer(last)    | void                | whether step k = position() is the loop's last (T = k+1)  |
//     | c.end_state()     | void                | x_k, k = position() >= 1, is the loop's final state (T=k) |
//     | c.steps()         | step_t              | T once the loop has ended, 0 before                       |
//     | c.next(a)         | bool                | the next action: after answer(false) the free/store of x_k |
//     |                   |                     | and `advance k k+1`; after the loop's end, the reverse    |
//     |                   |                     | sweep; false while an answer is awaited and at the end    |
//
// remat::online_revolve (one level) and remat::online_multilevel (a fast level spilling to a slow one,
// over a tiered_store such as host RAM + an hdf5_store) model it (each header asserts so); so can a schedule
// of one's own.
//
//     remat::online_revolve plan(16);
//     plan.slot_bounds();      // {16}: one level of 16 slots
//     remat::online_multilevel spill(remat::cost_model{{{"host", 8, 0, 0},
//                                                       {"disk", remat::level_spec::unlimited, 20, 20}}});
//     spill.slot_bounds();     // {8, unlimited}: run it on tiered_store<host_store, hdf5_store>
#pragma once

#include "remat/schedule/range.hpp"
#include "remat/types.hpp"

#include <concepts>
#include <vector>

namespace remat {

/// The cursor of an online schedule (the table above).
template <class C>
concept online_cursor = action_cursor<C> && requires(C& c, const C& cc) {
    { cc.position() } -> std::convertible_to<step_t>;
    c.answer(true);
    c.end_state();
    { cc.steps() } -> std::convertible_to<step_t>;
};

/// A schedule that decides during the forward sweep (the table above).
template <class S>
concept online_schedule = requires(const S& s) {
    { s.cursor() } -> online_cursor;
    { s.slot_bounds() } -> std::convertible_to<std::vector<slot_t>>;
};

} // namespace remat
