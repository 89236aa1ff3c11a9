// bench/neural_ode's problem, written once and compiled per back end (cpu.cpp: Thrust CPP + OpenBLAS;
// cuda.cu: Thrust CUDA + cuBLAS): L = |y_T|^2 / 2 over T RK4 steps of an MLP field with one hidden layer
// of `width` (tanh) over a batch, and its gradient dL/dp by each variant of measure.hpp.
#pragma once

#include "../bench_util.hpp"
#include "measure.hpp"

#include "remat/cuda/thrust_traits.hpp"
#include "remat/dense/blas.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/ode/fixed_step.hpp"
#include "remat/ode/mlp.hpp"
#include "remat/ode/rk_stages.hpp"
#include "remat/ode/tableau.hpp"
#include <remat/remat.hpp>

#include <thrust/device_vector.h>
#include <thrust/host_vector.h>

#include <cmath>
#include <memory>
#include <utility>
#include <vector>

namespace remat::bench::neural_ode {

inline namespace REMAT_DENSE_BACKEND_NS {

class ode_problem {
public:
    using vector = thrust::device_vector<double>;

    explicit ode_problem(const problem_size& s)
        : size_(s), layout_({.dim = s.dim, .hidden = {s.width}, .act = dense::activation::tanh}),
          field_(blas_, layout_, s.batch), solver_(ode::rk4(), field_, blas_, 0.0, 1.0 / static_cast<double>(s.steps))
    {
        field_.set_parameters(layout_.initial_parameters(7));
        std::vector<double> y0(static_cast<std::size_t>(field_.state_size()));
        for (std::size_t i = 0; i < y0.size(); ++i)
            y0[i] = std::sin(0.37 * static_cast<double>(i));
        y0_ = vector(y0.begin(), y0.end());
        a_.resize(y0.size());
        p_bar_.resize(static_cast<std::size_t>(field_.parameter_count()));
    }
    [[nodiscard]] std::uint64_t state_bytes() const { return y0_.size() * sizeof(double); }

    /// dL/dp by remat::run with `plan` and `store` (stages recomputed in each adjoint step).
    template <class Plan, class Store>
    void remat_gradient(const Plan& plan, Store& store)
    {
        vector y = y0_;
        dense::fill(blas_, dense::view(p_bar_), 0.0);
        remat::run(plan, store, y, remat::forward_step([&](step_t k, vector& s) { solver_.step(k, s); }),
                   remat::adjoint_step([&](step_t k, vector& s) {
                       if (k == size_.steps - 1) { // a = dL/dy_T = y_T
                           dense::copy(blas_, dense::view(std::as_const(s)), dense::view(a_));
                           solver_.step(k, a_);
                       }
                       solver_.adjoint_step(k, s, a_, p_bar_);
                   }));
    }

    /// dL/dp by backpropagation through the solver: every step's stages recorded, each in its own workspace.
    void backprop_gradient()
    {
        std::vector<std::unique_ptr<ode::rk_stages<double, ode::mlp<double>>>> tape;
        tape.reserve(static_cast<std::size_t>(size_.steps));
        vector y = y0_;
        const double h = solver_.step_size();
        for (step_t k = 0; k < size_.steps; ++k) {
            tape.push_back(std::make_unique<ode::rk_stages<double, ode::mlp<double>>>(ode::rk4(), field_, blas_));
            tape.back()->compute(solver_.time(k), h, dense::view(std::as_const(y)), true);
            tape.back()->solution(h, dense::view(std::as_const(y)), dense::view(y));
        }
        dense::copy(blas_, dense::view(std::as_const(y)), dense::view(a_));
        dense::fill(blas_, dense::view(p_bar_), 0.0);
        for (step_t k = size_.steps; k-- > 0;)
            tape[static_cast<std::size_t>(k)]->backprop(solver_.time(k), h, dense::view(a_), dense::view(p_bar_));
        blas_.synchronize(); // the tape's workspaces are freed on return: nothing may still use them
    }

    /// dL/dp of the last gradient, copied to the host.
    [[nodiscard]] std::vector<double> gradient_on_host()
    {
        blas_.synchronize();
        thrust::host_vector<double> h = p_bar_;
        return {h.begin(), h.end()};
    }

private:
    problem_size size_;
    dense::blas blas_;
    ode::mlp_layout layout_;
    ode::mlp<double> field_;
    ode::fixed_step<double, ode::mlp<double>> solver_;
    vector y0_;
    vector a_;
    vector p_bar_;
};

struct variant_run {
    double seconds = 0; // median per gradient
    std::vector<double> gradient;
};

/// Builds the problem and times `repeats` gradients of variant `v`; `synchronize()` runs before each
/// clock read (the GPU's queue drained), `with_store(slots, state_bytes, body)` calls body(store) with a store of
/// `slots` snapshots of `state_bytes` each.
template <class WithStore, class Synchronize>
variant_run run_variant(const problem_size& s, const variant& v, int repeats, WithStore&& with_store,
                        Synchronize&& synchronize)
{
    ode_problem p(s);
    std::vector<double> seconds;
    auto time = [&](auto&& gradient) {
        synchronize(); // the setup's copies are not the gradient's
        seconds = time_runs(repeats, [&] {
            gradient();
            synchronize();
        });
    };
    switch (v.kind) {
    case variant_kind::backprop:
        time([&] { p.backprop_gradient(); });
        break;
    case variant_kind::store_all:
        with_store(v.slots, p.state_bytes(), [&](auto& store) {
            const auto plan = store_all(s.steps, v.slots);
            time([&] { p.remat_gradient(plan, store); });
        });
        break;
    case variant_kind::revolve:
        with_store(v.slots, p.state_bytes(), [&](auto& store) {
            const auto plan = revolve(s.steps, v.slots);
            time([&] { p.remat_gradient(plan, store); });
        });
        break;
    }
    return {median(seconds), p.gradient_on_host()};
}

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::bench::neural_ode
