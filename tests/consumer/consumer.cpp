// A downstream program: plans a schedule and checks the optimum, printing it for the test to read.
#include <remat/remat.hpp>

#include <cstdio>

int main()
{
    const remat::revolve plan(10, 3);
    std::size_t actions = 0;
    for (const remat::action& a : plan)
        actions += a.index() < 5 ? 1 : 0;
    std::printf("forward_steps=%llu actions=%zu\n", static_cast<unsigned long long>(plan.cost().forward_steps),
                actions);
    // The README's driver call: J = x_T for x_{k+1} = x_k / 2, so dJ/dx_0 = 2^-10.
    double x = 1.0;
    double a = 0;
    remat::host_store store(3);
    const remat::run_report r =
        remat::run(plan, store, x, remat::forward_step([](remat::step_t, double& s) { s *= 0.5; }),
                   remat::adjoint_step([&](remat::step_t, double&) { a *= 0.5; }),
                   remat::final_state([&](const double& xT) { a = xT == 0x1p-10 ? 1.0 : 0.0; }));
    std::printf("dJ/dx0=%g final_calls=%llu\n", a, static_cast<unsigned long long>(r.final_calls));
    return plan.cost().forward_steps == 15 && a == 0x1p-10 && r.final_calls == 1 ? 0 : 1;
}
