// 1-D viscous Burgers equation u_t + (u^2/2)_x = nu u_xx on a periodic grid, explicit Euler in time with
// central differences (smooth, so its discrete adjoint is exact), and that adjoint.
//
// One step: u'_i = u_i - dt (u_{i+1}^2 - u_{i-1}^2) / (4 dx) + c (u_{i+1} - 2 u_i + u_{i-1}), c = nu dt/dx^2.
// Its adjoint, with lambda' = dJ/du':
//   lambda_j = (1-2c) lambda'_j + c (lambda'_{j-1} + lambda'_{j+1}) + dt u_j / (2 dx) (lambda'_{j+1} - lambda'_{j-1}).
#pragma once

#include <cmath>
#include <cstddef>
#include <numbers>
#include <vector>

namespace remat::examples {

struct burgers {
    std::size_t points = 10'000;
    double nu = 0.01;
    double dt = 1e-5;

    [[nodiscard]] double dx() const { return 2 * std::numbers::pi / static_cast<double>(points); }

    [[nodiscard]] std::vector<double> initial_field() const
    {
        std::vector<double> u(points);
        for (std::size_t i = 0; i < points; ++i) {
            const double x = static_cast<double>(i) * dx();
            u[i] = std::sin(x) + 0.5 * std::sin(2 * x + 1) + 0.2;
        }
        return u;
    }

    /// u_k -> u_{k+1} in place; `scratch` avoids an allocation per step.
    void step(std::vector<double>& u, std::vector<double>& scratch) const
    {
        const std::size_t n = u.size();
        const double a = dt / (4 * dx());
        const double c = nu * dt / (dx() * dx());
        scratch.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            const double left = u[i == 0 ? n - 1 : i - 1];
            const double right = u[i + 1 == n ? 0 : i + 1];
            scratch[i] = u[i] - a * (right * right - left * left) + c * (right - 2 * u[i] + left);
        }
        u.swap(scratch);
    }

    /// Given u == u_k and lambda == dJ/du_{k+1}: lambda becomes dJ/du_k.
    void adjoint_step(const std::vector<double>& u, std::vector<double>& lambda, std::vector<double>& scratch) const
    {
        const std::size_t n = u.size();
        const double b = dt / (2 * dx());
        const double c = nu * dt / (dx() * dx());
        scratch.resize(n);
        for (std::size_t j = 0; j < n; ++j) {
            const double left = lambda[j == 0 ? n - 1 : j - 1];
            const double right = lambda[j + 1 == n ? 0 : j + 1];
            scratch[j] = (1 - 2 * c) * lambda[j] + c * (left + right) + b * u[j] * (right - left);
        }
        lambda.swap(scratch);
    }

    /// J = dx/2 * sum u_T^2 (the energy at the final time) and its gradient dJ/du_T = dx * u_T.
    [[nodiscard]] double objective(const std::vector<double>& u) const
    {
        double sum = 0;
        for (const double v : u)
            sum += v * v;
        return 0.5 * dx() * sum;
    }
    [[nodiscard]] std::vector<double> objective_gradient(const std::vector<double>& u) const
    {
        std::vector<double> g(u.size());
        for (std::size_t i = 0; i < u.size(); ++i)
            g[i] = dx() * u[i];
        return g;
    }
};

} // namespace remat::examples
