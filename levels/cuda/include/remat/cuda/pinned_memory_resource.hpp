// remat/cuda/pinned_memory_resource.hpp — a std::pmr::memory_resource of pinned host memory, for stores
// whose host slots exchange snapshots with the GPU.
#pragma once

#include "remat/cuda/config.hpp"

#include <cstddef>
#include <memory_resource>

namespace remat::cuda {

#if REMAT_DEVICE_SYSTEM_HOST
inline namespace host_backend {
/// On a CPU back end there is nothing to pin: ordinary memory.
class pinned_memory_resource final : public std::pmr::memory_resource {
private:
    void* do_allocate(std::size_t bytes, std::size_t alignment) override
    {
        return std::pmr::new_delete_resource()->allocate(bytes, alignment);
    }
    void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override
    {
        std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
    }
    [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override
    {
        return dynamic_cast<const pinned_memory_resource*>(&other) != nullptr;
    }
};
} // namespace host_backend
#else
/// Page-locked host memory from cudaHostAlloc (page-aligned; alignments up to 4096 bytes). Device<->host
/// copies to it run at full bandwidth and may be asynchronous. Pinning is slow (a system call per
/// allocation): use it for slots allocated once, as remat::host_store does. Allocation failures throw
/// remat::capacity_error. Thread-safe (it holds no state).
///
///     remat::cuda::pinned_memory_resource pinned;
///     remat::host_store store({.slots = 64}, {.memory = &pinned, .copy = remat::cuda::copier()});
class pinned_memory_resource final : public std::pmr::memory_resource {
private:
    void* do_allocate(std::size_t bytes, std::size_t alignment) override;
    void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;
    [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override;
};
#endif

} // namespace remat::cuda
