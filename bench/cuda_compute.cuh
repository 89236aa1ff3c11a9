// Compute-bound kernels that stand in for a user's forward and adjoint steps in the GPU benchmarks, sized
// by calibration to take a chosen time.
#pragma once

#include "bench_util.hpp"

#include "remat/cuda/detail/check.hpp"
#include "remat/cuda/device_missing.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>

namespace remat::bench {

/// x_i <- f^iterations(x_i): a forward step that modifies the state in place.
__global__ void compute_kernel(double* x, std::size_t n, int iterations)
{
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
         i += std::size_t{gridDim.x} * blockDim.x) {
        double v = x[i];
        for (int k = 0; k < iterations; ++k)
            v = v * 0.999999 + 1e-7;
        x[i] = v;
    }
}

/// a_i <- f^iterations(a_i) + 1e-12 x_i: an adjoint step that reads the state it is given.
__global__ void adjoint_kernel(double* a, const double* x, std::size_t n, int iterations)
{
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
         i += std::size_t{gridDim.x} * blockDim.x) {
        double v = a[i];
        for (int k = 0; k < iterations; ++k)
            v = v * 0.999999 + 1e-7;
        a[i] = v + 1e-12 * x[i];
    }
}

/// The forward kernel on the user's stream (the legacy default stream).
inline void compute(double* x, std::size_t n, int iterations)
{
    compute_kernel<<<1024, 256>>>(x, n, iterations);
    cuda::detail::check(cudaGetLastError(), "compute_kernel launch");
}

inline void adjoint(double* a, const double* x, std::size_t n, int iterations)
{
    adjoint_kernel<<<1024, 256>>>(a, x, n, iterations);
    cuda::detail::check(cudaGetLastError(), "adjoint_kernel launch");
}

/// Without a usable CUDA device, prints "<program>: skipped: no CUDA device (why)" and returns true.
inline bool skipped_without_a_device(const char* program)
{
    const std::string why = cuda::device_missing();
    if (why.empty())
        return false;
    std::printf("%s: skipped: %s\n", program, why.c_str());
    return true;
}

inline void device_sync()
{
    cuda::detail::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

/// Kernel iterations that make compute() take about `seconds` on `n` doubles.
inline int calibrate(double* x, std::size_t n, double seconds)
{
    int iterations = 64;
    for (int attempt = 0; attempt < 20; ++attempt) {
        compute(x, n, iterations); // warm
        device_sync();
        const double t = median(time_runs(3, [&] {
            compute(x, n, iterations);
            device_sync();
        }));
        if (t >= 0.8 * seconds || iterations > (1 << 24))
            return std::max(1, static_cast<int>(iterations * seconds / t));
        iterations *= 2;
    }
    return iterations;
}

} // namespace remat::bench
