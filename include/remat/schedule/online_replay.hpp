// remat/schedule/online_replay.hpp — an online schedule's actions for a loop whose length is known in
// hindsight (the CLI's `plan --online`, the tests' replays, cost() by enumeration).
//
// An online schedule (online_revolve, online_multilevel) answers a cursor step by step; a replay answers it
// for a loop of T steps, so the online schedule becomes an ordinary remat::schedule: steps(), cost(),
// cursor(), a range of actions.
#pragma once

#include "remat/detail/validate.hpp"
#include "remat/error.hpp"
#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/range.hpp"

#include <limits>

namespace remat {

/// When a loop learns that it has ended.
enum class online_end {
    /// At x_k, before step k runs, the loop knows whether step k is its last (an adaptive ODE solver that
    /// clips its step to the final time). x_{T-1} is current when the loop ends and is reversed at once.
    at_last_step,
    /// The loop learns it has ended only at x_T, after running step T-1 (a convergence test on the new
    /// state). x_T is of no use to the adjoint, so x_{T-1} must be restored or recomputed: the schedule
    /// then costs exactly what a loop of T+1 steps costs with at_last_step, usually about r forward steps
    /// more than T steps do (measured in bench/online_ratio, docs/online.md).
    after_last_step,
};

namespace detail {
/// The next action of an online cursor answered for a loop of `steps` steps.
template <class OnlineCursor>
bool replay_next(OnlineCursor& online, step_t steps, online_end end, action& out)
{
    while (!online.next(out)) {
        if (!online.awaiting_answer())
            return false;
        const step_t k = online.position();
        if (end == online_end::at_last_step)
            online.answer(k == steps - 1);
        else if (k == steps)
            online.end_state();
        else
            online.answer(false);
    }
    return true;
}
} // namespace detail

/// The actions of the online schedule `OnlinePlan` (a copy is kept) for a loop of `steps` steps that learns
/// its end as `end` says. remat::online_replay and remat::online_multilevel_replay are its two instances.
///
///     remat::online_replay r = remat::online_revolve(4).replay(20);
///     r.cost().forward_steps;   // 43, the offline optimum for T = 20 and s = 4
template <class OnlinePlan>
class online_replay_of : public action_range<online_replay_of<OnlinePlan>> {
public:
    /// Throws remat::argument_error when steps < 1, or when a loop that learns its end after the last
    /// step would need step 2^63-1 to run.
    online_replay_of(const OnlinePlan& plan, step_t steps, online_end end) : plan_(plan), steps_(steps), end_(end)
    {
        detail::require_positive_steps(steps);
        if (end == online_end::after_last_step && steps == std::numeric_limits<step_t>::max())
            throw argument_error("a loop that learns its end after the last step cannot have 2^63-1 steps");
    }

    [[nodiscard]] step_t steps() const noexcept { return steps_; }
    [[nodiscard]] online_end convention() const noexcept { return end_; }
    /// The plan's slots, where it has one level (online_revolve).
    [[nodiscard]] slot_t slots() const noexcept
        requires requires(const OnlinePlan& p) { p.slots(); }
    {
        return plan_.slots();
    }
    [[nodiscard]] const OnlinePlan& plan() const noexcept { return plan_; }
    /// The counts (and predicted cost, where the plan has a cost model) of this replay.
    [[nodiscard]] schedule_cost cost() const { return plan_.cost(steps_, end_); }

    class cursor_type {
    public:
        cursor_type() = default;
        bool next(action& out) { return detail::replay_next(online_, steps_, end_, out); }

    private:
        friend class online_replay_of;
        typename OnlinePlan::cursor_type online_{};
        step_t steps_ = 0;
        online_end end_ = online_end::at_last_step;
    };

    [[nodiscard]] cursor_type cursor() const
    {
        cursor_type c;
        c.online_ = plan_.cursor();
        c.steps_ = steps_;
        c.end_ = end_;
        return c;
    }

private:
    OnlinePlan plan_;
    step_t steps_;
    online_end end_;
};

} // namespace remat
