// The checks solve() and solve_online() make before remat runs anything, and the budget helper.
#include "remat/cvodes/solve.hpp"

#include "handles.hpp"

#include "remat/error.hpp"

#include <cmath>
#include <string>

namespace remat::cvodes {
namespace detail {

void check_offline(const adjoint_solver& solver, const windows& w, step_t schedule_steps)
{
    if (schedule_steps != w.count())
        throw argument_error("remat::cvodes::solve: the schedule has " + std::to_string(schedule_steps) +
                             " steps for " + std::to_string(w.count()) + " windows");
    if (w.t0() != solver.problem().t0)
        throw argument_error("remat::cvodes::solve: the windows start at t = " + format(w.t0()) +
                             ", the problem at t0 = " + format(solver.problem().t0));
    const auto& backward = solver.backward_problems();
    for (std::size_t b = 0; b < backward.size(); ++b)
        if (!w.is_boundary(backward[b].t_start))
            throw argument_error("remat::cvodes::solve: backward problem " + std::to_string(b) +
                                 " starts at t = " + format(backward[b].t_start) +
                                 ", which is no window boundary (windows::including adds it)");
}

void check_online(const adjoint_solver& solver, double tf, std::int64_t steps_per_window)
{
    const double t0 = solver.problem().t0;
    if (!(std::isfinite(tf) && tf > t0))
        throw argument_error("remat::cvodes::solve_online: tf = " + format(tf) +
                             " is not a finite time after t0 = " + format(t0));
    if (steps_per_window < 1)
        throw argument_error("remat::cvodes::solve_online: steps_per_window = " + std::to_string(steps_per_window) +
                             "; at least 1");
    const auto& backward = solver.backward_problems();
    for (std::size_t b = 0; b < backward.size(); ++b)
        if (backward[b].t_start != tf)
            throw argument_error("remat::cvodes::solve_online: backward problem " + std::to_string(b) +
                                 " starts at t = " + format(backward[b].t_start) + ", not at tf = " + format(tf) +
                                 " (window boundaries are found as the solve goes)");
}

} // namespace detail

std::size_t slots_for_budget(const adjoint_solver& solver, std::uint64_t budget_bytes)
{
    const std::uint64_t state_bytes = solver.state_size() * sizeof(double);
    if (budget_bytes < state_bytes)
        throw capacity_error("remat::cvodes: a budget of " + std::to_string(budget_bytes) +
                             " bytes holds no window-start state of " + std::to_string(state_bytes) + " bytes");
    return static_cast<std::size_t>(budget_bytes / state_bytes);
}

} // namespace remat::cvodes
