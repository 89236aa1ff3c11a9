// remat/driver/run_online.hpp — the driver for loops that learn their length only when they end.
//
// remat::run needs T up front. run_online drives an online schedule instead (remat::online_revolve, or
// any model of remat::online_schedule below): the loop's own termination test is asked at every x_k,
// the schedule keeps what it chooses in the store, and when the loop has ended the reverse sweep
// follows. Two conventions (docs/online.md):
//  - run_online: `is_last(k, x_k)` is asked before step k runs, as an adaptive ODE solver knows when it
//    clips its step to the final time. Forward steps equal the offline optimum for T <= C(s+2,2).
//  - run_online_converged: `converged(k, x_k)` is asked after step k-1 has run, for k >= 1, as a fixed-point
//    iteration tests the new state. x_T is useless to the adjoint, so the last step's state has to be
//    restored or recomputed: the run costs exactly the forward steps of a run_online loop of T+1 steps,
//    usually about r more than T steps (run_report::forward_steps; measured in bench/online_ratio).
//
// The schedule models remat::online_schedule (remat/schedule/online_schedule.hpp: the concept, its table of
// expressions, and the schedules that model it).
#pragma once

#include "remat/driver/callables.hpp"
#include "remat/driver/executor.hpp"
#include "remat/driver/run.hpp"
#include "remat/driver/run_options.hpp"
#include "remat/driver/run_report.hpp"
#include "remat/driver/step_callables.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/online_schedule.hpp"
#include "remat/schedule/range.hpp"

#include <concepts>
#include <cstddef>
#include <functional>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

