// Device->host offload through remat, against raw cudaMemcpyAsync into pinned memory measured in the same
// run (medians of interleaved repetitions; goal: >= 80% of the raw bandwidth), and the share of the
// transfer time hidden behind a compute kernel on the user's stream.
//
//   bandwidth   raw:        cudaMemcpyAsync device -> pinned host on a stream of its own, then sync
//               copy_out:   remat::cuda::device_store::copy_out of a snapshot slot into pinned memory
//                           (the write-behind path of a tiered store), then wait_slot
//               host_store: remat::host_store on pinned memory with remat::cuda::copier(), write of
//                           a device state (synchronous)
//   overlap     a forward step (a compute-bound kernel that modifies the state, sized to take about as
//               long as the transfer) runs on the user's stream right after the state is stored:
//               write-behind: device_store.write (device copy) + copy_out (device -> host) + kernel;
//               synchronous: host_store.write (device -> host) + kernel.
//               hidden = (t_kernel + t_transfer - t_both) / t_transfer, from medians.
//
//     ./build/bench/cuda_offload [MiB=256] [repeats=21]
#include "program_help.hpp"

#include "bench_util.hpp"
#include "cuda_compute.cuh"

#include "remat/cuda/copy.hpp"
#include "remat/cuda/detail/check.hpp"
#include "remat/cuda/device_buffer.hpp"
#include "remat/cuda/device_store.hpp"
#include "remat/cuda/pinned_buffer.hpp"
#include "remat/cuda/pinned_memory_resource.hpp"
#include "remat/cuda/stream.hpp"
#include "remat/store/host_store.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using remat::cuda::detail::check;

using remat::bench::calibrate;
using remat::bench::compute;
using remat::bench::device_sync;

double gb_per_s(std::size_t bytes, double seconds)
{
    return static_cast<double>(bytes) / seconds * 1e-9;
}

struct bandwidth {
    double raw, copy_out, host_store;
};

bandwidth measure_bandwidth(std::size_t bytes, int repeats)
{
    remat::cuda::device_buffer state(bytes);
    remat::cuda::pinned_buffer host(bytes);
    remat::cuda::stream raw_stream;
    check(cudaMemset(state.data(), 1, bytes), "cudaMemset");
    remat::cuda::device_store device(remat::level_capacity{.slots = 1}, {.slot_bytes = bytes});
    device.write(0, 0, state.bytes());
    device.synchronize();
    remat::cuda::pinned_memory_resource pinned;
    remat::host_store pinned_store(remat::level_capacity{.slots = 1},
                                   {.memory = &pinned, .copy = remat::cuda::copier()});
    pinned_store.write(0, 0, state.bytes()); // the slot's pinned memory is allocated once, here
    pinned_store.release(0);
    device_sync();

    std::vector<double> raw, out, store;
    for (int r = 0; r < repeats + 1; ++r) { // the first round warms up and is dropped
        const auto t_raw = remat::bench::time_runs(1, [&] {
            check(cudaMemcpyAsync(host.data(), state.data(), bytes, cudaMemcpyDeviceToHost, raw_stream.get()),
                  "cudaMemcpyAsync");
            raw_stream.synchronize();
        });
        const auto t_out = remat::bench::time_runs(1, [&] {
            device.copy_out(0, 0, host.bytes());
            device.wait_slot(0);
        });
        const auto t_store = remat::bench::time_runs(1, [&] { pinned_store.write(0, 1, state.bytes()); });
        pinned_store.release(0);
        if (r > 0) {
            raw.push_back(t_raw[0]);
            out.push_back(t_out[0]);
            store.push_back(t_store[0]);
        }
    }
    return {gb_per_s(bytes, remat::bench::median(raw)), gb_per_s(bytes, remat::bench::median(out)),
            gb_per_s(bytes, remat::bench::median(store))};
}

double hidden_share(double kernel, double transfer, double both)
{
    return std::clamp((kernel + transfer - both) / transfer, 0.0, 1.0);
}

