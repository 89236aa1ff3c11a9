// Uses remat::ode from an installed remat on Thrust's CPU back end: the gradient of |y(1)|^2 / 2 for a
// small MLP field, by RK4's discrete adjoint, against a central difference.
#include <remat/dense/blas.hpp>
#include <remat/ode/fixed_step.hpp>
#include <remat/ode/mlp.hpp>

#include <thrust/device_vector.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

double half_square_norm(const thrust::device_vector<double>& y)
{
    double s = 0;
    for (double v : std::vector<double>(y.begin(), y.end()))
        s += 0.5 * v * v;
    return s;
}

} // namespace

int main()
{
    remat::dense::blas b;
    const remat::ode::mlp_layout layout({.dim = 2, .hidden = {8}, .act = remat::dense::activation::tanh});
    remat::ode::mlp<double> f(b, layout, 1);
    f.set_parameters(layout.initial_parameters(3));
    remat::ode::fixed_step<double, remat::ode::mlp<double>> solver(remat::ode::rk4(), f, b, 0.0, 0.1);
    auto solve = [&](thrust::device_vector<double> y, std::vector<thrust::device_vector<double>>* states) {
        for (remat::step_t k = 0; k < 10; ++k) {
            if (states != nullptr)
                states->push_back(y);
            solver.step(k, y);
        }
        return y;
    };
    std::vector<thrust::device_vector<double>> states;
    const thrust::device_vector<double> y1 = solve(thrust::device_vector<double>(2, 0.5), &states);
    thrust::device_vector<double> a = y1; // dL/dy(1) = y(1)
    thrust::device_vector<double> p_bar(static_cast<std::size_t>(f.parameter_count()), 0.0);
    for (remat::step_t k = 10; k-- > 0;)
        solver.adjoint_step(k, states[static_cast<std::size_t>(k)], a, p_bar);
    thrust::device_vector<double> up(2, 0.5), down(2, 0.5);
    up[0] = 0.5 + 1e-6;
    down[0] = 0.5 - 1e-6;
    const double fd = (half_square_norm(solve(up, nullptr)) - half_square_norm(solve(down, nullptr))) / 2e-6;
    const double adjoint = a[0];
    std::printf("dL/dy0[0] = %.10f (central difference %.10f)\n", adjoint, fd);
    return std::abs(adjoint - fd) <= 1e-6 * std::abs(fd) ? 0 : 1;
}