namespace remat {

/// A termination test on the state: `test(k, x)` with x == x_k, returning something convertible to bool.
template <class P, class State>
concept loop_test = std::invocable<P&, step_t, const State&> &&
                    std::convertible_to<std::invoke_result_t<P&, step_t, const State&>, bool>;

namespace detail {

/// The loop both run_online variants share: `ended(cursor)` asks the loop's test at the cursor's position
/// and tells the cursor (answer or end_state); the forward actions run until it says the loop has ended,
/// then the reverse sweep. The store's slots are released before any exception leaves.
template <class Plan, class Executor, class Store, class Ended>
run_report drive_online(const Plan& plan, Executor& ex, Ended&& ended, const run_options& options)
{
    schedule_cost need; // the online schedule may fill every slot it has, whatever T turns out to be
    for (const slot_t slots : plan.slot_bounds())
        need.levels.push_back(level_cost{0, 0, slots});
    ex.check_fits(need);
    try {
        auto cursor = plan.cursor();
        action a;
        while (!ended(cursor))
            while (cursor.next(a))
                ex.apply(a);
        ex.set_steps(cursor.steps());
        apply_all<Store>(ex, cursor, options); // the reverse sweep
        return ex.finish();
    } catch (...) {
        ex.abort();
        throw;
    }
}

} // namespace detail

namespace detail {

/// The one body of run_online and run_online_converged: bundles the callables, finds the loop's test
/// among the trailing arguments, and drives the loop with `ended(ex, test, cursor)`.
template <class Plan, class Store, class State, class Forward, class Adjoint, class Ended, class... Extras>
run_report run_online_with(const Plan& plan, Store& store, State& state, Forward&& forward, Adjoint&& adjoint,
                           Ended ended, Extras&&... extras)
{
    static_assert(valid_extras<false, true, std::remove_cvref_t<Extras>...>,
                  "remat::run_online takes, after the two steps, at most one remat::final_state(h), the loop's "
                  "termination test test(k, x) and at most one remat::run_options");
    auto& test = pick_ref<arg_role::test>(extras...);
    static_assert(loop_test<std::remove_cvref_t<decltype(test)>, State>,
                  "the loop's termination test is called as test(k, x) with x a const State& and returns a bool");
    const run_options options = pick_value<arg_role::options>(run_options{}, extras...);
    executor ex(store, state,
                bundle(std::forward<Forward>(forward), std::forward<Adjoint>(adjoint), std::forward<Extras>(extras)...),
                std::numeric_limits<step_t>::max());
    ex.time_user_code(options.time_user_code);
    return drive_online<Plan, decltype(ex), Store>(
        plan, ex, [&](auto& cursor) { return ended(ex, test, cursor); }, options);
}

} // namespace detail

/// Runs a loop whose length is unknown until it ends, and its reverse sweep, starting from `state` == x_0.
///
/// At each x_k the driver calls `is_last(k, x_k)`: true means step k is the loop's last (T = k+1), and
/// the reverse sweep starts at once with x_{T-1} where it stands. Otherwise the schedule may keep x_k
/// and the driver calls the forward step. The adjoint step is then called with x == x_k for k = T-1 down
/// to 0, exactly as in remat::run (and a final_state callable, if given, sees x_T first); gradients are
/// bit-identical to a store-everything run. The report's `steps` is the T the loop found. After the two
/// steps come, in any order, the test (required), and at most one remat::final_state(h) and one
/// remat::run_options.
///
/// The test is the user's code: its time (with the wait for the user's GPU work it leaves on the store's
/// stream, as after a step) is reported in test_seconds, not in remat's time.
///
/// Errors: an online schedule holding more slots (or levels) than the store is refused with
/// remat::capacity_error before step 0; a throwing `is_last` becomes remat::step_error with
/// step_phase::predicate and the step k of the state it was asked about; forward, adjoint and snapshot
/// failures as in remat::run. The store's slots are released before any exception leaves.
///
///     remat::online_revolve plan(16);
///     remat::host_store store(plan.slots());
///     remat::run_report r = remat::run_online(plan, store, x,
///         remat::forward_step([&](remat::step_t, State& s) { solver.step(s); }),
///         remat::adjoint_step([&](remat::step_t k, State& s) { solver.adjoint_step(k, s, a); }),
///         [&](remat::step_t, const State& s) { return solver.time(s) + solver.dt(s) >= t_end; });
///     // r.steps is T
template <online_schedule Plan, store_for_run Store, snapshot_state State, class Forward, class Adjoint,
          class... Extras>
run_report run_online(const Plan& plan, Store& store, State& state, Forward&& forward, Adjoint&& adjoint,
                      Extras&&... extras)
{
    if constexpr (detail::untagged_steps<Forward, Adjoint>) {
        static_assert(detail::always_false<Forward>,
                      "remat::run_online takes remat::forward_step(f), then remat::adjoint_step(g): wrap each "
                      "callable so that the two cannot be swapped");
        return {};
    } else {
        const auto ask_last = [](auto& ex, auto& is_last, auto& cursor) {
            const bool last = ex.ask(is_last, cursor.position());
            cursor.answer(last);
            return last;
        };
        return detail::run_online_with(plan, store, state, std::forward<Forward>(forward),
                                       std::forward<Adjoint>(adjoint), ask_last, std::forward<Extras>(extras)...);
    }
}

/// Like run_online, for loops that learn only afterwards that they have ended: `converged(k, x_k)` is
/// called for k >= 1, after step k-1 has run; true means x_k is the final state (T = k). Step 0 always
/// runs. The adjoint sees x_{T-1}..x_0 as with run_online; the forward steps, in the report, are those of
/// a run_online loop of T+1 steps (online_revolve::cost(T, online_end::after_last_step)). A terminal
/// callable sees x_T where the loop stopped, without an extra step.
///
///     remat::run_report r = remat::run_online_converged(plan, store, x, remat::forward_step(step),
///         remat::adjoint_step(adjoint_step),
///         [&](remat::step_t, const State& s) { return residual(s) < 1e-10; });
template <online_schedule Plan, store_for_run Store, snapshot_state State, class Forward, class Adjoint,
          class... Extras>
run_report run_online_converged(const Plan& plan, Store& store, State& state, Forward&& forward, Adjoint&& adjoint,
                                Extras&&... extras)
{
    if constexpr (detail::untagged_steps<Forward, Adjoint>) {
        static_assert(detail::always_false<Forward>,
                      "remat::run_online_converged takes remat::forward_step(f), then remat::adjoint_step(g): wrap "
                      "each callable so that the two cannot be swapped");
        return {};
    } else {
        const auto ask_converged = [](auto& ex, auto& converged, auto& cursor) {
            const step_t k = cursor.position();
            if (k >= 1 && ex.ask(converged, k)) {
                cursor.end_state();
                return true;
            }
            cursor.answer(false);
            return false;
        };
        return detail::run_online_with(plan, store, state, std::forward<Forward>(forward),
                                       std::forward<Adjoint>(adjoint), ask_converged, std::forward<Extras>(extras)...);
    }
}

} // namespace remat
