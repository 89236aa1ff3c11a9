// remat/mpi/mpi.hpp — remat on MPI (target remat::mpi): every rank runs the same schedule on its part of the
// state with its own store. Not included by remat/remat.hpp.
//
//     #include <remat/mpi/mpi.hpp>
//     auto budget = remat::mpi::plan_for_budget(MPI_COMM_WORLD, T, {.bytes = 1ull << 30}, my_bytes);
//     remat::host_store store(budget.plan.slots);
//     remat::mpi::run(MPI_COMM_WORLD, remat::revolve(T, budget.plan.slots), store, x, remat::forward_step(f),
//                     remat::adjoint_step(g));
#pragma once

#include "remat/mpi/budget.hpp"
#include "remat/mpi/communicator.hpp"
#include "remat/mpi/failure.hpp"
#include "remat/mpi/plan_check.hpp"
#include "remat/mpi/run.hpp"
