// Example (b): the gradient of the final energy of a 1-D viscous Burgers flow (10^4 grid points, 10^4
// explicit steps) with respect to the initial field, within a snapshot budget of 1% of store-all.
//
//     ./build/examples/burgers_budget [steps] [points] [budget-percent]
#include "program_help.hpp"

#include "burgers.hpp"
#include "parse_args.hpp"
#include "report_errors.hpp"

#include <remat/remat.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

static int example_main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: burgers_budget [steps] [points] [budget-percent]\n"
            "Example (b): the gradient of the final energy of a 1-D viscous Burgers flow (10^4 grid points, 10^4\n"
            "explicit steps) with respect to the initial field, within a snapshot budget of 1% of store-all.\n"))
        return 0;
    remat::examples::at_most_arguments(argc, argv, 3);
    using remat::examples::positive_number;
    using remat::examples::whole_number;
    // Two steps at least: one step keeps no state, so no budget can be a share of store-all's.
    const remat::step_t steps = argc > 1 ? whole_number("steps", argv[1], 2) : 10'000;
    remat::examples::burgers model;
    model.points = argc > 2 ? static_cast<std::size_t>(whole_number("points", argv[2], 1)) : 10'000;
    const double percent = argc > 3 ? positive_number("budget-percent", argv[3]) : 1.0;

    const std::uint64_t state_bytes = model.points * sizeof(double);
    const std::uint64_t store_all_bytes = static_cast<std::uint64_t>(steps - 1) * state_bytes;
    const auto budget = static_cast<std::uint64_t>(static_cast<double>(store_all_bytes) * percent / 100.0);
    const remat::memory_plan mp = remat::plan_for_budget(steps, budget, state_bytes);

    std::vector<double> u = model.initial_field(); // u_0
    std::vector<double> lambda;                    // dJ/du_k, seeded from u_T
    std::vector<double> scratch(model.points);
    double energy = 0;

    // The store enforces the byte budget itself: a schedule that needed more would fail, not swap.
    remat::host_store store(remat::level_capacity{.bytes = budget});
    const remat::run_report report = remat::run(
        remat::revolve(steps, mp.slots), store, u,
        remat::forward_step([&](remat::step_t, std::vector<double>& s) { model.step(s, scratch); }),
        remat::adjoint_step([&](remat::step_t, std::vector<double>& s) { model.adjoint_step(s, lambda, scratch); }),
        remat::final_state([&](const std::vector<double>& uT) { // u_T, once: J and dJ/du_T
            energy = model.objective(uT);
            lambda = model.objective_gradient(uT);
        }),
        remat::run_options{.time_user_code = true}); // the report's user/remat time split

    double norm = 0;
    for (const double g : lambda)
        norm += g * g;
    std::printf("Burgers, %zu points, %lld steps of dt = %g, nu = %g\n", model.points, static_cast<long long>(steps),
                model.dt, model.nu);
    std::printf("J = %.12e, |dJ/du0| = %.12e, dJ/du0[0] = %.12e\n", energy, std::sqrt(norm), lambda[0]);
    std::printf("budget %.1f%% of store-all (%llu of %llu bytes): %lld slots, peak %llu snapshot bytes\n", percent,
                static_cast<unsigned long long>(budget), static_cast<unsigned long long>(store_all_bytes),
                static_cast<long long>(mp.slots), static_cast<unsigned long long>(report.peak_snapshot_bytes));
    std::printf("predicted forward steps %llu (%.3fx store-all), measured %llu\n",
                static_cast<unsigned long long>(mp.cost.forward_steps), mp.recompute_ratio,
                static_cast<unsigned long long>(report.forward_steps));
    std::printf("%s", remat::to_string(report).c_str());
    return report.peak_snapshot_bytes <= budget ? 0 : 1;
}

int main(int argc, char** argv)
{
    return remat::examples::report_errors("burgers_budget", [&] { return example_main(argc, argv); });
}
