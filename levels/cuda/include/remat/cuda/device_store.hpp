// remat/cuda/device_store.hpp — remat::cuda::device_store, the device level of this build: on the GPU
// under CUDA, in host memory under Thrust's CPU back ends (CPP, OMP), so the same code builds for both.
#pragma once

#include "remat/cuda/basic_device_store.hpp"
#include "remat/cuda/config.hpp"

#if REMAT_DEVICE_SYSTEM_HOST
#include "remat/cuda/host_runtime.hpp"
#else
#include "remat/cuda/gpu_runtime.hpp"
#endif

namespace remat::cuda {

#if REMAT_DEVICE_SYSTEM_HOST
/// The device level on a CPU back end: slots in one block of host memory, synchronous copies.
using device_store = basic_device_store<host_runtime>;
#else
extern template class basic_device_store<gpu_runtime>; // compiled once, in remat::cuda

/// The device level: slots in GPU memory, copies on its own streams ordered with events (see
/// basic_device_store.hpp for the ordering contract with the user's kernels).
///
///     remat::cuda::device_store store(16, {.user_stream = my_stream});
///     remat::run(remat::revolve(T, 16), store, x, remat::forward_step(forward), remat::adjoint_step(adjoint));
using device_store = basic_device_store<gpu_runtime>;
#endif

static_assert(gathering_level<device_store>); // takes multi-part states (an LSTM's h and c) part by part

} // namespace remat::cuda
