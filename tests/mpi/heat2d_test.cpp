// The heat2d example's gradient under mpirun (2 or 3 ranks): bit-identical to a store-everything run and to
// the field gathered from one process running alone on MPI_COMM_SELF, and equal to central differences on a
// small grid.
#define BOOST_TEST_MODULE mpi_heat2d
#include "heat2d_mpi/heat2d.hpp"
#include "mpi_session.hpp"

#include <remat/remat.hpp>
#if REMAT_WITH_PARALLEL_HDF5
#include <remat/mpi/parallel_hdf5_store.hpp>

#include <unistd.h>

#include <filesystem>
#endif

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

using remat::test::mpi_session;
BOOST_TEST_GLOBAL_FIXTURE(mpi_session);

namespace heat2d = remat::examples::heat2d;

namespace {

// J of a plain forward run from `u0` (this rank's band), with no adjoint.
double objective_from(heat2d::part& p, std::vector<double> u, remat::step_t steps)
{
    for (remat::step_t k = 0; k < steps; ++k)
        p.step(u);
    return p.objective(u);
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

} // namespace

BOOST_AUTO_TEST_CASE(checkpointed_equals_store_all_bit_for_bit)
{
    heat2d::part p(MPI_COMM_WORLD, {.nx = 24, .ny = 19});
    const remat::step_t T = 120;
    remat::host_store few(4);
    const heat2d::result r = heat2d::gradient(MPI_COMM_WORLD, p, remat::revolve(T, 4), few);
    remat::host_store all(T);
    const heat2d::result s = heat2d::gradient(MPI_COMM_WORLD, p, remat::store_all(T, T), all);
    BOOST_TEST(r.report.forward_steps > s.report.forward_steps); // it did recompute
    BOOST_TEST(same_bits(r.gradient, s.gradient));
    BOOST_TEST(r.objective == s.objective);
}

BOOST_AUTO_TEST_CASE(split_gradient_equals_one_process_alone)
{
    const heat2d::problem problem{.nx = 21, .ny = 17};
    const remat::step_t T = 80;
    heat2d::part p(MPI_COMM_WORLD, problem);
    remat::host_store store(5);
    const heat2d::result split = heat2d::gradient(MPI_COMM_WORLD, p, remat::revolve(T, 5), store);
    const std::vector<double> gathered = p.gather(split.gradient);
    if (remat::mpi::rank(MPI_COMM_WORLD) == 0) {
        // The whole grid on one rank of its own communicator.
        heat2d::part whole(MPI_COMM_SELF, problem);
        remat::host_store own(T);
        const heat2d::result alone = heat2d::gradient(MPI_COMM_SELF, whole, remat::store_all(T, T), own);
        BOOST_TEST(same_bits(gathered, alone.gradient));
        BOOST_TEST(split.objective == alone.objective);
    }
}

BOOST_AUTO_TEST_CASE(gradient_matches_central_differences)
{
    heat2d::part p(MPI_COMM_WORLD, {.nx = 9, .ny = 7});
    const remat::step_t T = 60;
    remat::host_store store(3);
    const heat2d::result r = heat2d::gradient(MPI_COMM_WORLD, p, remat::revolve(T, 3), store);
    const std::vector<double> g = p.gather(r.gradient);
    const std::vector<double> u0 = p.initial();
    const heat2d::band& b = p.rows();
    // A few points on every row band, perturbed on the rank that owns them (all ranks run every forward).
    for (const std::int64_t point : {0, 10, 31, 40, 62}) {
        const std::int64_t row = point / 9;
        const double eps = 1e-6;
        std::vector<double> plus = u0;
        std::vector<double> minus = u0;
        if (row >= b.row0 && row < b.row0 + b.rows) {
            const auto i = static_cast<std::size_t>((row - b.row0) * 9 + point % 9);
            plus[i] += eps;
            minus[i] -= eps;
        }
        const double fd = (objective_from(p, plus, T) - objective_from(p, minus, T)) / (2 * eps);
        if (b.rank == 0) {
            const double exact = g[static_cast<std::size_t>(point)];
            BOOST_TEST(std::abs(exact) > 1e-8); // a point the objective depends on
            BOOST_TEST(std::abs(fd - exact) <= 1e-6 * std::abs(exact) + 1e-12,
                       "point " << point << ": adjoint " << exact << ", differences " << fd);
        }
    }
}

#if REMAT_WITH_PARALLEL_HDF5
BOOST_AUTO_TEST_CASE(parallel_hdf5_level_equals_store_all_bit_for_bit)
{
    heat2d::part p(MPI_COMM_WORLD, {.nx = 24, .ny = 19});
    const remat::step_t T = 90;
    char name[256] = {};
    if (remat::mpi::rank(MPI_COMM_WORLD) == 0)
        std::snprintf(name, sizeof name, "%s/remat_heat2d_%d.h5", std::filesystem::temp_directory_path().c_str(),
                      static_cast<int>(getpid()));
    MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
    heat2d::result r;
    {
        remat::mpi::parallel_hdf5_store disk(MPI_COMM_WORLD, name, 4, p.values() * sizeof(double));
        r = heat2d::gradient(MPI_COMM_WORLD, p, remat::revolve(T, 4), disk);
        BOOST_TEST(disk.stats().stores == r.report.stores);
        BOOST_TEST(disk.stats().restores == r.report.restores);
    }
    remat::host_store all(T);
    const heat2d::result s = heat2d::gradient(MPI_COMM_WORLD, p, remat::store_all(T, T), all);
    BOOST_TEST(r.report.restores > 0u);
    BOOST_TEST(same_bits(r.gradient, s.gradient));
    MPI_Barrier(MPI_COMM_WORLD);
    if (remat::mpi::rank(MPI_COMM_WORLD) == 0)
        std::filesystem::remove(name);
}
#endif
