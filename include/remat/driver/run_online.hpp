// remat/driver/run_online.hpp — the driver for loops that learn their length only when they end.
//
// remat::run needs T up front. run_online drives remat::online_revolve instead: the loop's own
// termination test is asked at every x_k, the schedule keeps what it chooses in the store, and when the
// loop has ended the reverse sweep follows. Two conventions (docs/online.md):
//  - run_online: `is_last(k, x_k)` is asked before step k runs, as an adaptive ODE solver knows when it
//    clips its step to the final time. Forward steps equal the offline optimum for T <= C(s+2,2).
//  - run_online_converged: `converged(k, x_k)` is asked after step k-1 has run, for k >= 1, as a fixed-point
//    iteration tests the new state. x_T is useless to the adjoint, so the last step's state has to be
//    restored or recomputed: the run costs exactly the forward steps of a run_online loop of T+1 steps,
//    usually about r more than T steps (run_report::forward_steps; measured in bench/online_ratio).
#pragma once

#include "remat/driver/executor.hpp"
#include "remat/driver/run.hpp"
#include "remat/driver/run_report.hpp"
#include "remat/schedule/online_revolve.hpp"

#include <concepts>
#include <cstddef>
#include <functional>
#include <limits>
#include <type_traits>
#include <utility>

namespace remat {

/// A termination test on the state: `test(k, x)` with x == x_k, returning something convertible to bool.
template <class P, class State>
concept loop_test = std::invocable<P&, step_t, const State&> &&
                    std::convertible_to<std::invoke_result_t<P&, step_t, const State&>, bool>;

namespace detail {

template <class Test, class State>
bool ask(Test& test, step_t k, const State& state)
{
    try {
        return static_cast<bool>(std::invoke(test, k, state));
    } catch (...) {
        rethrow_as_step_error(k, step_phase::predicate);
    }
}

/// The loop both run_online variants share: `ended(cursor)` asks the loop's test at the cursor's position
/// and tells the cursor (answer or end_state); the forward actions run until it says the loop has ended,
/// then the reverse sweep. The store's slots are released before any exception leaves.
template <class State, class Store, class Forward, class Adjoint, class Ended>
run_report drive_online(const online_revolve& plan, Store& store, State& state, Forward& forward, Adjoint& adjoint,
                        Ended&& ended, const run_options& options)
{
    executor<State, Store, Forward, Adjoint> ex(store, state, forward, adjoint, std::numeric_limits<step_t>::max());
    schedule_cost need; // the online schedule may fill every slot it has, whatever T turns out to be
    need.levels = {level_cost{0, 0, static_cast<std::uint64_t>(plan.slots())}};
    ex.check_fits(need);
    try {
        auto cursor = plan.cursor();
        action a;
        while (!ended(cursor))
            while (cursor.next(a))
                ex.apply(a);
        ex.set_steps(cursor.steps());
        apply_all<std::remove_cvref_t<Store>>(ex, cursor, options); // the reverse sweep
        return ex.finish();
    } catch (...) {
        ex.abort();
        throw;
    }
}

} // namespace detail

/// Runs a loop whose length is unknown until it ends, and its reverse sweep, starting from `state` == x_0.
///
/// At each x_k the driver calls `is_last(k, x_k)`: true means step k is the loop's last (T = k+1), and
/// the reverse sweep starts at once with x_{T-1} where it stands. Otherwise the schedule may keep x_k
/// and the driver calls `forward(k, x)`. `adjoint(k, x)` is then called with x == x_k for k = T-1 down to
/// 0, exactly as in remat::run; gradients are bit-identical to a store-everything run. The report's
/// `steps` is the T the loop found.
///
/// Errors: a throwing `is_last` becomes remat::step_error with step_phase::predicate and the step k of
/// the state it was asked about; forward, adjoint and snapshot failures as in remat::run. The store's
/// slots are released before any exception leaves.
///
///     remat::host_store store(16);
///     remat::run_report r = remat::run_online(remat::online_revolve(16), store, x,
///         [&](remat::step_t, State& s) { solver.step(s); },
///         [&](remat::step_t k, State& s) { solver.adjoint_step(k, s, a); },
///         [&](remat::step_t, const State& s) { return solver.time(s) + solver.dt(s) >= t_end; });
///     // r.steps is T
template <store_for_run Store, snapshot_state State, forward_step<State> Forward, adjoint_step<State> Adjoint,
          loop_test<State> IsLast>
run_report run_online(const online_revolve& plan, Store& store, State& state, Forward&& forward, Adjoint&& adjoint,
                      IsLast&& is_last, const run_options& options = {})
{
    return detail::drive_online(
        plan, store, state, forward, adjoint,
        [&](online_revolve::cursor_type& cursor) {
            const bool last = detail::ask(is_last, cursor.position(), std::as_const(state));
            cursor.answer(last);
            return last;
        },
        options);
}

/// Like run_online, for loops that learn only afterwards that they have ended: `converged(k, x_k)` is
/// called for k >= 1, after step k-1 has run; true means x_k is the final state (T = k). Step 0 always
/// runs. The adjoint sees x_{T-1}..x_0 as with run_online; the forward steps, in the report, are those of
/// a run_online loop of T+1 steps (online_revolve::cost(T, online_end::after_last_step)).
///
///     remat::run_report r = remat::run_online_converged(plan, store, x, step, adjoint_step,
///         [&](remat::step_t, const State& s) { return residual(s) < 1e-10; });
template <store_for_run Store, snapshot_state State, forward_step<State> Forward, adjoint_step<State> Adjoint,
          loop_test<State> Converged>
run_report run_online_converged(const online_revolve& plan, Store& store, State& state, Forward&& forward,
                                Adjoint&& adjoint, Converged&& converged, const run_options& options = {})
{
    return detail::drive_online(
        plan, store, state, forward, adjoint,
        [&](online_revolve::cursor_type& cursor) {
            const step_t k = cursor.position();
            if (k >= 1 && detail::ask(converged, k, std::as_const(state))) {
                cursor.end_state();
                return true;
            }
            cursor.answer(false);
            return false;
        },
        options);
}

} // namespace remat
