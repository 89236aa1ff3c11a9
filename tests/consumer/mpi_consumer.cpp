// Uses remat::mpi from an installed remat, as a single MPI process (singleton start, no mpirun): the plan
// check passes, and the gradient of x_T = 0.5^T x_0 through remat::mpi::run is 0.5^T.
#include <remat/mpi/mpi.hpp>
#include <remat/remat.hpp>

#include <cmath>
#include <cstdio>

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    const remat::step_t T = 30;
    double x = 1.0;
    double a = 1.0; // dJ/dx_T for J = x_T
    remat::host_store store(4);
    const remat::run_report r = remat::mpi::run(MPI_COMM_WORLD, remat::revolve(T, 4), store, x,
                                                remat::forward_step([](remat::step_t, double& s) { s *= 0.5; }),
                                                remat::adjoint_step([&](remat::step_t, double&) { a *= 0.5; }));
    MPI_Finalize();
    const double expected = std::ldexp(1.0, -static_cast<int>(T));
    std::printf("dJ/dx0 = %g (expected %g), %llu forward steps\n", a, expected,
                static_cast<unsigned long long>(r.forward_steps));
    return a == expected ? 0 : 1;
}
