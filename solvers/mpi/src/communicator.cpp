#include "remat/mpi/communicator.hpp"

namespace remat::mpi {

int rank(MPI_Comm comm)
{
    int r = 0;
    check(MPI_Comm_rank(comm, &r), "MPI_Comm_rank");
    return r;
}

int size(MPI_Comm comm)
{
    int n = 0;
    check(MPI_Comm_size(comm, &n), "MPI_Comm_size");
    return n;
}

void check(int code, const char* call)
{
    if (code == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
        length = 0;
    throw mpi_error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)) + " (error " +
                    std::to_string(code) + ")");
}

std::string rank_list(const int* ranks, std::size_t count)
{
    std::string s;
    for (std::size_t i = 0; i < count; ++i) {
        if (i > 0)
            s += ", ";
        s += std::to_string(ranks[i]);
    }
    return s;
}

} // namespace remat::mpi
