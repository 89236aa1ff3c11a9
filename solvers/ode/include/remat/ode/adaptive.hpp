// remat/ode/adaptive.hpp — an adaptive explicit Runge–Kutta solver (an embedded pair, e.g. Dormand–Prince
// 5(4)) shaped for remat::run_online: its state is y together with the controller's state, so a step
// recomputed from a snapshot repeats the first sweep's trials exactly, and the loop's length T (the
// number of accepted steps) is found while integrating.
//
// The adjoint step k re-runs step k's trials from (y_k, controller_k), recording the accepted one, and
// back-propagates through its stages with its t and h held constant: the gradient of the discrete solve
// with the step sizes the forward solve chose (step-size selection is not differentiated, as in diffrax).
#pragma once

#include "remat/dense/blas.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/dense/matrix.hpp"
#include "remat/error.hpp"
#include "remat/ode/detail/stage_kernels.hpp"
#include "remat/ode/error.hpp"
#include "remat/ode/rk_stages.hpp"
#include "remat/ode/step_controller.hpp"
#include "remat/ode/tableau.hpp"
#include "remat/ode/vector_field.hpp"
#include "remat/types.hpp"

#include <thrust/device_vector.h>
#include <thrust/functional.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace remat::ode {

inline namespace REMAT_DENSE_BACKEND_NS {

/// The state of an adaptive solve at x_k: y_k (device memory) and the controller's state (host).
/// remat snapshots both parts (see remat/ode/adaptive_traits.hpp).
template <class T>
struct adaptive_state {
    thrust::device_vector<T> y;
    controller_state control;
};

/// y' = f(t, y) with an embedded `method` and a PI controller over the stop times given (observation
/// times; the last is the end).
///
///     remat::ode::adaptive<double, remat::ode::mlp<double>> solver(remat::ode::dopri5(), f, b, opts, stops, 0.0);
///     remat::ode::adaptive_state<double> x = solver.start(y0);
///     while (!solver.finished(x)) solver.step(x);                 // or through remat::run_online
template <class T, class Field>
    requires vector_field<Field, T>
class adaptive {
public:
    adaptive(const tableau& method, Field& field, dense::blas& b, controller_options options, std::vector<double> stops,
             double t0)
        : stages_(method, field, b), blas_(&b), controller_(options, embedded_order(method), std::move(stops), t0),
          y_new_(static_cast<std::size_t>(field.state_size())), err_(static_cast<std::size_t>(field.state_size()))
    {
    }

    [[nodiscard]] const pi_controller& controller() const noexcept { return controller_; }
    [[nodiscard]] const tableau& method() const noexcept { return stages_.method(); }

    /// x_0 from y0.
    template <class A>
    [[nodiscard]] adaptive_state<T> start(const thrust::device_vector<T, A>& y0) const
    {
        return {thrust::device_vector<T>(y0), controller_.start()};
    }
    /// Whether x has reached the end time (the loop is over).
    [[nodiscard]] bool finished(const adaptive_state<T>& x) const noexcept { return controller_.finished(x.control); }

    /// x <- x_{k+1}: trials from x_k until one is accepted.
    void step(adaptive_state<T>& x)
    {
        const dense::vector_view<T> y = dense::view(x.y);
        (void)accepted_trial(x.control, y, false);
        dense::copy(*blas_, dense::vector_view<const T>(view_of(y_new_)), y);
    }

    /// a <- dL/dy_k from a == dL/dy_{k+1}, and p_bar += this step's dL/dp, with x == x_k (unchanged).
    template <class A1, class A2>
    void adjoint_step(const adaptive_state<T>& x, thrust::device_vector<T, A1>& a, thrust::device_vector<T, A2>& p_bar)
    {
        controller_state c = x.control;
        const trial tr = accepted_trial(c, dense::view(x.y), true);
        stages_.backprop(static_cast<T>(x.control.t), static_cast<T>(tr.h), dense::view(a), dense::view(p_bar));
    }

    /// The step size step k takes from x == x_k (its trials re-run; x unchanged).
    [[nodiscard]] double accepted_step_size(const adaptive_state<T>& x)
    {
        controller_state c = x.control;
        return accepted_trial(c, dense::view(x.y), false).h;
    }

private:
    static int embedded_order(const tableau& method)
    {
        if (!method.embedded())
            throw argument_error("method " + method.name + " has no embedded error estimate (expected dopri5)");
        return method.error_order;
    }
    static dense::vector_view<T> view_of(thrust::device_vector<T>& v) { return dense::view(v); }

    // Runs trials from (c, y) until one is accepted; y_new_ then holds its solution and, with `record`,
    // the stages hold its record. c becomes the next state's controller.
    trial accepted_trial(controller_state& c, dense::vector_view<const T> y, bool record)
    {
        const std::int64_t n = stages_.state_size();
        std::int64_t in_row = 0;
        for (;;) {
            const trial tr = controller_.next_trial(c);
            const T h = static_cast<T>(tr.h);
            const T t = static_cast<T>(c.t);
            stages_.compute(t, h, y, record, true);
            stages_.solution(h, y, view_of(y_new_));
            stages_.error_estimate(h, view_of(err_));
            const controller_options& o = controller_.options();
            const double sum = dense::transform_reduce(
                *blas_, n,
                rk_impl::scaled_error_term<T>{thrust::raw_pointer_cast(err_.data()), y.data,
                                              thrust::raw_pointer_cast(y_new_.data()), o.atol, o.rtol},
                0.0, thrust::plus<double>{});
            const double norm = std::sqrt(sum / static_cast<double>(n));
            if (controller_.decide(c, tr, norm, in_row))
                return tr;
        }
    }

    rk_stages<T, Field> stages_;
    dense::blas* blas_;
    pi_controller controller_;
    thrust::device_vector<T> y_new_;
    thrust::device_vector<T> err_;
};

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::ode
