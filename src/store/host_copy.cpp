#include "remat/error.hpp"
#include "remat/store/snapshot_view.hpp"

#include <cstring>

namespace remat::detail {

void host_copy_bytes(void* /*context*/, void* dst, memory_space dst_space, const void* src, memory_space src_space,
                     std::size_t size)
{
    if (dst_space != memory_space::host || src_space != memory_space::host)
        throw argument_error("device memory given to a host-only copy; snapshot device states through a store "
                             "given remat::cuda::copier() (target remat::cuda)");
    if (size != 0)
        std::memcpy(dst, src, size);
}

} // namespace remat::detail