void measure_overlap(std::size_t bytes, int repeats)
{
    const std::size_t n = bytes / sizeof(double);
    remat::cuda::device_buffer state(n * sizeof(double));
    remat::cuda::pinned_buffer host(n * sizeof(double));
    auto* x = reinterpret_cast<double*>(state.data());
    check(cudaMemset(x, 0, n * sizeof(double)), "cudaMemset");
    remat::cuda::device_store device(remat::level_capacity{.slots = 1}, {.slot_bytes = n * sizeof(double)});
    remat::cuda::pinned_memory_resource pinned;
    remat::host_store pinned_store(remat::level_capacity{.slots = 1},
                                   {.memory = &pinned, .copy = remat::cuda::copier()});
    pinned_store.write(0, 0, state.bytes());
    pinned_store.release(0);

    // The transfer alone, each way, to size the kernel.
    auto behind = [&](remat::step_t k) {
        device.write(0, k, state.bytes());
        device.copy_out(0, k, host.bytes());
    };
    const double transfer_estimate = remat::bench::median(remat::bench::time_runs(5, [&] {
        behind(0);
        device.wait_slot(0);
        device.release(0);
    }));
    const int iterations = calibrate(x, n, 1.5 * transfer_estimate);

    std::vector<double> kernel, wb_transfer, wb_both, sync_transfer, sync_both;
    for (int r = 0; r < repeats + 1; ++r) {
        const double t_kernel = remat::bench::time_runs(1, [&] {
            compute(x, n, iterations);
            device_sync();
        })[0];
        const double t_wb_transfer = remat::bench::time_runs(1, [&] {
            behind(r);
            device.wait_slot(0);
            device_sync();
        })[0];
        device.release(0);
        const double t_wb_both = remat::bench::time_runs(1, [&] {
            behind(r);
            compute(x, n, iterations); // the next forward step, on the user's stream
            device.wait_slot(0);
            device_sync();
        })[0];
        device.release(0);
        const double t_sync_transfer = remat::bench::time_runs(1, [&] { pinned_store.write(0, r, state.bytes()); })[0];
        pinned_store.release(0);
        const double t_sync_both = remat::bench::time_runs(1, [&] {
            pinned_store.write(0, r, state.bytes());
            compute(x, n, iterations);
            device_sync();
        })[0];
        pinned_store.release(0);
        if (r > 0) {
            kernel.push_back(t_kernel);
            wb_transfer.push_back(t_wb_transfer);
            wb_both.push_back(t_wb_both);
            sync_transfer.push_back(t_sync_transfer);
            sync_both.push_back(t_sync_both);
        }
    }
    using remat::bench::median;
    const double k = median(kernel);
    std::printf("\noverlap: %zu MiB state, forward-step kernel %.3f ms (median of %d)\n", bytes >> 20, k * 1e3,
                repeats);
    std::printf("%-34s %12s %12s %12s %10s\n", "path", "transfer ms", "both ms", "kernel ms", "hidden");
    const double wt = median(wb_transfer), wb = median(wb_both);
    const double st = median(sync_transfer), sb = median(sync_both);
    std::printf("%-34s %12.3f %12.3f %12.3f %9.1f%%\n", "device_store write + copy_out", wt * 1e3, wb * 1e3, k * 1e3,
                100 * hidden_share(k, wt, wb));
    std::printf("%-34s %12.3f %12.3f %12.3f %9.1f%%\n", "host_store + cuda::copier (sync)", st * 1e3, sb * 1e3, k * 1e3,
                100 * hidden_share(k, st, sb));
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: cuda_offload [MiB=256] [repeats=21]\n"
            "Device->host offload through remat, against raw cudaMemcpyAsync into pinned memory measured in the\n"
            "same run (medians of interleaved repetitions; goal: >= 80% of the raw bandwidth), and the share of\n"
            "the transfer time hidden behind a compute kernel on the user's stream.\n"))
        return 0;
    const std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
    const int repeats = argc > 2 ? std::atoi(argv[2]) : 21;
    if (remat::bench::skipped_without_a_device("cuda_offload"))
        return 0;
    if (mib == 0 || repeats < 1) {
        std::fprintf(stderr, "usage: cuda_offload [MiB >= 1] [repeats >= 1]\n");
        return 2;
    }
    try {
        cudaDeviceProp prop{};
        check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
        std::printf("cuda_offload on %s: device -> pinned host, medians of %d interleaved repetitions\n", prop.name,
                    repeats);
        std::printf("%-10s %12s %14s %8s %16s %8s\n", "MiB", "raw GB/s", "copy_out GB/s", "ratio", "host_store GB/s",
                    "ratio");
        std::vector<std::size_t> sizes{16, 64, mib};
        std::sort(sizes.begin(), sizes.end());
        sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
        for (const std::size_t m : sizes) {
            const bandwidth b = measure_bandwidth(m << 20, repeats);
            std::printf("%-10zu %12.2f %14.2f %8.3f %16.2f %8.3f\n", m, b.raw, b.copy_out, b.copy_out / b.raw,
                        b.host_store, b.host_store / b.raw);
        }
        measure_overlap(mib << 20, repeats);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cuda_offload: %s\n", e.what());
        return 1;
    }
    return 0;
}
