// remat/cvodes/adjoint_solver.hpp — CVODES integrating one window at a time, forward or with its adjoint.
//
// A window state is one contiguous vector of doubles, [t, y_0..y_{N-1}, q_0..q_{Nq-1}] (time, state,
// forward quadratures), so every remat store holds it as it is (RAM, HDF5, tiered). Each integration of a
// window starts in a CVODES memory of its own (CVodeCreate, CVodeInit, CVodeAdjInit: order 1, CVODES's
// own initial step estimate from that state, no history; its vectors' arrays reused from a pool) with the
// same settings and stop time, and is integrated by CVodeF in both sweeps (CVODES restarts at its own
// in-window checkpoints, so plain CVode would step differently): every integration of a window takes the
// same steps and ends in the same bits.
#pragma once

#include "remat/cvodes/problem.hpp"
#include "remat/types.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <vector>

namespace remat::cvodes {

/// Where a window ends: at time t_end, or after at most `steps` internal steps (never beyond t_end).
struct window_end {
    double t_end = 0;
    std::int64_t steps = std::numeric_limits<std::int64_t>::max();
};

/// Which sweep integrated a window.
enum class sweep { forward, reverse };

/// Reported after every window integration (for progress, and to check the sweeps agree).
struct window_event {
    step_t window = 0;
    remat::cvodes::sweep sweep = sweep::forward;
    std::span<const double> start_state; ///< [t, y, q] at the window's start
    std::span<const double> end_state;   ///< [t, y, q] at its end
    std::int64_t steps = 0;              ///< CVODES internal steps in this window (forward integration)
    std::int64_t rhs_evaluations = 0;    ///< forward right-hand side evaluations in this integration
    /// Reverse sweep: the backward problems' internal steps in this window (summed over them), and their
    /// right-hand side evaluations; zero in the forward sweep and where no backward problem is active.
    std::int64_t backward_steps = 0;
    std::int64_t backward_rhs_evaluations = 0;
};

/// Settings of the windowed adjoint beyond each problem's integrator settings.
struct solver_options {
    /// Steps between CVODES's own checkpoints inside one window (CVodeAdjInit's Nd). CVODES allocates
    /// interpolation data for this many steps up front, so it bounds the in-window memory: about
    /// 2 * (steps_per_checkpoint + 1) vectors of N doubles with Hermite interpolation.
    long steps_per_checkpoint = 100;
    /// Called after every window integration, in both sweeps (optional); in the reverse sweep after the
    /// window's backward integration.
    std::function<void(const window_event&)> on_window;
};

/// CVODES for one forward problem and its backward problems, a window at a time. Owns every SUNDIALS
/// object it creates (released by its destructor, also when a call throws); not copyable.
///
///     remat::cvodes::adjoint_solver s(forward, {backward});
///     std::vector<double> x = s.initial_state();            // [t0, y0, q0]
///     s.forward(0, x, {.t_end = 1.0});                       // x is now [1.0, y(1), q(1)]
///     s.reverse(0, start_of_window_0, {.t_end = 1.0});       // adjoint over [t0, 1.0]
class adjoint_solver {
public:
    /// Checks the problems (sizes, callables, tolerances, times) and creates the CVODES objects. Throws
    /// remat::argument_error naming a bad value, remat::cvodes::solver_error when SUNDIALS refuses.
    adjoint_solver(forward_problem forward, std::vector<backward_problem> backward, solver_options options = {});
    ~adjoint_solver();
    adjoint_solver(adjoint_solver&&) noexcept;
    adjoint_solver& operator=(adjoint_solver&&) noexcept;
    adjoint_solver(const adjoint_solver&) = delete;
    adjoint_solver& operator=(const adjoint_solver&) = delete;

    /// Doubles in one window state: 1 + N + Nq.
    [[nodiscard]] std::size_t state_size() const noexcept;
    /// [t0, y0, q0].
    [[nodiscard]] std::vector<double> initial_state() const;

    /// Integrates window `k` forward from `state` (its start) to its end, in place (its CVODES interpolation
    /// data is overwritten by the next window).
    void forward(step_t k, std::span<double> state, window_end end);
    /// The reverse step of window `k`: `state` is its start; re-integrates it exactly as forward() does,
    /// starts the backward problems whose t_start is the
    /// window's end, continues the others from their carried lambda and quadratures, and integrates all
    /// active ones back to the window's start. `state` is left at the window's end.
    void reverse(step_t k, std::span<double> state, window_end end);
    /// Forgets the backward problems' progress (a new reverse sweep starts).
    void reset_backward();

    /// The backward problems' current lambda and quadratures (at t0 after a complete reverse sweep).
    [[nodiscard]] const std::vector<backward_state>& backward() const noexcept;
    [[nodiscard]] const std::vector<backward_problem>& backward_problems() const noexcept;
    [[nodiscard]] const forward_problem& problem() const noexcept;

    /// Bytes CVODES allocates up front for one window's interpolation data and in-window checkpoints
    /// (the memory a reverse step needs beside the snapshots; an estimate from the vector sizes).
    [[nodiscard]] std::uint64_t window_working_bytes() const noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace remat::cvodes
