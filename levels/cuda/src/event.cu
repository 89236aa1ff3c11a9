// remat::cuda::event: an owned CUDA event.
#include "remat/cuda/detail/check.hpp"
#include "remat/cuda/event.hpp"

#include <utility>

namespace remat::cuda {

event::event(timing t)
{
    detail::check(cudaEventCreateWithFlags(&handle_, t == timing::on ? cudaEventDefault : cudaEventDisableTiming),
                  "cudaEventCreateWithFlags");
}

event::~event()
{
    if (handle_ != nullptr)
        (void)cudaEventDestroy(handle_);
}

event::event(event&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

event& event::operator=(event&& other) noexcept
{
    std::swap(handle_, other.handle_);
    return *this;
}

void event::record(cudaStream_t s)
{
    detail::check(cudaEventRecord(handle_, s), "cudaEventRecord");
}

void event::synchronize() const
{
    detail::check(cudaEventSynchronize(handle_), "cudaEventSynchronize");
}

bool event::ready() const
{
    const cudaError_t status = cudaEventQuery(handle_);
    if (status == cudaErrorNotReady)
        return false;
    detail::check(status, "cudaEventQuery");
    return true;
}

double elapsed_seconds(const event& start, const event& end)
{
    float ms = 0;
    detail::check(cudaEventElapsedTime(&ms, start.get(), end.get()), "cudaEventElapsedTime");
    return static_cast<double>(ms) * 1e-3;
}

} // namespace remat::cuda
