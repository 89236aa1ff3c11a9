// remat/schedule/online_revolve.hpp — checkpointing a loop whose length is known only when it ends.
//
// Adaptive ODE solvers and while-loops learn T only when they stop. online_revolve decides during the
// forward sweep, step by step, which states to keep in its s slots; when the loop ends it reverses the
// last step where it stands and the segments between the kept states with offline binomial schedules.
// Forward steps (recomputation included) equal the offline optimum r*T - C(s+r, r-1) for every
// T <= C(s+2,2), and stay close to it beyond; docs/online.md has the algorithm, the measured ratios and
// the bound. Each action costs O(1) amortised, the cursor holds O(s) state, and T may reach 2^63-1.
//
// Driving it by hand (remat::run_online in remat/driver/run_online.hpp does this for you):
//
//     remat::online_revolve plan(10);                  // 10 slots, x_0's included
//     auto c = plan.cursor();
//     remat::action a;
//     for (bool last = false; !last;) {                // forward sweep: x_k is current, k = c.position()
//         last = solver_reached_the_end();             // is step k the last one?
//         c.answer(last);                              // queues free/store of x_k and `advance k k+1`,
//         while (c.next(a)) apply(a);                  // or `reverse k` and the whole reverse sweep
//     }
#pragma once

#include "remat/detail/online_placement.hpp"
#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/online_replay.hpp"
#include "remat/schedule/online_schedule.hpp"
#include "remat/schedule/range.hpp"
#include "remat/schedule/revolve.hpp"

#include <cstdint>
#include <vector>

namespace remat {

/// The online binomial schedule with `slots` snapshot slots on level 0 (x_0's included).
///
///     remat::online_revolve plan(16);
///     plan.cost(1000).forward_steps;          // what a loop that turns out to have 1000 steps costs
///     remat::binomial::min_forward_steps(1000, 16);   // the offline optimum, for comparison
class online_revolve {
public:
    /// Throws remat::argument_error when slots < 1.
    explicit online_revolve(slot_t slots);

    [[nodiscard]] slot_t slots() const noexcept { return slots_; }
    /// Per level, the most slots held at once for any T: {slots()} (remat::online_schedule).
    [[nodiscard]] std::vector<slot_t> slot_bounds() const { return {slots_}; }

    /// One run of the online schedule: answers in, actions out. During the forward sweep the cursor waits
    /// for an answer at each x_k (awaiting_answer()), then yields what to do with x_k (`free`, `store`)
    /// and `advance k k+1`; once the loop has ended it yields the reverse sweep, lazily.
    class cursor_type {
    public:
        cursor_type() = default;

        /// True while the forward sweep waits to hear about step position().
        [[nodiscard]] bool awaiting_answer() const noexcept { return phase_ == phase::forward && queue_.empty(); }
        /// k while x_k is the current state of the forward sweep.
        [[nodiscard]] step_t position() const noexcept { return position_; }
        /// T once the loop has ended; 0 before.
        [[nodiscard]] step_t steps() const noexcept { return steps_; }

        /// online_end::at_last_step: `last` tells whether step position() is the loop's last. Not last:
        /// queues the free/store of x_k the schedule chooses, then `advance k k+1`. Last (T = k+1):
        /// queues `reverse k` and the reverse sweep. Throws remat::schedule_error when no answer is
        /// awaited (actions still queued, or the loop already ended), remat::argument_error when the loop
        /// would pass 2^63-1 steps.
        ///
        ///     c.answer(k + 1 == T);
        void answer(bool last);

        /// online_end::after_last_step: x_k, k = position() >= 1, is the loop's final state (T = k);
        /// queues the reverse sweep. Throws remat::schedule_error at x_0 or when no answer is awaited.
        ///
        ///     if (converged(c.position(), x)) c.end_state(); else c.answer(false);
        void end_state();

        /// Writes the next queued action into `out`; false when none is queued (during the forward sweep:
        /// an answer is awaited; after it: the schedule is complete).
        bool next(action& out)
        {
            if (queue_.pop(out)) [[likely]]
                return true;
            if (phase_ != phase::reverse)
                return false;
            refill();
            return queue_.pop(out);
        }

    private:
        friend class online_revolve;
        enum class phase { forward, reverse, done };
        void start_reverse(step_t end);
        void refill();
        void start_segment();
        void finish_segment();
        slot_t take_slot();
        void push_translated(const action& a);

