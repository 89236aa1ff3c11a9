// A gradient loop on the GPU through all three levels — device slots, pinned host slots, an HDF5 file —
// with the slow levels synchronous, the disk behind a worker thread (write-behind, read-ahead), and both
// behind workers. The baseline is the compute alone, measured in the same run: the plan's forward steps
// and the T adjoint steps times the medians of the two kernels. The plan's costs come from transfers
// timed here, as a user's calibration would give them. Each configuration's store serves an untimed
// warm-up run first (pinned allocations, the file's datasets). A level's "waited" time is the caller's
// time in its transfers, which for a synchronous copy from the device includes waiting for the kernels
// queued before it.
//
//   ./build/bench/cuda_tiers [DIR=$TMPDIR or /tmp] [MiB=64] [steps=200] [repeats=3] [step_ms=4]
#include "program_help.hpp"

#include "bench_util.hpp"
#include "cuda_compute.cuh"

#include "remat/cuda/copy.hpp"
#include "remat/cuda/device_buffer.hpp"
#include "remat/cuda/device_span.hpp"
#include "remat/cuda/device_store.hpp"
#include "remat/cuda/pinned_memory_resource.hpp"
#include "remat/driver/capacity_for.hpp"
#include "remat/driver/run.hpp"
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

using namespace remat;
using bench::median;
using bench::time_runs;
using remat::cuda::device_buffer;

struct setup {
    std::filesystem::path dir;
    std::size_t bytes = 0;
    step_t steps = 0;
    int repeats = 0;
    int iterations = 0;
};

/// Seconds per snapshot of one write and one read through `store` (medians of five).
template <class Store>
std::pair<double, double> transfer_seconds(Store& store, device_buffer& state)
{
    std::vector<double> writes, reads;
    for (step_t k = 0; k < 6; ++k) {
        const double w = time_runs(1, [&] { store.write(0, k, state.bytes()); })[0];
        const double r = time_runs(1, [&] { store.read(0, k, state.bytes()); })[0];
        store.release(0);
        if (k > 0) { // the first pass allocates
            writes.push_back(w);
            reads.push_back(r);
        }
    }
    return {median(writes), median(reads)};
}

struct outcome {
    std::vector<double> seconds; ///< each timed run
    run_report report;           ///< of the last run
};

struct mode {
    const char* name;
    bool host_async, disk_async;
};

/// One store per mode, used for an untimed warm-up run (it allocates the pinned slots and staging buffers
/// and the file's datasets) and then for `s.repeats` timed runs.
outcome run_mode(const setup& s, const multilevel& plan, const mode& m, device_buffer& state,
                 device_buffer& adjoint_state)
{
    const std::size_t n = s.bytes / sizeof(double);
    cuda::pinned_memory_resource pinned;
    const async_options staging{.staging_buffers = 4, .staging_memory = &pinned};
    const auto& levels = plan.model().levels;
    // One copier for every level: host and disk copies, and the device level's ordering, on the default stream.
    tiered_store<cuda::device_store, host_store, hdf5_store> store(
        cuda::copier(),
        {tier_options{}, tier_options{.asynchronous = m.host_async, .async = staging},
         tier_options{.asynchronous = m.disk_async, .async = staging}},
        cuda::device_store(capacity_for(levels[0]), {.slot_bytes = s.bytes}),
        host_store(capacity_for(levels[1]), {.memory = &pinned}),
        hdf5_store(s.dir / "cuda_tiers.h5", level_capacity{}));
    auto* x = reinterpret_cast<double*>(state.data());
    auto* a = reinterpret_cast<double*>(adjoint_state.data());
    cuda::device_span<double> span(x, n);
    outcome out;
    for (int r = 0; r <= s.repeats; ++r) {
        cuda::detail::check(cudaMemset(x, 0, s.bytes), "cudaMemset");
        cuda::detail::check(cudaMemset(a, 0, s.bytes), "cudaMemset");
        bench::device_sync();
        const double seconds = time_runs(1, [&] {
            out.report = run(plan, store, span, remat::forward_step([&](step_t, cuda::device_span<double>& u) {
                                 bench::compute(u.data(), n, s.iterations);
                             }),
                             remat::adjoint_step([&](step_t, cuda::device_span<double>& u) {
                                 bench::adjoint(a, u.data(), n, s.iterations);
                             }));
            bench::device_sync();
        })[0];
        if (r > 0)
            out.seconds.push_back(seconds);
    }
    return out;
}

