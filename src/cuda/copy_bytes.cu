// remat::cuda::copy_bytes: the byte copier for host stores that hold device states.
#include "remat/cuda/copy.hpp"
#include "remat/cuda/detail/check.hpp"

#include <cstring>
#include <string>

namespace remat::cuda {

void copy_bytes(void* dst, memory_space dst_space, const void* src, memory_space src_space, std::size_t size)
{
    if (size == 0)
        return;
    if (dst_space == memory_space::host && src_space == memory_space::host) {
        std::memcpy(dst, src, size);
        return;
    }
    // The legacy stream explicitly, whatever default stream the caller's code was compiled for: its
    // implicit synchronisation with blocking streams orders the copy after the user's kernels there.
    const cudaError_t status = cudaMemcpyAsync(dst, src, size, cudaMemcpyDefault, cudaStreamLegacy);
    if (status != cudaSuccess)
        detail::throw_cuda_error(status, "cudaMemcpyAsync", std::to_string(size) + " bytes");
    detail::check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
}

} // namespace remat::cuda
