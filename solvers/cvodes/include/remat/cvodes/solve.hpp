// remat/cvodes/solve.hpp — CVODES adjoints in bounded memory: remat's schedule over the windows.
#pragma once

#include "remat/cvodes/adjoint_solver.hpp"
#include "remat/cvodes/windows.hpp"
#include "remat/driver/run.hpp"
#include "remat/driver/run_online.hpp"
#include "remat/driver/run_report.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/range.hpp"
#include "remat/store/snapshot_store.hpp"

#include <cstdint>
#include <vector>

namespace remat::cvodes {

/// What a windowed adjoint solve found.
struct solution {
    std::vector<double> final_state;      ///< [tf, y(tf), q(tf)] (q: the forward quadratures, e.g. G)
    std::vector<backward_state> backward; ///< per backward problem: lambda(t0) and its quadratures at t0
    step_t windows = 0;                   ///< windows the horizon was cut into (found by solve_online)
    run_report report;                    ///< what remat did: forward windows, snapshots, peak bytes
};

namespace detail {
/// Throws remat::argument_error unless the schedule covers exactly the windows and every backward
/// problem starts at a window boundary.
void check_offline(const adjoint_solver& solver, const windows& w, step_t schedule_steps);
/// Throws remat::argument_error unless tf is after t0, steps_per_window >= 1 and every backward problem
/// starts at tf.
void check_online(const adjoint_solver& solver, double tf, std::int64_t steps_per_window);
} // namespace detail

/// The adjoint over the windows `w`, with remat's `plan` (a schedule of w.count() steps: revolve, uniform,
/// multilevel, ...) deciding which window-start states `store` keeps (host_store, hdf5_store,
/// tiered_store, ...). Each window is integrated forward once in the forward sweep and re-integrated with
/// CVODES's adjoint module in its reverse step; lambda and the backward quadratures are carried from one
/// window to the one before.
///
///     auto w = remat::cvodes::windows::uniform(0.0, 100.0, 64);
///     remat::host_store store(8);
///     remat::cvodes::solution s = remat::cvodes::solve(solver, w, remat::revolve(w.count(), 8), store);
///     s.backward[0].quadratures;   // dG/dp
///
/// Errors: a failing CVODES call or callable comes back as remat::step_error naming the window (step)
/// with the remat::cvodes::solver_error (call, code, window, time) nested; the store is left empty and
/// consistent, and the solver can run again.
template <schedule Schedule, store_for_run Store>
solution solve(adjoint_solver& solver, const windows& w, const Schedule& plan, Store& store,
               const run_options& options = {})
{
    detail::check_offline(solver, w, plan.steps());
    solver.reset_backward();
    solution result;
    std::vector<double> x = solver.initial_state();
    const step_t last = w.count() - 1;
    result.report = remat::run(plan, store, x, remat::forward_step([&](step_t k, std::vector<double>& s) {
                                   solver.forward(k, s, {.t_end = w.end(k)});
                               }),
                               remat::adjoint_step([&](step_t k, std::vector<double>& s) {
                                   solver.reverse(k, s, {.t_end = w.end(k)});
                                   // reverse() re-integrates window k forward before its adjoint, leaving x_{k+1} in s:
                                   // x_T comes free here, where a terminal callable (remat::final_state) would cost one
                                   // more window.
                                   if (k == last)
                                       result.final_state = s;
                               }),
                               options);
    result.backward = solver.backward();
    result.windows = w.count();
    return result;
}

/// The adjoint when only tf is known in advance: each window is `steps_per_window` internal CVODES steps
/// (the last one stops at tf), and remat::online_revolve places the window-start states as the forward
/// sweep goes. Every backward problem must start at tf.
///
///     remat::host_store store(10);
///     auto s = remat::cvodes::solve_online(solver, 4e7, 50, remat::online_revolve(10), store);
///     s.windows;   // how many windows it took
template <store_for_run Store>
solution solve_online(adjoint_solver& solver, double tf, std::int64_t steps_per_window, const online_revolve& plan,
                      Store& store, const run_options& options = {})
{
    detail::check_online(solver, tf, steps_per_window);
    solver.reset_backward();
    solution result;
    std::vector<double> x = solver.initial_state();
    const window_end end{.t_end = tf, .steps = steps_per_window};
    result.report = remat::run_online_converged(
        plan, store, x, remat::forward_step([&](step_t k, std::vector<double>& s) { solver.forward(k, s, end); }),
        remat::adjoint_step([&](step_t k, std::vector<double>& s) { solver.reverse(k, s, end); }),
        // The loop stops at x_T itself (t = tf): the driver hands it over without another window.
        remat::final_state([&](const std::vector<double>& xT) { result.final_state = xT; }),
        [&](step_t, const std::vector<double>& s) { return s[0] == tf; }, options);
    result.backward = solver.backward();
    result.windows = result.report.steps;
    return result;
}

/// The most window-start snapshots `budget_bytes` holds for this solver's states (at least one; a smaller
/// budget throws remat::capacity_error naming both sizes).
///
///     std::size_t slots = remat::cvodes::slots_for_budget(solver, 64 << 20);
[[nodiscard]] std::size_t slots_for_budget(const adjoint_solver& solver, std::uint64_t budget_bytes);

} // namespace remat::cvodes
