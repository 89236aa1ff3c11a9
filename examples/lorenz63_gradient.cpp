// Example (a): the gradient of J = z(T) for Lorenz-63 over 10^5 RK4 steps, with respect to the initial
// condition and the parameters (sigma, rho, beta), with 20 snapshot slots instead of 10^5.
//
//     ./build/examples/lorenz63_gradient [steps] [slots]
#include "lorenz63.hpp"

#include <remat/remat.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv)
{
    using remat::examples::vec3;
    const remat::step_t steps = argc > 1 ? std::stoll(argv[1]) : 100'000;
    const remat::slot_t slots = argc > 2 ? std::stoll(argv[2]) : 20;
    const remat::examples::lorenz63 model{.sigma = 10.0, .rho = 28.0, .beta = 8.0 / 3.0, .h = 1e-4};

    vec3 x{1.0, 1.0, 1.0}; // x_0; the driver leaves it undefined
    const vec3 x0 = x;
    vec3 lambda{}; // the adjoint: dJ/dx_T, seeded by the terminal callable, then dJ/dx_k
    vec3 grad_p{}; // dJ/d(sigma, rho, beta)
    double objective = 0;

    const remat::revolve plan(steps, slots);
    remat::host_store store(slots);
    const remat::run_report report =
        remat::run(plan, store, x, remat::forward_step([&](remat::step_t, vec3& s) { model.step(s); }),
                   remat::adjoint_step([&](remat::step_t, vec3& s) { model.adjoint_step(s, lambda, grad_p); }),
                   remat::final_state([&](const vec3& xT) { // x_T, once, before the first adjoint step
                       objective = xT[2];                   // J = z(T)
                       lambda = {0.0, 0.0, 1.0};            // dJ/dx_T
                   }));

    std::printf("Lorenz-63, RK4, %lld steps of h = %g from (%g, %g, %g), %lld slots\n", static_cast<long long>(steps),
                model.h, x0[0], x0[1], x0[2], static_cast<long long>(slots));
    std::printf("J = z(T)   = %.10e\n", objective);
    std::printf("dJ/dx0     = (%.10e, %.10e, %.10e)\n", lambda[0], lambda[1], lambda[2]);
    std::printf("dJ/dsigma  = %.10e\ndJ/drho    = %.10e\ndJ/dbeta   = %.10e\n", grad_p[0], grad_p[1], grad_p[2]);
    std::printf("forward steps %llu for %lld reverse steps (%.2f sweeps; store-all would need %lld slots)\n",
                static_cast<unsigned long long>(report.forward_steps), static_cast<long long>(steps),
                static_cast<double>(report.forward_steps) / static_cast<double>(steps - 1),
                static_cast<long long>(steps - 1));
    std::printf("%s", remat::to_string(report).c_str());
    return 0;
}
