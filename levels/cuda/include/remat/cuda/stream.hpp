// remat/cuda/stream.hpp — an owned CUDA stream (RAII), for copies that overlap the user's kernels.
#pragma once

#include <cuda_runtime_api.h>

namespace remat::cuda {

class event;

/// A CUDA stream created non-blocking: it never synchronises implicitly with the legacy default
/// stream, so work on it overlaps kernels there; order it explicitly with events. Move-only.
///
///     remat::cuda::stream copies;
///     cudaMemcpyAsync(host, dev, n, cudaMemcpyDeviceToHost, copies.get());
///     copies.synchronize();
class stream {
public:
    /// Throws remat::cuda::cuda_error when the stream cannot be created.
    stream();
    ~stream();
    stream(stream&& other) noexcept;
    stream& operator=(stream&& other) noexcept;
    stream(const stream&) = delete;
    stream& operator=(const stream&) = delete;

    [[nodiscard]] cudaStream_t get() const noexcept { return handle_; }
    /// Blocks the host until everything enqueued so far has completed.
    void synchronize() const;
    /// Whether everything enqueued so far has completed (never blocks).
    [[nodiscard]] bool idle() const;
    /// Work enqueued later starts after `e`'s latest record completed; the host does not block.
    void wait(const event& e) const;

private:
    cudaStream_t handle_ = nullptr;
};

} // namespace remat::cuda
