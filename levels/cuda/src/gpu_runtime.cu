// remat::cuda::gpu_runtime: the CUDA calls behind the device level.
#include "remat/cuda/copy.hpp"
#include "remat/cuda/detail/check.hpp"
#include "remat/cuda/gpu_runtime.hpp"

#include <string>

namespace remat::cuda {

void* gpu_runtime::allocate(std::size_t bytes)
{
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, bytes);
    if (status != cudaSuccess)
        detail::throw_allocation_error(status, "cudaMalloc of the device store's slots", bytes);
    return p;
}

void gpu_runtime::deallocate(void* p, std::size_t) noexcept
{
    (void)cudaFree(p);
}

gpu_runtime::stream_handle gpu_runtime::create_stream()
{
    cudaStream_t s = nullptr;
    detail::check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    return s;
}

void gpu_runtime::destroy_stream(stream_handle s) noexcept
{
    if (s != nullptr)
        (void)cudaStreamDestroy(s);
}

gpu_runtime::event_handle gpu_runtime::create_event()
{
    cudaEvent_t e = nullptr;
    detail::check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    return e;
}

void gpu_runtime::destroy_event(event_handle e) noexcept
{
    if (e != nullptr)
        (void)cudaEventDestroy(e);
}

void gpu_runtime::copy(void* dst, memory_space, const void* src, memory_space, std::size_t size, stream_handle s)
{
    if (size == 0)
        return;
    const cudaError_t status = cudaMemcpyAsync(dst, src, size, cudaMemcpyDefault, s);
    if (status != cudaSuccess)
        detail::throw_cuda_error(status, "cudaMemcpyAsync", std::to_string(size) + " bytes");
}

void gpu_runtime::record(event_handle e, stream_handle s)
{
    detail::check(cudaEventRecord(e, s), "cudaEventRecord");
}

void gpu_runtime::wait(stream_handle s, event_handle e)
{
    detail::check(cudaStreamWaitEvent(s, e, 0), "cudaStreamWaitEvent");
}

void gpu_runtime::synchronize(event_handle e)
{
    detail::check(cudaEventSynchronize(e), "cudaEventSynchronize");
}

void gpu_runtime::synchronize_stream(stream_handle s)
{
    detail::check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
}

bool gpu_runtime::ready(event_handle e) const
{
    const cudaError_t status = cudaEventQuery(e);
    if (status == cudaErrorNotReady)
        return false;
    detail::check(status, "cudaEventQuery");
    return true;
}

std::optional<cudaStream_t> gpu_runtime::stream_of(const byte_copier& copy) noexcept
{
    return copier_stream(copy);
}

gpu_runtime::stream_handle gpu_runtime::canonical_stream(stream_handle s) noexcept
{
    return s == cudaStreamLegacy ? nullptr : s;
}

} // namespace remat::cuda
