// The body of cpu_gradient and cuda_gradient (backend_gradient.hpp), compiled once per back end.
#pragma once

#include "backend_gradient.hpp"
#include "ode_problem.hpp"

#include "remat/dense/blas.hpp"
#include "remat/ode/fixed_step.hpp"
#include "remat/ode/mlp.hpp"
#include "remat/ode/tableau.hpp"

namespace remat::test {

inline namespace REMAT_DENSE_BACKEND_NS {

inline backend_gradient compute_backend_gradient(const ode_case& c)
{
    dense::blas b;
    const ode::mlp_layout layout(c.shape);
    quadratic_problem<double> problem(b, layout, c.batch, c.steps, c.seed);
    ode::fixed_step<double, ode::mlp<double>> solver(ode::method(c.method), problem.field(), b, 0.0, c.h);
    const ode_gradient<double> g = problem.store_all_gradient(solver);
    return {g.y0, g.params, problem.loss(solver, problem.y0())};
}

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::test
