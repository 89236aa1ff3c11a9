// remat/dense/adam_options.hpp — the Adam optimiser's constants (remat/dense/adam.hpp), without Thrust.
#pragma once

namespace remat::dense {

/// Adam's constants. learning_rate > 0, 0 <= beta1, beta2 < 1, epsilon > 0 (all finite).
///
///     remat::dense::adam_options o{.learning_rate = 1e-2};
struct adam_options {
    double learning_rate = 1e-3;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double epsilon = 1e-8;
};

/// Throws remat::argument_error naming the first bad option and its value.
void check_adam_options(const adam_options& o);

} // namespace remat::dense
