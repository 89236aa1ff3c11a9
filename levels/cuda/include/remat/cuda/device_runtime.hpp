// remat/cuda/device_runtime.hpp — what the device level needs from a GPU runtime, as a concept.
//
// remat::cuda::basic_device_store is written once against this contract and runs on three runtimes:
// gpu_runtime (CUDA: streams, events, cudaMemcpyAsync), host_runtime (Thrust's CPU back ends, where
// "device" memory is host memory and every copy is synchronous) and, in the tests, a simulator that
// runs queued work in random orders to check that the ordering is right. R models device_runtime when,
// for r of type R, stream s, event e, pointers p, q, spaces a, b and a size n:
//
//     | expression                  | type          | meaning                                          |
//     |-----------------------------|---------------|--------------------------------------------------|
//     | R::stream_handle            | regular type  | names a stream; a value-initialised one is the   |
//     |                             |               | default stream (CUDA's legacy stream 0)          |
//     | R::event_handle             | regular type  | names an event                                   |
//     | R::device_memory            | memory_space  | where allocate()'s memory lives                  |
//     | r.allocate(n)               | void*         | n bytes of device memory, 256-byte aligned;      |
//     |                             |               | throws capacity_error when there is no room      |
//     | r.deallocate(p, n)          | void          | returns it; noexcept                             |
//     | r.create_stream()           | stream_handle | a stream that does not wait on the default one   |
//     | r.destroy_stream(s)         | void          | noexcept                                         |
//     | r.create_event()            | event_handle  | an event that was never recorded (it is ready)   |
//     | r.destroy_event(e)          | void          | noexcept                                         |
//     | r.copy(p, a, q, b, n, s)    | void          | enqueues a copy of n bytes from q (in space b)   |
//     |                             |               | to p (in space a) on s; returns at once          |
//     | r.record(e, s)              | void          | e completes when the work enqueued on s so far   |
//     |                             |               | has completed                                    |
//     | r.wait(s, e)                | void          | work enqueued on s later starts only after the   |
//     |                             |               | latest record of e (as of this call) completed;  |
//     |                             |               | the host does not block                          |
//     | r.synchronize(e)            | void          | the host blocks until e completes                |
//     | r.synchronize_stream(s)     | void          | the host blocks until s is idle                  |
//     | r.ready(e)                  | bool          | whether e has completed (never blocks)           |
#pragma once

#include "remat/store/snapshot_view.hpp"

#include <concepts>
#include <cstddef>

namespace remat::cuda {

/// The contract of the table above.
template <class R>
concept device_runtime = std::regular<typename R::stream_handle> && std::regular<typename R::event_handle> &&
                         requires(R& r, typename R::stream_handle s, typename R::event_handle e, void* p, const void* q,
                                  memory_space a, std::size_t n) {
                             { R::device_memory } -> std::convertible_to<memory_space>;
                             { r.allocate(n) } -> std::same_as<void*>;
                             r.deallocate(p, n);
                             { r.create_stream() } -> std::same_as<typename R::stream_handle>;
                             r.destroy_stream(s);
                             { r.create_event() } -> std::same_as<typename R::event_handle>;
                             r.destroy_event(e);
                             r.copy(p, a, q, a, n, s);
                             r.record(e, s);
                             r.wait(s, e);
                             r.synchronize(e);
                             r.synchronize_stream(s);
                             { r.ready(e) } -> std::convertible_to<bool>;
                         };

} // namespace remat::cuda
