// remat::cuda::stream: an owned non-blocking CUDA stream.
#include "remat/cuda/detail/check.hpp"
#include "remat/cuda/event.hpp"
#include "remat/cuda/stream.hpp"

#include <utility>

namespace remat::cuda {

stream::stream()
{
    detail::check(cudaStreamCreateWithFlags(&handle_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
}

stream::~stream()
{
    if (handle_ != nullptr)
        (void)cudaStreamDestroy(handle_); // a destructor cannot report; the work enqueued still completes
}

stream::stream(stream&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

stream& stream::operator=(stream&& other) noexcept
{
    std::swap(handle_, other.handle_);
    return *this;
}

void stream::synchronize() const
{
    detail::check(cudaStreamSynchronize(handle_), "cudaStreamSynchronize");
}

bool stream::idle() const
{
    const cudaError_t status = cudaStreamQuery(handle_);
    if (status == cudaErrorNotReady)
        return false;
    detail::check(status, "cudaStreamQuery");
    return true;
}

void stream::wait(const event& e) const
{
    detail::check(cudaStreamWaitEvent(handle_, e.get(), 0), "cudaStreamWaitEvent");
}

} // namespace remat::cuda
