// remat::cuda::pinned_buffer: owned page-locked host memory.
#include "remat/cuda/detail/check.hpp"
#include "remat/cuda/pinned_buffer.hpp"

#include <utility>

namespace remat::cuda {

pinned_buffer::pinned_buffer(std::size_t size, unsigned flags) : size_(size)
{
    if (size == 0)
        return;
    void* p = nullptr;
    const cudaError_t status = cudaHostAlloc(&p, size, flags);
    if (status != cudaSuccess)
        detail::throw_allocation_error(status, "cudaHostAlloc", size);
    data_ = static_cast<std::byte*>(p);
}

pinned_buffer::~pinned_buffer()
{
    if (data_ != nullptr)
        (void)cudaFreeHost(data_);
}

pinned_buffer::pinned_buffer(pinned_buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0))
{
}

pinned_buffer& pinned_buffer::operator=(pinned_buffer&& other) noexcept
{
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
}

} // namespace remat::cuda
