// remat/cuda/gpu_runtime.hpp — the CUDA runtime behind remat::cuda::device_store (a device_runtime).
#pragma once

#include "remat/cuda/device_runtime.hpp"
#include "remat/store/snapshot_view.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <optional>

namespace remat::cuda {

/// Models device_runtime with the CUDA runtime: cudaMalloc for the slots, non-blocking streams, events
/// without timing, cudaMemcpyAsync with cudaMemcpyDefault (any host/device combination, unified
/// addressing). Every failure throws remat::cuda::cuda_error, out of memory remat::capacity_error.
/// The value-initialised stream_handle is CUDA's legacy default stream.
///
///     remat::cuda::basic_device_store<remat::cuda::gpu_runtime> store(8);   // = remat::cuda::device_store
struct gpu_runtime {
    using stream_handle = cudaStream_t;
    using event_handle = cudaEvent_t;
    static constexpr memory_space device_memory = memory_space::device;

    void* allocate(std::size_t bytes);
    void deallocate(void* p, std::size_t bytes) noexcept;
    stream_handle create_stream();
    void destroy_stream(stream_handle s) noexcept;
    event_handle create_event();
    void destroy_event(event_handle e) noexcept;
    void copy(void* dst, memory_space dst_space, const void* src, memory_space src_space, std::size_t size,
              stream_handle s);
    void record(event_handle e, stream_handle s);
    void wait(stream_handle s, event_handle e);
    void synchronize(event_handle e);
    void synchronize_stream(stream_handle s);
    [[nodiscard]] bool ready(event_handle e) const;
    /// The user's stream that a copier made by remat::cuda::copier copies on; nullopt for other copiers.
    [[nodiscard]] static std::optional<stream_handle> stream_of(const byte_copier& copy) noexcept;
    /// One handle per stream: cudaStreamLegacy becomes nullptr (both name the legacy default stream here,
    /// as in remat::cuda::copier), so that a store given either compares equal with a copier of either.
    [[nodiscard]] static stream_handle canonical_stream(stream_handle s) noexcept;
};

static_assert(device_runtime<gpu_runtime>);

} // namespace remat::cuda
