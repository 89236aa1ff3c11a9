// remat/mpi/failure.hpp — a failure on one rank ends the whole job, with a message naming the rank, the
// step and the cause.
//
// When one rank's step throws (or its store finds a full disk), the other ranks are typically waiting for
// it in a halo exchange inside their own step, which remat cannot see; no agreement at remat's own
// collective points could reach them. So the failing rank writes one line to stderr and calls
// MPI_Abort, which the MPI runtime turns into the end of every rank of the job within moments (see
// docs/mpi.md). This is the one place where remat ends the process instead of throwing: a job with a rank
// gone has no way to continue.
#pragma once

#include <remat/error.hpp>
#include <remat/types.hpp>

#include <mpi.h>

#include <exception>
#include <string>

namespace remat::mpi {

/// The last user step a rank entered, for the message when something fails outside a step (in the store).
struct step_progress {
    step_t step = -1;
    step_phase phase = step_phase::forward;
};

/// The one line a failure prints: "remat::mpi: rank 2 of 4 failed in step 17 (forward): <cause>".
/// `failure` is the exception (a remat::step_error names its step and nests the cause); `last` is the last
/// step entered, used for failures outside the user's steps.
[[nodiscard]] std::string failure_message(MPI_Comm comm, std::exception_ptr failure, const step_progress& last);

/// Writes failure_message(...) and ends the job: MPI_Abort(comm, exit_code). Never returns.
[[noreturn]] void abort_job(MPI_Comm comm, std::exception_ptr failure, const step_progress& last,
                            int exit_code = 1) noexcept;

/// Runs `work()` and returns what it returns; if it throws, ends the job with abort_job. For code outside
/// remat::mpi::run whose failure on one rank would leave the others waiting (a solver's own loop).
///
///     double J = remat::mpi::abort_on_failure(MPI_COMM_WORLD, [&] { return objective(x); });
template <class Work>
decltype(auto) abort_on_failure(MPI_Comm comm, Work&& work)
{
    try {
        return work();
    } catch (...) {
        abort_job(comm, std::current_exception(), {});
    }
}

} // namespace remat::mpi
