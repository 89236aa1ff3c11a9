// A small explicit PDE and its exact discrete adjoint, written once for the host, Thrust's CPU back ends
// and CUDA kernels: the 1-D reaction-diffusion (Allen-Cahn) equation u_t = nu u_xx + u - u^3 on a
// periodic grid, explicit Euler in time, central differences in space.
//
// One step, with c = nu dt / h^2 and L_i = u_{i-1} - 2 u_i + u_{i+1}:
//     u'_i = u_i + c L_i + dt (u_i - u_i^3)
// Its adjoint, with a' = dJ/du':
//     a_j  = a'_j (1 - 2c + dt (1 - 3 u_j^2)) + c (a'_{j-1} + a'_{j+1})
//     dJ/dnu += sum_i a'_i L_i dt / h^2        (kept per point, summed in index order at the end)
// Keeping the parameter gradient per point makes every operation elementwise, so a sequential loop, an
// OpenMP loop and a GPU kernel do the same floating-point operations in the same order: their results
// are bit-identical as long as the compiler contracts nothing into FMAs (nvcc --fmad=false).
#pragma once

#include "same_bits.hpp"

#include "remat/cuda/config.hpp"
#include "remat/driver/run.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <vector>

namespace remat::test {

struct rd_params {
    std::size_t n = 0;
    double c = 0;         // nu dt / h^2
    double dt = 0;        // time step
    double nu_weight = 0; // dt / h^2: d u'_i / d nu = nu_weight L_i
};

REMAT_HOST_DEVICE inline double rd_laplacian(const double* u, std::size_t i, std::size_t n)
{
    const double left = u[i == 0 ? n - 1 : i - 1];
    const double right = u[i + 1 == n ? 0 : i + 1];
    return left - 2.0 * u[i] + right;
}

/// u'_i.
REMAT_HOST_DEVICE inline double rd_forward(const double* u, std::size_t i, const rd_params& p)
{
    return u[i] + p.c * rd_laplacian(u, i, p.n) + p.dt * (u[i] - u[i] * u[i] * u[i]);
}

/// a_j from a' (= a) and u.
REMAT_HOST_DEVICE inline double rd_adjoint(const double* u, const double* a, std::size_t j, const rd_params& p)
{
    const double left = a[j == 0 ? p.n - 1 : j - 1];
    const double right = a[j + 1 == p.n ? 0 : j + 1];
    return a[j] * (1.0 - 2.0 * p.c + p.dt * (1.0 - 3.0 * u[j] * u[j])) + p.c * (left + right);
}

/// g_i plus this step's contribution to dJ/dnu at point i.
REMAT_HOST_DEVICE inline double rd_nu_gradient(const double* u, const double* a, double g, std::size_t i,
                                               const rd_params& p)
{
    return g + a[i] * (rd_laplacian(u, i, p.n) * p.nu_weight);
}

/// The problem on the host, sequential: the reference every other implementation must match bit for bit.
struct reaction_diffusion {
    std::size_t points = 256;
    double nu = 0.01;
    double dt = 0.02;

    /// The problem on `n` points with dt cut where needed to keep explicit Euler stable (c <= 1/4; the
    /// defaults give c > 1/2, and a field that overflows to NaN, beyond about 310 points).
    [[nodiscard]] static reaction_diffusion stable_on(std::size_t n)
    {
        reaction_diffusion p{.points = n};
        p.dt = std::min(p.dt, 0.25 * p.h() * p.h() / p.nu);
        return p;
    }

    [[nodiscard]] double h() const { return 2 * std::numbers::pi / static_cast<double>(points); }
    [[nodiscard]] rd_params params() const { return {points, nu * dt / (h() * h()), dt, dt / (h() * h())}; }

    [[nodiscard]] std::vector<double> initial_field() const
    {
        std::vector<double> u(points);
        for (std::size_t i = 0; i < points; ++i) {
            const double x = static_cast<double>(i) * h();
            u[i] = 0.8 * std::sin(x) + 0.3 * std::cos(3 * x + 0.5);
        }
        return u;
    }

    /// x_k -> x_{k+1} in place (the buffer keeps its address).
    void step(double* u, std::vector<double>& scratch) const
    {
        const rd_params p = params();
        scratch.resize(points);
        for (std::size_t i = 0; i < points; ++i)
            scratch[i] = rd_forward(u, i, p);
        for (std::size_t i = 0; i < points; ++i)
            u[i] = scratch[i];
    }

    /// Given u == x_k, a == dJ/dx_{k+1}: a becomes dJ/dx_k and g gains the step's dJ/dnu per point.
    void adjoint_step(const double* u, std::vector<double>& a, std::vector<double>& g,
                      std::vector<double>& scratch) const
    {
        const rd_params p = params();
        scratch.resize(points);
        for (std::size_t i = 0; i < points; ++i)
            g[i] = rd_nu_gradient(u, a.data(), g[i], i, p);
        for (std::size_t j = 0; j < points; ++j)
            scratch[j] = rd_adjoint(u, a.data(), j, p);
        a.swap(scratch);
    }

    /// J = h/2 sum u_T^2, and dJ/du_T = h u_T.
    [[nodiscard]] double objective(const std::vector<double>& u) const
    {
        double sum = 0;
        for (const double v : u)
            sum += v * v;
        return 0.5 * h() * sum;
    }
    [[nodiscard]] std::vector<double> objective_gradient(const std::vector<double>& u) const
    {
        std::vector<double> a(u.size());
        for (std::size_t i = 0; i < u.size(); ++i)
            a[i] = h() * u[i];
        return a;
    }

    /// x_T from x_0 by a plain forward sweep.
    [[nodiscard]] std::vector<double> final_field(std::int64_t steps) const
    {
        std::vector<double> u = initial_field();
        std::vector<double> scratch;
        for (std::int64_t k = 0; k < steps; ++k)
            step(u.data(), scratch);
        return u;
    }
};

/// dJ/dx_0 and the per-point dJ/dnu of one gradient run.
struct rd_gradient {
    std::vector<double> initial;   // dJ/du_0
    std::vector<double> nu_points; // dJ/dnu per point; the sum in index order is dJ/dnu
    [[nodiscard]] double nu() const
    {
        double sum = 0;
        for (const double v : nu_points)
            sum += v;
        return sum;
    }
};

/// The reference gradient: the host problem, std::vector state, along `plan` with `store`.
template <class Schedule, class Store>
rd_gradient run_host_gradient(const reaction_diffusion& problem, const Schedule& plan, Store& store)
{
    rd_gradient g{problem.objective_gradient(problem.final_field(plan.steps())),
                  std::vector<double>(problem.points, 0.0)};
    std::vector<double> x = problem.initial_field();
    std::vector<double> scratch;
    (void)remat::run(plan, store, x, remat::forward_step([&](std::int64_t, std::vector<double>& u) {
                         problem.step(u.data(), scratch);
                     }),
                     remat::adjoint_step([&](std::int64_t, std::vector<double>& u) {
                         problem.adjoint_step(u.data(), g.initial, g.nu_points, scratch);
                     }));
    return g;
}

/// The reference every run must match: the host problem with every state stored in host RAM.
inline rd_gradient store_all_gradient(const reaction_diffusion& problem, step_t steps)
{
    host_store store(static_cast<slot_t>(steps));
    return run_host_gradient(problem, store_all(steps, static_cast<slot_t>(steps)), store);
}

inline bool same_bits(const rd_gradient& a, const rd_gradient& b)
{
    return same_bits(a.initial, b.initial) && same_bits(a.nu_points, b.nu_points);
}

} // namespace remat::test
