// remat/cuda/host_level.hpp — remat::host_store options for states that live on the GPU: slots in pinned
// memory, copies through the CUDA runtime. One line for every adapter and example that keeps device states
// in host RAM, so none of them can forget the copier (a host_store made with the default options refuses
// device memory, naming remat::cuda::copier()).
#pragma once

#include "remat/cuda/copy.hpp"
#include "remat/cuda/pinned_memory_resource.hpp"
#include "remat/store/host_store.hpp"

namespace remat::cuda {

/// The process's pinned memory resource (it holds no state; one object serves every store).
inline pinned_memory_resource& pinned_memory() noexcept
{
    static pinned_memory_resource resource;
    return resource;
}

/// Options for a host_store of device states: pinned slots and remat::cuda::copier(). On a Thrust CPU
/// back end, where "device" memory is host memory, the same call gives plain memory and memcpy.
///
///     thrust::device_vector<float> h = ...;                          // the state, on the GPU
///     remat::host_store store(64, remat::cuda::host_level_options());
///     remat::run(plan, store, h, remat::forward_step(forward), remat::adjoint_step(adjoint));
inline host_store::options host_level_options(const char* name = "host") noexcept
{
    return {.memory = &pinned_memory(), .copy = copier(), .name = name};
}

} // namespace remat::cuda
