// The counter behind device_allocations.hpp: the linker's --wrap=cudaMalloc (and cudaFree, cudaMallocAsync,
// cudaFreeAsync) sends every call of those functions made by the program's objects and static libraries
// here; each records the pointer's size and forwards to the CUDA runtime's own (__real_...).
#include "device_allocations.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <unordered_map>

extern "C" {
cudaError_t __real_cudaMalloc(void** ptr, std::size_t size);
cudaError_t __real_cudaFree(void* ptr);
cudaError_t __real_cudaMallocAsync(void** ptr, std::size_t size, cudaStream_t stream);
cudaError_t __real_cudaFreeAsync(void* ptr, cudaStream_t stream);
}

namespace {

struct ledger {
    std::mutex mutex;
    std::unordered_map<void*, std::size_t> sizes;
    std::uint64_t in_use = 0;
    std::uint64_t peak = 0;

    void allocated(void* p, std::size_t size)
    {
        const std::lock_guard lock(mutex);
        sizes[p] = size;
        in_use += size;
        peak = std::max(peak, in_use);
    }
    void freed(void* p)
    {
        const std::lock_guard lock(mutex);
        const auto it = sizes.find(p);
        if (it == sizes.end())
            return; // nullptr, or memory this counter never saw
        in_use -= it->second;
        sizes.erase(it);
    }
};

ledger& book()
{
    static ledger l; // constructed at the first allocation, before any static of Thrust's could free
    return l;
}

} // namespace

extern "C" {

cudaError_t __wrap_cudaMalloc(void** ptr, std::size_t size)
{
    const cudaError_t status = __real_cudaMalloc(ptr, size);
    if (status == cudaSuccess)
        book().allocated(*ptr, size);
    return status;
}

cudaError_t __wrap_cudaFree(void* ptr)
{
    const cudaError_t status = __real_cudaFree(ptr);
    if (status == cudaSuccess)
        book().freed(ptr);
    return status;
}

cudaError_t __wrap_cudaMallocAsync(void** ptr, std::size_t size, cudaStream_t stream)
{
    const cudaError_t status = __real_cudaMallocAsync(ptr, size, stream);
    if (status == cudaSuccess)
        book().allocated(*ptr, size);
    return status;
}

cudaError_t __wrap_cudaFreeAsync(void* ptr, cudaStream_t stream)
{
    const cudaError_t status = __real_cudaFreeAsync(ptr, stream);
    if (status == cudaSuccess)
        book().freed(ptr); // counted as freed when enqueued: the stream may still use it, nothing else can
    return status;
}

} // extern "C"

namespace remat::bench::device_allocations {

std::uint64_t in_use() noexcept
{
    const std::lock_guard lock(book().mutex);
    return book().in_use;
}

std::uint64_t peak() noexcept
{
    const std::lock_guard lock(book().mutex);
    return book().peak;
}

void reset_peak() noexcept
{
    const std::lock_guard lock(book().mutex);
    book().peak = book().in_use;
}

} // namespace remat::bench::device_allocations
