// Robertson's chemical kinetics (the problem of SUNDIALS's example cvsRoberts_ASAi_dns), for remat::cvodes:
//
//     y1' = -p1 y1 + p2 y2 y3,   y2' = p1 y1 - p2 y2 y3 - p3 y2^2,   y3' = p3 y2^2,   y(0) = (1, 0, 0),
//
// p = (0.04, 1e4, 3e7), stiff (BDF, dense Newton with the exact Jacobian). G = int_0^tB0 y3 dt, and dG/dp
// by the continuous adjoint, for tB0 = 4e7 and tB0 = 50:
//
//     lambda' = -(df/dy)^T lambda - (dg/dy)^T,  lambda(tB0) = 0;   mu' = -(df/dp)^T lambda,  mu(tB0) = 0,
//
// dG/dp = -mu(0) in CVODES's backward convention (SUNDIALS's example prints -qB), since y0 does not
// depend on p. The forward quadrature q' = y3 gives G over [0, tf].
#pragma once

#include <remat/cvodes/problem.hpp>

#include <array>
#include <cmath>
#include <span>
#include <vector>

namespace remat::examples {

struct roberts {
    std::array<double, 3> p{0.04, 1.0e4, 3.0e7};
    double tf = 4.0e7;
    std::array<double, 2> backward_starts{4.0e7, 50.0};

    [[nodiscard]] remat::cvodes::forward_problem forward() const
    {
        const auto k = p;
        remat::cvodes::forward_problem f;
        f.t0 = 0.0;
        f.y0 = {1.0, 0.0, 0.0};
        f.rhs = [k](double, std::span<const double> y, std::span<double> dy) {
            const double a = -k[0] * y[0] + k[1] * y[1] * y[2];
            const double c = k[2] * y[1] * y[1];
            dy[0] = a;
            dy[1] = -a - c;
            dy[2] = c;
        };
        f.jacobian = [k](double, std::span<const double> y, remat::cvodes::dense_matrix_view J) {
            J(0, 0) = -k[0];
            J(0, 1) = k[1] * y[2];
            J(0, 2) = k[1] * y[1];
            J(1, 0) = k[0];
            J(1, 1) = -k[1] * y[2] - 2 * k[2] * y[1];
            J(1, 2) = -k[1] * y[1];
            J(2, 0) = 0;
            J(2, 1) = 2 * k[2] * y[1];
            J(2, 2) = 0;
        };
        f.q0 = {0.0};
        f.quadrature = [](double, std::span<const double> y, std::span<double> q) { q[0] = y[2]; };
        f.settings.relative_tolerance = 1e-6;
        f.settings.absolute_tolerances = {1e-8, 1e-14, 1e-6};
        f.settings.quadrature_relative_tolerance = 1e-6;
        f.settings.quadrature_absolute_tolerance = 1e-6;
        f.settings.max_steps = 2500;
        return f;
    }

    /// The adjoint of G = int y3 dt from t_start: lambda' = -(J^T lambda + e3), quadratures (df/dp)^T lambda.
    [[nodiscard]] remat::cvodes::backward_problem backward(double t_start) const
    {
        const auto k = p;
        remat::cvodes::backward_problem b;
        b.t_start = t_start;
        b.rhs = [k](double, std::span<const double> y, std::span<const double> l, std::span<double> dl) {
            const double d21 = l[1] - l[0];
            const double d32 = l[2] - l[1];
            dl[0] = -k[0] * d21;
            dl[1] = k[1] * y[2] * d21 - 2 * k[2] * y[1] * d32;
            dl[2] = k[1] * y[1] * d21 - 1.0;
        };
        b.jacobian = [k](double, std::span<const double> y, std::span<const double>,
                         remat::cvodes::dense_matrix_view J) {
            J(0, 0) = k[0];
            J(0, 1) = -k[0];
            J(0, 2) = 0;
            J(1, 0) = -k[1] * y[2];
            J(1, 1) = k[1] * y[2] + 2 * k[2] * y[1];
            J(1, 2) = -2 * k[2] * y[1];
            J(2, 0) = -k[1] * y[1];
            J(2, 1) = k[1] * y[1];
            J(2, 2) = 0;
        };
        b.quadratures = 3;
        b.quadrature = [](double, std::span<const double> y, std::span<const double> l, std::span<double> q) {
            const double d21 = l[1] - l[0];
            const double d32 = l[2] - l[1];
            q[0] = y[0] * d21;
            q[1] = -y[1] * y[2] * d21;
            q[2] = y[1] * y[1] * d32;
        };
        b.settings.relative_tolerance = 1e-6;
        b.settings.absolute_tolerance = 1e-8;
        b.settings.quadrature_relative_tolerance = 1e-6;
        b.settings.quadrature_absolute_tolerance = 1e-6;
        return b;
    }

    [[nodiscard]] std::vector<remat::cvodes::backward_problem> backward() const
    {
        return {backward(backward_starts[0]), backward(backward_starts[1])};
    }

    /// Window boundaries: t0 = 0, then `per_decade` per decade from 4e-2 up to tf (4e7), and the backward
    /// starts; the solution changes on every time scale from 1e-4 up, so windows grow geometrically.
    [[nodiscard]] std::vector<double> window_boundaries(int per_decade) const
    {
        std::vector<double> b{0.0};
        const int decades = 9; // 4e-2 .. 4e7
        for (int i = 0; i <= decades * per_decade; ++i)
            b.push_back(4.0e-2 * std::pow(10.0, static_cast<double>(i) / per_decade));
        b.back() = tf;
        return b;
    }
};

} // namespace remat::examples
