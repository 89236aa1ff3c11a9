// remat/store/snapshot_view.hpp — bytes of one snapshot, and where they live.
//
// Stores move snapshots as byte views. A view says whether its bytes are in host memory or in device
// (GPU) memory, so that a level can pick the right copy (memcpy, cudaMemcpyAsync, a file write).
#pragma once

#include <cstddef>
#include <span>

namespace remat {

/// Where the bytes of a view live.
enum class memory_space { host, device };

/// Read-only bytes of a snapshot or state.
struct const_bytes {
    const std::byte* data = nullptr;
    std::size_t size = 0;
    memory_space space = memory_space::host;
};

/// Writable bytes of a snapshot or state.
struct mutable_bytes {
    std::byte* data = nullptr;
    std::size_t size = 0;
    memory_space space = memory_space::host;
    operator const_bytes() const noexcept { return {data, size, space}; } // NOLINT: a view narrows freely
};

/// Host bytes from a span.
///
///     std::vector<double> v(8);
///     remat::const_bytes b = remat::host_bytes(std::as_bytes(std::span(v)));
[[nodiscard]] inline const_bytes host_bytes(std::span<const std::byte> s) noexcept
{
    return {s.data(), s.size(), memory_space::host};
}
[[nodiscard]] inline mutable_bytes host_bytes(std::span<std::byte> s) noexcept
{
    return {s.data(), s.size(), memory_space::host};
}

} // namespace remat

namespace remat {

/// Copies `size` bytes between memory spaces. Stores take one so that host-only builds need no CUDA:
/// host_copy handles host memory and refuses device memory; remat::cuda::copy_bytes handles both.
using byte_copier = void (*)(void* dst, memory_space dst_space, const void* src, memory_space src_space,
                             std::size_t size);

/// memcpy between host buffers; throws remat::argument_error for device memory.
void host_copy(void* dst, memory_space dst_space, const void* src, memory_space src_space, std::size_t size);

} // namespace remat
