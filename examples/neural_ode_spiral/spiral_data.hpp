// The spiral the example learns (Chen et al. 2018): dy/dt = A y^3 (element-wise cube), A = [[-0.1, 2],
// [-2, -0.1]], y(0) = (2, 0), t in [0, 25]. The data are this system's states at the solver's step times,
// computed here by RK4 with many small steps (the trainer never sees A).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace remat::examples {

struct spiral_data {
    double t_end = 25;
    std::int64_t steps = 0;  ///< observation intervals: y has steps + 1 points, at t_k = k t_end / steps
    std::vector<double> y{}; ///< (y_1, y_2) at each t_k, point after point

    [[nodiscard]] std::array<double, 2> at(std::int64_t k) const
    {
        return {y[static_cast<std::size_t>(2 * k)], y[static_cast<std::size_t>(2 * k + 1)]};
    }
};

/// The true trajectory at `steps` + 1 evenly spaced times over [0, 25] (argument_error for steps < 1).
[[nodiscard]] spiral_data make_spiral_data(std::int64_t steps);

} // namespace remat::examples
