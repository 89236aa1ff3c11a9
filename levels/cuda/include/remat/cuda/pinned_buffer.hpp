// remat/cuda/pinned_buffer.hpp — owned page-locked host memory (RAII), the staging area that makes
// device<->host copies asynchronous and fast.
#pragma once

#include "remat/store/snapshot_view.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>

namespace remat::cuda {

/// `size` bytes of pinned host memory (cudaHostAlloc). Copies between it and device memory run at full
/// PCIe/NVLink bandwidth and asynchronously, unlike copies to pageable memory. Move-only.
///
///     remat::cuda::pinned_buffer staging(64 << 20);
///     cudaMemcpyAsync(staging.data(), dev, staging.size(), cudaMemcpyDeviceToHost, s.get());
class pinned_buffer {
public:
    pinned_buffer() = default;
    /// Throws remat::capacity_error when the memory cannot be pinned, cuda_error for other failures.
    /// `flags` are cudaHostAlloc's (cudaHostAllocMapped for memory kernels read directly, ...).
    explicit pinned_buffer(std::size_t size, unsigned flags = cudaHostAllocDefault);
    ~pinned_buffer();
    pinned_buffer(pinned_buffer&& other) noexcept;
    pinned_buffer& operator=(pinned_buffer&& other) noexcept;
    pinned_buffer(const pinned_buffer&) = delete;
    pinned_buffer& operator=(const pinned_buffer&) = delete;

    [[nodiscard]] std::byte* data() const noexcept { return data_; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::span<std::byte> span() const noexcept { return {data_, size_}; }
    /// The buffer as a host byte view, for a store's read or write.
    [[nodiscard]] mutable_bytes bytes() const noexcept { return {data_, size_, memory_space::host}; }

private:
    std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace remat::cuda
