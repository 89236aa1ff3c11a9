// remat/cvodes/in_ram.hpp — CVODES's own adjoint, all in RAM: the baseline remat::cvodes is measured against.
#pragma once

#include "remat/cvodes/problem.hpp"

#include <cstdint>
#include <vector>

namespace remat::cvodes {

/// What CVODES's own adjoint found, and what it kept.
struct in_ram_solution {
    std::vector<double> final_state;           ///< [tf, y(tf), q(tf)]
    std::vector<backward_state> backward;      ///< lambda(t0) and quadratures at t0, per backward problem
    std::int64_t forward_steps = 0;            ///< internal steps of the forward run
    std::int64_t checkpoints = 0;              ///< CVODES's checkpoints (CVodeF's ncheck) in the forward run
    std::int64_t backward_steps = 0;           ///< internal steps of the backward runs (summed over the problems)
    std::int64_t forward_rhs_evaluations = 0;  ///< right-hand side evaluations of the forward run
    std::int64_t backward_rhs_evaluations = 0; ///< of the backward runs (summed over the problems)
};

/// Integrates [t0, tf] in one CVodeF call with CVodeAdjInit(steps_per_checkpoint, CV_HERMITE) — a
/// checkpoint every `steps_per_checkpoint` steps and the interpolation data of one checkpoint interval,
/// all in RAM — then each backward problem with CVodeB from its t_start to t0 (one forward run per
/// backward problem). The same settings as remat::cvodes::adjoint_solver, without windows.
///
///     auto ref = remat::cvodes::solve_in_ram(forward, {backward}, 4e7, 150);
///     ref.backward[0].quadratures;
[[nodiscard]] in_ram_solution solve_in_ram(const forward_problem& forward,
                                           const std::vector<backward_problem>& backward, double tf,
                                           long steps_per_checkpoint);

} // namespace remat::cvodes
