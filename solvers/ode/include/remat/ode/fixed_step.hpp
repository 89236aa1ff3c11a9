// remat/ode/fixed_step.hpp — an explicit Runge–Kutta solver with a constant step size, shaped for
// remat::run: step k maps y_k to y_{k+1} at t_k = t0 + k h, and its adjoint step recomputes the stages
// from y_k and back-propagates through them (the exact gradient of the discrete solve).
#pragma once

#include "remat/dense/blas.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/dense/matrix.hpp"
#include "remat/error.hpp"
#include "remat/ode/rk_stages.hpp"
#include "remat/ode/tableau.hpp"
#include "remat/ode/vector_field.hpp"
#include "remat/types.hpp"

#include <thrust/device_vector.h>

#include <cmath>
#include <string>

namespace remat::ode {

inline namespace REMAT_DENSE_BACKEND_NS {

/// y' = f(t, y) with `method` and steps of size h from t0. Stateless between calls apart from its
/// workspace: any step may be run or reversed in any order, as checkpointing needs.
///
///     remat::ode::fixed_step<double, remat::ode::mlp<double>> solver(remat::ode::rk4(), f, b, 0.0, 0.025);
///     thrust::device_vector<double> y = y0, a(y.size()), p_bar(f.parameter_count());
///     remat::run(remat::revolve(T, 20), store, y,
///         remat::forward_step([&](remat::step_t k, thrust::device_vector<double>& s) { solver.step(k, s); }),
///         remat::adjoint_step([&](remat::step_t k, thrust::device_vector<double>& s) {
///             solver.adjoint_step(k, s, a, p_bar); }));
template <class T, class Field>
    requires vector_field<Field, T>
class fixed_step {
public:
    fixed_step(const tableau& method, Field& field, dense::blas& b, T t0, T h)
        : stages_(method, field, b), t0_(t0), h_(h)
    {
        if (!(std::isfinite(static_cast<double>(h)) && h > T(0)))
            throw argument_error("step size h = " + std::to_string(static_cast<double>(h)) +
                                 " (expected a finite number > 0)");
        if (!std::isfinite(static_cast<double>(t0)))
            throw argument_error("initial time t0 = " + std::to_string(static_cast<double>(t0)) +
                                 " (expected a finite number)");
    }

    /// t_k = t0 + k h.
    [[nodiscard]] T time(step_t k) const noexcept { return t0_ + static_cast<T>(k) * h_; }
    [[nodiscard]] T step_size() const noexcept { return h_; }
    [[nodiscard]] const tableau& method() const noexcept { return stages_.method(); }

    /// y <- y_{k+1} from y == y_k.
    void step(step_t k, dense::vector_view<T> y)
    {
        stages_.compute(time(k), h_, y, false);
        stages_.solution(h_, y, y);
    }
    /// a <- dL/dy_k from a == dL/dy_{k+1}, and p_bar += this step's dL/dp, with y == y_k (unchanged).
    void adjoint_step(step_t k, dense::vector_view<const T> y, dense::vector_view<T> a, dense::vector_view<T> p_bar)
    {
        stages_.compute(time(k), h_, y, true);
        stages_.backprop(time(k), h_, a, p_bar);
    }

    template <class A>
    void step(step_t k, thrust::device_vector<T, A>& y)
    {
        step(k, dense::view(y));
    }
    template <class A1, class A2, class A3>
    void adjoint_step(step_t k, const thrust::device_vector<T, A1>& y, thrust::device_vector<T, A2>& a,
                      thrust::device_vector<T, A3>& p_bar)
    {
        adjoint_step(k, dense::view(y), dense::view(a), dense::view(p_bar));
    }

private:
    rk_stages<T, Field> stages_;
    T t0_;
    T h_;
};

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::ode
