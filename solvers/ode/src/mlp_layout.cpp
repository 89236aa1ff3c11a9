// Layer offsets and initial weights of the MLP vector field.
#include "remat/ode/mlp_layout.hpp"
#include "remat/detail/checked_math.hpp"
#include "remat/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>

namespace remat::ode {

namespace {

std::int64_t checked(std::int64_t a, std::int64_t b, bool multiply)
{
    const auto ua = static_cast<std::uint64_t>(a);
    const auto ub = static_cast<std::uint64_t>(b);
    const std::uint64_t r = multiply ? remat::detail::checked_mul(ua, ub, "MLP parameter count")
                                     : remat::detail::checked_add(ua, ub, "MLP parameter count");
    if (r > static_cast<std::uint64_t>(INT64_MAX))
        throw overflow_error("MLP parameter count " + std::to_string(r) + " exceeds 2^63 - 1");
    return static_cast<std::int64_t>(r);
}

} // namespace

mlp_layout::mlp_layout(mlp_shape shape) : shape_(std::move(shape))
{
    if (shape_.dim < 1)
        throw argument_error("MLP state dimension " + std::to_string(shape_.dim) + " (expected at least 1)");
    std::int64_t in = shape_.dim;
    std::vector<std::int64_t> outs = shape_.hidden;
    outs.push_back(shape_.dim);
    for (std::size_t l = 0; l < outs.size(); ++l) {
        const std::int64_t out = outs[l];
        if (out < 1)
            throw argument_error("MLP hidden layer " + std::to_string(l) + " has width " + std::to_string(out) +
                                 " (expected at least 1)");
        mlp_layer layer{.in = in, .out = out, .time_input = l == 0 && shape_.time_input};
        layer.w_offset = parameter_count_;
        const std::int64_t columns = in + (layer.time_input ? 1 : 0);
        parameter_count_ = checked(parameter_count_, checked(out, columns, true), false);
        layer.b_offset = parameter_count_;
        parameter_count_ = checked(parameter_count_, out, false);
        layers_.push_back(layer);
        max_width_ = std::max(max_width_, out);
        if (l + 1 < outs.size())
            hidden_total_ = checked(hidden_total_, out, false);
        in = out;
    }
}

std::vector<double> mlp_layout::initial_parameters(std::uint64_t seed, double output_scale) const
{
    std::mt19937_64 gen(seed);
    // 53 random bits to [0, 1): the same doubles wherever std::mt19937_64 is (it is fully specified).
    auto uniform = [&](double bound) { return bound * (2.0 * static_cast<double>(gen() >> 11) * 0x1p-53 - 1.0); };
    std::vector<double> p(static_cast<std::size_t>(parameter_count_));
    for (std::size_t l = 0; l < layers_.size(); ++l) {
        const mlp_layer& layer = layers_[l];
        const std::int64_t fan_in = layer.in + (layer.time_input ? 1 : 0);
        const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
        const double scale = l + 1 == layers_.size() ? output_scale : 1.0;
        for (std::int64_t i = 0; i < layer.out * fan_in; ++i)
            p[static_cast<std::size_t>(layer.w_offset + i)] = scale * uniform(bound);
        for (std::int64_t i = 0; i < layer.out; ++i)
            p[static_cast<std::size_t>(layer.b_offset + i)] = scale * uniform(bound);
    }
    return p;
}

} // namespace remat::ode
