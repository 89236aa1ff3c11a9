// remat/ode/mlp.hpp — a multilayer perceptron as a batched vector field with a hand-written
// vector–Jacobian product, its parameters in device memory, on the dense-math seam (one source for the
// GPU and the CPU back ends).
//
// The state is a batch of B column vectors of length dim (dim x B, column-major: member j's state is
// contiguous). Per layer l (hidden ones activated by s):
//     X_l = s(W_l X_{l-1} + b_l [+ t w_t]),   dy/dt = W_L X_{L-1} + b_L,   X_0 = y.
// The VJP with G = dy_bar, walking back from the last layer:
//     b_bar_l += G_l 1,   W_bar_l += G_l X_{l-1}^T,   G_{l-1} = (W_l^T G_l) * s'(X_{l-1}),
//     w_t_bar += t G_0 1,   y_bar = W_1^T G_0 (the y columns of W_1).
// The tape of one evaluation holds the hidden activations X_1..X_{L-1} (hidden_total x B elements).
#pragma once

#include "remat/dense/blas.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/dense/matrix.hpp"
#include "remat/error.hpp"
#include "remat/ode/mlp_layout.hpp"
#include "remat/ode/vector_field.hpp"

#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace remat::ode {

inline namespace REMAT_DENSE_BACKEND_NS {

namespace mlp_impl {
// e = b + t w, the first layer's effective bias when t is an input.
template <class T>
struct time_bias_fn {
    const T* b;
    const T* w;
    T t;
    T* e;
    REMAT_HOST_DEVICE void operator()(std::int64_t i) const { e[i] = b[i] + t * w[i]; }
};
} // namespace mlp_impl

/// The MLP vector field for a batch of `batch` states (models remat::ode::vector_field<mlp<T>, T>).
/// Holds its parameters (device memory), scratch for one VJP, and a reference to the BLAS it runs on
/// (which must outlive it). Allocates only in the constructor.
///
///     remat::dense::blas b;
///     remat::ode::mlp_layout layout({.dim = 2, .hidden = {50}, .act = remat::dense::activation::tanh});
///     remat::ode::mlp<double> f(b, layout, 16);               // 16 states at once
///     f.set_parameters(layout.initial_parameters(42, 0.1));
///     f.evaluate(0.0, y, dy, tape);                           // dy = f(0, y)
template <class T>
class mlp {
public:
    mlp(dense::blas& b, mlp_layout layout, std::int64_t batch)
        : blas_(&b), layout_(std::move(layout)), batch_(checked_batch(layout_, batch)),
          params_(static_cast<std::size_t>(layout_.parameter_count()), T(0)),
          grad_(2 * static_cast<std::size_t>(layout_.max_width() * batch_)),
          time_bias_(static_cast<std::size_t>(layout_.max_width())),
          row_scratch_(static_cast<std::size_t>(layout_.max_width()))
    {
    }

    [[nodiscard]] std::int64_t state_size() const noexcept { return layout_.shape().dim * batch_; }
    [[nodiscard]] std::int64_t parameter_count() const noexcept { return layout_.parameter_count(); }
    [[nodiscard]] std::int64_t tape_size() const noexcept { return layout_.hidden_total() * batch_; }
    [[nodiscard]] std::int64_t batch() const noexcept { return batch_; }
    [[nodiscard]] const mlp_layout& layout() const noexcept { return layout_; }
    [[nodiscard]] dense::blas& blas() const noexcept { return *blas_; }

    /// The parameters, in device memory (layout: mlp_layout::layers()).
    [[nodiscard]] thrust::device_vector<T>& parameters() noexcept { return params_; }
    [[nodiscard]] const thrust::device_vector<T>& parameters() const noexcept { return params_; }
    /// Copies host values in (converted to T); argument_error unless there are parameter_count() of them.
    template <class U>
    void set_parameters(std::span<const U> host)
    {
        if (static_cast<std::int64_t>(host.size()) != parameter_count())
            throw argument_error("MLP parameters: got " + std::to_string(host.size()) + " values (expected " +
                                 std::to_string(parameter_count()) + ")");
        thrust::host_vector<T> h(host.begin(), host.end());
        blas_->synchronize(); // nothing may still read the old values
        params_ = h;
    }
    void set_parameters(const std::vector<double>& host) { set_parameters(std::span<const double>(host)); }
    /// The parameters, copied to the host.
    [[nodiscard]] std::vector<T> parameters_on_host() const
    {
        blas_->synchronize();
        thrust::host_vector<T> h = params_;
        return {h.begin(), h.end()};
    }

    /// dy = f(t, y); the hidden activations go to `tape` (tape_size() elements).
    void evaluate(T t, dense::vector_view<const T> y, dense::vector_view<T> dy, dense::vector_view<T> tape)
    {
        check_sizes("mlp::evaluate", y.size, dy.size, tape.size);
        const auto& layers = layout_.layers();
        dense::matrix_view<const T> x = y.as_matrix(layout_.shape().dim);
        std::int64_t tape_at = 0;
        for (std::size_t l = 0; l < layers.size(); ++l) {
            const mlp_layer& layer = layers[l];
            const bool last = l + 1 == layers.size();
            const dense::matrix_view<T> out =
                last ? dy.as_matrix(layer.out) : dense::dense_matrix(tape.data + tape_at, layer.out, batch_);
            dense::gemm(*blas_, dense::op::none, dense::op::none, T(1), weights(layer), x, T(0), out);
            dense::add_bias(*blas_, out, bias(layer, t));
            if (!last) {
                dense::activate(*blas_, layout_.shape().act, dense::vector_view<T>{out.data, out.size()});
                tape_at += out.size();
                x = out;
            }
        }
    }

    /// y_bar = (df/dy)^T dy_bar and p_bar += (df/dp)^T dy_bar at (t, y), with `tape` from evaluate(t, y).
    void vjp(T t, dense::vector_view<const T> y, dense::vector_view<const T> tape, dense::vector_view<const T> dy_bar,
             dense::vector_view<T> y_bar, dense::vector_view<T> p_bar)
    {
        check_sizes("mlp::vjp", y.size, dy_bar.size, tape.size);
        dense::detail::check_same_size("mlp::vjp", "the length of y_bar", state_size(), y_bar.size);
        dense::detail::check_same_size("mlp::vjp", "the length of p_bar", parameter_count(), p_bar.size);
        const auto& layers = layout_.layers();
        const dense::activation act = layout_.shape().act;
        // The inputs of each layer: y, then the tape's activations.
        std::int64_t tape_at = layout_.hidden_total() * batch_;
        dense::matrix_view<const T> g = dy_bar.as_matrix(layout_.shape().dim);
        T* spare = thrust::raw_pointer_cast(grad_.data());
        T* other = spare + layout_.max_width() * batch_;
        for (std::size_t l = layers.size(); l-- > 0;) {
            const mlp_layer& layer = layers[l];
            dense::matrix_view<const T> x = y.as_matrix(layout_.shape().dim);
            if (l > 0) {
                tape_at -= layer.in * batch_;
                x = dense::dense_matrix(tape.data + tape_at, layer.in, batch_);
            }
            // b_bar += G 1, W_bar += G X^T, and t's column: w_t_bar += t (G 1).
            dense::row_sums(*blas_, g, p_bar.sub(layer.b_offset, layer.out), T(1));
            dense::gemm(*blas_, dense::op::none, dense::op::transpose, T(1), g, x, T(1),
                        dense::dense_matrix(p_bar.data + layer.w_offset, layer.out, layer.in));
            if (layer.time_input) {
                const dense::vector_view<T> sums{thrust::raw_pointer_cast(row_scratch_.data()), layer.out};
                dense::row_sums(*blas_, g, sums, T(0));
                dense::axpy(*blas_, t, dense::vector_view<const T>(sums),
                            p_bar.sub(layer.w_offset + layer.in * layer.out, layer.out));
            }
            if (l == 0) {
                dense::gemm(*blas_, dense::op::transpose, dense::op::none, T(1), weights(layer), g, T(0),
                            y_bar.as_matrix(layout_.shape().dim));
                break;
            }
            // G_{l-1} = (W_l^T G_l) * s'(X_{l-1}).
            const dense::matrix_view<T> prev = dense::dense_matrix(spare, layer.in, batch_);
            dense::gemm(*blas_, dense::op::transpose, dense::op::none, T(1), weights(layer), g, T(0), prev);
            dense::backprop_activation(*blas_, act, dense::vector_view<const T>{x.data, x.size()},
                                       dense::vector_view<T>{prev.data, prev.size()});
            g = prev;
            std::swap(spare, other);
        }
    }

private:
    // The batch, refused before any buffer is sized from it: below 1, or so large that a state, the tape or
    // the two activation-gradient buffers would pass 2^63 elements (the products overflowed).
    static std::int64_t checked_batch(const mlp_layout& layout, std::int64_t batch)
    {
        if (batch < 1)
            throw argument_error("MLP batch size " + std::to_string(batch) + " (expected at least 1)");
        const std::int64_t widest =
            2 * std::max({layout.shape().dim, layout.max_width(), layout.hidden_total()}); // 2: grad_'s two halves
        if (batch > std::numeric_limits<std::int64_t>::max() / widest)
            throw argument_error("MLP batch size " + std::to_string(batch) + " x " + std::to_string(widest / 2) +
                                 " values a member overflows 64 bits");
        return batch;
    }
    void check_sizes(const char* call, std::int64_t y, std::int64_t dy, std::int64_t tape) const
    {
        dense::detail::check_same_size(call, "the state length", state_size(), y);
        dense::detail::check_same_size(call, "the derivative length", state_size(), dy);
        if (tape < tape_size())
            throw argument_error(std::string(call) + ": the tape holds " + std::to_string(tape) +
                                 " elements (expected at least " + std::to_string(tape_size()) + ")");
    }
    // W's columns for the layer's inputs (t's column, when present, follows them).
    [[nodiscard]] dense::matrix_view<const T> weights(const mlp_layer& layer) const noexcept
    {
        return dense::dense_matrix(thrust::raw_pointer_cast(params_.data()) + layer.w_offset, layer.out, layer.in);
    }
    // b, or b + t w_t computed into scratch for a time-dependent first layer.
    [[nodiscard]] dense::vector_view<const T> bias(const mlp_layer& layer, T t)
    {
        const T* p = thrust::raw_pointer_cast(params_.data());
        if (!layer.time_input)
            return {p + layer.b_offset, layer.out};
        T* e = thrust::raw_pointer_cast(time_bias_.data());
        dense::for_each_index(
            *blas_, layer.out,
            mlp_impl::time_bias_fn<T>{p + layer.b_offset, p + layer.w_offset + layer.in * layer.out, t, e});
        return {e, layer.out};
    }

    dense::blas* blas_;
    mlp_layout layout_;
    std::int64_t batch_;
    thrust::device_vector<T> params_;
    thrust::device_vector<T> grad_;        // two activation-gradient buffers, max_width x batch each
    thrust::device_vector<T> time_bias_;   // b + t w_t
    thrust::device_vector<T> row_scratch_; // G 1 for t's column
};

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::ode
