// Predicted cost against measured time: a host + HDF5 run whose level costs come from calibrating this
// machine in the same process (remat::calibrate_disk, as `remat calibrate` does), planned by
// remat::multilevel, then run through a tiered store — synchronously (what the cost model describes)
// and with the disk level asynchronous (write-behind and read-ahead, which the model does not credit).
//
//     ./build/bench/multilevel_predicted [dir] [state-MiB] [steps] [host-slots] [repeats]
#include "bench_util.hpp"

#include "burgers.hpp"

#include "remat/driver/run.hpp"
#include "remat/hdf5/calibrate.hpp"
#include "remat/hdf5/hdf5_store.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

template <class F>
double median_seconds(int repeats, F&& f)
{
    return remat::bench::median(remat::bench::time_runs(repeats, f));
}

} // namespace

int main(int argc, char** argv)
{
    const std::filesystem::path dir = argc > 1 ? argv[1] : std::filesystem::temp_directory_path();
    const std::size_t mib = argc > 2 ? std::stoul(argv[2]) : 8;
    const remat::step_t steps = argc > 3 ? std::stoll(argv[3]) : 120;
    const std::uint64_t host_slots = argc > 4 ? std::stoull(argv[4]) : 3;
    const int repeats = argc > 5 ? std::atoi(argv[5]) : 3;

    // The loop: viscous Burgers on as many points as fill `mib` MiB per state.
    remat::examples::burgers model;
    model.points = mib * 1024 * 1024 / sizeof(double);
    model.dt = 1e-7;
    const std::uint64_t state_bytes = model.points * sizeof(double);
    std::vector<double> scratch(model.points), lambda(model.points, 1.0);

    // 1. Calibrate: one forward step, one adjoint step, and the disk and host costs per snapshot.
    std::vector<double> u = model.initial_field();
    const double step_s = median_seconds(7, [&] { model.step(u, scratch); });
    const double adjoint_s = median_seconds(7, [&] { model.adjoint_step(u, lambda, scratch); });
    const remat::disk_calibration disk = remat::calibrate_disk(dir, state_bytes, repeats);
    remat::cost_model costs;
    costs.levels = {{"host", host_slots, disk.host_copy_seconds / step_s, disk.host_copy_seconds / step_s},
                    {"disk", remat::level_spec::unlimited, disk.write_seconds / step_s, disk.read_seconds / step_s}};
    costs.step_cost = 1;
    costs.reverse_cost = adjoint_s / step_s;

    // 2. Plan: the exact optimum under those costs.
    const remat::multilevel plan(steps, costs);
    const remat::schedule_cost c = plan.cost();
    const double predicted = c.predicted_cost * step_s;

    std::printf("host + HDF5 in %s, %zu MiB states, T = %lld, %llu host slots; calibrated in this run:\n", dir.c_str(),
                mib, static_cast<long long>(steps), static_cast<unsigned long long>(host_slots));
    std::printf("  forward step %.4f s, adjoint step %.4f s; per snapshot: host copy %.4f s, disk write %.4f s "
                "(durable), disk read %.4f s\n",
                step_s, adjoint_s, disk.host_copy_seconds, disk.write_seconds, disk.read_seconds);
    std::printf("  --level host:%llu:%.3g:%.3g --level disk:inf:%.3g:%.3g --reverse-cost %.3g\n",
                static_cast<unsigned long long>(host_slots), costs.levels[0].write_cost, costs.levels[0].read_cost,
                costs.levels[1].write_cost, costs.levels[1].read_cost, costs.reverse_cost);
    std::printf("  plan: %llu forward steps, host %llu stores / %llu restores, disk %llu stores / %llu restores\n",
                static_cast<unsigned long long>(c.forward_steps), static_cast<unsigned long long>(c.levels[0].stores),
                static_cast<unsigned long long>(c.levels[0].restores),
                static_cast<unsigned long long>(c.levels[1].stores),
                static_cast<unsigned long long>(c.levels[1].restores));
    std::printf("%-34s %12s %12s\n", "", "seconds", "/ predicted");
    std::printf("%-34s %12.3f %12s\n", "predicted (cost model)", predicted, "1.000");

    // 3. Run it, synchronously and with the disk level asynchronous; medians.
    for (const bool asynchronous : {false, true}) {
        std::vector<double> seconds;
        for (int r = 0; r < repeats; ++r) {
            remat::tiered_store<remat::host_store, remat::hdf5_store> store(
                {remat::tier_options{}, remat::tier_options{.asynchronous = asynchronous}},
                remat::host_store(static_cast<remat::slot_t>(host_slots)),
                remat::hdf5_store(dir / "multilevel_predicted.h5", remat::level_capacity{}));
            std::vector<double> x = model.initial_field();
            std::vector<double> a(model.points, 1.0);
            const remat::run_report report = remat::run(
                plan, store, x, [&](remat::step_t, std::vector<double>& s) { model.step(s, scratch); },
                [&](remat::step_t, std::vector<double>& s) { model.adjoint_step(s, a, scratch); },
                remat::run_options{.lookahead = 16});
            seconds.push_back(report.seconds);
            remat::bench::keep(a);
        }
        const double measured = remat::bench::median(seconds);
        std::printf("%-34s %12.3f %12.3f\n", asynchronous ? "measured, disk asynchronous" : "measured, synchronous",
                    measured, measured / predicted);
    }
    std::filesystem::remove(dir / "multilevel_predicted.h5");
    return 0;
}
