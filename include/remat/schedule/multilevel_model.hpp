// remat/schedule/multilevel_model.hpp — storage levels and the cost model that multi-level schedules
// minimise (docs/multilevel.md).
//
// A loop of T steps; levels 0..n-1, fastest first. Level L has c_L slots (possibly unlimited), and
// writing or reading one snapshot there costs W_L or R_L, in units of one forward step. Running one
// forward step costs U (step_cost, default 1). A schedule's predicted cost is
//
//     U * forward_steps + sum over levels L of (stores_L * W_L + restores_L * R_L) + T * reverse_cost
//
// where reverse_cost (one adjoint step) is the same in every schedule, so it never changes which
// schedule is optimal; it only lets the prediction be read as time.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace remat {

/// One storage level: its name, how many snapshots it holds, and what moving one costs.
///
///     remat::level_spec host{"host", 4, 0.0, 0.0};                       // 4 slots, free
///     remat::level_spec disk{"disk", remat::level_spec::unlimited, 5, 5}; // any number, 5 steps each way
struct level_spec {
    /// `slots` value for a level that holds any number of snapshots (level_capacity::unlimited_slots too).
    static constexpr slot_t unlimited = std::numeric_limits<slot_t>::max();

    std::string name;         ///< "device", "host", "disk", ... (reports only)
    slot_t slots = unlimited; ///< capacity in snapshots, the type of a slot index; at least 1 (validate())
    double write_cost = 0;    ///< W_L: one store into this level, in forward steps
    double read_cost = 0;     ///< R_L: one restore from this level, in forward steps
    friend bool operator==(const level_spec&, const level_spec&) = default;
};

/// The levels (fastest first) and the step costs that a multi-level schedule minimises.
///
///     remat::cost_model m{{{"host", 4, 0, 0}, {"disk", remat::level_spec::unlimited, 5, 5}}};
///     m.step_cost = 1;      // one forward step
///     m.reverse_cost = 2;   // one adjoint step: counted in predictions, never changes the optimum
struct cost_model {
    std::vector<level_spec> levels;
    double step_cost = 1;    ///< U: one forward step
    double reverse_cost = 0; ///< one adjoint step (constant over schedules)
    friend bool operator==(const cost_model&, const cost_model&) = default;

    /// One level of `slots` slots with zero write and read costs: plain binomial checkpointing.
    ///
    ///     remat::cost_model m = remat::cost_model::single_level(10);
    [[nodiscard]] static cost_model single_level(slot_t slots);
};

/// Checks a model: at least one level and at most `max_levels`, every level at least one slot, costs
/// finite and >= 0, step_cost > 0. Throws remat::argument_error naming the level and the value.
///
///     remat::validate(m);
void validate(const cost_model& model);

/// Levels a multi-level schedule accepts (its dynamic program is exponential in their number).
inline constexpr std::size_t max_levels = 8;

/// The predicted cost of a schedule's counts under `model` (the formula at the top of this header).
/// `counts.levels` may be shorter than the model (missing levels count zero) but never longer.
///
///     double t = remat::predicted_cost(remat::revolve(100, 5).cost(), remat::cost_model::single_level(5));
[[nodiscard]] double predicted_cost(const schedule_cost& counts, const cost_model& model);

} // namespace remat
