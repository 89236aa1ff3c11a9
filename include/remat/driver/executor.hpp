// remat/driver/executor.hpp — carries out actions one at a time on the user's state and a store.
//
// remat::run drives an executor over a whole schedule; use an executor directly to interleave actions
// with your own logic (the online driver does). An executor checks every action against the state it
// tracks (which x_k is current, which step is reversed next), so a wrong schedule is reported where it
// goes wrong instead of producing a wrong gradient. It only checks and applies actions: the copies of the
// state are remat::state_codec's (remat/driver/state_codec.hpp), the counts and times
// remat::run_accounting's (remat/driver/run_accounting.hpp).
#pragma once

#include "remat/driver/callables.hpp"
#include "remat/driver/capacity_for.hpp"
#include "remat/driver/run_accounting.hpp"
#include "remat/driver/run_report.hpp"
#include "remat/driver/state_codec.hpp"
#include "remat/driver/step_callables.hpp"
#include "remat/driver/step_failure.hpp"
#include "remat/driver/tapes.hpp"
#include "remat/error.hpp"
#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/store/snapshot_store.hpp"
#include "remat/store/snapshot_traits.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

// The per-action work of the driver, forced inline into the loop that applies a schedule's actions (GCC
// otherwise calls some of them out of line, ~10 instructions per call in a run of trivial steps).
#if defined(__GNUC__)
#define REMAT_DRIVER_INLINE [[gnu::always_inline]] inline
#else
#define REMAT_DRIVER_INLINE inline
#endif

namespace remat {

/// Applies actions to `state` with `store` (one storage level or a multi-level store), calling the
/// user's forward and adjoint steps and, if given, the terminal callable and the tape callables
/// (remat/driver/callables.hpp), in any order after the two steps, and the number of steps.
///
///     remat::executor ex(store, x, remat::forward_step(f), remat::adjoint_step(g), T);
///     for (const remat::action& a : remat::revolve(T, 10)) ex.apply(a);
///     remat::run_report r = ex.finish();
///
/// With tapes (remat/driver/tapes.hpp), for plans with taped advances (remat::taped_revolve):
///
///     remat::executor ex(store, x, remat::forward_step(f), remat::adjoint_step(g),
///                        remat::with_tapes(remat::taped_step(ft), remat::tape_adjoint(gt), make_tape), T);
///     ex.check_fits(plan.cost());   // makes plan.cost().peak_tapes tapes
template <snapshot_state State, store_for_run Store, class Callables>
class executor {
    static_assert(!multipart_state<State> || contiguous_state<State> || store_for_parts<Store>,
                  "a state made of several parts (snapshot_traits<State>::parts) needs a store that gathers them "
                  "into one slot: host_store, hdf5_store, cuda::device_store, or a tiered_store of such levels");
    static_assert(detail::callables_suit<Callables, State>,
                  "remat::executor needs f(k, x) and g(k, x) callable with the step and State&, h(x) with const "
                  "State& (remat/driver/callables.hpp)");
    static constexpr bool has_final = Callables::has_final;
    static constexpr bool has_tapes = Callables::has_tapes;
    // One storage level rather than a store of several: level 0 is the only level, known at compile time,
    // and the level counts its own slots (run_accounting::hold counts only across levels).
    static constexpr bool one_level = storage_level<Store> && !snapshot_store<Store>;

public:
    executor(Store& store, State& state, Callables calls, step_t steps)
        : store_(store), state_(state), calls_(std::move(calls))
    {
        set_steps(steps);
        if constexpr (has_final)
            codec_.prepare_keep_aside(state_);
        // The user's GPU work enqueued before the run (x_0's kernels) is not the run's: wait for it before
        // the clock starts.
        store_.wait_for_user();
        acc_.start(store_);
    }

