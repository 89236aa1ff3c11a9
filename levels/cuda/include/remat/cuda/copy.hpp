// remat/cuda/copy.hpp — copiers (remat::byte_copier) for every combination of host and device memory, so
// that host and disk levels can hold snapshots of device states. One is given once to a store: a lone
// level's options::copy, or tiered_store(copier, levels...), which hands it to every level.
#pragma once

#include "remat/cuda/config.hpp"
#include "remat/store/snapshot_view.hpp"

#include <cstddef>
#include <cstring>

#if !REMAT_DEVICE_SYSTEM_HOST
#include <cuda_runtime_api.h>

#include <optional>
#endif

namespace remat::cuda {

#if REMAT_DEVICE_SYSTEM_HOST
inline namespace host_backend {
/// On a CPU back end "device" memory is host memory: a memcpy.
inline void copy_bytes(void* dst, memory_space, const void* src, memory_space, std::size_t size) noexcept
{
    if (size != 0)
        std::memcpy(dst, src, size);
}
namespace detail {
inline void copy_any(void* /*context*/, void* dst, memory_space dst_space, const void* src, memory_space src_space,
                     std::size_t size) noexcept
{
    copy_bytes(dst, dst_space, src, src_space, size);
}
} // namespace detail
/// On a CPU back end: a memcpy copier (there are no streams to order against).
[[nodiscard]] inline byte_copier copier() noexcept
{
    return {&detail::copy_any, nullptr};
}
} // namespace host_backend
#else
/// Copies `size` bytes between any host and device memory (cudaMemcpyDefault), synchronously, on CUDA's
/// legacy default stream: the same as copier()'s copies. Throws cuda_error.
void copy_bytes(void* dst, memory_space dst_space, const void* src, memory_space src_space, std::size_t size);

/// A copier between any host and device memory that copies on `user_stream`, the stream of the user's
/// kernels (nullptr or cudaStreamLegacy: CUDA's legacy default stream, where Thrust and plain <<<...>>>
/// launches go; the two make equal copiers). Each copy is enqueued there, so it starts after the kernels
/// enqueued before it (it sees the state they produce), and returns once the bytes are in place.
/// Host-to-host copies are a plain memcpy. Copies throw cuda_error. Given to a tiered_store, it also tells
/// a device_store level which stream to order its own copies against (see copier_stream). Its
/// wait_for_user() synchronises the stream: the driver calls it when a user step returns, so that the
/// GPU time of the step's kernels is charged to the step (docs/cuda.md, "Time").
///
///     remat::cuda::pinned_memory_resource pinned;
///     remat::tiered_store store(remat::cuda::copier(my_stream),
///                               remat::cuda::device_store(16),                         // user_stream from the copier
///                               remat::host_store(64, {.memory = &pinned}));           // copies on my_stream
///     remat::run(plan, store, device_state, remat::forward_step(forward), remat::adjoint_step(adjoint));
[[nodiscard]] byte_copier copier(cudaStream_t user_stream = nullptr) noexcept;

/// The stream a copier made by copier() copies on (nullptr for the legacy default stream, however it was
/// named); nullopt for any other copier.
[[nodiscard]] std::optional<cudaStream_t> copier_stream(const byte_copier& copy) noexcept;
#endif

} // namespace remat::cuda
