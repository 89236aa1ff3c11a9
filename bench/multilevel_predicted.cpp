// Predicted cost against measured time: a host + HDF5 run whose level costs come from calibrating this
// machine in the same process (remat::calibrate_disk, as `remat calibrate` does), planned by
// remat::multilevel, then run through a tiered store — synchronously (what the cost model describes)
// and with the disk level asynchronous (write-behind and read-ahead, which the model does not credit).
//
//     ./build/bench/multilevel_predicted [dir] [state-MiB] [steps] [host-slots] [repeats] [--format json]
//
// Besides the totals it splits each into where the time went (the user's forward and adjoint steps, and
// remat's own: copies, disk transfers, waiting), against the model's split, so a mismatch names its part, and
// compares each run with its counts priced by compute costs calibrated again right before it (JSON
// synchronous_over_recalibrated, one ratio per run). Its files go to a directory of its own under [dir]
// (mkdtemp), so that runs at once do not share them.
#include "program_help.hpp"

#include "bench_util.hpp"

#include "burgers.hpp"

#include "remat/driver/run.hpp"
#include "remat/hdf5/calibrate.hpp"
#include "remat/hdf5/hdf5_store.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <stdlib.h> // mkdtemp

namespace {

// A directory of its own under `parent` for the run's files (two runs at once would otherwise share one HDF5
// file name), removed with everything in it however the run ends.
class scratch_directory {
public:
    explicit scratch_directory(const std::filesystem::path& parent)
    {
        std::string pattern = (parent / "remat-multilevel-predicted-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            const std::error_code ec(errno, std::generic_category());
            throw std::filesystem::filesystem_error("cannot create a scratch directory", parent, ec);
        }
        path_ = pattern;
    }
    ~scratch_directory()
    {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    scratch_directory(const scratch_directory&) = delete;
    scratch_directory& operator=(const scratch_directory&) = delete;
    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

private:
    std::filesystem::path path_;
};

template <class F>
double median_seconds(int repeats, F&& f)
{
    return remat::bench::median(remat::bench::time_runs(repeats, f));
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: multilevel_predicted [dir] [state-MiB] [steps] [host-slots] [repeats] [--format json]\n"
            "Predicted cost against measured time: a host + HDF5 run whose level costs come from calibrating this\n"
            "machine in the same process (remat::calibrate_disk, as `remat calibrate` does), planned by\n"
            "remat::multilevel, then run through a tiered store \u2014 synchronously (what the cost model describes)\n"
            "and with the disk level asynchronous (write-behind and read-ahead, which the model does not credit).\n"))
        return 0;
    std::vector<std::string> args;
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--format" && i + 1 < argc) {
            json = std::string(argv[++i]) == "json";
            continue;
        }
        args.emplace_back(argv[i]);
    }
    auto arg = [&](std::size_t i, const char* otherwise) { return i < args.size() ? args[i] : std::string(otherwise); };
    const std::filesystem::path parent =
        args.size() > 0 ? std::filesystem::path(args[0]) : std::filesystem::temp_directory_path();
    const scratch_directory scratch_dir(parent);
    const std::filesystem::path& dir = scratch_dir.path();
    const std::size_t mib = std::stoul(arg(1, "8"));
    const remat::step_t steps = std::stoll(arg(2, "120"));
    const remat::slot_t host_slots = std::stoll(arg(3, "3"));
    const int repeats = std::atoi(arg(4, "3").c_str());
    // Text goes to stderr in JSON mode, so stdout is the JSON alone.
    std::FILE* text = json ? stderr : stdout;

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

    std::fprintf(text, "host + HDF5 in %s, %zu MiB states, T = %lld, %llu host slots; calibrated in this run:\n",
                 dir.c_str(), mib, static_cast<long long>(steps), static_cast<long long>(host_slots));
    std::fprintf(text,
                 "  forward step %.4f s, adjoint step %.4f s; per snapshot: host copy %.4f s, disk write %.4f s "
                 "(durable), disk read %.4f s\n",
                 step_s, adjoint_s, disk.host_copy_seconds, disk.write_seconds, disk.read_seconds);
    std::fprintf(text, "  --level host:%llu:%.3g:%.3g --level disk:inf:%.3g:%.3g --reverse-cost %.3g\n",
                 static_cast<unsigned long long>(host_slots), costs.levels[0].write_cost, costs.levels[0].read_cost,
                 costs.levels[1].write_cost, costs.levels[1].read_cost, costs.reverse_cost);
    std::fprintf(
        text, "  plan: %llu forward steps, host %llu stores / %llu restores, disk %llu stores / %llu restores\n",
        static_cast<unsigned long long>(c.forward_steps), static_cast<unsigned long long>(c.levels[0].stores),
        static_cast<unsigned long long>(c.levels[0].restores), static_cast<unsigned long long>(c.levels[1].stores),
        static_cast<unsigned long long>(c.levels[1].restores));
    std::fprintf(text, "%-34s %12s %12s\n", "", "seconds", "/ predicted");
    std::fprintf(text, "%-34s %12.3f %12s\n", "predicted (cost model)", predicted, "1.000");

    // The model's split of the prediction.
    const double predicted_forward = static_cast<double>(c.forward_steps) * step_s;
    const double predicted_adjoint = static_cast<double>(steps) * adjoint_s;
    const double predicted_remat = predicted - predicted_forward - predicted_adjoint;
    std::fprintf(text, "%-34s %12s %12s %12s\n", "", "forward s", "adjoint s", "remat s");
    std::fprintf(text, "%-34s %12.3f %12.3f %12.3f\n", "predicted split", predicted_forward, predicted_adjoint,
                 predicted_remat);

    // The compute costs (forward and adjoint step, host copy) again right before each run, in the run's regime:
    // the first calibration steps one state back and forth while it stays in the 32 MiB L3 cache, but the run
    // restores a state from one of the host slots before it steps, and its working set (the slots, the state,
    // the adjoint, scratch) exceeds the cache, so its steps read memory. Here each timed step follows a store of
    // the state into one of host-slots + 1 snapshot buffers and a restore from another, as in the run; 31 of
    // each, medians. The disk's costs are the device's and keep the first calibration; the plan stays the one
    // made from it, and each run is compared with its counts priced by its own calibration.
    std::vector<std::vector<double>> slots(host_slots + 1, std::vector<double>(model.points));
    auto recalibrated_prediction = [&] {
        std::vector<double> forward_s, adjoint_s_run, copy_s;
        std::vector<double> v = model.initial_field();
        std::vector<double> lam(model.points, 1.0);
        for (std::size_t i = 0; i < 31; ++i) {
            std::vector<double>& out = slots[i % slots.size()];
            std::vector<double>& in = slots[(i + 1) % slots.size()];
            copy_s.push_back(remat::bench::time_runs(1, [&] { std::copy(v.begin(), v.end(), out.begin()); }).front());
            if (i > 0) // the first time, the slot holds no state yet
                std::copy(in.begin(), in.end(), v.begin());
            forward_s.push_back(remat::bench::time_runs(1, [&] { model.step(v, scratch); }).front());
            adjoint_s_run.push_back(remat::bench::time_runs(1, [&] { model.adjoint_step(v, lam, scratch); }).front());
        }
        remat::bench::keep(lam);
        const double f = remat::bench::median(forward_s), b = remat::bench::median(adjoint_s_run),
                     h = remat::bench::median(copy_s);
        return static_cast<double>(c.forward_steps) * f + static_cast<double>(steps) * b +
               static_cast<double>(c.levels[0].stores + c.levels[0].restores) * h +
               static_cast<double>(c.levels[1].stores) * disk.write_seconds +
               static_cast<double>(c.levels[1].restores) * disk.read_seconds;
    };

    // 3. Run it, synchronously and with the disk level asynchronous; medians.
    double measured_of[2] = {0, 0};
    std::vector<double> ratios_of[2]; // measured / recalibrated prediction, run by run
    for (const bool asynchronous : {false, true}) {
        std::vector<double> seconds, forward, adjoint, remat_own;
        for (int r = 0; r < repeats; ++r) {
            const double expected = recalibrated_prediction();
            remat::tiered_store<remat::host_store, remat::hdf5_store> store(
                {remat::tier_options{}, remat::tier_options{.asynchronous = asynchronous}},
                remat::host_store(static_cast<remat::slot_t>(host_slots)),
                remat::hdf5_store(dir / "multilevel_predicted.h5", remat::level_capacity{}));
            std::vector<double> x = model.initial_field();
            std::vector<double> a(model.points, 1.0);
            const remat::run_report report = remat::run(
                plan, store, x,
                remat::forward_step([&](remat::step_t, std::vector<double>& s) { model.step(s, scratch); }),
                remat::adjoint_step([&](remat::step_t, std::vector<double>& s) { model.adjoint_step(s, a, scratch); }),
                remat::run_options{.lookahead = 16, .time_user_code = true});
            seconds.push_back(report.seconds);
            ratios_of[asynchronous ? 1 : 0].push_back(report.seconds / expected);
            forward.push_back(report.forward_seconds);
            adjoint.push_back(report.adjoint_seconds);
            remat_own.push_back(report.remat_seconds());
            remat::bench::keep(a);
        }
        const double measured = remat::bench::median(seconds);
        measured_of[asynchronous ? 1 : 0] = measured;
        std::fprintf(text, "%-34s %12.3f %12.3f %12.3f\n",
                     asynchronous ? "split, disk asynchronous" : "split, synchronous", remat::bench::median(forward),
                     remat::bench::median(adjoint), remat::bench::median(remat_own));
        std::fprintf(text, "%-34s %12.3f %12.3f\n",
                     asynchronous ? "measured, disk asynchronous" : "measured, synchronous", measured,
                     measured / predicted);
        std::fprintf(text, "%-34s", "  each run / its own calibration");
        for (const double x : ratios_of[asynchronous ? 1 : 0])
            std::fprintf(text, " %.3f", x);
        std::fprintf(text, "\n");
    }
    auto list = [](const std::vector<double>& v) {
        std::string s = "[";
        for (std::size_t i = 0; i < v.size(); ++i)
            s += (i ? ", " : "") + std::to_string(v[i]);
        return s + "]";
    };
    if (json)
        std::printf("{\"predicted_s\": %.6f, \"synchronous_s\": %.6f, \"asynchronous_s\": %.6f, "
                    "\"synchronous_over_predicted\": %.4f, \"asynchronous_over_predicted\": %.4f, "
                    "\"synchronous_over_recalibrated\": %s, \"asynchronous_over_recalibrated\": %s}\n",
                    predicted, measured_of[0], measured_of[1], measured_of[0] / predicted, measured_of[1] / predicted,
                    list(ratios_of[0]).c_str(), list(ratios_of[1]).c_str());
    return 0;
}