    /// The callables and the step count as for remat::run: `executor(store, x, forward_step(f),
    /// adjoint_step(g), [final_state(h)], [with_tapes(...)], steps)`.
    template <class F, class A, class... Extras>
    executor(Store& store, State& state, forward_step_fn<F> forward, adjoint_step_fn<A> adjoint, Extras&&... extras)
        : executor(store, state,
                   detail::bundle(std::move(forward), std::move(adjoint), std::forward<Extras>(extras)...),
                   detail::steps_among(extras...))
    {
        static_assert(detail::valid_extras<true, false, std::remove_cvref_t<Extras>...>,
                      "remat::executor takes the forward and adjoint steps, at most one remat::final_state(h) and one "
                      "remat::with_tapes(...), and the number of steps");
    }

    /// Checks, before any step runs, that a plan with these counts fits the store: the same number of
    /// levels, and on each level the plan's peak slots within the level's capacity, and (when
    /// `same_sizes`: every snapshot is the size of the current state) their bytes. Throws
    /// remat::capacity_error naming both numbers. A cost without per-level counts (a schedule of one's
    /// own) is checked for its total peak on level 0. Pass same_sizes = false for a plan over states whose
    /// size changes from step to step (remat::chain): only the slots are checked then. A plan with taped
    /// advances needs an executor with tapes (else remat::schedule_error); its cost().peak_tapes tapes
    /// are made here.
    ///
    ///     remat::executor ex(store, x, remat::forward_step(f), remat::adjoint_step(g), T);
    ///     ex.check_fits(plan.cost());   // before the first ex.apply
    void check_fits(const schedule_cost& cost, bool same_sizes = true)
    {
        if (cost.taped_steps > 0) {
            if constexpr (has_tapes)
                calls_.tapes.reserve(cost.peak_tapes, acc_.report().steps); // the plan's tapes, before step 0
            else
                throw schedule_error("the plan has " + std::to_string(cost.taped_steps) +
                                     " taped advances: " + needs_tapes + " (or plan with a state-only schedule)");
        }
        const std::uint64_t size = same_sizes ? codec_.size(state_, current_) : 0; // 0: slots only
        detail::check_plan_fits(store_, cost, acc_.report().levels, size);
    }

    /// Carries out one action. Throws remat::schedule_error when the action does not fit the state (a
    /// wrong schedule), remat::step_error when a user callable throws (the original nested inside).
    void apply(const action& a)
    {
        std::visit([this](const auto& act) { perform(act); }, a);
    }

    /// Carries out one action given as its own type (remat::advance, remat::store, ...), as apply(action)
    /// does, without the dispatch on the variant: what a cursor that drains (remat::revolve's) hands over.
    template <class Act>
        requires std::is_constructible_v<action, const Act&>
    REMAT_DRIVER_INLINE void apply(const Act& a)
    {
        perform(a);
    }

    /// Tells the store what is coming: a restore ahead is prefetched (a disk level reads it early).
    void look_ahead(const action& a)
    {
        const auto* r = std::get_if<restore>(&a);
        if (r != nullptr && r->level >= 0 && static_cast<std::size_t>(r->level) < acc_.level_count())
            store_.prefetch(r->level, r->slot, r->step);
    }

    /// Runs one forward step k -> k+1 outside any advance action (online loops use it); the state must
    /// be x_k.
    void step_forward(step_t k) { perform(advance{k, k + 1}); }

    /// Asks the loop's termination test `test(k, x_k)` about the current state (run_online does, at every
    /// x_k). It is the user's code: timed into the report's test_seconds, with the store's wait for the
    /// user's GPU work inside the timing, as a step is. A throwing test becomes remat::step_error
    /// (step_phase::predicate, step k).
    ///
    ///     const bool last = ex.ask([&](remat::step_t, const State& s) { return s.t >= t_end; }, k);
    template <class Test>
    bool ask(Test& test, step_t k)
    {
        return acc_.timed(user_call::test, [&] {
            return call_user(step_phase::predicate, k,
                             [&] { return static_cast<bool>(std::invoke(test, k, std::as_const(state_))); });
        });
    }

