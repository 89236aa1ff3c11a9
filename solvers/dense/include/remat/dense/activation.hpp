// remat/dense/activation.hpp — element-wise activations and their derivatives, as device functors.
//
// Each derivative is written in terms of the activation's output y = f(z), which a network keeps anyway
// as the next layer's input, so a backward pass needs no pre-activations:
//   identity: 1;  tanh: 1 - y^2;  sigmoid: y (1 - y);  relu: [y > 0];
//   softplus (y = log(1 + e^z), computed as max(z, 0) + log1p(e^-|z|)): sigmoid(z) = 1 - e^-y = -expm1(-y).
#pragma once

#include "remat/cuda/config.hpp"

#include <cmath>
#include <string_view>

namespace remat::dense {

/// The activations the seam provides.
enum class activation : unsigned char { identity, tanh, softplus, sigmoid, relu };

/// "tanh", "softplus", ...
[[nodiscard]] const char* name(activation a) noexcept;
/// The activation called `text`; remat::argument_error naming it and the choices otherwise.
///
///     remat::dense::activation a = remat::dense::parse_activation("softplus");
[[nodiscard]] activation parse_activation(std::string_view text);

/// y = f(z), on the host and on the device.
template <class T>
struct activate_fn {
    activation a;
    REMAT_HOST_DEVICE T operator()(T z) const
    {
        using std::exp;
        using std::log1p;
        using std::tanh;
        switch (a) {
        case activation::tanh:
            return tanh(z);
        case activation::softplus:
            return (z > T(0) ? z : T(0)) + log1p(exp(-(z > T(0) ? z : -z)));
        case activation::sigmoid:
            return T(1) / (T(1) + exp(-z));
        case activation::relu:
            return z > T(0) ? z : T(0);
        case activation::identity:
            break;
        }
        return z;
    }
};

/// f'(z) from y = f(z).
template <class T>
struct derivative_from_output_fn {
    activation a;
    REMAT_HOST_DEVICE T operator()(T y) const
    {
        using std::expm1;
        switch (a) {
        case activation::tanh:
            return T(1) - y * y;
        case activation::softplus:
            return -expm1(-y);
        case activation::sigmoid:
            return y * (T(1) - y);
        case activation::relu:
            return y > T(0) ? T(1) : T(0);
        case activation::identity:
            break;
        }
        return T(1);
    }
};

} // namespace remat::dense
