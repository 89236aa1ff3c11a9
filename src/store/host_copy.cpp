#include "remat/error.hpp"
#include "remat/store/snapshot_view.hpp"

#include <cstring>

namespace remat {

void host_copy(void* dst, memory_space dst_space, const void* src, memory_space src_space, std::size_t size)
{
    if (dst_space != memory_space::host || src_space != memory_space::host)
        throw argument_error("device memory given to a host-only copy; snapshot device states through a store "
                             "made with remat::cuda::copy_bytes (target remat::cuda)");
    if (size != 0)
        std::memcpy(dst, src, size);
}

} // namespace remat
