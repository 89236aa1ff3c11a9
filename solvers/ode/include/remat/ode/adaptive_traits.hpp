// remat/ode/adaptive_traits.hpp — snapshots of an adaptive solve's state (remat::ode::adaptive_state): the
// solution y (device memory) and the step-size controller's state, in one snapshot, so a recomputation
// from it takes exactly the trials of the first sweep (rejected ones included).
//
// Layout of a snapshot: y's elements, then the controller_state's bytes.
//
//     remat::host_store store(16);
//     remat::run_online_converged(remat::online_revolve(16), store, x, remat::forward_step(forward),
//     remat::adjoint_step(adjoint), done);   // x: adaptive_state
#pragma once

#include "remat/error.hpp"
#include "remat/ode/adaptive.hpp"
#include "remat/store/snapshot_traits.hpp"

#include <thrust/copy.h>
#include <thrust/device_vector.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

template <class T>
struct remat::snapshot_traits<remat::ode::adaptive_state<T>> {
    using state = remat::ode::adaptive_state<T>;

    static std::size_t size_bytes(const state& x) noexcept
    {
        return x.y.size() * sizeof(T) + sizeof(remat::ode::controller_state);
    }
    static void save(const state& x, std::span<std::byte> out)
    {
        check(x, out.size(), out.data());
        thrust::copy(x.y.begin(), x.y.end(), reinterpret_cast<T*>(out.data())); // device to host
        std::memcpy(out.data() + x.y.size() * sizeof(T), &x.control, sizeof x.control);
    }
    static void load(state& x, std::span<const std::byte> in)
    {
        check(x, in.size(), in.data());
        const T* y = reinterpret_cast<const T*>(in.data());
        thrust::copy(y, y + x.y.size(), x.y.begin()); // host to device
        std::memcpy(&x.control, in.data() + x.y.size() * sizeof(T), sizeof x.control);
    }

private:
    static void check(const state& x, std::size_t bytes, const void* buffer)
    {
        if (bytes != size_bytes(x))
            throw remat::integrity_error("an adaptive-solve snapshot of " + std::to_string(bytes) +
                                         " bytes for a state of " + std::to_string(size_bytes(x)));
        if (reinterpret_cast<std::uintptr_t>(buffer) % alignof(T) != 0)
            throw remat::argument_error("an adaptive-solve snapshot buffer not aligned for its elements");
    }
};
