// remat/ode/mlp_layout.hpp — the shape of a multilayer perceptron vector field and where each weight
// lives in its one flat parameter vector (the host-side half of remat::ode::mlp).
#pragma once

#include "remat/dense/activation.hpp"

#include <cstdint>
#include <vector>

namespace remat::ode {

/// What the network looks like: dy/dt = W_L s(... s(W_1 [y; t] + b_1) ...) + b_L for each batch member,
/// with `hidden` widths, activation s, and t as an extra input when `time_input` is set.
///
///     remat::ode::mlp_shape shape{.dim = 2, .hidden = {50}, .act = remat::dense::activation::tanh};
struct mlp_shape {
    std::int64_t dim = 0;               // the state's length per batch member (input and output)
    std::vector<std::int64_t> hidden{}; // widths of the hidden layers (none: a linear field)
    dense::activation act = dense::activation::tanh;
    bool time_input = false; // t as the last input column of the first layer
};

/// One layer y = W x (+ w_t t) + b: W is out x in, column-major, at w_offset in the parameter vector;
/// when time_input, its column `in` (at w_offset + in * out) multiplies t; b (out) is at b_offset.
struct mlp_layer {
    std::int64_t in = 0;
    std::int64_t out = 0;
    std::int64_t w_offset = 0;
    std::int64_t b_offset = 0;
    bool time_input = false;
};

/// The layers of a shape, their offsets and the parameter count. Throws remat::argument_error for a
/// dimension or width below 1, remat::overflow_error when the count does not fit.
///
///     remat::ode::mlp_layout layout({.dim = 2, .hidden = {64, 64}});
///     layout.parameter_count();   // 2*64+64 + 64*64+64 + 64*2+2 = 4482
class mlp_layout {
public:
    explicit mlp_layout(mlp_shape shape);

    [[nodiscard]] const mlp_shape& shape() const noexcept { return shape_; }
    [[nodiscard]] const std::vector<mlp_layer>& layers() const noexcept { return layers_; }
    [[nodiscard]] std::int64_t parameter_count() const noexcept { return parameter_count_; }
    /// The largest layer output (the width of the widest activation).
    [[nodiscard]] std::int64_t max_width() const noexcept { return max_width_; }
    /// Sum of the hidden widths: activations kept per batch member by one evaluation.
    [[nodiscard]] std::int64_t hidden_total() const noexcept { return hidden_total_; }

    /// Parameters drawn as PyTorch's nn.Linear does (uniform in +-1/sqrt(fan_in), t counted as an
    /// input), from a 64-bit Mersenne Twister seeded with `seed` (the same values on every platform),
    /// with the last layer's weights and bias multiplied by `output_scale` (a small initial field).
    [[nodiscard]] std::vector<double> initial_parameters(std::uint64_t seed, double output_scale = 1.0) const;

private:
    mlp_shape shape_;
    std::vector<mlp_layer> layers_;
    std::int64_t parameter_count_ = 0;
    std::int64_t max_width_ = 0;
    std::int64_t hidden_total_ = 0;
};

} // namespace remat::ode