        detail::online_placement place_{1};
        phase phase_ = phase::done;
        step_t position_ = 0;
        step_t steps_ = 0;
        detail::action_queue<4> queue_;

        // Reverse sweep: segments from the back; segment i (from x_0) has s-i slots.
        std::int64_t node_ = -1;     // the snapshot that starts the current segment
        std::int64_t index_ = 0;     // its index from x_0
        step_t segment_end_ = 0;     // the segment is [position of node_, segment_end_)
        bool in_segment_ = false;    // a revolve sub-schedule is running
        revolve::cursor_type sub_{}; // on steps relative to the segment start
        slot_t start_slot_ = 0;
        std::vector<slot_t> extra_; // revolve's slots 1.. map here
        std::vector<slot_t> free_;  // released slots
        slot_t fresh_ = 0;          // slots never used yet: fresh_ .. s-1
    };

    [[nodiscard]] cursor_type cursor() const;

    /// The schedule as it unfolds for a loop that turns out to have `steps` steps: a remat::schedule
    /// (steps(), cost(), cursor(), a range of actions). Throws remat::argument_error when steps < 1.
    ///
    ///     for (const remat::action& a : plan.replay(T)) std::cout << a << '\n';
    [[nodiscard]] online_replay_of<online_revolve> replay(step_t steps,
                                                          online_end end = online_end::at_last_step) const;

    /// The counts of replay(steps, end) without enumerating actions: in closed form, O(log s), for
    /// T <= C(s+2,2) (the wave); beyond, a replay of the forward sweep's store decisions (one per kept
    /// snapshot, the steps in between skipped) and the reverse sweep as a sum of offline binomial costs
    /// over the s segments. Throws remat::overflow_error when the forward steps exceed 2^64-1, and
    /// remat::argument_error, before any work, when cost_work(steps, end) exceeds `work_limit` (the
    /// default: 0.2 to 0.5 s).
    ///
    ///     remat::online_revolve(3).cost(1'000'000);   // fine: about 4,500 decisions
    ///     remat::online_revolve(3).cost(1LL << 62);   // argument_error at once, not hours of replay
    [[nodiscard]] schedule_cost cost(step_t steps, online_end end = online_end::at_last_step,
                                     std::uint64_t work_limit = cost_work_limit) const;

    /// cost()'s default limit on its units of work (cost_work()). A unit took 25 to 55 ns on the team's
    /// loaded 2-core VM (a replayed decision; a slot is work_per_slot units), so the limit is 0.2 to 0.5 s
    /// (docs/online.md, "Cost of planning, and its limit").
    static constexpr std::uint64_t cost_work_limit = std::uint64_t{1} << 23;
    /// Units of work per snapshot listed and priced past level one (a revolve count each).
    static constexpr std::uint64_t work_per_slot = 16;

    /// The units of work cost(steps, end) does, computed without doing it (as replay_decisions): 0 in closed form
    /// (T <= C(s+2,2)), replay_decisions(steps) + work_per_slot * s beyond. What `remat tradeoff` and
    /// remat.tradeoff budget their online rows with.
    ///
    ///     plan.cost_work(T) <= remat::online_revolve::cost_work_limit   // cost(T) will not refuse
    [[nodiscard]] std::uint64_t cost_work(step_t steps, online_end end = online_end::at_last_step) const;

    /// An upper bound on the store decisions cost(steps) replays: 0 for steps <= C(s+2,2), about
    /// T/(L+1) beyond (L+1 = the repetition number r); cost() takes 25 to 55 nanoseconds per decision.
    /// Cheap: the first 4096 levels summed one by one, the rest bounded in blocks of doubling length (under
    /// twice their sum), so O(min(r, 4096) + s log r) time.
    ///
    ///     plan.replay_decisions(1'000'000'000);   // ~1.3e8 for s = 64
    [[nodiscard]] std::uint64_t replay_decisions(step_t steps) const;

private:
    slot_t slots_;
};

static_assert(online_schedule<online_revolve>);

/// online_revolve's actions for a loop known (in hindsight) to have T steps; the CLI's `plan --online`.
///
///     remat::online_replay r = remat::online_revolve(4).replay(20);
///     r.cost().forward_steps;   // 43, the offline optimum for T = 20 and s = 4
using online_replay = online_replay_of<online_revolve>;

} // namespace remat
