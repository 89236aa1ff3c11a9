// remat/schedule/revolve.hpp — the offline binomial schedule (Griewank & Walther 2000, "revolve").
//
// For T steps and s slots (x_0 occupies one), it runs the provably minimal number of forward steps,
// r*T - C(s+r, r-1), and among all schedules with that minimum it takes the fewest stores. Each action
// costs O(1) time (no loop over r, no recursion), the cursor holds O(s) state, and T may be as large as
// 2^63-1.
#pragma once

#include "remat/detail/revolve_task.hpp"
#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/range.hpp"

#include <cstdint>
#include <vector>

namespace remat {

/// The binomial (Revolve) schedule for `steps` steps with `slots` snapshot slots on level 0.
///
///     remat::revolve plan(10, 3);
///     plan.cost().forward_steps;                // 15, the optimum
///     for (const remat::action& a : plan)       // store 0 0 0, advance 0 4, store 0 1 4, ...
///         std::cout << a << '\n';
class revolve : public action_range<revolve> {
public:
    /// Throws remat::argument_error when steps < 1 or slots < 1.
    revolve(step_t steps, slot_t slots);

    [[nodiscard]] step_t steps() const noexcept { return steps_; }
    /// The slots asked for; the schedule never uses more than min(slots, T-1).
    [[nodiscard]] slot_t slots() const noexcept { return slots_; }
    /// The repetition number r: no step is run forward more than r times.
    [[nodiscard]] std::uint64_t repetition() const noexcept { return repetition_; }

    /// Closed-form counts. Throws remat::overflow_error if forward_steps exceeds 2^64-1.
    [[nodiscard]] schedule_cost cost() const;

    /// One pass over the actions; see remat/schedule/range.hpp.
    class cursor_type {
    public:
        cursor_type() = default;
        bool next(action& out)
        {
            if (queue_.pop(out)) [[likely]]
                return true;
            if (done_)
                return false;
            refill();
            return queue_.pop(out);
        }

    private:
        friend class revolve;
        using task = detail::revolve_task;
        void refill();
        [[nodiscard]] slot_t slot_of(slot_t task_slots) const noexcept { return used_slots_ - task_slots; }

        slot_t used_slots_ = 0;
        task current_{};
        std::vector<task> pending_; // left parts waiting for their right parts: at most `slots` deep
        detail::action_queue<4> queue_;
        bool done_ = true;
    };

    [[nodiscard]] cursor_type cursor() const;

private:
    step_t steps_;
    slot_t slots_;
    slot_t used_slots_;
    std::uint64_t repetition_;
};

} // namespace remat
