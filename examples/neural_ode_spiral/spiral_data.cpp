#include "spiral_data.hpp"

#include "remat/error.hpp"

#include <string>

namespace remat::examples {

namespace {

using vec2 = std::array<double, 2>;

vec2 field(const vec2& y)
{
    const double c0 = y[0] * y[0] * y[0];
    const double c1 = y[1] * y[1] * y[1];
    return {-0.1 * c0 + 2.0 * c1, -2.0 * c0 - 0.1 * c1};
}

vec2 axpy(const vec2& y, double a, const vec2& k)
{
    return {y[0] + a * k[0], y[1] + a * k[1]};
}

} // namespace

spiral_data make_spiral_data(std::int64_t steps)
{
    if (steps < 1)
        throw argument_error("spiral data over " + std::to_string(steps) + " steps (expected at least 1)");
    spiral_data d;
    d.steps = steps;
    d.y.reserve(static_cast<std::size_t>(2 * (steps + 1)));
    // 32 RK4 substeps per observation interval: far below the trainer's own discretisation error.
    constexpr int substeps = 32;
    const double h = d.t_end / static_cast<double>(steps) / substeps;
    vec2 y{2.0, 0.0};
    d.y.insert(d.y.end(), y.begin(), y.end());
    for (std::int64_t k = 0; k < steps; ++k) {
        for (int s = 0; s < substeps; ++s) {
            const vec2 k1 = field(y);
            const vec2 k2 = field(axpy(y, h / 2, k1));
            const vec2 k3 = field(axpy(y, h / 2, k2));
            const vec2 k4 = field(axpy(y, h, k3));
            for (int i = 0; i < 2; ++i)
                y[static_cast<std::size_t>(i)] +=
                    h / 6 *
                    (k1[static_cast<std::size_t>(i)] + 2 * k2[static_cast<std::size_t>(i)] +
                     2 * k3[static_cast<std::size_t>(i)] + k4[static_cast<std::size_t>(i)]);
        }
        d.y.insert(d.y.end(), y.begin(), y.end());
    }
    return d;
}

} // namespace remat::examples
