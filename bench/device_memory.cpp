// The allocation wrappers behind device_memory.hpp (the linker's --wrap sends every call of cudaMalloc,
// cudaFree, cudaMallocAsync and cudaFreeAsync here; __real_* are the CUDA runtime's own).
#include "device_memory.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <unordered_map>

extern "C" {
cudaError_t __real_cudaMalloc(void** p, std::size_t bytes);
cudaError_t __real_cudaFree(void* p);
cudaError_t __wrap_cudaMalloc(void** p, std::size_t bytes);
cudaError_t __wrap_cudaFree(void* p);
cudaError_t __real_cudaMallocAsync(void** p, std::size_t bytes, cudaStream_t stream);
cudaError_t __real_cudaFreeAsync(void* p, cudaStream_t stream);
cudaError_t __wrap_cudaMallocAsync(void** p, std::size_t bytes, cudaStream_t stream);
cudaError_t __wrap_cudaFreeAsync(void* p, cudaStream_t stream);
}

namespace {

struct ledger {
    std::mutex lock; // the device store's worker threads may allocate too
    std::unordered_map<void*, std::size_t> sizes;
    long long live = 0;
    long long peak = 0;
    long long allocations = 0;
};

ledger& the_ledger()
{
    // Never destroyed: static destructors (Thrust's, the runtime's) may still call cudaFree at exit.
    static ledger* l = new ledger;
    return *l;
}

void allocated(void* p, std::size_t bytes)
{
    ledger& l = the_ledger();
    const std::lock_guard guard(l.lock);
    l.sizes[p] = bytes;
    l.live += static_cast<long long>(bytes);
    l.peak = std::max(l.peak, l.live);
    ++l.allocations;
}

void freed(void* p)
{
    ledger& l = the_ledger();
    const std::lock_guard guard(l.lock);
    if (const auto it = l.sizes.find(p); it != l.sizes.end()) {
        l.live -= static_cast<long long>(it->second);
        l.sizes.erase(it);
    }
}

} // namespace

extern "C" cudaError_t __wrap_cudaMalloc(void** p, std::size_t bytes)
{
    const cudaError_t status = __real_cudaMalloc(p, bytes);
    if (status == cudaSuccess && p != nullptr && *p != nullptr)
        allocated(*p, bytes);
    return status;
}

extern "C" cudaError_t __wrap_cudaFree(void* p)
{
    if (p != nullptr)
        freed(p);
    return __real_cudaFree(p);
}

// Thrust's temporary buffers (reductions, sorts) are stream-ordered allocations.
extern "C" cudaError_t __wrap_cudaMallocAsync(void** p, std::size_t bytes, cudaStream_t stream)
{
    const cudaError_t status = __real_cudaMallocAsync(p, bytes, stream);
    if (status == cudaSuccess && p != nullptr && *p != nullptr)
        allocated(*p, bytes);
    return status;
}

// Counted as freed when enqueued: only work already on the stream may still touch the memory.
extern "C" cudaError_t __wrap_cudaFreeAsync(void* p, cudaStream_t stream)
{
    if (p != nullptr)
        freed(p);
    return __real_cudaFreeAsync(p, stream);
}

namespace remat::bench::device_memory {

long long live_bytes() noexcept
{
    ledger& l = the_ledger();
    const std::lock_guard guard(l.lock);
    return l.live;
}

long long peak_bytes() noexcept
{
    ledger& l = the_ledger();
    const std::lock_guard guard(l.lock);
    return l.peak;
}

void reset_peak() noexcept
{
    ledger& l = the_ledger();
    const std::lock_guard guard(l.lock);
    l.peak = l.live;
}

long long allocations() noexcept
{
    ledger& l = the_ledger();
    const std::lock_guard guard(l.lock);
    return l.allocations;
}

} // namespace remat::bench::device_memory