    /// Online loops learn T only when their forward sweep ends: make the executor with an upper bound
    /// (e.g. INT64_MAX), run the forward sweep, then fix T here before the reverse sweep. The current
    /// state may be x_T (a loop that learns only afterwards that it has ended). Throws
    /// remat::schedule_error when a step was already reversed or the current state lies beyond x_T.
    ///
    ///     remat::executor ex(store, x, remat::forward_step(f), remat::adjoint_step(g), INT64_MAX);
    ///     ex.step_forward(0); ex.step_forward(1);   // the loop then says that step 2 is its last
    ///     ex.set_steps(3);
    void set_steps(step_t steps)
    {
        if (steps < 1)
            throw argument_error("steps must be at least 1, got " + std::to_string(steps));
        if (acc_.report().reverse_steps != 0)
            throw schedule_error("the number of steps is fixed before the reverse sweep, but " +
                                 std::to_string(acc_.report().reverse_steps) + " steps were already reversed");
        if (current_ > steps)
            throw schedule_error("the loop ends with x_" + std::to_string(steps) + " but the state is " +
                                 describe_current());
        acc_.report().steps = steps;
        next_reverse_ = steps - 1;
        if constexpr (has_final)
            if (current_ == steps && !final_called_) // the loop stopped at x_T (run_online_converged)
                call_final_here(steps);
    }

    /// Whether the user's calls are timed into the report (default: no; see remat::run_options).
    void time_user_code(bool on) noexcept { acc_.set_timing(on); }

    /// The step whose state x_k is current, or -1 when undefined (after a reverse).
    [[nodiscard]] step_t current() const noexcept { return current_; }
    [[nodiscard]] step_t next_reverse() const noexcept { return next_reverse_; }
    [[nodiscard]] State& state() noexcept { return state_; }
    /// Tapes held now (each by a step whose taped advance filled it); 0 after abort().
    [[nodiscard]] std::uint64_t tapes_held() const noexcept
        requires has_tapes
    {
        return calls_.tapes.held();
    }

    /// Checks that every step was reversed and completes the report.
    run_report finish()
    {
        if (next_reverse_ != -1)
            throw schedule_error("the schedule ended with steps 0.." + std::to_string(next_reverse_) + " not reversed");
        if constexpr (has_tapes)
            acc_.report().peak_tapes = calls_.tapes.peak();
        return acc_.finish(store_);
    }

    /// A run resumed after a crash (see remat/driver/resume.hpp): the store already holds the snapshot of
    /// `s` (written by the run that crashed); count it as held, as though `s` had been applied here.
    void adopt(const store& s)
    {
        check_level(s.level);
        acc_.hold(store_.snapshot_bytes(s.level, s.slot));
    }

    /// After a failure: releases every slot so the store is consistent and reusable. Never throws.
    void abort() noexcept
    {
        store_.release_all();
        if constexpr (has_tapes)
            calls_.tapes.release_all();
        current_ = -1;
    }

private:
    static constexpr const char* needs_tapes = "taped advances need the tape callables, remat::with_tapes(remat::"
                                               "taped_step(f), remat::tape_adjoint(g), make_tape), passed after "
                                               "the adjoint step";

    // Runs the user's `call` and waits for the GPU work it queued on the store's stream (its time is the
    // call's); a throw from either becomes remat::step_error for step k.
    template <class Call>
    auto call_user(step_phase phase, step_t k, Call&& call)
    {
        try {
            if constexpr (std::is_void_v<std::invoke_result_t<Call&>>) {
                call();
                store_.wait_for_user();
            } else {
                auto result = call();
                store_.wait_for_user();
                return result;
            }
        } catch (...) {
            detail::rethrow_as_step_error(k, phase);
        }
    }

    void perform(const advance& a)
    {
        if (a.taped)
            return perform_taped(a);
        if (a.from != current_)
            throw schedule_error(describe(a) + " but the state is " + describe_current());
        if (a.to <= a.from || a.to > next_reverse_)
            throw schedule_error(describe(a) + " must end after its start and at most at the next step to reverse (" +
                                 std::to_string(next_reverse_) + ")");
        acc_.timed(user_call::forward, [&] { run_steps(a.from, a.to); });
        acc_.report().forward_steps += static_cast<std::uint64_t>(a.to - a.from);
        current_ = a.to;
    }

