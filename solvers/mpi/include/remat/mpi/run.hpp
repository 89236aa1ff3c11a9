// remat/mpi/run.hpp — remat::run on every rank of a job: the plans checked collectively first, a failure on
// one rank ending the job with a message instead of leaving the others waiting.
#pragma once

#include "remat/mpi/failure.hpp"
#include "remat/mpi/plan_check.hpp"

#include <remat/driver/run.hpp>

#include <mpi.h>

#include <utility>

namespace remat::mpi {

/// Collective over `comm`: every rank calls it with the same schedule, its own store and its own part of
/// the state. First check_same_plan (plan_mismatch, thrown on every rank, if the plans differ); then
/// remat::run. If anything fails on a rank during the run — a step throws, the store's disk is full — that
/// rank prints one line naming itself, the step and the cause, and ends the job (MPI_Abort); nothing
/// returns. The steps do their own communication (halo exchanges); the gradient is the caller's.
///
///     remat::host_store store(slots);
///     remat::run_report r = remat::mpi::run(MPI_COMM_WORLD, remat::revolve(T, slots), store, local,
///         [&](remat::step_t k, std::vector<double>& u) { part.step(u); },            // exchanges halos
///         [&](remat::step_t k, std::vector<double>& u) { part.adjoint_step(k, u, a); });
template <class Schedule, class Store, class State, class Forward, class Adjoint>
run_report run(MPI_Comm comm, const Schedule& plan, Store& store, State& state, Forward&& forward, Adjoint&& adjoint,
               const run_options& options = {})
{
    check_same_plan(comm, plan);
    step_progress last;
    auto tracked_forward = [&](step_t k, State& x) {
        last = {k, step_phase::forward};
        forward(k, x);
    };
    auto tracked_adjoint = [&](step_t k, State& x) {
        last = {k, step_phase::adjoint};
        adjoint(k, x);
    };
    try {
        return remat::run(plan, store, state, tracked_forward, tracked_adjoint, options);
    } catch (...) {
        abort_job(comm, std::current_exception(), last);
    }
}

} // namespace remat::mpi
