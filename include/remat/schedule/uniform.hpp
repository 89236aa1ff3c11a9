// remat/schedule/uniform.hpp — the baselines: a snapshot every k steps, and store-everything.
//
// Uniform (periodic) checkpointing is what CVODES's adjoint module and PyTorch's checkpoint_sequential
// do: the forward sweep keeps x_0, x_k, x_2k, ...; the reverse sweep re-runs each segment from its
// checkpoint, storing all of its states, and reverses them. Store-all is the case k = 1.
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/range.hpp"

#include <cstdint>

namespace remat {

/// A snapshot every `every` steps.
///
///     remat::uniform plan(100, 10);                 // checkpoints x_0, x_10, ..., x_90
///     plan.cost().peak_slots;                       // 18: 9 checkpoints + 9 states of one segment
///     auto fitted = remat::uniform::fit(100, 20);   // the spacing with the fewest forward steps
///                                                   // among those that fit 20 slots
class uniform : public action_range<uniform> {
public:
    /// Throws remat::argument_error when steps < 1 or every < 1.
    uniform(step_t steps, step_t every);

    /// The spacing with the fewest forward steps (then fewest stores) whose peak fits `slots`; exact.
    /// Microseconds for most (T, slots); tens of milliseconds at worst for any 64-bit T (T near 2^63, slots
    /// a few percent above min_slots(T); docs/schedules.md). Throws remat::capacity_error when no spacing
    /// fits, naming the fewest slots any spacing needs.
    [[nodiscard]] static uniform fit(step_t steps, slot_t slots);

    /// The fewest slots any spacing needs for `steps` steps (about 2*sqrt(T)).
    [[nodiscard]] static slot_t min_slots(step_t steps);

    [[nodiscard]] step_t steps() const noexcept { return steps_; }
    [[nodiscard]] step_t every() const noexcept { return every_; }
    [[nodiscard]] schedule_cost cost() const;

    class cursor_type {
    public:
        cursor_type() = default;
        bool next(action& out)
        {
            while (!queue_.pop(out)) {
                if (phase_ == phase::done)
                    return false;
                refill();
            }
            return true;
        }

    private:
        friend class uniform;
        enum class phase { checkpoints, segment_forward, segment_reverse, done };
        void refill();
        step_t steps_ = 0;
        step_t every_ = 1;
        step_t segments_ = 0;
        phase phase_ = phase::done;
        step_t segment_ = 0; // j: the segment being worked on
        step_t offset_ = 0;  // i: position within it
        bool first_ = true;  // the last segment, reversed straight after the forward sweep
        bool started_ = false;
        detail::action_queue<4> queue_;
    };

    [[nodiscard]] cursor_type cursor() const;

private:
    step_t steps_;
    step_t every_;
};

/// Store every state: T-1 forward steps and T-1 snapshots held at the peak (none for T = 1).
/// `slots` must be at least 1, as every plan's (remat::argument_error), and at least T-1
/// (remat::capacity_error).
///
///     remat::store_all plan(1000, 999);
class store_all : public action_range<store_all> {
public:
    store_all(step_t steps, slot_t slots);
    [[nodiscard]] step_t steps() const noexcept { return plan_.steps(); }
    [[nodiscard]] schedule_cost cost() const { return plan_.cost(); }
    [[nodiscard]] uniform::cursor_type cursor() const { return plan_.cursor(); }

private:
    uniform plan_;
};

} // namespace remat
