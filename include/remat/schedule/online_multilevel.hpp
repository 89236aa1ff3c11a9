// remat/schedule/online_multilevel.hpp — online checkpointing over a fast level that spills to a slow one.
//
// online_revolve keeps everything on one level. A loop of unknown length that outgrows RAM needs disk:
// online_multilevel places snapshots online on the fast level (level 0, e.g. host RAM) and, each time the
// loop has run `period` steps since the last spill, spills the current state to the slow level (level 1,
// e.g. an hdf5_store) and starts afresh on the fast level. When the loop ends:
//  - the last segment (since the last spill) is reversed by online_revolve's own reverse sweep, with the
//    snapshots it placed on the fast level during the forward sweep;
//  - every earlier segment, from the back, is read from the slow level and reversed by revolve over the
//    fast slots (its start stays on the slow level and is read from there when revolve needs it).
// The segment start lives on the slow level only: the fast level holds c_0 snapshots inside the segment
// (online_revolve and revolve see c_0 + 1 slots, the extra one being the slow copy of the start).
// When the slow level is full, the loop does not spill: the current segment grows and online_revolve's
// thinning keeps it going on the fast level alone, for any T.
//
// The period is chosen from the cost model: the segment length P <= max_period that minimises the
// predicted cost per step of a full segment (forward sweep, the spill, the fast stores of the forward
// sweep that a later spill discards, the read of the start and revolve's recomputation, stores and reads).
// docs/online.md compares the cost with remat::multilevel's offline optimum for the T the run found.
//
// remat::run_online drives it like online_revolve (it models remat::online_schedule):
//
//     remat::tiered_store<remat::host_store, remat::hdf5_store> store(remat::host_store(8),
//         remat::hdf5_store("run.h5", remat::level_capacity{}));
//     remat::run_online(remat::online_multilevel(m), store, x, remat::forward_step(f),
//                       remat::adjoint_step(g), [&](remat::step_t k, const State& s) { return done(s); });
//
// Driving it by hand, as online_revolve (an executor over such a store applies the actions):
//
//     remat::cost_model m{{{"host", 8, 0, 0}, {"disk", remat::level_spec::unlimited, 20, 20}}};
//     remat::online_multilevel plan(m);                    // period chosen for m
//     auto c = plan.cursor();
//     remat::action a;
//     for (bool last = false; !last;) {                    // x_k is current, k = c.position()
//         last = solver_reached_the_end();
//         c.answer(last);
//         while (c.next(a)) apply(a);                      // level 0: host, level 1: disk
//     }
//     plan.cost(1000).predicted_cost;                      // what a loop of 1000 steps costs under m
#pragma once

#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/multilevel_model.hpp"
#include "remat/schedule/online_replay.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/online_schedule.hpp"
#include "remat/schedule/range.hpp"
#include "remat/schedule/revolve.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace remat {

/// Online checkpointing on two levels (the top of this header).
class online_multilevel {
public:
    struct options {
        /// Steps between two spills to the slow level; 0: chosen from the model (at most max_period).
        step_t period = 0;
        /// The longest period the automatic choice considers.
        step_t max_period = 4096;
    };

    /// `model` has two levels: level 0 (fast, finite slots) and level 1 (slow, finite or unlimited).
    /// Throws remat::argument_error for another number of levels, an invalid model (remat::validate), an
    /// unlimited fast level, or a period or max_period below 1.
    online_multilevel(const cost_model& model, const options& opts);
    explicit online_multilevel(const cost_model& model) : online_multilevel(model, options{}) {}

    [[nodiscard]] const cost_model& model() const noexcept { return model_; }
    /// Steps between two spills.
    [[nodiscard]] step_t period() const noexcept { return period_; }
    /// Per level, the most slots it holds at once, whatever T turns out to be (the driver checks these
    /// against the store before step 0): the fast level's slots, and the slow level's (unlimited:
    /// level_capacity::unlimited_slots).
    [[nodiscard]] std::vector<slot_t> slot_bounds() const;

    /// One run: answers in, actions out, as online_revolve::cursor_type (remat::online_cursor).
    class cursor_type {
    public:
        cursor_type() = default;
        [[nodiscard]] bool awaiting_answer() const noexcept
        {
            return phase_ == phase::forward && head_ == queue_.size() && online_.awaiting_answer();
        }
        [[nodiscard]] step_t position() const noexcept { return position_; }
        [[nodiscard]] step_t steps() const noexcept { return steps_; }
        /// Whether step position() is the loop's last (see online_revolve::cursor_type::answer).
        void answer(bool last);
        /// x_position() is the loop's final state (see online_revolve::cursor_type::end_state).
        void end_state();
        bool next(action& out);

    private:
        friend class online_multilevel;
        enum class phase { forward, last_segment, earlier_segments, done };
        struct mapped {
            level_t level = -1; // -1: this sub-schedule slot holds nothing
            slot_t slot = 0;
        };
        void push(const action& a);
        void spill();
        void drain_online();
        void translate(const action& a, bool start_on_slow);
        void release_segment();
        bool start_earlier_segment();

        slot_t fast_slots_ = 0;
        slot_t slow_slots_ = 0;
        step_t period_ = 0;
        phase phase_ = phase::done;
        step_t position_ = 0;
        step_t steps_ = 0;
        online_revolve::cursor_type online_{}; // the current segment, on steps relative to its start
        revolve::cursor_type revolve_{};       // an earlier segment being reversed
        step_t offset_ = 0;                    // the segment being worked on starts at x_offset_
        bool start_held_ = false;              // its start is on the slow level (slot starts_.size()-1)
        std::vector<step_t> starts_;           // every segment's start, in order; segment i: slow slot i
        std::vector<mapped> map_;              // sub-schedule slot -> (level, slot)
        std::vector<slot_t> fast_free_;        // free fast slots
        std::vector<action> queue_;            // reserved once: spills free up to every fast slot
        std::size_t head_ = 0;
    };

    [[nodiscard]] cursor_type cursor() const;

    /// The schedule as it unfolds for a loop of `steps` steps (a remat::schedule; its cost() enumerates
    /// the actions, O(T * repetition)). Throws remat::argument_error when steps < 1.
    [[nodiscard]] online_replay_of<online_multilevel> replay(step_t steps,
                                                             online_end end = online_end::at_last_step) const;

    /// The counts and predicted cost (under model()) of replay(steps, end), by enumeration.
    [[nodiscard]] schedule_cost cost(step_t steps, online_end end = online_end::at_last_step) const;

private:
    cost_model model_;
    step_t period_ = 0;
};

static_assert(online_schedule<online_multilevel>);

/// online_multilevel's actions for a loop known (in hindsight) to have T steps.
using online_multilevel_replay = online_replay_of<online_multilevel>;

} // namespace remat
