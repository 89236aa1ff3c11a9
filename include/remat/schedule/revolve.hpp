// remat/schedule/revolve.hpp — the offline binomial schedule (Griewank & Walther 2000, "revolve").
//
// For T steps and s slots (x_0 occupies one), it runs the provably minimal number of forward steps,
// r*T - C(s+r, r-1), and among all schedules with that minimum it takes the fewest stores. Each action
// costs O(1) time (no loop over r, no recursion), the cursor holds O(s) state, and T may be as large as
// 2^63-1.
#pragma once

#include "remat/detail/revolve_band.hpp"
#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/schedule/range.hpp"

#include <cstddef>
#include <cstdint>
#include <variant>
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
    ///
    /// It walks the task tree of src/schedule/revolve.cpp's header comment depth first; a small phase says
    /// which action of the current part comes next. The pending left parts form a stack whose entry i
    /// reverses with used_slots-i slots and whose start is stored in slot i, so the depth gives both.
    class cursor_type {
    public:
        cursor_type() = default;
        /// Inline, and without a queue: each action is written once, into `out`.
        bool next(action& out)
        {
            switch (phase_) {
            case phase::run:
                break;
            case phase::store_start:
                out.emplace<store>(store{0, in_register(depth_), task_.start});
                phase_ = phase::run;
                return true;
            case phase::free_start:
                out.emplace<free_slot>(free_slot{0, depth_});
                phase_ = phase::restore_pending;
                return true;
            case phase::restore_pending:
                if (depth_ == 0) {
                    phase_ = phase::done;
                    return false;
                }
                task_ = pending_[static_cast<std::size_t>(--depth_)];
                start_stored_ = true; // a left part starts where its parent did, which was stored
                out.emplace<restore>(restore{0, in_register(depth_), task_.start});
                phase_ = phase::run;
                return true;
            case phase::reverse_last:
                out.emplace<reverse>(reverse{task_.start + task_.length - 1});
                phase_ = phase::restore_start;
                return true;
            case phase::restore_start:
                out.emplace<restore>(restore{0, in_register(depth_), task_.start});
                --task_.length;
                phase_ = phase::run;
                return true;
            case phase::done:
                return false;
            }
            if (task_.length == 1) {
                out.emplace<reverse>(reverse{task_.start});
                phase_ = start_stored_ ? phase::free_start : phase::restore_pending;
                return true;
            }
            if (depth_ + 1 == used_slots_) {
                // One slot, holding x_start: run to the last step, reverse it, come back.
                out.emplace<advance>(advance{task_.start, task_.start + task_.length - 1});
                phase_ = phase::reverse_last;
                return true;
            }
            split(out);
            return true;
        }

        /// Gives every remaining action to `sink`, each as its own type (`sink(remat::advance{...})`,
        /// `sink(remat::store{...})`, ...): the actions next() would give, in the same order, written by
        /// straight-line code that follows the task tree, without an action variant to fill and read back
        /// and without the per-action dispatch on the phase (the driver's one hard-to-predict branch).
        /// remat::run drains a cursor that offers this. Afterwards the cursor is done; if `sink` throws, the
        /// cursor may only be destroyed or assigned.
        ///
        ///     auto c = remat::revolve(10, 3).cursor();
        ///     c.drain([](const auto& a) { std::cout << remat::action(a) << '\n'; });
        template <class Sink>
        void drain(Sink&& sink)
        {
            for (action a; phase_ != phase::run;) { // finish the current part's move, as next() would
                if (!next(a))
                    return;
                std::visit(sink, a);
            }
            phase_ = phase::done;
            // The walk in locals: the sink is opaque code that could, for all the compiler knows, write to
            // the cursor's members, which would then be reloaded after every call.
            part task = task_;
            slot_t depth = depth_;
            bool stored = start_stored_;
            const slot_t last_depth = used_slots_ - 1;
            // The stack's storage and size, read again only when it grows (a size() divides by the part's size).
            part* pending = pending_.data();
            auto room = static_cast<slot_t>(pending_.size());
            for (;;) {
                while (task.length > 1) {
                    if (depth == last_depth) {
                        // One slot, holding x_start: run to each step from the last down, reverse it, come back.
                        do {
                            const step_t last = task.start + task.length - 1;
                            sink(advance{task.start, last});
                            sink(reverse{last});
                            sink(restore{0, depth, task.start});
                        } while (--task.length > 1);
                        break;
                    }
                    if (depth == room) [[unlikely]] {
                        grow_pending();
                        pending = pending_.data();
                        room = static_cast<slot_t>(pending_.size());
                    }
                    part& left = pending[depth];
                    const auto m = static_cast<step_t>(detail::split_revolve_band(
                        static_cast<std::uint64_t>(task.length), static_cast<std::uint64_t>(used_slots_ - depth),
                        task.band, left.band, task.band));
                    left.start = task.start;
                    left.length = m;
                    const step_t from = task.start;
                    task.start += m;
                    task.length -= m;
                    ++depth;
                    sink(advance{from, task.start});
                    stored = task.length >= 2;
                    if (stored)
                        sink(store{0, depth, task.start});
                }
                sink(reverse{task.start});
                if (stored)
                    sink(free_slot{0, depth});
                if (depth == 0)
                    return;
                task = pending[--depth];
                stored = true; // a left part starts where its parent did, which was stored
                sink(restore{0, depth, task.start});
            }
        }

    private:
        friend class revolve;
        /// A part still to reverse: steps [start, start+length) from the stored x_start, with the binomials
        /// its split needs (remat/detail/revolve_band.hpp).
        struct part {
            step_t start = 0;
            step_t length = 0;
            detail::revolve_band band;
        };
        enum class phase : std::uint8_t {
            run,             // the current part's next move: split it, reverse its one step, or one slot's run
            store_start,     // store the current part's start (just advanced to)
            free_start,      // free the slot of the one-step part just reversed
            restore_pending, // restore the start of the next pending left part, or end
            reverse_last,    // one slot: reverse the last step just advanced to
            restore_start,   // one slot: back to the stored start
            done
        };

        void split(action& out)
        {
            if (static_cast<std::size_t>(depth_) == pending_.size()) [[unlikely]]
                grow_pending();
            part& left = pending_[static_cast<std::size_t>(depth_)];
            const auto m = static_cast<step_t>(detail::split_revolve_band(
                static_cast<std::uint64_t>(task_.length), static_cast<std::uint64_t>(used_slots_ - depth_), task_.band,
                left.band, task_.band));
            ++depth_;
            left.start = task_.start;
            left.length = m;
            out.emplace<advance>(advance{task_.start, task_.start + m});
            task_.start += m;
            task_.length -= m;
            start_stored_ = task_.length >= 2;
            phase_ = start_stored_ ? phase::store_start : phase::run;
        }
        void grow_pending(); // out of line: it runs at most log2(slots) times

        /// `value`, as the compiler's own register: without it GCC may build a store's (slot, step) pair with
        /// one 16-byte load across depth_ and its neighbour, which the CPU cannot forward from the two 8-byte
        /// stores that just wrote them (a stall of a dozen cycles per action, seen in range-for loops).
        static slot_t in_register(slot_t value) noexcept
        {
#if defined(__GNUC__)
            asm("" : "+r"(value));
#endif
            return value;
        }

        part task_{};
        std::vector<part> pending_; // left parts waiting for their right parts: entry i at depth i
        slot_t depth_ = 0;          // how many are pending, and the slot that holds task_'s start
        slot_t used_slots_ = 0;
        phase phase_ = phase::done;
        bool start_stored_ = false; // false only for a one-step part right of a split, and x_0 when T = 1
    };

    [[nodiscard]] cursor_type cursor() const;

private:
    step_t steps_;
    slot_t slots_;
    slot_t used_slots_;
    std::uint64_t repetition_;
};

} // namespace remat