    // The forward steps from..to-1 and the wait for their GPU work; a failure leaves the state undefined.
    void run_steps(step_t from, step_t to)
    {
        step_t k = from;
        try {
            for (; k < to; ++k)
                std::invoke(calls_.forward.fn, k, state_);
            store_.wait_for_user(); // the GPU time of the steps' kernels is the steps'
        } catch (...) {
            current_ = -1;
            acc_.report().forward_steps += static_cast<std::uint64_t>(k - from);
            detail::rethrow_as_step_error(std::min(k, to - 1), step_phase::forward);
        }
    }

    REMAT_DRIVER_INLINE void perform(const store& s)
    {
        if (s.step != current_)
            throw schedule_error("store of x_" + std::to_string(s.step) + " but the state is " + describe_current());
        check_level(s.level);
        const std::uint64_t bytes = codec_.write(store_, s.level, s.slot, s.step, std::as_const(state_));
        if constexpr (!one_level)
            acc_.hold(bytes);
    }

    REMAT_DRIVER_INLINE void perform(const restore& r)
    {
        if (r.step > next_reverse_)
            throw schedule_error("restore of x_" + std::to_string(r.step) + ", beyond the next step to reverse (" +
                                 std::to_string(next_reverse_) + ")");
        check_level(r.level);
        current_ = -1; // until the read succeeds
        codec_.read(store_, r.level, r.slot, r.step, state_);
        current_ = r.step;
    }

    REMAT_DRIVER_INLINE void perform(const free_slot& f)
    {
        check_level(f.level);
        if constexpr (one_level) {
            store_.release(f.level, f.slot);
        } else {
            const std::size_t size = acc_.several_levels() ? store_.snapshot_bytes(f.level, f.slot) : 0;
            store_.release(f.level, f.slot);
            acc_.let_go(size);
        }
    }

    // `advance K K+1 tape`: step K runs once, filling a free tape that step K holds until `reverse K`. It
    // may run the next step to reverse itself (x_{K+1} is then of no use, the tape is).
    void perform_taped(const advance& a)
    {
        if constexpr (!has_tapes) {
            throw schedule_error(describe(a) + ": " + needs_tapes);
        } else {
            if (a.from != current_)
                throw schedule_error(describe(a) + " but the state is " + describe_current());
            if (a.to != a.from + 1 || a.from > next_reverse_)
                throw schedule_error(describe(a) + " must run one step, at most the next step to reverse (" +
                                     std::to_string(next_reverse_) + ")");
            if (calls_.tapes.holds(a.from))
                throw schedule_error(describe(a) + " but step " + std::to_string(a.from) + "'s tape is already held");
            current_ = -1; // until the step is done; a throw leaves the tape free
            acc_.timed(user_call::forward,
                       [&] { call_user(step_phase::forward, a.from, [&] { record_tape(a.from); }); });
            current_ = a.to;
            if constexpr (has_final)
                if (current_ == acc_.report().steps && !final_called_) // step T-1 taped: x_T is here
                    call_final_here(current_);
        }
    }

    void record_tape(step_t k)
    {
        calls_.tapes.record(k, state_);
        ++acc_.report().forward_steps;
        ++acc_.report().taped_steps;
    }

