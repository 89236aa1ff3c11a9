// remat/store/snapshot_view.hpp — bytes of one snapshot, and where they live.
//
// Stores move snapshots as byte views. A view says whether its bytes are in host memory or in device
// (GPU) memory, so that a level can pick the right copy (memcpy, cudaMemcpyAsync, a file write). A
// snapshot is one view, or several parts (const_parts / mutable_parts): a state made of several buffers,
// each in its own memory space, that a level gathers into one slot and scatters back.
#pragma once

#include <cstddef>
#include <numeric>
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

/// The parts of one snapshot, in order: a level writes them one after the other into one slot.
///
///     std::array<remat::const_bytes, 2> hc{remat::host_bytes(std::as_bytes(std::span(h))),
///                                          remat::host_bytes(std::as_bytes(std::span(c)))};
///     store.write(3, 17, remat::const_parts(hc));   // x_17 = (h, c) into slot 3
using const_parts = std::span<const const_bytes>;
/// Where the parts of a restored snapshot go, in the order they were written.
///
///     store.read(3, 17, remat::mutable_parts(hc_out));
using mutable_parts = std::span<const mutable_bytes>;

/// Bytes of all parts together.
[[nodiscard]] inline std::size_t total_bytes(const_parts parts) noexcept
{
    return std::accumulate(parts.begin(), parts.end(), std::size_t{0},
                           [](std::size_t sum, const const_bytes& p) { return sum + p.size; });
}
[[nodiscard]] inline std::size_t total_bytes(mutable_parts parts) noexcept
{
    return std::accumulate(parts.begin(), parts.end(), std::size_t{0},
                           [](std::size_t sum, const mutable_bytes& p) { return sum + p.size; });
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
