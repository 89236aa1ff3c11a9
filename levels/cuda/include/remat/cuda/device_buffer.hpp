// remat/cuda/device_buffer.hpp — owned device memory (RAII): staging and scratch on the GPU.
#pragma once

#include "remat/store/snapshot_view.hpp"

#include <cstddef>

namespace remat::cuda {

/// `size` bytes of device memory (cudaMalloc) on the current device. Move-only.
///
///     remat::cuda::device_buffer scratch(n * sizeof(double));
///     kernel<<<g, b>>>(reinterpret_cast<double*>(scratch.data()), n);
class device_buffer {
public:
    device_buffer() = default;
    /// Throws remat::capacity_error when the device is out of memory, cuda_error for other failures.
    explicit device_buffer(std::size_t size);
    ~device_buffer();
    device_buffer(device_buffer&& other) noexcept;
    device_buffer& operator=(device_buffer&& other) noexcept;
    device_buffer(const device_buffer&) = delete;
    device_buffer& operator=(const device_buffer&) = delete;

    [[nodiscard]] std::byte* data() const noexcept { return data_; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    /// The buffer as a device byte view, for a store's read or write.
    [[nodiscard]] mutable_bytes bytes() const noexcept { return {data_, size_, memory_space::device}; }

private:
    std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace remat::cuda
