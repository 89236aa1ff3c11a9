// A small neural-ODE problem shared by the ODE tests: an MLP field over a batch, a quadratic loss on every
// state L = sum_{k=1..T} w_k/2 |y_k - d_k|^2 against fixed targets, its value by a plain forward loop, and
// its gradient by a store-everything reverse sweep (the reference the checkpointed runs must equal bit
// for bit). Compiled for the back end of the including translation unit.
#pragma once

#include "remat/dense/blas.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/ode/fixed_step.hpp"
#include "remat/ode/mlp.hpp"
#include "remat/ode/mlp_layout.hpp"
#include "remat/types.hpp"

#include <thrust/device_vector.h>
#include <thrust/host_vector.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace remat::test {

inline namespace REMAT_DENSE_BACKEND_NS {

template <class T>
std::vector<T> host_copy_of(const thrust::device_vector<T>& v)
{
    thrust::host_vector<T> h = v;
    return {h.begin(), h.end()};
}

inline std::vector<double> uniform_values(std::size_t n, std::uint64_t seed, double lo, double hi)
{
    std::mt19937_64 gen(seed);
    std::vector<double> v(n);
    for (double& x : v)
        x = lo + (hi - lo) * static_cast<double>(gen() >> 11) * 0x1p-53;
    return v;
}

// g_k += w (y - d), elementwise, for the quadratic loss term of one state.
template <class T>
struct loss_gradient_fn {
    const T* y;
    const T* d;
    T* g;
    T w;
    REMAT_HOST_DEVICE void operator()(std::int64_t i) const { g[i] += w * (y[i] - d[i]); }
};

template <class T>
struct loss_term_fn {
    const T* y;
    const T* d;
    REMAT_HOST_DEVICE double operator()(std::int64_t i) const
    {
        const double r = static_cast<double>(y[i]) - static_cast<double>(d[i]);
        return r * r;
    }
};

/// The gradient of a loss with respect to the initial state and the parameters.
template <class T>
struct ode_gradient {
    std::vector<T> y0;
    std::vector<T> params;
};

/// The quadratic loss on every state of a fixed-step solve of an MLP field.
template <class T>
class quadratic_problem {
public:
    quadratic_problem(dense::blas& b, const ode::mlp_layout& layout, std::int64_t batch, step_t steps,
                      std::uint64_t seed)
        : blas_(&b), field_(b, layout, batch), steps_(steps)
    {
        field_.set_parameters(layout.initial_parameters(seed, 0.5));
        const std::size_t n = static_cast<std::size_t>(field_.state_size());
        const auto y0 = uniform_values(n, seed + 1, -1.0, 1.0);
        y0_ = thrust::device_vector<T>(y0.begin(), y0.end());
        for (step_t k = 0; k <= steps; ++k) {
            const auto d = uniform_values(n, seed + 2 + static_cast<std::uint64_t>(k), -0.5, 0.5);
            targets_.emplace_back(d.begin(), d.end());
            weights_.push_back(static_cast<T>(1.0 / static_cast<double>(steps)) * static_cast<T>(1 + k % 3));
        }
    }

    ode::mlp<T>& field() noexcept { return field_; }
    /// d_k and w_k of the loss term of state k (1 <= k <= T).
    std::vector<T> target(step_t k) const { return host_copy_of(targets_[static_cast<std::size_t>(k)]); }
    T weight(step_t k) const { return weights_[static_cast<std::size_t>(k)]; }
    const thrust::device_vector<T>& y0() const noexcept { return y0_; }
    step_t steps() const noexcept { return steps_; }

    /// a += dL/dy_k (the loss term of state k; none for k = 0).
    template <class A>
    void add_loss_gradient(step_t k, const thrust::device_vector<T, A>& y, thrust::device_vector<T>& a)
    {
        if (k == 0)
            return;
        const auto& d = targets_[static_cast<std::size_t>(k)];
        dense::for_each_index(
            *blas_, static_cast<std::int64_t>(y.size()),
            loss_gradient_fn<T>{thrust::raw_pointer_cast(y.data()), thrust::raw_pointer_cast(d.data()),
                                thrust::raw_pointer_cast(a.data()), weights_[static_cast<std::size_t>(k)]});
    }
    /// L's term for state k.
    template <class A>
    double loss_term(step_t k, const thrust::device_vector<T, A>& y)
    {
        if (k == 0)
            return 0;
        const auto& d = targets_[static_cast<std::size_t>(k)];
        const double s = dense::transform_reduce(
            *blas_, static_cast<std::int64_t>(y.size()),
            loss_term_fn<T>{thrust::raw_pointer_cast(y.data()), thrust::raw_pointer_cast(d.data())}, 0.0,
            thrust::plus<double>{});
        return 0.5 * static_cast<double>(weights_[static_cast<std::size_t>(k)]) * s;
    }

    /// L by a plain forward loop, from y0 (perturbed by the caller as it likes) with the field's parameters.
    template <class Solver>
    double loss(Solver& solver, thrust::device_vector<T> y)
    {
        double total = 0;
        for (step_t k = 0; k < steps_; ++k) {
            solver.step(k, y);
            total += loss_term(k + 1, y);
        }
        return total;
    }

    /// The gradient by keeping every state (the store-everything reference).
    template <class Solver>
    ode_gradient<T> store_all_gradient(Solver& solver)
    {
        std::vector<thrust::device_vector<T>> states{y0_};
        for (step_t k = 0; k < steps_; ++k) {
            states.push_back(states.back());
            solver.step(k, states.back());
        }
        thrust::device_vector<T> a(y0_.size(), T(0));
        thrust::device_vector<T> p_bar(static_cast<std::size_t>(field_.parameter_count()), T(0));
        add_loss_gradient(steps_, states.back(), a);
        for (step_t k = steps_; k-- > 0;) {
            solver.adjoint_step(k, states[static_cast<std::size_t>(k)], a, p_bar);
            add_loss_gradient(k, states[static_cast<std::size_t>(k)], a);
        }
        return {host_copy_of(a), host_copy_of(p_bar)};
    }

private:
    dense::blas* blas_;
    ode::mlp<T> field_;
    step_t steps_;
    thrust::device_vector<T> y0_;
    std::vector<thrust::device_vector<T>> targets_;
    std::vector<T> weights_;
};

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::test
