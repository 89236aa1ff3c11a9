// Gradients of J = z(T) for the Lorenz-63 example (tests only): the result record, the adjoint callable
// that seeds at the last step, and a store-everything run. Header-only; link remat_examples.
#pragma once

#include "lorenz63.hpp"

#include "remat/driver/run.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"

#include <algorithm>
#include <cstring>

namespace remat::test {

using examples::vec3;

struct lorenz_gradient {
    vec3 dx0{};           ///< dJ/dx_0
    vec3 dp{};            ///< dJ/d(sigma, rho, beta)
    double objective = 0; ///< J = z(T)
    run_report report;
};

/// The adjoint of step k for J = z(T): at k = T-1 it runs that step once more to see x_T (`steps` is
/// read then, so an online loop may set it when it learns T).
inline auto lorenz_adjoint(const examples::lorenz63& model, lorenz_gradient& g, vec3& lambda, const step_t& steps)
{
    return [&model, &g, &lambda, &steps](step_t k, vec3& s) {
        if (k == steps - 1) {
            vec3 last = s;
            model.step(last);
            g.objective = last[2];
        }
        model.adjoint_step(s, lambda, g.dp);
    };
}

/// The gradient through remat::run with `plan` and a host store of `slots` slots.
template <class Schedule>
lorenz_gradient lorenz_run(const Schedule& plan, slot_t slots, const examples::lorenz63& model, vec3 x0)
{
    const step_t steps = plan.steps();
    lorenz_gradient g;
    vec3 lambda{0, 0, 1};
    host_store store(slots);
    g.report = run(plan, store, x0, remat::forward_step([&](step_t, vec3& s) { model.step(s); }),
                   remat::adjoint_step(lorenz_adjoint(model, g, lambda, steps)));
    g.dx0 = lambda;
    return g;
}

/// The reference: every state stored.
inline lorenz_gradient store_all_reference(const examples::lorenz63& model, vec3 x0, step_t steps)
{
    const slot_t slots = std::max<step_t>(steps - 1, 1);
    return lorenz_run(store_all(steps, slots), slots, model, x0);
}

inline bool same_bits(const vec3& a, const vec3& b)
{
    return std::memcmp(a.data(), b.data(), sizeof(vec3)) == 0;
}

} // namespace remat::test
