// remat/cuda/copy.hpp — a remat::byte_copier for every combination of host and device memory, so that
// remat::host_store can hold snapshots of device states.
#pragma once

#include "remat/cuda/config.hpp"
#include "remat/store/snapshot_view.hpp"

#include <cstddef>
#include <cstring>

namespace remat::cuda {

#if REMAT_DEVICE_SYSTEM_HOST
inline namespace host_backend {
/// On a CPU back end "device" memory is host memory: a memcpy.
inline void copy_bytes(void* dst, memory_space, const void* src, memory_space, std::size_t size) noexcept
{
    if (size != 0)
        std::memcpy(dst, src, size);
}
} // namespace host_backend
#else
/// Copies `size` bytes between any host and device memory (cudaMemcpyDefault), synchronously: the bytes
/// are in place when it returns. Host-to-host copies are a plain memcpy. It runs on CUDA's legacy
/// default stream, so it is ordered after kernels on that stream and on blocking streams; a state
/// written by kernels on a non-blocking stream must be synchronised before a store copies it (or use
/// remat::cuda::device_store, which orders its copies with events). Throws cuda_error.
///
///     remat::cuda::pinned_memory_resource pinned;
///     remat::host_store store({.slots = 64}, {.memory = &pinned, .copy = remat::cuda::copy_bytes});
///     remat::run(plan, store, device_state, remat::forward_step(forward), remat::adjoint_step(adjoint));      //
///     device -> pinned host and back
void copy_bytes(void* dst, memory_space dst_space, const void* src, memory_space src_space, std::size_t size);
#endif

} // namespace remat::cuda
