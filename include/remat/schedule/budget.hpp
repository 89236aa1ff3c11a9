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

} // namespace remat
