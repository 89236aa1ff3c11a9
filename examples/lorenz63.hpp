// Lorenz-63 integrated with classic RK4, and the exact discrete adjoint of each RK4 step.
//
// State x = (x, y, z); parameters p = (sigma, rho, beta). The adjoint of step k re-runs the step's four
// stages from x_k and propagates lambda_{k+1} = dJ/dx_{k+1} to lambda_k, accumulating dJ/dp. Because it
// is the adjoint of the discrete map, it agrees with finite differences of the same map.
#pragma once

#include <array>

namespace remat::examples {

using vec3 = std::array<double, 3>;

struct lorenz63 {
    double sigma = 10.0;
    double rho = 28.0;
    double beta = 8.0 / 3.0;
    double h = 1e-3; // time step

    [[nodiscard]] vec3 rhs(const vec3& s) const
    {
        return {sigma * (s[1] - s[0]), s[0] * (rho - s[2]) - s[1], s[0] * s[1] - beta * s[2]};
    }

    /// x_k -> x_{k+1}.
    void step(vec3& s) const
    {
        const vec3 k1 = rhs(s);
        const vec3 k2 = rhs(axpy(s, h / 2, k1));
        const vec3 k3 = rhs(axpy(s, h / 2, k2));
        const vec3 k4 = rhs(axpy(s, h, k3));
        for (int i = 0; i < 3; ++i)
            s[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    }

    /// Given s == x_k and lambda == dJ/dx_{k+1}: lambda becomes dJ/dx_k, and dJ/dp is added to grad_p.
    void adjoint_step(const vec3& s, vec3& lambda, vec3& grad_p) const
    {
        const vec3 k1 = rhs(s);
        const vec3 y2 = axpy(s, h / 2, k1);
        const vec3 k2 = rhs(y2);
        const vec3 y3 = axpy(s, h / 2, k2);
        const vec3 k3 = rhs(y3);
        const vec3 y4 = axpy(s, h, k3);
        vec3 lx = lambda;
        vec3 lk1{}, lk2{}, lk3{}, lk4{};
        for (int i = 0; i < 3; ++i) {
            lk1[i] = h / 6 * lambda[i];
            lk2[i] = h / 3 * lambda[i];
            lk3[i] = h / 3 * lambda[i];
            lk4[i] = h / 6 * lambda[i];
        }
        // Stage 4: k4 = f(y4), y4 = x + h k3.
        vec3 ly = vjp_state(y4, lk4);
        add(grad_p, vjp_params(y4, lk4));
        for (int i = 0; i < 3; ++i) {
            lx[i] += ly[i];
            lk3[i] += h * ly[i];
        }
        // Stage 3: k3 = f(y3), y3 = x + h/2 k2.
        ly = vjp_state(y3, lk3);
        add(grad_p, vjp_params(y3, lk3));
        for (int i = 0; i < 3; ++i) {
            lx[i] += ly[i];
            lk2[i] += h / 2 * ly[i];
        }
        // Stage 2: k2 = f(y2), y2 = x + h/2 k1.
        ly = vjp_state(y2, lk2);
        add(grad_p, vjp_params(y2, lk2));
        for (int i = 0; i < 3; ++i) {
            lx[i] += ly[i];
            lk1[i] += h / 2 * ly[i];
        }
        // Stage 1: k1 = f(x).
        ly = vjp_state(s, lk1);
        add(grad_p, vjp_params(s, lk1));
        for (int i = 0; i < 3; ++i)
            lx[i] += ly[i];
        lambda = lx;
    }

private:
    static vec3 axpy(const vec3& x, double a, const vec3& y)
    {
        return {x[0] + a * y[0], x[1] + a * y[1], x[2] + a * y[2]};
    }
    static void add(vec3& a, const vec3& b)
    {
        for (int i = 0; i < 3; ++i)
            a[i] += b[i];
    }
    // (df/ds)^T l
    [[nodiscard]] vec3 vjp_state(const vec3& s, const vec3& l) const
    {
        return {-sigma * l[0] + (rho - s[2]) * l[1] + s[1] * l[2], sigma * l[0] - l[1] + s[0] * l[2],
                -s[0] * l[1] - beta * l[2]};
    }
    // (df/dp)^T l with p = (sigma, rho, beta)
    [[nodiscard]] static vec3 vjp_params(const vec3& s, const vec3& l)
    {
        return {(s[1] - s[0]) * l[0], s[0] * l[1], -s[2] * l[2]};
    }
};

} // namespace remat::examples
