// heat2d.hpp — a 2-D heat equation with a cubic sink, u_t = D (u_xx + u_yy) - c u^3 on the unit square with
// u = 0 on the boundary, split into bands of rows over the ranks of an MPI communicator, with its exact
// discrete adjoint. Shared by examples/heat2d_mpi, tests/mpi and bench/mpi_scaling.
//
// Explicit Euler on an nx x ny interior grid (h = 1/(n+1) per direction):
//     u'_ij = u_ij + dt (D ((u_i-1,j + u_i+1,j) + (u_i,j-1 + u_i,j+1) - 4 u_ij) / h^2 - c u_ij^3)
// Each rank holds a band of whole rows (rows split as evenly as possible, the first ranks one more), and
// exchanges its first and last rows with its neighbours before each step (halo exchange). Every grid value
// is computed by the same expression from the same operands whatever the split, so the fields — and the
// gradient — are bit-identical for any number of ranks; the objective J = h^2/2 sum u_T^2 is summed row by
// row in global row order on every rank (fixed order, so it is bit-identical too).
//
// The adjoint of one step, a = (du'/du)^T a', needs u = x_k (the cubic term), which is why the states are
// checkpointed:
//     a_ij = a'_ij + dt (D ((a'_i-1,j + a'_i+1,j) + (a'_i,j-1 + a'_i,j+1) - 4 a'_ij) / h^2 - 3 c u_ij^2 a'_ij)
#pragma once

#include <remat/mpi/communicator.hpp>
#include <remat/mpi/run.hpp>
#include <remat/types.hpp>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace remat::examples::heat2d {

/// The global problem: grid, time step and coefficients.
struct problem {
    std::int64_t nx = 64;   ///< interior points per row
    std::int64_t ny = 64;   ///< rows
    double diffusion = 1.0; ///< D
    double sink = 20.0;     ///< c
    double courant = 0.2;   ///< dt D / h^2 (stable up to 0.25)
    [[nodiscard]] double h() const { return 1.0 / static_cast<double>(std::max(nx, ny) + 1); }
    [[nodiscard]] double dt() const { return courant * h() * h() / diffusion; }
};

/// This rank's band of rows: rows [row0, row0 + rows) of ny.
struct band {
    int rank = 0;
    int ranks = 1;
    std::int64_t row0 = 0;
    std::int64_t rows = 0;

    /// The first ny % ranks ranks get one row more than the others.
    static band of(std::int64_t ny, int rank, int ranks)
    {
        const std::int64_t base = ny / ranks;
        const std::int64_t extra = ny % ranks;
        band b;
        b.rank = rank;
        b.ranks = ranks;
        b.rows = base + (rank < extra ? 1 : 0);
        b.row0 = rank * base + std::min<std::int64_t>(rank, extra);
        return b;
    }
};

/// One rank's part: the step, its adjoint and the objective, with the halo exchanges they need.
class part {
public:
    part(MPI_Comm comm, problem p) : comm_(comm), p_(p)
    {
        const int ranks = remat::mpi::size(comm);
        if (p.nx < 1 || p.ny < ranks)
            throw std::invalid_argument("heat2d: a grid of " + std::to_string(p.nx) + " x " + std::to_string(p.ny) +
                                        " has fewer rows than the " + std::to_string(ranks) + " ranks");
        b_ = band::of(p.ny, remat::mpi::rank(comm), ranks);
        padded_.assign(static_cast<std::size_t>((b_.rows + 2) * (p.nx + 2)), 0.0);
        above_ = b_.rank > 0 ? b_.rank - 1 : MPI_PROC_NULL;
        below_ = b_.rank + 1 < ranks ? b_.rank + 1 : MPI_PROC_NULL;
    }

    [[nodiscard]] const band& rows() const { return b_; }
    [[nodiscard]] const problem& global() const { return p_; }
    [[nodiscard]] std::size_t values() const { return static_cast<std::size_t>(b_.rows * p_.nx); }

    /// x_0: two Gaussian bumps, evaluated at this band's points (the same values as on one rank).
    [[nodiscard]] std::vector<double> initial() const
    {
        std::vector<double> u(values());
        const double h = p_.h();
        for (std::int64_t r = 0; r < b_.rows; ++r)
            for (std::int64_t i = 0; i < p_.nx; ++i) {
                const double x = static_cast<double>(i + 1) * h;
                const double y = static_cast<double>(b_.row0 + r + 1) * h;
                u[index(r, i)] = std::exp(-60.0 * ((x - 0.35) * (x - 0.35) + (y - 0.4) * (y - 0.4))) +
                                 0.7 * std::exp(-90.0 * ((x - 0.7) * (x - 0.7) + (y - 0.65) * (y - 0.65)));
            }
        return u;
    }

