// Kernels the GPU tests need, behind a host interface (compiled by nvcc, called from g++ test code):
// patterns to fill and compare, and gates — kernels that hold their stream until the host opens them —
// which make ordering and overlap observable deterministically instead of by timing.
#pragma once

#include "remat/cuda/pinned_buffer.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

namespace remat::test {

/// dst[i] = base + i on stream s.
void fill(double* dst, std::size_t n, double base, cudaStream_t s);
/// dst[i] = src[i] on stream s.
void copy(double* dst, const double* src, std::size_t n, cudaStream_t s);
/// The values base + i, for comparisons on the host.
[[nodiscard]] std::vector<double> pattern(std::size_t n, double base);
/// n doubles from device memory, after the device is idle.
[[nodiscard]] std::vector<double> to_host(const double* src, std::size_t n);

/// A flag in mapped pinned memory. Kernels enqueued by hold() spin until open() (or give up after
/// about ten seconds, which timed_out() then reports), then do their work: a stream with a held kernel
/// is busy for as long as the test wants.
class gate {
public:
    gate();
    /// Enqueues on `s` a kernel that waits for open(), then copies n doubles from src to dst (none
    /// when n is 0).
    void hold(cudaStream_t s, double* dst = nullptr, const double* src = nullptr, std::size_t n = 0);
    /// Enqueues on `s` a kernel that waits for open(), then sets dst[i] = base + i.
    void hold_then_fill(cudaStream_t s, double* dst, std::size_t n, double base);
    void open();
    /// Whether a held kernel stopped waiting before open() (read after the device is idle).
    [[nodiscard]] bool timed_out() const;

private:
    remat::cuda::pinned_buffer memory_; // [0]: the flag, [1]: set to 1 by a kernel that timed out
    int* host_ = nullptr;
    int* device_ = nullptr;
};

/// Enqueues on `s` one thread that spins for `cycles` of its SM's clock (clock64): GPU work of a known
/// length that leaves the host free at once.
void spin(long long cycles, cudaStream_t s);

/// Polls `done` for up to `seconds`; true as soon as it returns true.
template <class Done>
bool within(double seconds, Done done);

} // namespace remat::test

#include <chrono>
#include <thread>

template <class Done>
bool remat::test::within(double seconds, Done done)
{
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
        if (done())
            return true;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return done();
}
