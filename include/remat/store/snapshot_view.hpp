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

namespace detail {
/// The copy behind remat::host_copy: memcpy between host buffers; throws remat::argument_error for device
/// memory.
void host_copy_bytes(void* context, void* dst, memory_space dst_space, const void* src, memory_space src_space,
                     std::size_t size);
} // namespace detail

/// Copies `size` bytes between memory spaces: a function and the context it was made with (a CUDA
/// stream, say), and optionally a function that waits for the user's work there; three pointers, called
/// without allocating. A store is given one copier, once: a lone
/// level in its options, a tiered_store in its constructor, which hands it to each of its levels and to
/// their staging engines. The default copier is remat::host_copy, so host-only builds need no CUDA;
/// remat::cuda::copier(stream) copies between host and device memory on the user's stream.
///
///     remat::tiered_store store(remat::cuda::copier(my_stream), remat::cuda::device_store(16),
///                               remat::host_store(64, {.memory = &pinned}));
class byte_copier {
public:
    /// The copy: `context` is the pointer the copier was made with.
    using function = void (*)(void* context, void* dst, memory_space dst_space, const void* src, memory_space src_space,
                              std::size_t size);

    /// Blocks until the user's work that copies made with `context` are ordered after has finished (a
    /// CUDA stream's kernels, say); null when there is none to wait for.
    using wait_function = void (*)(void* context);

    /// remat::host_copy.
    constexpr byte_copier() noexcept = default;
    /// Calls `copy(context, ...)`, and `wait(context)` for wait_for_user(); a null `copy` is refused
    /// (argument_error) by the store given it.
    constexpr byte_copier(function copy, void* context, wait_function wait = nullptr) noexcept
        : copy_(copy), context_(context), wait_(wait)
    {
    }

    void operator()(void* dst, memory_space dst_space, const void* src, memory_space src_space, std::size_t size) const
    {
        copy_(context_, dst, dst_space, src, src_space, size);
    }
    /// Waits for the user's work the copies are ordered after (remat::cuda::copier(stream): the kernels on
    /// `stream`); nothing for host_copy. The driver calls it, through the store, when a user step
    /// returns, so that the time the GPU spends on the step is charged to the step, not to remat.
    void wait_for_user() const
    {
        if (wait_ != nullptr)
            wait_(context_);
    }
    [[nodiscard]] constexpr function target() const noexcept { return copy_; }
    [[nodiscard]] constexpr void* context() const noexcept { return context_; }
    /// Same functions, same context.
    friend constexpr bool operator==(const byte_copier&, const byte_copier&) = default;

private:
    function copy_ = &detail::host_copy_bytes;
    void* context_ = nullptr;
    wait_function wait_ = nullptr;
};

/// memcpy between host buffers; throws remat::argument_error for device memory. The default copier.
inline constexpr byte_copier host_copy{};

} // namespace remat
