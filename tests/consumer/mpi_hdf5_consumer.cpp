// Uses remat::mpi_hdf5 from an installed remat, as a single MPI process: a snapshot written to the parallel
// HDF5 level (in the working directory) reads back.
#include <remat/mpi/parallel_hdf5_store.hpp>

#include <cstdio>
#include <filesystem>
#include <span>
#include <vector>

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    bool same = false;
    {
        std::vector<double> x{1.5, -2.25, 3.0};
        std::vector<double> y(3);
        remat::mpi::parallel_hdf5_store disk(MPI_COMM_WORLD, "mpi_hdf5_consumer.h5", 2, sizeof(double) * x.size());
        disk.write(1, 7, remat::host_bytes(std::as_bytes(std::span(x))));
        disk.read(1, 7, remat::host_bytes(std::as_writable_bytes(std::span(y))));
        same = x == y;
    }
    std::filesystem::remove("mpi_hdf5_consumer.h5");
    MPI_Finalize();
    std::printf("parallel HDF5 round trip: %s\n", same ? "ok" : "different");
    return same ? 0 : 1;
}
