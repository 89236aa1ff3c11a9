// remat/cuda/device_span.hpp — a state that is a pointer and a size in device memory.
#pragma once

#include "remat/cuda/config.hpp"
#include "remat/store/snapshot_traits.hpp"
#include "remat/store/snapshot_view.hpp"

#include <cstddef>
#include <type_traits>

namespace remat::cuda {

/// `size` elements of T at `data` in device memory (host memory on a CPU back end): the state of a
/// solver that owns its buffers, snapshotted without any copy code. A view: it owns nothing.
///
///     double* u;  cudaMalloc(&u, n * sizeof(double));
///     remat::cuda::device_span<double> x(u, n);
///     remat::run(plan, store, x, remat::forward_step([&](remat::step_t k, auto& s) { step<<<g, b>>>(s.data(), n); }),
///     remat::adjoint_step(adjoint));
template <class T>
class device_span {
public:
    device_span() = default;
    device_span(T* data, std::size_t size) noexcept : data_(data), size_(size) {}

    [[nodiscard]] T* data() const noexcept { return data_; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }

private:
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace remat::cuda

namespace remat {

/// Its elements, in device_space.
template <class T>
    requires std::is_trivially_copyable_v<T> && (!std::is_const_v<T>)
struct snapshot_traits<cuda::device_span<T>> {
    static const_bytes bytes(const cuda::device_span<T>& s) noexcept
    {
        return {reinterpret_cast<const std::byte*>(s.data()), s.size_bytes(), cuda::device_space};
    }
    static mutable_bytes bytes(cuda::device_span<T>& s) noexcept
    {
        return {reinterpret_cast<std::byte*>(s.data()), s.size_bytes(), cuda::device_space};
    }
};

/// A span of const elements is no state (a restore writes into it); this keeps the generic traits of
/// trivially copyable types from snapshotting the pointer instead.
template <class T>
    requires std::is_const_v<T>
struct snapshot_traits<cuda::device_span<T>> {};

} // namespace remat
