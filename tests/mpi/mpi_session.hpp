// MPI_Init and MPI_Finalize around a Boost.Test module that runs under mpirun.
#pragma once

#include <boost/test/unit_test.hpp>

#include <mpi.h>

namespace remat::test {

struct mpi_session {
    mpi_session() { MPI_Init(nullptr, nullptr); }
    ~mpi_session() { MPI_Finalize(); }
    mpi_session(const mpi_session&) = delete;
    mpi_session& operator=(const mpi_session&) = delete;
};

} // namespace remat::test
