// Exact device-memory accounting for a benchmark: every cudaMalloc/cudaFree and cudaMallocAsync/
// cudaFreeAsync call of the program's own code (Thrust's vectors and temporaries, remat's device store,
// the dense seam) goes through a counter (device_allocations.cu, linked with the linker's --wrap of those
// four functions; see bench/CMakeLists.txt), which keeps the bytes in use and their high-water mark. Not
// sampling: the peak is the largest sum of live allocations the program ever held. Not counted: what
// libraries allocate inside themselves (cuBLAS's handle workspace), and allocator rounding.
//
//     bench::device_allocations::reset_peak();          // peak := bytes in use now
//     run();
//     std::uint64_t peak = bench::device_allocations::peak();
#pragma once

#include <cstdint>

namespace remat::bench::device_allocations {

/// Bytes of device memory allocated and not yet freed.
[[nodiscard]] std::uint64_t in_use() noexcept;
/// The most bytes in use at once since the last reset_peak() (or the program's start).
[[nodiscard]] std::uint64_t peak() noexcept;
/// Starts a new high-water mark at the bytes in use now.
void reset_peak() noexcept;

} // namespace remat::bench::device_allocations
