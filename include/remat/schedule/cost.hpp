// remat/schedule/cost.hpp — what a schedule will cost, known before it runs.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/types.hpp"

#include <cstdint>
#include <vector>

namespace remat {

/// Counts for one storage level.
struct level_cost {
    std::uint64_t stores = 0;   ///< store actions into this level
    std::uint64_t restores = 0; ///< restore actions from this level
    slot_t peak_slots = 0;      ///< most slots of this level occupied at once
    friend bool operator==(const level_cost&, const level_cost&) = default;
};

/// The cost of a schedule, computed in closed form (never by enumerating its actions).
///
///     remat::schedule_cost c = remat::revolve(10, 3).cost();
///     // c.forward_steps == 15, c.reverse_steps == 10, c.peak_slots == 3, c.predicted_cost == 15
struct schedule_cost {
    step_t steps = 0;                ///< T, the loop length
    std::uint64_t forward_steps = 0; ///< steps run by advance actions (recomputation included)
    std::uint64_t reverse_steps = 0; ///< reverse actions, always T
    std::uint64_t stores = 0;        ///< store actions, all levels
    std::uint64_t restores = 0;      ///< restore actions, all levels
    slot_t peak_slots = 0;           ///< most slots occupied at once, all levels together
    std::uint64_t repetition = 0;    ///< the most times any one step is run by advance actions
    std::vector<level_cost> levels;  ///< per level, level 0 first
    /// Advances that keep their step's tape (remat::taped_revolve); 0 for state-only schedules. Each is
    /// also one of forward_steps, and spares its step's re-run in the adjoint.
    std::uint64_t taped_steps = 0;
    std::uint64_t peak_tapes = 0; ///< most tapes held at once (0 for state-only schedules)
    /// The cost under the schedule's model (remat/schedule/multilevel_model.hpp): for the single-level
    /// schedules (revolve, uniform, store-all) one level of zero write and read costs and step cost 1,
    /// so it equals forward_steps; multi-level schedules price their own levels.
    double predicted_cost = 0;
    friend bool operator==(const schedule_cost&, const schedule_cost&) = default;
};

/// Completes the cost of a single-level schedule from its totals: the one level's counts, and the
/// predicted cost of a level with zero write and read costs at step cost 1 (the forward steps).
inline void finish_single_level(schedule_cost& c)
{
    c.levels = {level_cost{c.stores, c.restores, c.peak_slots}};
    c.predicted_cost = static_cast<double>(c.forward_steps);
}

/// Forward steps of a store-everything run of T steps (T-1: x_{T-1} is reversed where it stands).
[[nodiscard]] constexpr std::uint64_t store_all_forward_steps(step_t steps) noexcept
{
    return steps > 0 ? static_cast<std::uint64_t>(steps - 1) : 0;
}

} // namespace remat
