// The reaction-diffusion problem of reaction_diffusion.hpp on Thrust vectors: GPU kernels when compiled
// by nvcc for Thrust's CUDA back end, CPU loops on the CPP and OMP back ends — one source for both.
#pragma once

#include "reaction_diffusion.hpp"
#include "remat/cuda/thrust_traits.hpp"
#include "remat/driver/run.hpp"

#include <thrust/device_vector.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform.h>

#include <cstddef>
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

} // namespace remat::test
