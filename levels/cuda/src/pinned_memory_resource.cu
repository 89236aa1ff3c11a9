// remat::cuda::pinned_memory_resource: cudaHostAlloc behind std::pmr.
#include "remat/cuda/detail/check.hpp"
#include "remat/cuda/pinned_memory_resource.hpp"
#include "remat/error.hpp"

#include <cstdint>
#include <string>

namespace remat::cuda {
namespace {
constexpr std::size_t page_alignment = 4096; // what cudaHostAlloc guarantees
}

void* pinned_memory_resource::do_allocate(std::size_t bytes, std::size_t alignment)
{
    if (alignment > page_alignment)
        throw argument_error("pinned memory is aligned to " + std::to_string(page_alignment) + " bytes, not " +
                             std::to_string(alignment));
    void* p = nullptr;
    const cudaError_t status = cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocDefault);
    if (status != cudaSuccess)
        detail::throw_allocation_error(status, "cudaHostAlloc", bytes);
    return p;
}

void pinned_memory_resource::do_deallocate(void* p, std::size_t, std::size_t)
{
    (void)cudaFreeHost(p); // deallocation cannot report; the pointer came from cudaHostAlloc
}

bool pinned_memory_resource::do_is_equal(const std::pmr::memory_resource& other) const noexcept
{
    return dynamic_cast<const pinned_memory_resource*>(&other) != nullptr;
}

} // namespace remat::cuda
