// remat::cuda::copier and copy_bytes: the byte copies for host and disk levels that hold device states.
#include "remat/cuda/copy.hpp"
#include "remat/cuda/detail/check.hpp"

#include <cstring>
#include <string>

namespace remat::cuda {

namespace {

// The copier's function: context is the user's stream (null: the legacy default stream).
void copy_on_stream(void* context, void* dst, memory_space dst_space, const void* src, memory_space src_space,
                    std::size_t size)
{
    if (size == 0)
        return;
    if (dst_space == memory_space::host && src_space == memory_space::host) {
        std::memcpy(dst, src, size);
        return;
    }
    // The legacy stream explicitly for null, whatever default stream the caller's code was compiled for:
    // its implicit synchronisation with blocking streams orders the copy after the user's kernels there.
    const cudaStream_t stream = context != nullptr ? static_cast<cudaStream_t>(context) : cudaStreamLegacy;
    const cudaError_t status = cudaMemcpyAsync(dst, src, size, cudaMemcpyDefault, stream);
    if (status != cudaSuccess)
        detail::throw_cuda_error(status, "cudaMemcpyAsync", std::to_string(size) + " bytes");
    detail::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

// The copier's wait: the user's kernels on its stream.
void wait_for_stream(void* context)
{
    const cudaStream_t stream = context != nullptr ? static_cast<cudaStream_t>(context) : cudaStreamLegacy;
    detail::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize of the user's stream");
}

} // namespace

void copy_bytes(void* dst, memory_space dst_space, const void* src, memory_space src_space, std::size_t size)
{
    copy_on_stream(nullptr, dst, dst_space, src, src_space, size);
}

byte_copier copier(cudaStream_t user_stream) noexcept
{
    // cudaStreamLegacy is the stream null names here: one context for both, so that copies of a copier
    // compare equal whichever way the stream was written.
    return {&copy_on_stream, user_stream == cudaStreamLegacy ? nullptr : static_cast<void*>(user_stream),
            &wait_for_stream};
}

std::optional<cudaStream_t> copier_stream(const byte_copier& copy) noexcept
{
    if (copy.target() != &copy_on_stream)
        return std::nullopt;
    return static_cast<cudaStream_t>(copy.context());
}

} // namespace remat::cuda
