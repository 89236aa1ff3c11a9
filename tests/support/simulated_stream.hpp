// A GPU stream reduced to its timing (tests only): work the "GPU" runs after the host queued it. A user step
// queues some and returns at once; a copy or a wait on the stream (as cudaMemcpyAsync + cudaStreamSynchronize)
// first sleeps until it is done. Its clock is atomic, so an asynchronous tier's worker may wait on it while
// the driver's thread queues work.
#pragma once

#include "remat/store/snapshot_view.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <thread>

namespace remat::test {

class simulated_stream {
public:
    using clock_type = std::chrono::steady_clock;

    /// The GPU runs `work` after everything queued before.
    void queue(std::chrono::microseconds work)
    {
        const clock_type::time_point start = std::max(busy_until_.load(), clock_type::now());
        busy_until_.store(start + work);
    }
    /// The host blocks until the queued work is done.
    void synchronize() const { std::this_thread::sleep_until(busy_until_.load()); }

    /// A byte_copier that copies after the queued work and whose wait_for_user() synchronises, as
    /// remat::cuda::copier(stream) does.
    byte_copier copier() { return byte_copier(&copy_after, this, &wait); }

private:
    static void copy_after(void* context, void* dst, memory_space, const void* src, memory_space, std::size_t size)
    {
        static_cast<simulated_stream*>(context)->synchronize();
        if (size != 0)
            std::memcpy(dst, src, size);
    }
    static void wait(void* context) { static_cast<simulated_stream*>(context)->synchronize(); }

    std::atomic<clock_type::time_point> busy_until_{clock_type::now()};
};

} // namespace remat::test