    REMAT_DRIVER_INLINE void perform(const reverse& v)
    {
        if (v.step != next_reverse_)
            throw schedule_error("reverse " + std::to_string(v.step) + " out of order: the next step to reverse is " +
                                 std::to_string(next_reverse_));
        const bool from_tape = has_tapes && tape_held(v.step);
        if (!from_tape && v.step != current_)
            throw schedule_error("reverse " + std::to_string(v.step) + " but the state is " + describe_current());
        if constexpr (has_final)
            if (!final_called_) {
                if (v.step != current_) // a tape's reverse first: x_{T-1} is needed all the same
                    throw schedule_error("reverse " + std::to_string(v.step) +
                                         " is the first reverse: the terminal callable needs x_" +
                                         std::to_string(v.step) + " current to compute x_" +
                                         std::to_string(v.step + 1) + ", but the state is " + describe_current());
                call_final_beyond(v.step);
            }
        acc_.timed(user_call::adjoint, [&] {
            if (from_tape)
                reverse_from_tape(v.step);
            else
                reverse_from_state(v.step);
        });
        ++acc_.report().reverse_steps;
        --next_reverse_;
        if constexpr (has_tapes)
            if (current_ > next_reverse_)
                current_ = -1; // x_K and beyond are of no use any more (a reverse from x_K leaves -1 already)
    }

    [[nodiscard]] bool tape_held(step_t k) const noexcept
    {
        if constexpr (has_tapes)
            return calls_.tapes.holds(k);
        else
            return false;
    }

    void reverse_from_state(step_t k)
    {
        current_ = -1; // the adjoint may overwrite x_k
        call_user(step_phase::adjoint, k, [&] { std::invoke(calls_.adjoint.fn, k, state_); });
    }

    // `reverse K` with K's tape held: the adjoint from the tape, x is neither needed nor touched.
    void reverse_from_tape(step_t k)
    {
        if constexpr (has_tapes) {
            call_user(step_phase::adjoint, k, [&] { calls_.tapes.reverse(k); }); // frees the tape even on a throw
            ++acc_.report().tape_reverses;
        }
    }

    // x_T is current: hand it to the terminal callable.
    void call_final_here(step_t steps)
    {
        final_called_ = true;
        acc_.timed(user_call::final_state, [&] {
            call_user(step_phase::final_state, steps, [&] { std::invoke(calls_.final.fn, std::as_const(state_)); });
        });
        ++acc_.report().final_calls;
    }

    // The first reverse is of step T-1 with x_{T-1} current, the end of the first forward sweep: keep
    // x_{T-1} aside (in memory that grows once per executor, never per step), run step T-1 once more, hand
    // x_T to the terminal callable, and put x_{T-1} back for the adjoint.
    void call_final_beyond(step_t last)
    {
        final_called_ = true;
        codec_.keep_aside(std::as_const(state_), last);
        current_ = -1; // until x_{T-1} is back
        acc_.timed(user_call::forward, [&] {
            call_user(step_phase::forward, last, [&] { std::invoke(calls_.forward.fn, last, state_); });
        });
        ++acc_.report().final_forward_steps;
        call_final_here(last + 1);
        codec_.put_back(state_, last);
        current_ = last;
    }

    void check_level(level_t L) const
    {
        const bool exists = one_level ? L == 0 : L >= 0 && static_cast<std::size_t>(L) < acc_.level_count();
        if (!exists) [[unlikely]]
            throw schedule_error("level " + std::to_string(L) + " does not exist; the store has " +
                                 std::to_string(acc_.level_count()));
    }

    [[nodiscard]] static std::string describe(const advance& a)
    {
        return "advance " + std::to_string(a.from) + " " + std::to_string(a.to) + (a.taped ? " tape" : "");
    }
    [[nodiscard]] std::string describe_current() const
    {
        return current_ < 0 ? std::string("undefined (restore a snapshot first)") : "x_" + std::to_string(current_);
    }

    detail::store_access<Store> store_;
    State& state_;
    Callables calls_;
    state_codec<State> codec_;
    run_accounting acc_;
    bool final_called_ = false;
    step_t current_ = 0;
    step_t next_reverse_ = 0;
};

template <class State, class Store, class Callables>
executor(Store&, State&, Callables, step_t) -> executor<State, Store, Callables>;
template <class State, class Store, class F, class A, class... Extras>
executor(Store&, State&, forward_step_fn<F>, adjoint_step_fn<A>, Extras&&...)
    -> executor<State, Store, detail::callables_for<F, A, std::remove_cvref_t<Extras>...>>;

} // namespace remat

#undef REMAT_DRIVER_INLINE
