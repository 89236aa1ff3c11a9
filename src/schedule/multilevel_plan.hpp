// The shape of a multi-level schedule (internal to the library): which method, which tables, and for the
// spine and nested structures the outer walk on the slowest level. Shared, immutable, by a schedule and its
// cursors.
#pragma once

#include "multilevel_stacked.hpp"

#include "multilevel_table.hpp"
#include "remat/schedule/multilevel.hpp"

#include <algorithm>
#include <memory>
#include <vector>

namespace remat::detail {

/// How the loop is cut before the table takes over (multilevel::structure).
using multilevel_shape = multilevel::structure;

struct multilevel_plan {
    step_t steps = 0;
    cost_model model;
    multilevel::method used = multilevel::method::binomial;
    multilevel_shape shape = multilevel_shape::binomial;
    std::shared_ptr<const multilevel_table> table;              ///< exact, grid (the loop's table), spine, nested
    std::vector<std::shared_ptr<const multilevel_table>> parts; ///< grid: the fine and interior tables
    level_t slow = 0;                                           ///< the outer level of spine and nested (the last one)
    step_t period = 0;                                          ///< k
    step_t segments = 1;                                        ///< N
    step_t tail = 0;              ///< length of the last segment (the whole loop, in table units, for exact and grid)
    slot_t outer_slots = 0;       ///< nested: slots of the outer revolve
    std::uint64_t run_row = 0;    ///< table row of a segment whose start the outer level holds
    std::uint64_t top_row = 0;    ///< table row before an unheld segment start is placed
    multilevel_counts stored_run; ///< counts of a k-step segment whose start the outer level holds
    multilevel_counts placed_run; ///< counts of a k-step segment whose start is placed by the table
    multilevel_counts tail_run;   ///< counts of the last segment (start placed by the table)
    schedule_cost outer;          ///< nested: the outer revolve's counts, in segments; stacked: the plan's counts
    stacked_layout layout;        ///< stacked: the level and slot of each of revolve's depths
    /// Table iterations (and stacked tasks, 300 each) counted while making the plan, subsets included.
    std::uint64_t work = 0;
    /// A plan over some of the levels that this one runs (its method, shape and tables are sub's), and this
    /// model's level for each of sub's levels. Null for a plan over all of them.
    std::shared_ptr<const multilevel_plan> sub;
    std::vector<level_t> sub_levels;
    /// The plan whose shape is run: sub, or this one.
    [[nodiscard]] const multilevel_plan& core() const noexcept { return sub ? *sub : *this; }
};

/// The binomial shape's schedule: revolve on the one level's slots (at most T of them); the stacked shape's:
/// revolve over its layout's slots, depth d on layout level d.
inline revolve binomial_schedule(const multilevel_plan& plan)
{
    if (plan.shape == multilevel::structure::stacked)
        return revolve(plan.steps, plan.layout.slots());
    return revolve(plan.steps, std::min(plan.model.levels[0].slots, plan.steps));
}

} // namespace remat::detail
