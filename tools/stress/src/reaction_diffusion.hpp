// The computation remat-stress differentiates: a periodic 1-D reaction-diffusion stencil,
//
//     x_{k+1}[i] = x[i] + a (x[i-1] - 2 x[i] + x[i+1]) + b x[i] (1 - x[i]),
//
// with J = 1/2 |x_T|^2, and its exact discrete adjoint: the gradient of J with respect to x_0 and to the
// parameters (a, b). Every sum runs in a fixed order, so the gradient is a deterministic function of the
// states the adjoint steps see: any two schedules that hand them the same x_k give the same bits.
#pragma once

#include "remat/types.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <vector>

namespace remat::stress {

/// The state: one field of doubles. Each stencil step reads it and writes `scratch`, then they swap.
using field = std::vector<double>;

/// The gradient a run produces.
struct gradient {
    field dx0;         ///< dJ/dx_0
    double da = 0;     ///< dJ/da
    double db = 0;     ///< dJ/db
    double energy = 0; ///< J
};

struct reaction_diffusion {
    double a = 0.2;  ///< diffusion number (stable for a <= 0.5)
    double b = 1e-3; ///< logistic growth rate
    std::size_t points = 0;

    /// x_0 for a seed: smooth waves plus a little deterministic noise, within (0, 1).
    [[nodiscard]] field initial(std::uint64_t seed) const
    {
        field x(points);
        const double waves = 1.0 + static_cast<double>(seed % 7);
        std::uint64_t h = seed * 0x9E3779B97F4A7C15ULL + 1;
        for (std::size_t i = 0; i < points; ++i) {
            h ^= h >> 33;
            h *= 0xff51afd7ed558ccdULL;
            h ^= h >> 33;
            const double noise = static_cast<double>(h >> 11) * 0x1.0p-53 - 0.5;
            x[i] =
                0.5 +
                0.35 * std::sin(2 * std::numbers::pi * waves * static_cast<double>(i) / static_cast<double>(points)) +
                0.05 * noise;
        }
        return x;
    }

    /// x <- x_{k+1} from x == x_k.
    void step(field& x, field& scratch) const
    {
        const std::size_t n = x.size();
        scratch.resize(n);
        const double* p = x.data();
        double* q = scratch.data();
        q[0] = next(p[n - 1], p[0], p[1 % n]);
        for (std::size_t i = 1; i + 1 < n; ++i)
            q[i] = next(p[i - 1], p[i], p[i + 1]);
        if (n > 1)
            q[n - 1] = next(p[n - 2], p[n - 1], p[0]);
        x.swap(scratch);
    }

    /// lambda <- lambda_k from lambda_{k+1}, given x == x_k; accumulates dJ/da and dJ/db.
    void adjoint(const field& x, field& lambda, field& scratch, gradient& g) const
    {
        const std::size_t n = x.size();
        scratch.resize(n);
        const double* p = x.data();
        const double* l = lambda.data();
        double* q = scratch.data();
        double da = 0;
        double db = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t left = i == 0 ? n - 1 : i - 1;
            const std::size_t right = i + 1 == n ? 0 : i + 1;
            // d x_{k+1}[j] / d x_k[i] is nonzero for j = i-1, i, i+1.
            q[i] = l[i] * (1 - 2 * a + b * (1 - 2 * p[i])) + a * (l[left] + l[right]);
            da += l[i] * (p[left] - 2 * p[i] + p[right]);
            db += l[i] * p[i] * (1 - p[i]);
        }
        g.da += da;
        g.db += db;
        lambda.swap(scratch);
    }

    /// dJ/dx_T for J = 1/2 |x_T|^2 (and J itself).
    static void seed(const field& x_final, field& lambda, double& energy)
    {
        lambda = x_final;
        energy = 0;
        for (const double v : x_final)
            energy += 0.5 * v * v;
    }

private:
    [[nodiscard]] double next(double left, double mid, double right) const
    {
        return mid + a * (left - 2 * mid + right) + b * mid * (1 - mid);
    }
};

} // namespace remat::stress
