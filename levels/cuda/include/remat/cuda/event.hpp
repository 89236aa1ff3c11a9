// remat/cuda/event.hpp — an owned CUDA event (RAII): completion of copies and kernels, and timing.
#pragma once

#include <cuda_runtime_api.h>

namespace remat::cuda {

/// A CUDA event. Without timing (the default) it is cheaper to record and to wait on. Move-only.
///
///     remat::cuda::event done;
///     done.record(copies.get());            // completes when the work enqueued so far completes
///     compute.wait(done);                   // a kernel enqueued on compute after this starts after it
///     if (done.ready()) { ... }             // or done.synchronize() to block
class event {
public:
    enum class timing : bool { off, on };

    /// Throws remat::cuda::cuda_error when the event cannot be created.
    explicit event(timing t = timing::off);
    ~event();
    event(event&& other) noexcept;
    event& operator=(event&& other) noexcept;
    event(const event&) = delete;
    event& operator=(const event&) = delete;

    [[nodiscard]] cudaEvent_t get() const noexcept { return handle_; }
    /// Captures the work enqueued on `s` so far (the legacy default stream when s is null).
    void record(cudaStream_t s = nullptr);
    /// Blocks the host until the captured work has completed (at once for an event never recorded).
    void synchronize() const;
    /// Whether the captured work has completed (never blocks).
    [[nodiscard]] bool ready() const;

private:
    cudaEvent_t handle_ = nullptr;
};

/// Seconds between two completed records of timing events.
///
///     remat::cuda::event a(remat::cuda::event::timing::on), b(remat::cuda::event::timing::on);
///     a.record(s); kernel<<<g, b, 0, s>>>(...); b.record(s); b.synchronize();
///     double seconds = remat::cuda::elapsed_seconds(a, b);
[[nodiscard]] double elapsed_seconds(const event& start, const event& end);

} // namespace remat::cuda
