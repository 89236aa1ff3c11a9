// Example: snapshots in RAM and on disk. A Burgers gradient whose snapshots live in 4 RAM slots and in an
// HDF5 file (the disk level written behind the computation and read ahead of the restores, on a worker
// thread), planned by remat::multilevel under per-snapshot costs like those `remat calibrate` prints.
// It checks the gradient against an all-RAM run, bit for bit, and keeps the file for `remat inspect`.
//
//     ./build/examples/disk_gradient [file.h5] [steps] [points]
#include "program_help.hpp"

#include "burgers.hpp"
#include "parse_args.hpp"
#include "report_errors.hpp"

#include <remat/hdf5/hdf5_store.hpp>
#include <remat/remat.hpp>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

template <class Schedule, class Store>
std::vector<double> gradient(const remat::examples::burgers& model, const Schedule& plan, Store& store,
                             remat::run_report& report)
{
    std::vector<double> u = model.initial_field(), lambda, scratch;
    report = remat::run(
        plan, store, u, remat::forward_step([&](remat::step_t, std::vector<double>& s) { model.step(s, scratch); }),
        remat::adjoint_step([&](remat::step_t, std::vector<double>& s) { model.adjoint_step(s, lambda, scratch); }),
        remat::final_state([&](const std::vector<double>& uT) { lambda = model.objective_gradient(uT); }), // dJ/du_T
        remat::run_options{.time_user_code = true}); // the report's user/remat time split
    return lambda;
}

} // namespace

static int example_main(int argc, char** argv)
{
    if (remat::examples::answered_help(argc, argv,
                                       "usage: disk_gradient [file.h5] [steps] [points]\n"
                                       "Example: snapshots in RAM and on disk.\n"))
        return 0;
    remat::examples::at_most_arguments(argc, argv, 3);
    const std::string file = argc > 1 ? argv[1] : "remat_snapshots.h5";
    // Two steps at least: the all-RAM comparison keeps T - 1 states.
    const remat::step_t steps = argc > 2 ? remat::examples::whole_number("steps", argv[2], 2) : 2000;
    remat::examples::burgers model;
    model.points = argc > 3 ? static_cast<std::size_t>(remat::examples::whole_number("points", argv[3], 1))
                            : 65536; // 512 KiB states
    model.dt = 1e-7;

    // 4 snapshots in RAM for free; any number on disk at 2 forward steps per write or read.
    const remat::cost_model costs{{{"host", 4, 0, 0}, {"disk", remat::level_spec::unlimited, 2, 2}}};
    const remat::multilevel plan(steps, costs);
    remat::tiered_store<remat::host_store, remat::hdf5_store> store(
        {remat::tier_options{}, remat::tier_options{.asynchronous = true}}, remat::host_store(4),
        remat::hdf5_store(file, remat::level_capacity{}, {.element = remat::hdf5_element::float64}));
    remat::run_report report;
    const std::vector<double> g = gradient(model, plan, store, report);
    store.flush();

    // The same gradient with every snapshot in RAM.
    remat::host_store ram(steps);
    remat::run_report ram_report;
    const std::vector<double> reference = gradient(model, remat::store_all(steps, steps - 1), ram, ram_report);
    const bool same = std::memcmp(g.data(), reference.data(), g.size() * sizeof(double)) == 0;

    const remat::schedule_cost c = plan.cost();
    std::printf("Burgers, %zu points (%zu KiB states), %lld steps; host:4 + disk:inf:2:2 (%s)\n", model.points,
                model.points * sizeof(double) / 1024, static_cast<long long>(steps), file.c_str());
    std::printf("plan: %llu forward steps; host %llu stores / %llu restores; disk %llu stores / %llu restores; "
                "predicted cost %.0f\n",
                static_cast<unsigned long long>(c.forward_steps), static_cast<unsigned long long>(c.levels[0].stores),
                static_cast<unsigned long long>(c.levels[0].restores),
                static_cast<unsigned long long>(c.levels[1].stores),
                static_cast<unsigned long long>(c.levels[1].restores), c.predicted_cost);
    std::printf("%s", remat::to_string(report).c_str());
    std::printf("dJ/du0 %s an all-RAM run's\n", same ? "is bit-identical to" : "DIFFERS from");
    return same ? 0 : 1;
}

int main(int argc, char** argv)
{
    return remat::examples::report_errors("disk_gradient", [&] { return example_main(argc, argv); });
}
