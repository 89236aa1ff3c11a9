// Exact device-memory accounting for bench/neural_ode: the program is linked with
// -Wl,--wrap=cudaMalloc,--wrap=cudaFree (bench/CMakeLists.txt), so every cudaMalloc and cudaFree made
// from its own code and remat's static libraries — Thrust's device vectors and temporaries, the MLP's
// and the solver's workspaces, the device store's slots — passes through device_memory.cpp, which keeps
// the bytes live and their high-water mark. Not counted: what cuBLAS allocates inside its own shared
// library (its handle's workspace, the same in every variant) and the CUDA context itself.
#pragma once

namespace remat::bench::device_memory {

/// Bytes allocated by cudaMalloc and not yet freed.
long long live_bytes() noexcept;
/// The most bytes live at once since the last reset_peak().
long long peak_bytes() noexcept;
/// Starts a new high-water mark at the bytes live now.
void reset_peak() noexcept;
/// cudaMalloc calls counted so far (0 after a gradient means the link did not wrap cudaMalloc).
long long allocations() noexcept;

} // namespace remat::bench::device_memory
