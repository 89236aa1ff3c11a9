#include "remat/schedule/budget.hpp"

#include "remat/detail/checked_math.hpp"
#include "remat/detail/validate.hpp"
#include "remat/error.hpp"
#include "remat/schedule/revolve.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace remat {

memory_plan plan_for_budget(step_t steps, std::uint64_t budget_bytes, std::uint64_t state_bytes)
{
    detail::require_positive_steps(steps);
    if (state_bytes == 0)
        throw argument_error("the state size must be at least 1 byte, got 0");
    const std::uint64_t fitting = budget_bytes / state_bytes;
    // Every schedule is planned with at least one slot, so even T = 1 (which keeps none) is refused rather
    // than given a slot the budget cannot hold.
    if (fitting == 0)
        throw capacity_error("a budget of " + std::to_string(budget_bytes) + " bytes holds no snapshot of " +
                             std::to_string(state_bytes) + " bytes; at least one slot is needed");
    memory_plan p;
    p.steps = steps;
    p.budget_bytes = budget_bytes;
    p.state_bytes = state_bytes;
    p.slots = static_cast<slot_t>(
        std::clamp<std::uint64_t>(fitting, 1, static_cast<std::uint64_t>(std::numeric_limits<slot_t>::max())));
    p.cost = revolve(steps, p.slots).cost();
    const std::uint64_t baseline = store_all_forward_steps(steps);
    p.recompute_ratio = baseline == 0 ? 1.0 : static_cast<double>(p.cost.forward_steps) / static_cast<double>(baseline);
    p.peak_snapshot_bytes = detail::checked_mul(p.cost.peak_slots, state_bytes, "the peak snapshot bytes");
    return p;
}

slot_t tape_units_for(std::uint64_t tape_bytes, std::uint64_t state_bytes)
{
    if (state_bytes == 0)
        throw argument_error("the state size must be at least 1 byte, got 0");
    if (tape_bytes == 0)
        throw argument_error("the tape size must be at least 1 byte, got 0");
    const std::uint64_t units = tape_bytes / state_bytes + (tape_bytes % state_bytes != 0 ? 1 : 0); // no overflow
    return static_cast<slot_t>(std::min(units, static_cast<std::uint64_t>(std::numeric_limits<slot_t>::max())));
}

taped_units taped_units_for_budget(std::uint64_t budget_bytes, std::uint64_t state_bytes, std::uint64_t tape_bytes)
{
    const slot_t tape_units = tape_units_for(tape_bytes, state_bytes); // checks both sizes first
    const std::uint64_t fitting = budget_bytes / state_bytes;
    if (fitting == 0)
        throw capacity_error("a budget of " + std::to_string(budget_bytes) + " bytes holds no state of " +
                             std::to_string(state_bytes) + " bytes");
    return {static_cast<slot_t>(std::min(fitting, static_cast<std::uint64_t>(std::numeric_limits<slot_t>::max()))),
            tape_units};
}

} // namespace remat
