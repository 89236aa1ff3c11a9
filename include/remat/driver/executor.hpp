// remat/driver/executor.hpp — carries out actions one at a time on the user's state and a store.
//
// remat::run drives an executor over a whole schedule; use an executor directly to interleave actions
// with your own logic (the online driver does). An executor checks every action against the state it
// tracks (which x_k is current, which step is reversed next), so a wrong schedule is reported where it
// goes wrong instead of producing a wrong gradient.
#pragma once

#include "remat/detail/tick_clock.hpp"
#include "remat/driver/callables.hpp"
#include "remat/driver/run_report.hpp"
#include "remat/driver/tapes.hpp"
#include "remat/error.hpp"
#include "remat/schedule/action.hpp"
#include "remat/schedule/cost.hpp"
#include "remat/store/detail/part_layout.hpp"
#include "remat/store/snapshot_store.hpp"
#include "remat/store/snapshot_traits.hpp"

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace remat {

namespace detail {

/// The message of the exception being handled, for wrapping it.
inline std::string current_exception_message()
{
    try {
        throw;
    } catch (const std::exception& e) {
        return e.what();
    } catch (...) {
        return "an exception not derived from std::exception";
    }
}

[[noreturn]] inline void rethrow_as_step_error(step_t step, step_phase phase)
{
    static constexpr const char* what[] = {"forward step ",       "adjoint step ",          "snapshot save of x_",
                                           "snapshot load of x_", "termination test at x_", "final-state call at x_"};
    std::throw_with_nested(step_error(
        step, phase, what[static_cast<int>(phase)] + std::to_string(step) + " failed: " + current_exception_message()));
}

} // namespace detail

/// Applies actions to `state` with `store` (one storage level or a multi-level store), calling the
/// user's forward and adjoint steps and, if given, the terminal callable (remat/driver/callables.hpp).
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
template <snapshot_state State, store_for_run Store, class Forward, class Adjoint, class Final = no_final_state,
          class Tapes = detail::no_tapes>
    requires forward_function<Forward, State> && adjoint_function<Adjoint, State> && final_function<Final, State>
class executor {
    static_assert(!multipart_state<State> || contiguous_state<State> || store_for_parts<Store>,
                  "a state made of several parts (snapshot_traits<State>::parts) needs a store that gathers them "
                  "into one slot: host_store, hdf5_store, cuda::device_store, or a tiered_store of such levels");

    static constexpr bool has_tapes = !std::is_same_v<Tapes, detail::no_tapes>;
    struct init_tag {};

public:
    executor(Store& store, State& state, forward_step_fn<Forward> forward, adjoint_step_fn<Adjoint> adjoint,
             step_t steps)
        requires(!has_tapes)
        : executor(init_tag{}, store, state, std::move(forward), std::move(adjoint), final_state_fn<Final>{}, Tapes{},
                   steps)
    {
    }

    /// With a terminal callable: `final(x_T)` is called once, at the end of the first forward sweep.
    executor(Store& store, State& state, forward_step_fn<Forward> forward, adjoint_step_fn<Adjoint> adjoint,
             final_state_fn<Final> final, step_t steps)
        requires(!has_tapes)
        : executor(init_tag{}, store, state, std::move(forward), std::move(adjoint), std::move(final), Tapes{}, steps)
    {
    }

    /// With tapes (remat::with_tapes), for plans with taped advances.
    executor(Store& store, State& state, forward_step_fn<Forward> forward, adjoint_step_fn<Adjoint> adjoint,
             Tapes tapes, step_t steps)
        requires has_tapes
        : executor(init_tag{}, store, state, std::move(forward), std::move(adjoint), final_state_fn<Final>{},
                   std::move(tapes), steps)
    {
    }

    /// With a terminal callable and tapes.
    executor(Store& store, State& state, forward_step_fn<Forward> forward, adjoint_step_fn<Adjoint> adjoint,
             final_state_fn<Final> final, Tapes tapes, step_t steps)
        requires has_tapes
        : executor(init_tag{}, store, state, std::move(forward), std::move(adjoint), std::move(final), std::move(tapes),
                   steps)
    {
    }

private:
    executor(init_tag, Store& store, State& state, forward_step_fn<Forward> forward, adjoint_step_fn<Adjoint> adjoint,
             final_state_fn<Final> final, Tapes tapes, step_t steps)
        : store_(store), state_(state), forward_(std::move(forward)), adjoint_(std::move(adjoint)),
          final_(std::move(final)), tapes_(std::move(tapes))
    {
        set_steps(steps);
        if constexpr (has_final)
            prepare_device_copy();
        // The user's GPU work enqueued before the run (x_0's kernels) is not the run's: wait for it before
        // the clock starts. The store's counts are read from here on (finish() subtracts these), its
        // peaks restart from what it holds now.
        store_.wait_for_user();
        store_.restart_peaks();
        before_ = store_.stats();
        report_.levels.resize(static_cast<std::size_t>(store_.level_count()));
        for (std::size_t i = 0; i < report_.levels.size() && i < before_.levels.size(); ++i)
            report_.levels[i].name = before_.levels[i].name;
        clock_ = detail::tick_calibration{};
    }

public:
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
                tapes_.reserve(cost.peak_tapes, report_.steps); // the plan's tapes, before step 0
            else
                throw schedule_error("the plan has " + std::to_string(cost.taped_steps) +
                                     " taped advances: they need the tape callables, remat::with_tapes(remat::"
                                     "taped_step(f), remat::tape_adjoint(g), make_tape), passed after the adjoint "
                                     "step (or plan with a state-only schedule)");
        }
        const std::size_t levels = report_.levels.size();
        if (!cost.levels.empty() && cost.levels.size() != levels)
            throw capacity_error("the plan uses " + std::to_string(cost.levels.size()) + " storage level" +
                                 (cost.levels.size() == 1 ? "" : "s") + " but the store has " + std::to_string(levels));
        const std::uint64_t size = same_sizes ? snapshot_size() : 0; // 0: slots only
        for (std::size_t i = 0; i < std::max<std::size_t>(cost.levels.size(), 1); ++i) {
            const slot_t peak = cost.levels.empty() ? cost.peak_slots : cost.levels[i].peak_slots;
            check_level_fits(static_cast<level_t>(i), peak, size);
        }
    }

    /// Carries out one action. Throws remat::schedule_error when the action does not fit the state (a
    /// wrong schedule), remat::step_error when a user callable throws (the original nested inside).
    void apply(const action& a)
    {
        std::visit([this](const auto& act) { perform(act); }, a);
    }

    /// Tells the store what is coming: a restore ahead is prefetched (a disk level reads it early).
    void look_ahead(const action& a)
    {
        const auto* r = std::get_if<restore>(&a);
        if (r != nullptr && r->level >= 0 && static_cast<std::size_t>(r->level) < report_.levels.size())
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
        const std::uint64_t start = detail::tick_clock::now();
        bool answer = false;
        try {
            answer = static_cast<bool>(std::invoke(test, k, std::as_const(state_)));
            store_.wait_for_user();
        } catch (...) {
            detail::rethrow_as_step_error(k, step_phase::predicate);
        }
        test_ticks_ += detail::tick_clock::now() - start;
        return answer;
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
        if (report_.reverse_steps != 0)
            throw schedule_error("the number of steps is fixed before the reverse sweep, but " +
                                 std::to_string(report_.reverse_steps) + " steps were already reversed");
        if (current_ > steps)
            throw schedule_error("the loop ends with x_" + std::to_string(steps) + " but the state is " +
                                 describe_current());
        report_.steps = steps;
        next_reverse_ = steps - 1;
        if constexpr (has_final)
            if (current_ == steps && !final_called_) // the loop stopped at x_T (run_online_converged)
                call_final_here(steps);
    }

    /// The step whose state x_k is current, or -1 when undefined (after a reverse).
    [[nodiscard]] step_t current() const noexcept { return current_; }
    [[nodiscard]] step_t next_reverse() const noexcept { return next_reverse_; }
    [[nodiscard]] State& state() noexcept { return state_; }
    /// Tapes held now (each by a step whose taped advance filled it); 0 after abort().
    [[nodiscard]] std::uint64_t tapes_held() const noexcept
        requires has_tapes
    {
        return tapes_.held();
    }

    /// Checks that every step was reversed and completes the report.
    run_report finish()
    {
        if (next_reverse_ != -1)
            throw schedule_error("the schedule ended with steps 0.." + std::to_string(next_reverse_) + " not reversed");
        const double per_tick = clock_.seconds_per_tick();
        report_.seconds = clock_.elapsed_seconds();
        report_.forward_seconds = static_cast<double>(forward_ticks_) * per_tick;
        report_.adjoint_seconds = static_cast<double>(adjoint_ticks_) * per_tick;
        report_.final_seconds = static_cast<double>(final_ticks_) * per_tick;
        report_.test_seconds = static_cast<double>(test_ticks_) * per_tick;
        if constexpr (has_tapes)
            report_.peak_tapes = tapes_.peak();
        read_store_counts();
        return report_;
    }

    /// A run resumed after a crash (see remat/driver/resume.hpp): the store already holds the snapshot of
    /// `s` (written by the run that crashed); count it as held, as though `s` had been applied here.
    void adopt(const store& s)
    {
        check_level(s.level);
        hold(store_.snapshot_bytes(s.level, s.slot));
    }

    /// After a failure: releases every slot so the store is consistent and reusable. Never throws.
    void abort() noexcept
    {
        store_.release_all();
        if constexpr (has_tapes)
            tapes_.release_all();
        current_ = -1;
    }

