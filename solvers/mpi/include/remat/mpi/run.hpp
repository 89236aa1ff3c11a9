// remat/mpi/run.hpp — remat::run on every rank of a job: the plans checked collectively first, a failure on
// one rank ending the job with a message instead of leaving the others waiting.
#pragma once

#include "remat/mpi/failure.hpp"
#include "remat/mpi/plan_check.hpp"

#include <remat/driver/run.hpp>

#include <mpi.h>

#include <type_traits>
#include <utility>

namespace remat::mpi {

/// Collective over `comm`: every rank calls it with the same schedule, its own store and its own part of
/// the state. First check_same_plan (plan_mismatch, thrown on every rank, if the plans differ); then
/// remat::run. If anything fails on a rank during the run — a step throws, the terminal callable throws,
/// the store's disk is full — that rank prints one line naming itself, the step and the cause, and ends the
/// job (MPI_Abort); nothing returns. The steps do their own communication (halo exchanges); the gradient is
/// the caller's. The callables are wrapped as for remat::run (remat/driver/callables.hpp); the terminal
/// callable (optional) sees this rank's part of x_T.
///
///     remat::host_store store(slots);
///     remat::run_report r = remat::mpi::run(MPI_COMM_WORLD, remat::revolve(T, slots), store, local,
///         remat::forward_step([&](remat::step_t k, std::vector<double>& u) { part.step(u); }),  // exchanges halos
///         remat::adjoint_step([&](remat::step_t k, std::vector<double>& u) { part.adjoint_step(k, u, a); }),
///         remat::final_state([&](const std::vector<double>& uT) { a = part.objective_gradient(uT); }));
template <class Schedule, class Store, class State, class Forward, class Adjoint, class Final>
run_report run(MPI_Comm comm, const Schedule& plan, Store& store, State& state, forward_step_fn<Forward> forward,
               adjoint_step_fn<Adjoint> adjoint, final_state_fn<Final> final, const run_options& options = {})
{
    check_same_plan(comm, plan);
    step_progress last;
    auto tracked_forward = [&](step_t k, State& x) {
        last = {k, step_phase::forward};
        forward.fn(k, x);
    };
    auto tracked_adjoint = [&](step_t k, State& x) {
        last = {k, step_phase::adjoint};
        adjoint.fn(k, x);
    };
    auto tracked_final = [&](const State& x) {
        last = {plan.steps(), step_phase::final_state};
        final.fn(x);
    };
    try {
        if constexpr (std::is_same_v<std::remove_cvref_t<Final>, no_final_state>) // no extra step for x_T
            return remat::run(plan, store, state, remat::forward_step(tracked_forward),
                              remat::adjoint_step(tracked_adjoint), options);
        else
            return remat::run(plan, store, state, remat::forward_step(tracked_forward),
                              remat::adjoint_step(tracked_adjoint), remat::final_state(tracked_final), options);
    } catch (...) {
        abort_job(comm, std::current_exception(), last);
    }
}

/// remat::mpi::run without a terminal callable.
template <class Schedule, class Store, class State, class Forward, class Adjoint>
run_report run(MPI_Comm comm, const Schedule& plan, Store& store, State& state, forward_step_fn<Forward> forward,
               adjoint_step_fn<Adjoint> adjoint, const run_options& options = {})
{
    return run(comm, plan, store, state, std::move(forward), std::move(adjoint), final_state_fn<no_final_state>{},
               options);
}

} // namespace remat::mpi
