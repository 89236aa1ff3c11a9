// remat::cuda::device_buffer: owned device memory.
#include "remat/cuda/detail/check.hpp"
#include "remat/cuda/device_buffer.hpp"

#include <utility>

namespace remat::cuda {

device_buffer::device_buffer(std::size_t size) : size_(size)
{
    if (size == 0)
        return;
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, size);
    if (status != cudaSuccess)
        detail::throw_allocation_error(status, "cudaMalloc", size);
    data_ = static_cast<std::byte*>(p);
}

device_buffer::~device_buffer()
{
    if (data_ != nullptr)
        (void)cudaFree(data_);
}

device_buffer::device_buffer(device_buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0))
{
}

device_buffer& device_buffer::operator=(device_buffer&& other) noexcept
{
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
}

} // namespace remat::cuda
