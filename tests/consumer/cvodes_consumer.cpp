// Uses remat::cvodes from an installed remat: y' = -a y, y(0) = 1, G = int_0^1 y dt, and dG/da by CVODES's
// adjoint over 8 windows with 2 snapshot slots, against the closed form (e^-a (1 + a) - 1) / a^2.
#include <remat/cvodes/cvodes.hpp>
#include <remat/remat.hpp>

#include <cmath>
#include <cstdio>
#include <span>

int main()
{
    const double a = 0.7;
    remat::cvodes::forward_problem f;
    f.y0 = {1.0};
    f.rhs = [a](double, std::span<const double> y, std::span<double> dy) { dy[0] = -a * y[0]; };
    f.q0 = {0.0};
    f.quadrature = [](double, std::span<const double> y, std::span<double> q) { q[0] = y[0]; };
    f.settings.relative_tolerance = 1e-10;
    f.settings.absolute_tolerance = 1e-12;
    remat::cvodes::backward_problem b;
    b.t_start = 1.0;
    b.rhs = [a](double, std::span<const double>, std::span<const double> l, std::span<double> dl) {
        dl[0] = a * l[0] - 1.0; // -(df/dy)^T lambda - dg/dy
    };
    b.quadratures = 1;
    b.quadrature = [](double, std::span<const double> y, std::span<const double> l, std::span<double> q) {
        q[0] = -y[0] * l[0]; // (df/da)^T lambda
    };
    b.settings = f.settings;
    remat::cvodes::adjoint_solver solver(f, {b});
    const auto w = remat::cvodes::windows::uniform(0.0, 1.0, 8);
    remat::host_store store(2);
    const remat::cvodes::solution s = remat::cvodes::solve(solver, w, remat::revolve(w.count(), 2), store);
    const double dGda = -s.backward[0].quadratures[0];
    const double exact = (std::exp(-a) * (1 + a) - 1) / (a * a);
    std::printf("dG/da = %.10f (closed form %.10f)\n", dGda, exact);
    return std::abs(dGda - exact) < 1e-7 ? 0 : 1;
}
