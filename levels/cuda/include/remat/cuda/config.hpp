// remat/cuda/config.hpp — which back end "device" code compiles for, and what the host compiler lacks.
//
// The same source builds for a GPU (nvcc, Thrust's CUDA back end) and for the CPU (g++, Thrust's CPP or
// OMP back end, where "device" memory is host memory). This header decides which, once:
//
//   REMAT_DEVICE_SYSTEM_HOST  1 when THRUST_DEVICE_SYSTEM names a CPU back end (CPP, OMP, TBB), else 0.
//                             Define it yourself to override the choice.
//   REMAT_HOST_DEVICE         `__host__ __device__` under nvcc, nothing under a host compiler (CCCL 3
//                             defines no __host__/__device__ for g++), for functions kernels share:
//
//     struct scale { double a; REMAT_HOST_DEVICE double operator()(double x) const { return a * x; } };
//     thrust::transform(v.begin(), v.end(), v.begin(), scale{2.0});   // GPU under nvcc, CPU under g++
#pragma once

#include "remat/store/snapshot_view.hpp"

#if defined(__CUDACC__)
#define REMAT_HOST_DEVICE __host__ __device__
#else
#define REMAT_HOST_DEVICE
#endif

#if !defined(REMAT_DEVICE_SYSTEM_HOST)
#if defined(THRUST_DEVICE_SYSTEM)
#include <thrust/detail/config.h>
#if THRUST_DEVICE_SYSTEM != THRUST_DEVICE_SYSTEM_CUDA
#define REMAT_DEVICE_SYSTEM_HOST 1
#else
#define REMAT_DEVICE_SYSTEM_HOST 0
#endif
#else
#define REMAT_DEVICE_SYSTEM_HOST 0
#endif
#endif

// remat_use_thrust() (cmake/RematThrust.cmake) names the Thrust a target was configured for; a header
// of another Thrust reaching it (two Thrust versions in one target) stops the build here.
#if defined(REMAT_THRUST_VERSION) && defined(THRUST_VERSION)
#if THRUST_VERSION != REMAT_THRUST_VERSION
#error                                                                                                                 \
    "remat: this target was configured for another Thrust version (REMAT_THRUST_VERSION) than it includes (THRUST_VERSION); never mix two Thrusts in one target"
#endif
#endif

namespace remat::cuda {

/// Where "device" memory lives in this build: GPU memory, or host memory on a CPU back end.
///
///     static_assert(remat::cuda::device_space == remat::memory_space::device);   // under nvcc
inline constexpr memory_space device_space = REMAT_DEVICE_SYSTEM_HOST ? memory_space::host : memory_space::device;

} // namespace remat::cuda
