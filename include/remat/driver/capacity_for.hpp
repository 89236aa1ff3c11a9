// remat/driver/capacity_for.hpp — the capacity a storage level needs for a plan, so that a slot count is
// stated once: in the plan (or the budget), never again in the store; and the drivers' check, before step
// 0, that a plan fits a store (detail::check_plan_fits). The one bridge between schedule/ and store/.
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

#include "remat/driver/run_report.hpp"
#include "remat/error.hpp"
#include "remat/schedule/budget.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/multilevel_model.hpp"
#include "remat/schedule/range.hpp"
#include "remat/store/storage_level.hpp"
#include "remat/types.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
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

namespace detail {

/// Checks that level `level` (named `name`) with capacity `have` holds `slots` snapshots of
/// `snapshot_bytes` each at once (0: the slots only). Throws remat::capacity_error naming both numbers.
inline void check_level_fits(const level_capacity& have, level_t level, const std::string& name, slot_t slots,
                             std::uint64_t snapshot_bytes)
{
    const std::string where = "level " + std::to_string(level) + " (" + name + ")";
    if (slots > have.slots)
        throw capacity_error("the plan holds " + std::to_string(slots) + " snapshots at once on " + where +
                             ", but the store's level has " + std::to_string(have.slots) + " slots");
    if (have.bytes != level_capacity::unlimited_bytes && snapshot_bytes != 0 &&
        static_cast<std::uint64_t>(slots) > have.bytes / snapshot_bytes)
        throw capacity_error("the plan holds " + std::to_string(slots) + " snapshots of " +
                             std::to_string(snapshot_bytes) + " bytes at once on " + where +
                             ", but the store's level has room for " + std::to_string(have.bytes) + " bytes");
}

/// The other direction of the bridge, for the drivers before step 0: a plan with counts `cost` fits a
/// store (a detail::store_access) whose levels are `levels` (the run's report, for their names): the same
/// number of levels, and on each the plan's peak slots (and their bytes, unless snapshot_bytes is 0)
/// within its capacity. A cost without per-level counts is checked for its total peak on level 0.
/// Throws remat::capacity_error.
template <class Access>
void check_plan_fits(Access& store, const schedule_cost& cost, std::span<const level_report> levels,
                     std::uint64_t snapshot_bytes)
{
    if (!cost.levels.empty() && cost.levels.size() != levels.size())
        throw capacity_error("the plan uses " + std::to_string(cost.levels.size()) + " storage level" +
                             (cost.levels.size() == 1 ? "" : "s") + " but the store has " +
                             std::to_string(levels.size()));
    for (std::size_t i = 0; i < std::max<std::size_t>(cost.levels.size(), 1); ++i) {
        const slot_t peak = cost.levels.empty() ? cost.peak_slots : cost.levels[i].peak_slots;
        const auto level = static_cast<level_t>(i);
        check_level_fits(store.capacity(level), level, i < levels.size() ? levels[i].name : std::string(), peak,
                         snapshot_bytes);
    }
}

} // namespace detail

} // namespace remat
