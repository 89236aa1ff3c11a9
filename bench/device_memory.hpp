// Exact device-memory accounting for the GPU benchmarks (bench/neural_ode, bench/rnn_bptt): a program
// linked with the library bench_device_memory gets -Wl,--wrap=cudaMalloc,cudaFree,cudaMallocAsync,
// cudaFreeAsync (bench/CMakeLists.txt), so every allocation made from its own code and remat's static
// libraries — Thrust's device vectors and its temporaries (cudaMallocAsync), the models' and solvers'
// workspaces, the device store's slots — passes through device_memory.cpp, which keeps the bytes live and
// their high-water mark: not sampling, the largest sum of live allocations the program held. Not counted:
// what cuBLAS allocates inside its own shared library (its handle's workspace, the same in every variant)
// and the CUDA context itself.
//
//     remat::bench::device_memory::reset_peak();                       // peak := bytes live now
//     run();
//     long long used = remat::bench::device_memory::peak_bytes();
#pragma once

namespace remat::bench::device_memory {

/// Bytes allocated (cudaMalloc, cudaMallocAsync) and not yet freed.
long long live_bytes() noexcept;
/// The most bytes live at once since the last reset_peak().
long long peak_bytes() noexcept;
/// Starts a new high-water mark at the bytes live now.
void reset_peak() noexcept;
/// Allocations counted so far (0 after a gradient means the link did not wrap cudaMalloc).
long long allocations() noexcept;

} // namespace remat::bench::device_memory
