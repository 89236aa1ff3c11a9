// remat/driver/capacity_for.hpp — the capacity a storage level needs for a plan, so that a slot count is
// stated once: in the plan (or the budget), never again in the store.
//
//     remat::revolve plan(T, 20);
//     remat::host_store store(remat::capacity_for(plan));              // the 20 slots the plan uses at most
//     remat::run(plan, store, x, remat::forward_step(f), remat::adjoint_step(g));
//
//     remat::memory_plan p = remat::plan_for_budget(T, 2ull << 30, bytes_of_x);
//     remat::host_store within(remat::capacity_for(p));                // p.slots slots within the 2 GiB
//
//     remat::multilevel two(T, model);                                 // host + disk
//     remat::tiered_store store2(remat::host_store(remat::capacity_for(two, 0)),
//                                remat::hdf5_store("run.h5", remat::capacity_for(two, 1)));
#pragma once

#include "remat/error.hpp"
#include "remat/schedule/budget.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/multilevel_model.hpp"
#include "remat/schedule/range.hpp"
#include "remat/store/storage_level.hpp"
#include "remat/types.hpp"

#include <algorithm>
#include <cstddef>
#include <string>

namespace remat {

/// The slots level `level` of a plan with these counts holds at once (at least 1, so that a level the
/// plan leaves empty can still be made). Throws remat::schedule_error for a level the plan lacks.
///
///     remat::capacity_for(remat::revolve(10, 3).cost(), 0).slots; // 3
[[nodiscard]] inline level_capacity capacity_for(const schedule_cost& cost, level_t level = 0)
{
    if (level < 0 || static_cast<std::size_t>(level) >= cost.levels.size())
        throw schedule_error("level " + std::to_string(level) + " is not a level of the plan, which has " +
                             std::to_string(cost.levels.size()));
    return {.slots = std::max<slot_t>(cost.levels[static_cast<std::size_t>(level)].peak_slots, 1)};
}

/// The capacity that level `level` of `plan` needs: its peak slots (plan.cost() is closed-form).
///
///     remat::host_store store(remat::capacity_for(remat::revolve(T, 20)));
template <schedule Schedule>
[[nodiscard]] level_capacity capacity_for(const Schedule& plan, level_t level = 0)
{
    return capacity_for(plan.cost(), level);
}

/// A budget's slots and bytes (remat::plan_for_budget).
///
///     remat::host_store store(remat::capacity_for(remat::plan_for_budget(T, 1ull << 30, 8 << 20)));
[[nodiscard]] inline level_capacity capacity_for(const memory_plan& p)
{
    return {.slots = p.slots, .bytes = p.budget_bytes};
}

/// The capacity a level of a cost model declares (level_spec::unlimited is level_capacity::unlimited_slots).
/// Throws remat::argument_error, naming the count, for fewer than one slot.
///
///     remat::capacity_for(remat::level_spec{"disk", remat::level_spec::unlimited, 5, 5}).slots
///         == remat::level_capacity::unlimited_slots
[[nodiscard]] inline level_capacity capacity_for(const level_spec& level)
{
    static_assert(level_spec::unlimited == level_capacity::unlimited_slots);
    if (level.slots < 1)
        throw argument_error("level " + level.name + " must hold at least 1 slot, got " + std::to_string(level.slots));
    return {.slots = level.slots};
}

} // namespace remat