    /// x_k -> x_{k+1} in place (collective: exchanges halos with the neighbouring bands).
    void step(std::vector<double>& u)
    {
        fill_padded(u);
        const double lambda = p_.diffusion / (p_.h() * p_.h());
        const double dt = p_.dt();
        const double c = p_.sink;
        const std::int64_t w = p_.nx + 2;
        for (std::int64_t r = 0; r < b_.rows; ++r) {
            const double* up = &padded_[static_cast<std::size_t>(r * w + 1)];
            const double* mid = up + w;
            const double* down = mid + w;
            double* out = &u[index(r, 0)];
            for (std::int64_t i = 0; i < p_.nx; ++i) {
                const double v = mid[i];
                out[i] = v + dt * (lambda * ((up[i] + down[i]) + (mid[i - 1] + mid[i + 1]) - 4.0 * v) - c * v * v * v);
            }
        }
    }

    /// a_{k+1} -> a_k given u == x_k (collective: exchanges the adjoint's halos).
    void adjoint_step(const std::vector<double>& u, std::vector<double>& a)
    {
        fill_padded(a);
        const double lambda = p_.diffusion / (p_.h() * p_.h());
        const double dt = p_.dt();
        const double c3 = 3.0 * p_.sink;
        const std::int64_t w = p_.nx + 2;
        for (std::int64_t r = 0; r < b_.rows; ++r) {
            const double* up = &padded_[static_cast<std::size_t>(r * w + 1)];
            const double* mid = up + w;
            const double* down = mid + w;
            const double* x = &u[index(r, 0)];
            double* out = &a[index(r, 0)];
            for (std::int64_t i = 0; i < p_.nx; ++i) {
                const double v = mid[i];
                out[i] = v + dt * (lambda * ((up[i] + down[i]) + (mid[i - 1] + mid[i + 1]) - 4.0 * v) -
                                   c3 * x[i] * x[i] * v);
            }
        }
    }

    /// J = h^2/2 sum u^2 over the whole grid (collective). Each row is summed left to right, the row sums
    /// are gathered and added in global row order: the same bits on any number of ranks.
    [[nodiscard]] double objective(const std::vector<double>& u) const
    {
        std::vector<double> mine(static_cast<std::size_t>(b_.rows));
        for (std::int64_t r = 0; r < b_.rows; ++r) {
            double s = 0;
            for (std::int64_t i = 0; i < p_.nx; ++i)
                s += u[index(r, i)] * u[index(r, i)];
            mine[static_cast<std::size_t>(r)] = s;
        }
        std::vector<double> rows(static_cast<std::size_t>(p_.ny));
        const std::vector<int> counts = band_counts(1);
        const std::vector<int> offsets = band_offsets(1);
        remat::mpi::check(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, rows.data(),
                                         counts.data(), offsets.data(), MPI_DOUBLE, comm_),
                          "MPI_Allgatherv");
        double total = 0;
        for (const double s : rows)
            total += s;
        return 0.5 * p_.h() * p_.h() * total;
    }

    /// dJ/du_T = h^2 u_T (this band's part).
    [[nodiscard]] std::vector<double> objective_gradient(const std::vector<double>& u) const
    {
        std::vector<double> g(u.size());
        for (std::size_t i = 0; i < u.size(); ++i)
            g[i] = p_.h() * p_.h() * u[i];
        return g;
    }

    /// The whole field in global row-major order, on rank `root` (empty elsewhere).
    [[nodiscard]] std::vector<double> gather(const std::vector<double>& u, int root = 0) const
    {
        std::vector<double> all;
        if (b_.rank == root)
            all.resize(static_cast<std::size_t>(p_.nx * p_.ny));
        const std::vector<int> counts = band_counts(p_.nx);
        const std::vector<int> offsets = band_offsets(p_.nx);
        remat::mpi::check(MPI_Gatherv(u.data(), static_cast<int>(u.size()), MPI_DOUBLE, all.data(), counts.data(),
                                      offsets.data(), MPI_DOUBLE, root, comm_),
                          "MPI_Gatherv");
        return all;
    }

