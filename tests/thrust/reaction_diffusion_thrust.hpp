// The reaction-diffusion problem of reaction_diffusion.hpp on Thrust vectors: GPU kernels when compiled
// by nvcc for Thrust's CUDA back end, CPU loops on the CPP and OMP back ends — one source for both.
#pragma once

#include "reaction_diffusion.hpp"
#include "remat/cuda/thrust_traits.hpp"
#include "remat/driver/run.hpp"

#include <thrust/device_vector.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

namespace remat::test {

struct rd_forward_op {
    const double* u;
    rd_params p;
    REMAT_HOST_DEVICE double operator()(std::size_t i) const { return rd_forward(u, i, p); }
};

struct rd_adjoint_op {
    const double* u;
    const double* a;
    rd_params p;
    REMAT_HOST_DEVICE double operator()(std::size_t j) const { return rd_adjoint(u, a, j, p); }
};

struct rd_nu_gradient_op {
    const double* u;
    const double* a;
    rd_params p;
    REMAT_HOST_DEVICE double operator()(std::size_t i, double g) const { return rd_nu_gradient(u, a, g, i, p); }
};

/// The problem's steps on thrust::device_vector<double> states, with the adjoint held here.
class thrust_reaction_diffusion {
public:
    using vector = thrust::device_vector<double>;

    explicit thrust_reaction_diffusion(const reaction_diffusion& problem)
        : params_(problem.params()), adjoint_(problem.points, 0.0), nu_points_(problem.points, 0.0),
          scratch_(problem.points)
    {
    }

    /// x_k -> x_{k+1}: computed into the scratch vector, then swapped in (no copy, no allocation).
    void step(vector& u)
    {
        const thrust::counting_iterator<std::size_t> first(0);
        thrust::transform(first, first + params_.n, scratch_.begin(),
                          rd_forward_op{thrust::raw_pointer_cast(u.data()), params_});
        u.swap(scratch_);
    }

    /// Given u == x_k: the adjoint goes from dJ/dx_{k+1} to dJ/dx_k; dJ/dnu gains the step's share.
    void adjoint_step(const vector& u)
    {
        const thrust::counting_iterator<std::size_t> first(0);
        const double* x = thrust::raw_pointer_cast(u.data());
        const double* a = thrust::raw_pointer_cast(adjoint_.data());
        thrust::transform(first, first + params_.n, nu_points_.begin(), nu_points_.begin(),
                          rd_nu_gradient_op{x, a, params_});
        thrust::transform(first, first + params_.n, scratch_.begin(), rd_adjoint_op{x, a, params_});
        adjoint_.swap(scratch_);
    }

    void set_adjoint(const std::vector<double>& a) { thrust::copy(a.begin(), a.end(), adjoint_.begin()); }

    [[nodiscard]] rd_gradient gradient() const
    {
        rd_gradient g{std::vector<double>(params_.n), std::vector<double>(params_.n)};
        thrust::copy(adjoint_.begin(), adjoint_.end(), g.initial.begin());
        thrust::copy(nu_points_.begin(), nu_points_.end(), g.nu_points.begin());
        return g;
    }

private:
    rd_params params_;
    vector adjoint_;
    vector nu_points_;
    vector scratch_;
};

/// The gradient of J(x_T) through remat::run with a thrust::device_vector state, along `plan`.
template <class Schedule, class Store>
rd_gradient run_thrust_gradient(const reaction_diffusion& problem, const Schedule& plan, Store& store,
                                run_report* report = nullptr)
{
    thrust_reaction_diffusion solver(problem);
    solver.set_adjoint(problem.objective_gradient(problem.final_field(plan.steps())));
    const std::vector<double> x0 = problem.initial_field();
    thrust::device_vector<double> x(x0.begin(), x0.end());
    const run_report r =
        run(plan, store, x, remat::forward_step([&](step_t, thrust::device_vector<double>& u) { solver.step(u); }),
            remat::adjoint_step([&](step_t, thrust::device_vector<double>& u) { solver.adjoint_step(u); }));
    if (report != nullptr)
        *report = r;
    return solver.gradient();
}

/// The state of run_thrust_parts_gradient: the field and the field of the step before, both device
/// vectors, and with a host part a step counter (std::tuple of contiguous states: several parts, no code).
using rd_device_parts = std::pair<thrust::device_vector<double>, thrust::device_vector<double>>;
using rd_mixed_parts =
    std::tuple<thrust::device_vector<double>, thrust::device_vector<double>, std::array<std::int64_t, 1>>;

/// run_thrust_gradient with a multi-part state (State: rd_device_parts or rd_mixed_parts): each part is
/// gathered into the store's slot and scattered back. Also counts in `wrong_parts` the x_k whose second
/// (or third) part the adjoint found different from the forward sweep's.
template <class State, class Schedule, class Store>
rd_gradient run_thrust_parts_gradient(const reaction_diffusion& problem, const Schedule& plan, Store& store,
                                      std::uint64_t& wrong_parts, run_report* report = nullptr)
{
    constexpr bool host_part = std::tuple_size_v<State> == 3;
    const step_t steps = plan.steps();
    std::vector<std::vector<double>> fields{problem.initial_field()}; // x_k's field, k = 0..T-1
    {
        std::vector<double> u = problem.initial_field(), scratch;
        for (step_t k = 1; k < steps; ++k) {
            problem.step(u.data(), scratch);
            fields.push_back(u);
        }
    }
    thrust_reaction_diffusion solver(problem);
    const std::vector<double> xT = problem.final_field(steps);
    const std::vector<double> aT = problem.objective_gradient(xT);
    solver.set_adjoint(aT);
    const std::vector<double> x0 = problem.initial_field();
    State x;
    std::get<0>(x).assign(x0.begin(), x0.end());
    std::get<1>(x).assign(x0.begin(), x0.end());
    std::vector<double> seen(x0.size());
    const run_report r = run(plan, store, x, remat::forward_step([&](step_t, State& s) {
                                 thrust::copy(std::get<0>(s).begin(), std::get<0>(s).end(), std::get<1>(s).begin());
                                 solver.step(std::get<0>(s));
                                 if constexpr (host_part)
                                     ++std::get<2>(s)[0];
                             }),
                             remat::adjoint_step([&](step_t k, State& s) {
                                 thrust::copy(std::get<1>(s).begin(), std::get<1>(s).end(), seen.begin());
                                 if (seen != fields[static_cast<std::size_t>(k == 0 ? 0 : k - 1)])
                                     ++wrong_parts;
                                 if constexpr (host_part)
                                     if (std::get<2>(s)[0] != k)
                                         ++wrong_parts;
                                 solver.adjoint_step(std::get<0>(s));
                             }));
    if (report != nullptr)
        *report = r;
    return solver.gradient();
}

} // namespace remat::test
