// The gradient of the Burgers example's final energy through remat::run (tests only): the pattern the
// driver, store and level tests share. The adjoint of step T-1 runs that step once more to seed dJ/du_T.
// Header-only; tests that use it link remat_examples.
#pragma once

#include "burgers.hpp"
#include "same_bits.hpp"

#include "remat/driver/run.hpp"

#include <vector>

namespace remat::test {

/// A small, quickly integrated Burgers problem.
inline examples::burgers small_burgers(std::size_t points, double dt = 1e-3, double nu = 0.05)
{
    examples::burgers model;
    model.points = points;
    model.dt = dt;
    model.nu = nu;
    return model;
}

struct burgers_gradient_result {
    std::vector<double> gradient; ///< dJ/du_0
    double energy = 0;            ///< J = the final energy
    run_report report;
};

/// dJ/du_0 for J = the energy at T = plan.steps(), with `store` holding the snapshots.
template <class Schedule, class Store>
burgers_gradient_result burgers_gradient(const examples::burgers& model, const Schedule& plan, Store& store,
                                         const run_options& options = {})
{
    const step_t steps = plan.steps();
    burgers_gradient_result r;
    std::vector<double> u = model.initial_field(), scratch;
    r.report = run(plan, store, u, remat::forward_step([&](step_t, std::vector<double>& s) { model.step(s, scratch); }),
                   remat::adjoint_step([&](step_t k, std::vector<double>& s) {
                       if (k == steps - 1) {
                           std::vector<double> last = s;
                           model.step(last, scratch);
                           r.energy = model.objective(last);
                           r.gradient = model.objective_gradient(last);
                       }
                       model.adjoint_step(s, r.gradient, scratch);
                   }),
                   options);
    return r;
}

} // namespace remat::test
