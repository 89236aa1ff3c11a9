// remat/schedule/budget.hpp — planning from a memory budget: how many slots, at what recompute cost.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"

#include <cstdint>

namespace remat {

/// What a byte budget buys for a loop of T steps with snapshots of `state_bytes` bytes each.
struct memory_plan {
    step_t steps = 0;
    std::uint64_t budget_bytes = 0;
    std::uint64_t state_bytes = 0;
    slot_t slots = 0;                      ///< floor(budget / state_bytes)
    schedule_cost cost;                    ///< of the binomial schedule with those slots
    double recompute_ratio = 1.0;          ///< forward steps over store-all's T-1 (1 = no recomputation)
    std::uint64_t peak_snapshot_bytes = 0; ///< cost.peak_slots * state_bytes
};

/// Plans the binomial schedule that fits `budget_bytes` of snapshots.
/// Throws remat::capacity_error when the budget holds no snapshot at all (for any T: a plan has at least
/// one slot), and remat::argument_error for zero steps or a zero state size.
///
///     remat::memory_plan p = remat::plan_for_budget(100000, 2ull << 30, 64ull << 20);
///     // p.slots == 32, p.recompute_ratio == forward steps / 99999
[[nodiscard]] memory_plan plan_for_budget(step_t steps, std::uint64_t budget_bytes, std::uint64_t state_bytes);

/// A byte budget in the units of remat::taped_revolve and remat::taped_uniform, which count memory in states.
struct taped_units {
    slot_t units = 0;      ///< states the budget holds: floor(budget_bytes / state_bytes)
    slot_t tape_units = 0; ///< one tape in states, rounded up: ceil(tape_bytes / state_bytes)
};

/// What `budget_bytes` holds of states of `state_bytes` and tapes of `tape_bytes` (a step's tape, its input
/// state included). A tape's size is rounded up to whole states, so a plan for these units never holds more
/// bytes than the budget (a plan for the larger tape fits the smaller one). Throws remat::argument_error
/// for a zero state or tape size, remat::capacity_error when the budget holds no state.
///
///     // a GRU step: a 64 KiB state, a 378 KiB tape; 10 MiB of memory
///     remat::taped_units u = remat::taped_units_for_budget(10 << 20, 64 << 10, 378 << 10); // {160, 6}
///     remat::taped_revolve plan(1000, u.units, u.tape_units);
[[nodiscard]] taped_units taped_units_for_budget(std::uint64_t budget_bytes, std::uint64_t state_bytes,
                                                 std::uint64_t tape_bytes);

/// A tape of `tape_bytes` in states of `state_bytes`, rounded up: taped_units_for_budget's tape_units.
/// Throws remat::argument_error for a zero size.
[[nodiscard]] slot_t tape_units_for(std::uint64_t tape_bytes, std::uint64_t state_bytes);

} // namespace remat
