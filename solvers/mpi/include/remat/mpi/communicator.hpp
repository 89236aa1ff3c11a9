// remat/mpi/communicator.hpp — the few MPI calls remat::mpi makes, checked: a failing call becomes
// remat::mpi::mpi_error naming the call (with the default MPI_ERRORS_ARE_FATAL handler MPI ends the job
// itself before that).
#pragma once

#include <remat/error.hpp>

#include <mpi.h>

#include <string>

namespace remat::mpi {

/// An MPI call failed (only seen on communicators whose error handler returns errors).
class mpi_error : public error {
public:
    using error::error;
};

/// This process's rank in `comm`.
///
///     int me = remat::mpi::rank(MPI_COMM_WORLD);
[[nodiscard]] int rank(MPI_Comm comm);

/// The number of ranks in `comm`.
[[nodiscard]] int size(MPI_Comm comm);

/// Throws mpi_error naming `call` and MPI's own text for `code` unless code == MPI_SUCCESS.
///
///     remat::mpi::check(MPI_Barrier(comm), "MPI_Barrier");
void check(int code, const char* call);

/// "0, 1, 3" — a list of ranks as the messages print it.
[[nodiscard]] std::string rank_list(const int* ranks, std::size_t count);

} // namespace remat::mpi
