// remat/schedule/taped_revolve.hpp — the optimal schedule for T equal steps that may hold, besides
// snapshots of states, the tapes of steps (their activations), in one memory budget.
//
// A state-only schedule's adjoint of step K re-runs step K from x_K, so even with every state kept a
// gradient costs T - 1 + T forward evaluations. A taped advance (`advance K K+1 tape`, see
// remat/schedule/action.hpp) runs step K once keeping its tape, and `reverse K` then back-propagates
// through it without the re-run: BPTT keeps all T tapes; PyTorch's checkpoint_sequential keeps segment
// inputs and one segment's tapes. This planner chooses, for each step, which (Beaumont et al. 2019's
// heterogeneous-chain model with one kind of step; Gruslys et al. 2016's BPTT-MSM).
//
// Memory model, in units of one state's size:
//   - a snapshot of a state (a `store`) takes 1 unit; x_0's snapshot counts, as in remat::revolve;
//   - a tape takes `tape_units` units, its input state x_K included (so x_K need not be kept beside it);
//   - the current (working) state is not counted, and by default neither is the working memory of the
//     adjoint step that runs — the conventions of remat::revolve, whose `slots` are exactly this budget when
//     no tape fits;
//   - `rerun_units` prices that working memory where it is real: a reverse from a state re-runs its step and
//     holds the re-run's graph (in PyTorch: a tape, rerun_units = tape_units) until it is done, its input
//     x_K included, so that x_K's snapshot, if held then, is counted once;
//   - at every moment, snapshots held + tape_units x tapes held (+ rerun_units - [x_K's snapshot held]
//     during a reverse K from a state) <= `units`.
// With rerun_units = w the plans are those of the table below with E(1, b) infeasible for b < w: no tape
// fits where tape_units + w > units (revolve's plan with units - w slots), every step but the last is
// taped where units >= (T-1) x tape_units + w.
// Tape sizes that are not whole states are rounded up by the caller (5.9 states -> 6 units): a plan for
// the larger tape fits the smaller one.
//
// Costs: a forward evaluation of a step costs F, a backward step through a tape costs B. `advance` costs
// F per step, `reverse K` costs B after a taped advance of K and F + B otherwise. Every step is reversed
// once, so B only adds T x B: the plan minimises forward evaluations (advances plus re-runs), whatever F
// and B are, and they only price it (cost().predicted_cost = F x evaluations() + B x T).
//
// The plan is exact: a dynamic program over (segment length l, free units b) with, for each segment, the
// choice between (a) a taped first step (then the rest with b - tape_units, the step's snapshot freed) and
// (b) storing x_s, advancing j steps, the right part with b - 1 and the left part with b; the best j is
// found by branch and bound on the monotonicity of the cost in l (exact, not a heuristic). Its work grows
// up to T^2 x units: under 0.1 s for T = 1000 and 295 units, 8.7 s for T = 10^4 and 2950 units; by
// default the planner refuses beyond about 1 s of work (planning_work(), docs/tapes.md). Two cases are
// closed forms, planned in O(T) for any T up to 10^6: no tape fits (revolve's plan) and (T-1) tapes fit.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/action_list.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/range.hpp"
#include "remat/types.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace remat {

/// The optimal schedule with states and tapes for `steps` equal steps within `units` units of memory (one
/// unit: one state), each tape taking `tape_units` units and each reverse from a state `rerun_units` while it
/// runs (0: not counted); `forward_cost` (F) and `backward_cost` (B) price it. The actions are planned at
/// construction (O(T) of them) and shared by copies.
///
///     remat::taped_revolve plan(1000, 154, 6, 0.69, 1.19);   // a GRU: tape 5.9 states, B = 1.7 F
///     plan.evaluations();               // forward evaluations, adjoint re-runs included (>= T)
///     plan.cost().predicted_cost;       // 0.69 * evaluations() + 1.19 * 1000
///     for (const remat::action& a : plan)   // advance 0 1 tape, store 0 0 1, advance 1 18, ...
///         std::cout << a << '\n';
///     remat::taped_revolve held(1000, 254, 7, 1, 1, remat::taped_revolve::default_work_limit, 7);
///         // as PyTorch holds it: a reverse's re-run keeps a tape (7 states) while it runs
///
/// Throws remat::argument_error naming the value when steps < 1 or > 10^6, units < 1, tape_units < 1,
/// rerun_units < 0 or > tape_units, a cost is negative or not finite, or, when a tape fits but not T - 1 of them (the
/// plan needs the table), T > 90000, the table would exceed max_table_entries or its work would exceed `work_limit`
/// (refused after at most that work: about 1 s by default); remat::capacity_error when units < rerun_units + 1 (T >= 2:
/// x_0's snapshot beside a re-run) or < max(rerun_units, 1) (T = 1).
class taped_revolve : public action_range<taped_revolve> {
public:
    taped_revolve(step_t steps, slot_t units, slot_t tape_units, double forward_cost = 1.0, double backward_cost = 1.0,
                  std::uint64_t work_limit = default_work_limit, slot_t rerun_units = 0);

    [[nodiscard]] step_t steps() const noexcept { return steps_; }
    /// The memory budget asked for, in units of one state.
    [[nodiscard]] slot_t units() const noexcept { return units_; }
    [[nodiscard]] slot_t tape_units() const noexcept { return tape_units_; }
    /// What a reverse from a state holds while it re-runs its step, its input included (0: not counted).
    [[nodiscard]] slot_t rerun_units() const noexcept { return rerun_units_; }
    /// Forward evaluations of steps: advances (taped or not) plus the re-run of each reverse from a state;
    /// the optimum, T at least (reached with (T-1) x tape_units units: every step but the last taped).
    [[nodiscard]] std::uint64_t evaluations() const noexcept { return evaluations_; }
    /// Most units held at once (snapshots + tape_units x tapes, and a re-run's units while a reverse from a
    /// state runs where rerun_units() > 0); never more than units().
    [[nodiscard]] slot_t peak_units() const noexcept { return peak_units_; }

    /// The planner's work: table entries filled, split points priced, and 4 for each range of splits
    /// bounded (0 when the plan is a closed form: no tape fits, or every step but the last is taped). Deterministic, so
    /// a bound on it is a bound on the planning time that a test can assert; never more than the constructor's
    /// work_limit.
    [[nodiscard]] std::uint64_t planning_work() const noexcept { return planning_work_; }
    /// The work beyond which the constructor refuses by default: under 1 s of planning (2-7 ns of CPU a
    /// unit of work on a loaded 2-core machine, docs/tapes.md). Pass a larger work_limit to wait longer.
    static constexpr std::uint64_t default_work_limit = 150'000'000;
    /// The largest table (entries of 4 bytes) the planner makes.
    static constexpr std::uint64_t max_table_entries = 1u << 25;

    /// The counts (forward_steps: advances, taped ones included; taped_steps; stores; restores; peak_slots:
    /// snapshots; peak_tapes) and predicted_cost = F x evaluations() + B x T.
    [[nodiscard]] schedule_cost cost() const { return cost_; }

    /// One pass over the planned actions.
    using cursor_type = action_list_cursor;
    [[nodiscard]] cursor_type cursor() const { return cursor_type(actions_); }

private:
    step_t steps_;
    slot_t units_;
    slot_t tape_units_;
    slot_t rerun_units_;
    std::uint64_t evaluations_ = 0;
    std::uint64_t planning_work_ = 0;
    slot_t peak_units_ = 0;
    schedule_cost cost_;
    std::shared_ptr<const std::vector<action>> actions_;
};

} // namespace remat
