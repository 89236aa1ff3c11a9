// remat/dense/adam.hpp — the Adam optimiser (Kingma & Ba, 2015) for parameters in device memory, one
// source for both back ends (an element-wise map over Thrust: one kernel per update on the GPU).
//
// After t updates with gradients g_1..g_t, and the learning rate lr in force at update t:
//     m_t = beta1 m_{t-1} + (1 - beta1) g_t,      v_t = beta2 v_{t-1} + (1 - beta2) g_t^2,
//     p_t = p_{t-1} - lr (m_t / (1 - beta1^t)) / (sqrt(v_t / (1 - beta2^t)) + epsilon).
#pragma once

#include "remat/cuda/config.hpp"
#include "remat/dense/adam_options.hpp"
#include "remat/dense/config.hpp"
#include "remat/dense/detail/blas_checks.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/dense/matrix.hpp"
#include "remat/error.hpp"

#include <thrust/device_vector.h>

#include <cmath>
#include <cstdint>
#include <string>

namespace remat::dense {

inline namespace REMAT_DENSE_BACKEND_NS {

namespace adam_impl {
template <class T>
struct update_fn {
    T* p;
    const T* g;
    T* m;
    T* v;
    T beta1;
    T beta2;
    T step;         // lr / (1 - beta1^t)
    T v_correction; // 1 / (1 - beta2^t)
    T epsilon;
    REMAT_HOST_DEVICE void operator()(std::int64_t i) const
    {
        using std::sqrt;
        const T gi = g[i];
        m[i] = beta1 * m[i] + (T(1) - beta1) * gi;
        v[i] = beta2 * v[i] + (T(1) - beta2) * gi * gi;
        p[i] -= step * m[i] / (sqrt(v[i] * v_correction) + epsilon);
    }
};
} // namespace adam_impl

/// Adam over `n` parameters: its moments live in device memory next to them (allocated once).
///
///     remat::dense::adam<double> opt(f.parameter_count(), {.learning_rate = 1e-2});
///     for (...) { compute(grad); opt.step(b, remat::dense::view(params), remat::dense::view(grad)); }
template <class T>
class adam {
public:
    adam(std::int64_t n, adam_options options) : options_(options)
    {
        check_adam_options(options);
        if (n < 1)
            throw argument_error("Adam over " + std::to_string(n) + " parameters (expected at least 1)");
        m_.assign(static_cast<std::size_t>(n), T(0));
        v_.assign(static_cast<std::size_t>(n), T(0));
    }

    /// One update of `params` from `grad` (both n elements; argument_error otherwise).
    void step(const blas& b, vector_view<T> params, vector_view<const T> grad)
    {
        detail::check_same_size("adam::step", "the parameter count", static_cast<std::int64_t>(m_.size()), params.size);
        detail::check_same_size("adam::step", "the gradient length", static_cast<std::int64_t>(m_.size()), grad.size);
        ++steps_;
        const double t = static_cast<double>(steps_);
        const double c1 = 1 - std::pow(options_.beta1, t);
        const double c2 = 1 - std::pow(options_.beta2, t);
        for_each_index(b, params.size,
                       adam_impl::update_fn<T>{params.data, grad.data, thrust::raw_pointer_cast(m_.data()),
                                               thrust::raw_pointer_cast(v_.data()), static_cast<T>(options_.beta1),
                                               static_cast<T>(options_.beta2),
                                               static_cast<T>(options_.learning_rate / c1), static_cast<T>(1 / c2),
                                               static_cast<T>(options_.epsilon)});
    }

    /// Changes the learning rate of later updates (a schedule); argument_error unless finite and > 0.
    void set_learning_rate(double lr)
    {
        adam_options o = options_;
        o.learning_rate = lr;
        check_adam_options(o);
        options_ = o;
    }
    [[nodiscard]] const adam_options& options() const noexcept { return options_; }
    /// Updates made so far (t).
    [[nodiscard]] std::int64_t steps() const noexcept { return steps_; }

private:
    adam_options options_;
    std::int64_t steps_ = 0;
    thrust::device_vector<T> m_;
    thrust::device_vector<T> v_;
};

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::dense
