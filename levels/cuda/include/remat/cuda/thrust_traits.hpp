// remat/cuda/thrust_traits.hpp — thrust::device_vector<T> and thrust::host_vector<T> as states, so
// remat::run snapshots them without the user copying anything.
//
// Include it where Thrust compiles: in .cu files under nvcc (CUDA back end: the views are device
// memory), or under a host compiler with a CPU back end (THRUST_DEVICE_SYSTEM CPP or OMP: host memory).
#pragma once

#include <thrust/device_vector.h>
#include <thrust/host_vector.h>

#include "remat/cuda/config.hpp"
#include "remat/error.hpp"
#include "remat/store/snapshot_traits.hpp"
#include "remat/store/snapshot_view.hpp"

#include <cstddef>
#include <string>
#include <type_traits>

#if defined(REMAT_THRUST_VERSION) && THRUST_VERSION != REMAT_THRUST_VERSION
#error "remat: this target was configured for another Thrust version than it includes; never mix two Thrusts"
#endif

namespace remat {

namespace detail {
/// The elements of a contiguous Thrust vector, in memory space `Space`.
template <class Vector, memory_space Space>
struct thrust_vector_traits {
    using value_type = typename Vector::value_type;
    static_assert(std::is_trivially_copyable_v<value_type>, "snapshots copy the elements' bytes");

    static const_bytes bytes(const Vector& v) noexcept
    {
        return {reinterpret_cast<const std::byte*>(thrust::raw_pointer_cast(v.data())), v.size() * sizeof(value_type),
                Space};
    }
    static mutable_bytes bytes(Vector& v) noexcept
    {
        return {reinterpret_cast<std::byte*>(thrust::raw_pointer_cast(v.data())), v.size() * sizeof(value_type), Space};
    }
    /// A restore into a vector of another length resizes it (which allocates); a loop of fixed size
    /// never does.
    static mutable_bytes bytes_for(Vector& v, std::size_t size)
    {
        if (size % sizeof(value_type) != 0)
            throw integrity_error("a snapshot of " + std::to_string(size) + " bytes is no whole number of " +
                                  std::to_string(sizeof(value_type)) + "-byte elements");
        v.resize(size / sizeof(value_type));
        return bytes(v);
    }
};
} // namespace detail

/// thrust::device_vector<T>: its elements, in GPU memory under CUDA, host memory on a CPU back end.
///
///     thrust::device_vector<float> x(n);
///     remat::cuda::device_store store(16);
///     remat::run(remat::revolve(T, 16), store, x, remat::forward_step(forward), remat::adjoint_step(adjoint));
template <class T, class Allocator>
struct snapshot_traits<thrust::device_vector<T, Allocator>>
    : detail::thrust_vector_traits<thrust::device_vector<T, Allocator>, cuda::device_space> {};

/// thrust::host_vector<T>: its elements, in host memory.
template <class T, class Allocator>
struct snapshot_traits<thrust::host_vector<T, Allocator>>
    : detail::thrust_vector_traits<thrust::host_vector<T, Allocator>, memory_space::host> {};

} // namespace remat
