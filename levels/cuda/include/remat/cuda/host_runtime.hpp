// remat/cuda/host_runtime.hpp — the device runtime of Thrust's CPU back ends: "device" memory is host
// memory, copies are memcpy and complete at once, so streams and events have nothing to order.
#pragma once

#include "remat/cuda/device_runtime.hpp"
#include "remat/error.hpp"

#include <cstddef>
#include <cstring>
#include <new>
#include <string>

namespace remat::cuda {

/// Models device_runtime on the host. With it, remat::cuda::basic_device_store is a host level with one
/// preallocated block of slots; under the CPP and OMP back ends remat::cuda::device_store is this.
///
///     remat::cuda::basic_device_store<remat::cuda::host_runtime> store(8);   // 8 slots in host memory
struct host_runtime {
    struct stream_handle {
        friend bool operator==(stream_handle, stream_handle) = default;
    };
    struct event_handle {
        friend bool operator==(event_handle, event_handle) = default;
    };
    static constexpr memory_space device_memory = memory_space::host;
    static constexpr std::size_t alignment = 256;

    void* allocate(std::size_t bytes)
    {
        try {
            return ::operator new(bytes, std::align_val_t{alignment});
        } catch (const std::bad_alloc&) {
            throw capacity_error("cannot allocate " + std::to_string(bytes) + " bytes of host memory for device slots");
        }
    }
    void deallocate(void* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{alignment}); }
    stream_handle create_stream() noexcept { return {}; }
    void destroy_stream(stream_handle) noexcept {}
    event_handle create_event() noexcept { return {}; }
    void destroy_event(event_handle) noexcept {}
    void copy(void* dst, memory_space, const void* src, memory_space, std::size_t size, stream_handle) noexcept
    {
        if (size != 0)
            std::memcpy(dst, src, size);
    }
    void record(event_handle, stream_handle) noexcept {}
    void wait(stream_handle, event_handle) noexcept {}
    void synchronize(event_handle) noexcept {}
    void synchronize_stream(stream_handle) noexcept {}
    [[nodiscard]] bool ready(event_handle) const noexcept { return true; }
};

static_assert(device_runtime<host_runtime>);

} // namespace remat::cuda