private:
    [[nodiscard]] std::size_t index(std::int64_t r, std::int64_t i) const
    {
        return static_cast<std::size_t>(r * p_.nx + i);
    }

    // Copies v into the padded band and receives the neighbours' edge rows into its halo rows (zero at the
    // domain's boundary: MPI_PROC_NULL leaves them as they are, and they are never written).
    void fill_padded(const std::vector<double>& v)
    {
        const std::int64_t w = p_.nx + 2;
        for (std::int64_t r = 0; r < b_.rows; ++r)
            std::copy_n(&v[index(r, 0)], p_.nx, &padded_[static_cast<std::size_t>((r + 1) * w + 1)]);
        const int n = static_cast<int>(p_.nx);
        double* first = &padded_[static_cast<std::size_t>(w + 1)];
        double* last = &padded_[static_cast<std::size_t>(b_.rows * w + 1)];
        double* halo_above = &padded_[1];
        double* halo_below = &padded_[static_cast<std::size_t>((b_.rows + 1) * w + 1)];
        remat::mpi::check(MPI_Sendrecv(first, n, MPI_DOUBLE, above_, 0, halo_below, n, MPI_DOUBLE, below_, 0, comm_,
                                       MPI_STATUS_IGNORE),
                          "MPI_Sendrecv");
        remat::mpi::check(MPI_Sendrecv(last, n, MPI_DOUBLE, below_, 1, halo_above, n, MPI_DOUBLE, above_, 1, comm_,
                                       MPI_STATUS_IGNORE),
                          "MPI_Sendrecv");
    }

    [[nodiscard]] std::vector<int> band_counts(std::int64_t per_row) const
    {
        std::vector<int> c(static_cast<std::size_t>(b_.ranks));
        for (int r = 0; r < b_.ranks; ++r)
            c[static_cast<std::size_t>(r)] = static_cast<int>(band::of(p_.ny, r, b_.ranks).rows * per_row);
        return c;
    }
    [[nodiscard]] std::vector<int> band_offsets(std::int64_t per_row) const
    {
        std::vector<int> o(static_cast<std::size_t>(b_.ranks));
        for (int r = 0; r < b_.ranks; ++r)
            o[static_cast<std::size_t>(r)] = static_cast<int>(band::of(p_.ny, r, b_.ranks).row0 * per_row);
        return o;
    }

    MPI_Comm comm_;
    problem p_;
    band b_;
    std::vector<double> padded_; // (rows + 2) x (nx + 2): halo rows above and below, zero columns at the sides
    int above_ = MPI_PROC_NULL;
    int below_ = MPI_PROC_NULL;
};

/// What a gradient run gives on each rank.
struct result {
    double objective = 0;         ///< J(x_T), the same on every rank
    std::vector<double> gradient; ///< dJ/dx_0, this rank's band
    run_report report;            ///< this rank's run
};

/// dJ/dx_0 through remat::mpi::run along `plan` with this rank's `store` (collective). `before_step(k)`
/// runs before every forward step (the example's fault injection; a no-op otherwise).
///
///     remat::host_store store(10);
///     auto r = heat2d::gradient(MPI_COMM_WORLD, part, remat::revolve(T, 10), store);
template <class Schedule, class Store, class BeforeStep>
result gradient(MPI_Comm comm, part& p, const Schedule& plan, Store& store, BeforeStep&& before_step)
{
    result out;
    std::vector<double> u = p.initial();
    std::vector<double> a;
    out.report =
        remat::mpi::run(comm, plan, store, u, remat::forward_step([&](step_t k, std::vector<double>& x) {
                            before_step(k);
                            p.step(x);
                        }),
                        remat::adjoint_step([&](step_t, std::vector<double>& x) { p.adjoint_step(x, a); }),
                        remat::final_state([&](const std::vector<double>& xT) { // J and dJ/dx_T seed the adjoint
                            out.objective = p.objective(xT);
                            a = p.objective_gradient(xT);
                        }));
    out.gradient = std::move(a);
    return out;
}

template <class Schedule, class Store>
result gradient(MPI_Comm comm, part& p, const Schedule& plan, Store& store)
{
    return gradient(comm, p, plan, store, [](step_t) {});
}

} // namespace remat::examples::heat2d