void print_levels(const run_report& r)
{
    for (const level_report& l : r.levels)
        std::printf("    %-7s stores %5llu  restores %5llu  waited %7.3f s  overlapped %7.3f s\n", l.name.c_str(),
                    static_cast<unsigned long long>(l.stores), static_cast<unsigned long long>(l.restores),
                    l.wait_seconds, l.overlapped_seconds);
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: cuda_tiers [DIR=$TMPDIR or /tmp] [MiB=64] [steps=200] [repeats=3] [step_ms=4]\n"
            "A gradient loop on the GPU through all three levels \u2014 device slots, pinned host slots, an HDF5 file\n"
            "\u2014 with the slow levels synchronous, the disk behind a worker thread (write-behind, read-ahead), and\n"
            "both behind workers.\n"))
        return 0;
    const char* tmp = std::getenv("TMPDIR");
    setup s;
    s.dir = argc > 1 ? argv[1] : (tmp != nullptr ? tmp : "/tmp");
    s.bytes = (argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 64) << 20;
    s.steps = argc > 3 ? std::atoll(argv[3]) : 200;
    s.repeats = argc > 4 ? std::atoi(argv[4]) : 3;
    const double step_seconds = (argc > 5 ? std::atof(argv[5]) : 4.0) * 1e-3;
    if (remat::bench::skipped_without_a_device("cuda_tiers"))
        return 0;
    if (s.bytes == 0 || s.steps < 2 || s.repeats < 1 || step_seconds <= 0) {
        std::fprintf(stderr, "usage: cuda_tiers [DIR] [MiB >= 1] [steps >= 2] [repeats >= 1] [step_ms > 0]\n");
        return 2;
    }
    try {
        const std::size_t n = s.bytes / sizeof(double);
        device_buffer state(s.bytes), adjoint_state(s.bytes);
        auto* x = reinterpret_cast<double*>(state.data());
        auto* a = reinterpret_cast<double*>(adjoint_state.data());
        s.iterations = bench::calibrate(x, n, step_seconds);
        const double t_f = median(time_runs(5, [&] {
            bench::compute(x, n, s.iterations);
            bench::device_sync();
        }));
        const double t_b = median(time_runs(5, [&] {
            bench::adjoint(a, x, n, s.iterations);
            bench::device_sync();
        }));

        // Per-snapshot transfer times of the two slow levels, as calibration would measure them.
        cuda::pinned_memory_resource pinned;
        host_store host_probe(level_capacity{.slots = 1}, {.memory = &pinned, .copy = cuda::copier()});
        hdf5_store::options disk;
        disk.copy = cuda::copier();
        const auto [host_w, host_r] = transfer_seconds(host_probe, state);
        double disk_w = 0, disk_r = 0;
        {
            hdf5_store disk_probe(s.dir / "cuda_tiers_probe.h5", level_capacity{.slots = 1}, disk);
            std::tie(disk_w, disk_r) = transfer_seconds(disk_probe, state);
        }
        std::filesystem::remove(s.dir / "cuda_tiers_probe.h5");

        cost_model model{{{"device", 2, 0, 0},
                          {"host", 4, host_w / t_f, host_r / t_f},
                          {"disk", level_spec::unlimited, disk_w / t_f, disk_r / t_f}}};
        model.reverse_cost = t_b / t_f;
        const multilevel plan(s.steps, model);
        const schedule_cost c = plan.cost();
        const double compute_only = static_cast<double>(c.forward_steps) * t_f + static_cast<double>(s.steps) * t_b;

        cudaDeviceProp prop{};
        cuda::detail::check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
        std::printf("cuda_tiers on %s: %zu MiB state, T = %lld, forward kernel %.3f ms, adjoint %.3f ms\n", prop.name,
                    s.bytes >> 20, static_cast<long long>(s.steps), t_f * 1e3, t_b * 1e3);
        std::printf("  per snapshot: host write %.3f ms, read %.3f ms; disk (%s) write %.3f ms, read %.3f ms\n",
                    host_w * 1e3, host_r * 1e3, s.dir.c_str(), disk_w * 1e3, disk_r * 1e3);
        std::printf(
            "  plan: device 2 + host 4 + disk, %llu forward steps; stores per level %llu/%llu/%llu\n",
            static_cast<unsigned long long>(c.forward_steps), static_cast<unsigned long long>(c.levels[0].stores),
            static_cast<unsigned long long>(c.levels[1].stores), static_cast<unsigned long long>(c.levels[2].stores));
        std::printf("  compute alone %.3f s; predicted with synchronous transfers %.3f s\n", compute_only,
                    c.predicted_cost * t_f);

        for (const mode& m : {mode{"synchronous", false, false}, mode{"disk behind a worker", false, true},
                              mode{"host and disk behind workers", true, true}}) {
            const outcome o = run_mode(s, plan, m, state, adjoint_state);
            std::filesystem::remove(s.dir / "cuda_tiers.h5");
            const double t = median(o.seconds);
            std::printf("  %-28s median %.3f s of %d = %.3fx compute alone; last run:\n", m.name, t, s.repeats,
                        t / compute_only);
            print_levels(o.report);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cuda_tiers: %s\n", e.what());
        return 1;
    }
    return 0;
}
