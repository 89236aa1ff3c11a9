// remat/schedule/taped_uniform.hpp — PyTorch's checkpoint_sequential as a plan: uniform segments whose
// inputs are kept in the forward sweep and whose steps are re-run keeping their tapes in the reverse sweep.
//
// Segment j covers steps [j k, j k + L_j) with L_j = k except the last one. The forward sweep stores each
// segment's input x_{jk} (the last one's aside) and advances over it without tapes; then, from the last
// segment to the first, the segment's input is restored (and its slot freed: the first tape holds it), its
// steps but the last run with taped advances, the last is reversed from the state it leaves, and the
// others from their tapes. Each step runs at most twice; the last segment's steps once:
//   evaluations = T + (n - 1) k = 2T - L_last        (n = ceil(T / k) segments)
//   peak units  = max(n - 1 + (L_last - 1) u, n - 2 + (k - 1) u)   (u: a tape's units; (T - 1) u when n = 1)
// in remat::taped_revolve's memory model (units of one state; x_0's snapshot counts; a tape holds its
// step's input). remat::taped_revolve is optimal in the same model, so it never needs more evaluations at
// the same memory; this plan is the baseline it is measured against (bench/rnn_bptt, docs/tapes.md).
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/action_list.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/range.hpp"
#include "remat/types.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace remat {

/// Uniform segments of `every` steps re-run with tapes (checkpoint_sequential); each tape takes
/// `tape_units` units of memory. The actions are written at construction (about three a step) and shared
/// by copies.
///
///     remat::taped_uniform plan(1000, 32, 6);            // 32-step segments, a tape of 6 states
///     plan.evaluations();                                // 2000 - 8: the last segment runs once
///     plan.peak_units();                                 // 30 + 31 * 6 = 216
///     auto fitted = remat::taped_uniform::fit(1000, 154, 6);   // the fewest evaluations in 154 units
///
/// Throws remat::argument_error naming the value when steps < 1 or > 2^24, every < 1 or tape_units < 1.
class taped_uniform : public action_range<taped_uniform> {
public:
    taped_uniform(step_t steps, step_t every, slot_t tape_units = 1, double forward_cost = 1.0,
                  double backward_cost = 1.0);

    /// The spacing with the fewest evaluations (then the fewest units) whose peak fits `units`; throws
    /// remat::capacity_error naming the fewest units any spacing needs when none fits.
    [[nodiscard]] static taped_uniform fit(step_t steps, slot_t units, slot_t tape_units, double forward_cost = 1.0,
                                           double backward_cost = 1.0);
    /// The spacing fit() chooses, without writing the plan; O(sqrt(T)) time. Throws as fit() does.
    [[nodiscard]] static step_t fit_every(step_t steps, slot_t units, slot_t tape_units);

    /// The peak units of segments of `every` steps, in closed form (see the top of this file).
    [[nodiscard]] static slot_t peak_units_for(step_t steps, step_t every, slot_t tape_units);

    [[nodiscard]] step_t steps() const noexcept { return steps_; }
    [[nodiscard]] step_t every() const noexcept { return every_; }
    [[nodiscard]] slot_t tape_units() const noexcept { return tape_units_; }
    /// Forward evaluations: advances plus the re-run of each reverse without a tape (2T - L_last).
    [[nodiscard]] std::uint64_t evaluations() const noexcept { return evaluations_; }
    /// Most units held at once (snapshots + tape_units x tapes).
    [[nodiscard]] slot_t peak_units() const noexcept { return peak_units_; }
    /// The counts, and predicted_cost = F x evaluations() + B x T.
    [[nodiscard]] schedule_cost cost() const { return cost_; }

    using cursor_type = action_list_cursor;
    [[nodiscard]] cursor_type cursor() const { return cursor_type(actions_); }

private:
    step_t steps_;
    step_t every_;
    slot_t tape_units_;
    std::uint64_t evaluations_ = 0;
    slot_t peak_units_ = 0;
    schedule_cost cost_;
    std::shared_ptr<const std::vector<action>> actions_;
};

} // namespace remat
