// The stacked multi-level plan (internal): revolve over the slots of several levels at once, with the
// dearest level at the bottom of revolve's stack of snapshots.
//
// revolve keeps its snapshots as a stack: the task holding s slots has its start at depth used - s, so
// depth 0 holds x_0 for the whole run and the deepest slots are written and read most often. Putting the
// levels whose stores and restores cost most at the bottom makes their few uses the only price paid for
// their slots, while the forward steps are those of binomial checkpointing over all the slots together (the
// least possible with that many snapshots). On long loops it comes within a fraction of a per cent of the
// lower bound that ignores the transfer costs.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/multilevel_model.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace remat::detail {

/// Where revolve's slot depths live: depth d (0 = the bottom, x_0's) is slot `slot[d]` of level `level[d]`.
struct stacked_layout {
    std::vector<level_t> level;
    std::vector<slot_t> slot;
    [[nodiscard]] slot_t slots() const noexcept { return static_cast<slot_t>(level.size()); }
};

/// The layout of `use[L]` slots of each level L, the dearest (write + read) at the bottom.
[[nodiscard]] stacked_layout stack_levels(const cost_model& model, const std::vector<std::uint64_t>& use);

/// The counts of revolve(steps, layout.slots()) with each depth on its level, and their predicted cost.
/// Counted over revolve's distinct (length, slots) tasks; std::nullopt when they exceed `max_tasks` or a
/// count exceeds 64 bits.
[[nodiscard]] std::optional<schedule_cost> stacked_cost(step_t steps, const cost_model& model,
                                                        const stacked_layout& layout, std::size_t max_tasks);

} // namespace remat::detail