private:
    void perform(const advance& a)
    {
        if (a.taped) {
            if constexpr (has_tapes)
                perform_taped(a);
            else
                throw schedule_error(
                    "advance " + std::to_string(a.from) + " " + std::to_string(a.to) +
                    " tape: taped advances need the tape callables, remat::with_tapes(remat::"
                    "taped_step(f), remat::tape_adjoint(g), make_tape), passed after the adjoint step");
            return;
        }
        if (a.from != current_)
            throw schedule_error("advance " + std::to_string(a.from) + " " + std::to_string(a.to) +
                                 " but the state is " + describe_current());
        if (a.to <= a.from || a.to > next_reverse_)
            throw schedule_error("advance " + std::to_string(a.from) + " " + std::to_string(a.to) +
                                 " must end after its start and at most at the next step to reverse (" +
                                 std::to_string(next_reverse_) + ")");
        const std::uint64_t start = detail::tick_clock::now();
        step_t k = a.from;
        try {
            for (; k < a.to; ++k)
                std::invoke(forward_.fn, k, state_);
        } catch (...) {
            report_.forward_steps += static_cast<std::uint64_t>(k - a.from);
            current_ = -1; // the step failed part way: the state is undefined
            detail::rethrow_as_step_error(k, step_phase::forward);
        }
        try {
            store_.wait_for_user(); // the GPU time of the steps' kernels is the steps'
        } catch (...) {
            report_.forward_steps += static_cast<std::uint64_t>(a.to - a.from);
            current_ = -1;
            detail::rethrow_as_step_error(a.to - 1, step_phase::forward);
        }
        forward_ticks_ += detail::tick_clock::now() - start;
        report_.forward_steps += static_cast<std::uint64_t>(a.to - a.from);
        current_ = a.to;
    }

    void perform(const store& s)
    {
        if (s.step != current_)
            throw schedule_error("store of x_" + std::to_string(s.step) + " but the state is " + describe_current());
        check_level(s.level);
        std::size_t size = 0;
        if constexpr (contiguous_state<State>) {
            const const_bytes bytes = snapshot_traits<State>::bytes(std::as_const(state_));
            size = bytes.size;
            store_.write(s.level, s.slot, s.step, bytes);
        } else if constexpr (multipart_state<State>) {
            const auto parts = snapshot_traits<State>::parts(std::as_const(state_));
            const const_parts view(std::ranges::data(parts), std::ranges::size(parts));
            size = total_bytes(view);
            store_.write(s.level, s.slot, s.step, view);
        } else {
            try {
                size = snapshot_traits<State>::size_bytes(std::as_const(state_));
                if (staging_.size() < size)
                    staging_.resize(size);
                snapshot_traits<State>::save(std::as_const(state_), std::span<std::byte>(staging_.data(), size));
            } catch (...) {
                detail::rethrow_as_step_error(s.step, step_phase::save);
            }
            store_.write(s.level, s.slot, s.step, const_bytes{staging_.data(), size, memory_space::host});
        }
        hold(size);
    }

    void perform(const restore& r)
    {
        if (r.step > next_reverse_)
            throw schedule_error("restore of x_" + std::to_string(r.step) + ", beyond the next step to reverse (" +
                                 std::to_string(next_reverse_) + ")");
        check_level(r.level);
        current_ = -1; // until the read succeeds
        if constexpr (contiguous_state<State>) {
            mutable_bytes bytes = snapshot_traits<State>::bytes(state_);
            if constexpr (requires { snapshot_traits<State>::bytes_for(state_, std::size_t{}); }) {
                const std::size_t stored = store_.snapshot_bytes(r.level, r.slot);
                if (stored != bytes.size && stored != 0)
                    bytes = snapshot_traits<State>::bytes_for(state_, stored);
            }
            store_.read(r.level, r.slot, r.step, bytes);
        } else if constexpr (multipart_state<State>) {
            const auto read_into = [&](const auto& parts) {
                const mutable_parts view(std::ranges::data(parts), std::ranges::size(parts));
                store_.read(r.level, r.slot, r.step, view);
            };
            if constexpr (requires { snapshot_traits<State>::parts_for(state_, std::span<const std::size_t>{}); }) {
                const std::span<const std::size_t> held = store_.part_sizes(r.level, r.slot);
                const auto parts = snapshot_traits<State>::parts(state_);
                if (!held.empty() && !same_sizes(held, parts))
                    read_into(snapshot_traits<State>::parts_for(state_, held));
                else
                    read_into(parts);
            } else {
                read_into(snapshot_traits<State>::parts(state_));
            }
        } else {
            const std::size_t size = store_.snapshot_bytes(r.level, r.slot);
            if (staging_.size() < size)
                staging_.resize(size);
            store_.read(r.level, r.slot, r.step, mutable_bytes{staging_.data(), size, memory_space::host});
            try {
                snapshot_traits<State>::load(state_, std::span<const std::byte>(staging_.data(), size));
            } catch (...) {
                detail::rethrow_as_step_error(r.step, step_phase::load);
            }
        }
        current_ = r.step;
    }

    void perform(const free_slot& f)
    {
        check_level(f.level);
        const std::size_t size = several_levels() ? store_.snapshot_bytes(f.level, f.slot) : 0;
        store_.release(f.level, f.slot);
        let_go(size);
    }

    // `advance K K+1 tape`: step K runs once, filling a free tape that step K holds until `reverse K`. It
    // may run the next step to reverse itself (x_{K+1} is then of no use, the tape is).
    void perform_taped(const advance& a)
    {
        const auto what = [&] { // only on error: no allocation per step
            return "advance " + std::to_string(a.from) + " " + std::to_string(a.to) + " tape";
        };
        if (a.from != current_)
            throw schedule_error(what() + " but the state is " + describe_current());
        if (a.to != a.from + 1 || a.from > next_reverse_)
            throw schedule_error(what() + " must run one step, at most the next step to reverse (" +
                                 std::to_string(next_reverse_) + ")");
        if (tapes_.holds(a.from))
            throw schedule_error(what() + " but step " + std::to_string(a.from) + "'s tape is already held");
        const std::uint64_t start = detail::tick_clock::now();
        current_ = -1; // until the step is done
        try {
            tapes_.record(a.from, state_); // a throwing step leaves the tape free
            ++report_.forward_steps;
            ++report_.taped_steps;
            store_.wait_for_user();
        } catch (...) {
            detail::rethrow_as_step_error(a.from, step_phase::forward);
        }
        forward_ticks_ += detail::tick_clock::now() - start;
        current_ = a.to;
        if constexpr (has_final)
            if (current_ == report_.steps && !final_called_) // step T-1 taped: x_T is here
                call_final_here(current_);
    }

    void perform(const reverse& v)
    {
        if (v.step != next_reverse_)
            throw schedule_error("reverse " + std::to_string(v.step) + " out of order: the next step to reverse is " +
                                 std::to_string(next_reverse_));
        if constexpr (has_tapes)
            if (tapes_.holds(v.step)) {
                reverse_from_tape(v.step);
                return;
            }
        if (v.step != current_)
            throw schedule_error("reverse " + std::to_string(v.step) + " but the state is " + describe_current());
        if constexpr (has_final)
            if (!final_called_)
                call_final_beyond(v.step);
        const std::uint64_t start = detail::tick_clock::now();
        current_ = -1; // the adjoint may overwrite x_k
        try {
            std::invoke(adjoint_.fn, v.step, state_);
            store_.wait_for_user();
        } catch (...) {
            detail::rethrow_as_step_error(v.step, step_phase::adjoint);
        }
        adjoint_ticks_ += detail::tick_clock::now() - start;
        ++report_.reverse_steps;
        --next_reverse_;
    }

    // `reverse K` with K's tape held: the adjoint from the tape, x is neither needed nor touched.
    void reverse_from_tape(step_t k)
    {
        if constexpr (has_final)
            if (!final_called_) {
                if (current_ != k)
                    throw schedule_error("reverse " + std::to_string(k) +
                                         " is the first reverse: the terminal callable needs x_" + std::to_string(k) +
                                         " current to compute x_" + std::to_string(k + 1) + ", but the state is " +
                                         describe_current());
                call_final_beyond(k);
            }
        const std::uint64_t start = detail::tick_clock::now();
        try {
            tapes_.reverse(k); // frees the tape, also when the adjoint throws
            store_.wait_for_user();
        } catch (...) {
            detail::rethrow_as_step_error(k, step_phase::adjoint);
        }
        adjoint_ticks_ += detail::tick_clock::now() - start;
        ++report_.reverse_steps;
        ++report_.tape_reverses;
        --next_reverse_;
        if (current_ > next_reverse_)
            current_ = -1; // x_K and beyond are of no use any more
    }

    static constexpr bool has_final = !std::is_same_v<std::remove_cvref_t<Final>, no_final_state>;

    // x_T is current: hand it to the terminal callable.
    void call_final_here(step_t steps)
    {
        final_called_ = true;
        const std::uint64_t start = detail::tick_clock::now();
        try {
            std::invoke(final_.fn, std::as_const(state_));
            store_.wait_for_user();
        } catch (...) {
            detail::rethrow_as_step_error(steps, step_phase::final_state);
        }
        final_ticks_ += detail::tick_clock::now() - start;
        ++report_.final_calls;
    }

    // The first reverse is of step T-1 with x_{T-1} current, the end of the first forward sweep: keep
    // x_{T-1} aside (in memory that grows once per executor, never per step), run step T-1 once more, hand
    // x_T to the terminal callable, and put x_{T-1} back for the adjoint.
    void call_final_beyond(step_t last)
    {
        final_called_ = true;
        keep_aside(last);
        current_ = -1; // until x_{T-1} is back
        const std::uint64_t start = detail::tick_clock::now();
        try {
            std::invoke(forward_.fn, last, state_);
            store_.wait_for_user();
        } catch (...) {
            detail::rethrow_as_step_error(last, step_phase::forward);
        }
        forward_ticks_ += detail::tick_clock::now() - start;
        ++report_.final_forward_steps;
        call_final_here(last + 1);
        put_back(last);
        current_ = last;
    }

    // The state's views: one for a contiguous state, its parts for a multi-part one.
    static auto views(const State& x)
    {
        if constexpr (contiguous_state<State>)
            return std::array<const_bytes, 1>{snapshot_traits<State>::bytes(x)};
        else
            return snapshot_traits<State>::parts(x);
    }

    template <class Parts>
    static bool same_sizes(std::span<const std::size_t> sizes, const Parts& parts)
    {
        if (sizes.size() != std::ranges::size(parts))
            return false;
        std::size_t i = 0;
        for (const auto& p : parts)
            if (p.size != sizes[i++])
                return false;
        return true;
    }

    // Calls f with the state's mutable views, resized to `sizes` where the state's traits can resize them.
    template <class F>
    void with_views_for(std::span<const std::size_t> sizes, F&& f)
    {
        if constexpr (contiguous_state<State>) {
            mutable_bytes bytes = snapshot_traits<State>::bytes(state_);
            if constexpr (requires { snapshot_traits<State>::bytes_for(state_, std::size_t{}); })
                if (sizes.size() == 1 && bytes.size != sizes[0])
                    bytes = snapshot_traits<State>::bytes_for(state_, sizes[0]);
            f(std::array<mutable_bytes, 1>{bytes});
        } else if constexpr (requires { snapshot_traits<State>::parts_for(state_, sizes); }) {
            const auto parts = snapshot_traits<State>::parts(state_);
            if (same_sizes(sizes, parts))
                f(parts);
            else
                f(snapshot_traits<State>::parts_for(state_, sizes));
        } else {
            f(snapshot_traits<State>::parts(state_));
        }
    }

    static bool on_device(const State& x)
    {
        const auto parts = views(x);
        return std::ranges::any_of(parts, [](const const_bytes& p) { return p.space != memory_space::host; });
    }

    // Whether a copy of the state shares its device elements (a view such as cuda::device_span).
    static bool shares_device_elements(const State& copy, const State& x)
    {
        const auto a = views(copy);
        const auto b = views(x);
        for (std::size_t i = 0; i < std::ranges::size(a) && i < std::ranges::size(b); ++i)
            if (b[i].space != memory_space::host && (a[i].data == b[i].data) && (b[i].size != 0 || a[i].size != 0))
                return true;
        return false;
    }

    void keep_aside(step_t last)
    {
        if constexpr (contiguous_state<State> || multipart_state<State>) {
            if (!on_device(state_)) {
                const auto parts = views(std::as_const(state_));
                const const_parts view(std::ranges::data(parts), std::ranges::size(parts));
                const std::size_t total = total_bytes(view);
                kept_sizes_.assign(view); // no allocation for up to four parts
                if (staging_.size() < total)
                    staging_.resize(total);
                std::size_t at = 0;
                for (const const_bytes& p : parts) {
                    if (p.size != 0)
                        std::memcpy(staging_.data() + at, p.data, p.size);
                    at += p.size;
                }
                kept_size_ = total;
                return;
            }
            if constexpr (std::is_copy_constructible_v<State>) {
                if (kept_state_) {
                    *kept_state_ = state_; // made in the constructor: a device copy, no allocation here
                    return;
                }
            }
            prepare_device_copy(); // the constructor found a host state; it is a device one now
        } else {
            try {
                kept_size_ = snapshot_traits<State>::size_bytes(std::as_const(state_));
                if (staging_.size() < kept_size_)
                    staging_.resize(kept_size_);
                snapshot_traits<State>::save(std::as_const(state_), std::span<std::byte>(staging_.data(), kept_size_));
            } catch (...) {
                detail::rethrow_as_step_error(last, step_phase::save);
            }
        }
    }

    // A device state is kept aside in a copy of itself, made here (before step 0, one allocation per
    // executor) so that a state that cannot be copied, or a view whose copies share its elements, is
    // refused before any work is done.
    void prepare_device_copy()
    {
        if constexpr (contiguous_state<State> || multipart_state<State>) {
            if (!on_device(state_))
                return;
            if constexpr (std::is_copy_constructible_v<State>) {
                kept_state_.emplace(state_);
                if (!shares_device_elements(*kept_state_, state_))
                    return; // a copy of the elements, not of a view
                kept_state_.reset();
            }
            throw argument_error("remat::final_state needs x_{T-1} kept aside while x_T is computed, but the state "
                                 "is a view of device memory whose copies share its elements: use a state that owns "
                                 "its elements (thrust::device_vector) or compute x_T in the adjoint of step T-1");
        }
    }

    void put_back(step_t last)
    {
        if constexpr (contiguous_state<State> || multipart_state<State>) {
            if constexpr (std::is_copy_constructible_v<State>) {
                if (kept_state_) {
                    state_ = *kept_state_;
                    return;
                }
            }
            const std::span<const std::size_t> kept = kept_sizes_.sizes();
            with_views_for(kept, [&](const auto& parts) {
                if (!same_sizes(kept, parts)) {
                    std::vector<std::size_t> now;
                    for (const mutable_bytes& p : parts)
                        now.push_back(p.size);
                    throw integrity_error("the forward step " + std::to_string(last) + " changed the state from " +
                                          detail::describe_parts(kept) + " to " + detail::describe_parts(now));
                }
                std::size_t at = 0;
                for (const mutable_bytes& p : parts) {
                    if (p.size != 0)
                        std::memcpy(p.data, staging_.data() + at, p.size);
                    at += p.size;
                }
            });
        } else {
            try {
                snapshot_traits<State>::load(state_, std::span<const std::byte>(staging_.data(), kept_size_));
            } catch (...) {
                detail::rethrow_as_step_error(last, step_phase::load);
            }
        }
    }

    /// Bytes of one snapshot of the current state.
    std::uint64_t snapshot_size()
    {
        if constexpr (contiguous_state<State> || multipart_state<State>) {
            const auto parts = views(std::as_const(state_));
            std::uint64_t total = 0;
            for (const const_bytes& p : parts)
                total += p.size;
            return total;
        } else {
            try {
                return snapshot_traits<State>::size_bytes(std::as_const(state_));
            } catch (...) {
                detail::rethrow_as_step_error(current_, step_phase::save);
            }
        }
    }

    // Checks that level `level` holds `slots` snapshots of the current state at once (see check_fits).
    void check_level_fits(level_t level, slot_t slots, std::uint64_t snapshot_bytes)
    {
        const level_capacity have = store_.capacity(level);
        const std::string name =
            "level " + std::to_string(level) + " (" + report_.levels[static_cast<std::size_t>(level)].name + ")";
        if (slots > have.slots)
            throw capacity_error("the plan holds " + std::to_string(slots) + " snapshots at once on " + name +
                                 ", but the store's level has " + std::to_string(have.slots) + " slots");
        if (have.bytes != level_capacity::unlimited_bytes && snapshot_bytes != 0 &&
            static_cast<std::uint64_t>(slots) > have.bytes / snapshot_bytes)
            throw capacity_error("the plan holds " + std::to_string(slots) + " snapshots of " +
                                 std::to_string(snapshot_bytes) + " bytes at once on " + name +
                                 ", but the store's level has room for " + std::to_string(have.bytes) + " bytes");
    }

    void check_level(level_t L) const
    {
        if (L < 0 || static_cast<std::size_t>(L) >= report_.levels.size())
            throw schedule_error("level " + std::to_string(L) + " does not exist; the store has " +
                                 std::to_string(report_.levels.size()));
    }

    // The snapshots of all levels together are the one count no level can keep: the driver keeps it for a
    // store of several levels. Each level's own counts and peaks are the level's (read_store_counts).
    [[nodiscard]] bool several_levels() const noexcept { return report_.levels.size() > 1; }
    void hold(std::uint64_t bytes) noexcept
    {
        if (!several_levels())
            return;
        ++held_slots_;
        held_bytes_ += bytes;
        report_.peak_slots = std::max(report_.peak_slots, held_slots_);
        report_.peak_snapshot_bytes = std::max(report_.peak_snapshot_bytes, held_bytes_);
    }
    void let_go(std::uint64_t bytes) noexcept
    {
        held_slots_ -= std::min<slot_t>(held_slots_, 1);
        held_bytes_ -= std::min(held_bytes_, bytes);
    }

    // The report's counts, peaks and waits, as the store's levels counted them during the run.
    void read_store_counts()
    {
        const store_stats after = store_.stats();
        for (std::size_t i = 0; i < report_.levels.size() && i < after.levels.size(); ++i) {
            const level_stats& now = after.levels[i];
            const level_stats then = i < before_.levels.size() ? before_.levels[i] : level_stats{};
            level_report& l = report_.levels[i];
            l.stores = now.stores - then.stores;
            l.restores = now.restores - then.restores;
            l.bytes_written = now.bytes_written - then.bytes_written;
            l.bytes_read = now.bytes_read - then.bytes_read;
            l.peak_slots = now.peak_slots;
            l.peak_bytes = now.peak_bytes;
            l.wait_seconds = now.wait_seconds - then.wait_seconds;
            l.overlapped_seconds = now.overlapped_seconds - then.overlapped_seconds;
            report_.stores += l.stores;
            report_.restores += l.restores;
            report_.bytes_written += l.bytes_written;
            report_.bytes_read += l.bytes_read;
            report_.wait_seconds += l.wait_seconds;
            report_.overlapped_seconds += l.overlapped_seconds;
        }
        if (!several_levels() && !report_.levels.empty()) {
            report_.peak_slots = report_.levels[0].peak_slots;
            report_.peak_snapshot_bytes = report_.levels[0].peak_bytes;
        }
    }

    [[nodiscard]] std::string describe_current() const
    {
        return current_ < 0 ? std::string("undefined (restore a snapshot first)") : "x_" + std::to_string(current_);
    }

    detail::store_access<Store> store_;
    State& state_;
    forward_step_fn<Forward> forward_;
    adjoint_step_fn<Adjoint> adjoint_;
    final_state_fn<Final> final_;
    [[no_unique_address]] Tapes tapes_;
    bool final_called_ = false;
    std::size_t kept_size_ = 0;       // bytes of x_{T-1} kept in staging_ around the final-state call
    detail::part_layout kept_sizes_;  // and the sizes of its parts (one for a contiguous state)
    std::optional<State> kept_state_; // x_{T-1} of a device state that owns its elements
    step_t current_ = 0;
    step_t next_reverse_ = 0;
    detail::tick_calibration clock_;
    std::uint64_t forward_ticks_ = 0;
    std::uint64_t adjoint_ticks_ = 0;
    std::uint64_t final_ticks_ = 0;
    std::uint64_t test_ticks_ = 0;
    std::vector<std::byte> staging_; // serialised states only; grows, never shrinks
    store_stats before_;             // the store's counts as the run started
    slot_t held_slots_ = 0;          // snapshots held on all levels together (several levels only)
    std::uint64_t held_bytes_ = 0;
    run_report report_;
};

template <class State, class Store, class F, class A>
executor(Store&, State&, forward_step_fn<F>, adjoint_step_fn<A>, step_t) -> executor<State, Store, F, A>;
template <class State, class Store, class F, class A, class H>
executor(Store&, State&, forward_step_fn<F>, adjoint_step_fn<A>, final_state_fn<H>, step_t)
    -> executor<State, Store, F, A, H>;
template <class State, class Store, class F, class A, class TS, class TA, class M>
executor(Store&, State&, forward_step_fn<F>, adjoint_step_fn<A>, tape_set<TS, TA, M>, step_t)
    -> executor<State, Store, F, A, no_final_state, tape_set<TS, TA, M>>;
template <class State, class Store, class F, class A, class H, class TS, class TA, class M>
executor(Store&, State&, forward_step_fn<F>, adjoint_step_fn<A>, final_state_fn<H>, tape_set<TS, TA, M>, step_t)
    -> executor<State, Store, F, A, H, tape_set<TS, TA, M>>;

} // namespace remat
