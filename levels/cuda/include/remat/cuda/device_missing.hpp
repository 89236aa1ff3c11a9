// remat/cuda/device_missing.hpp — whether this process has a CUDA device to run on, and if not, why: the one
// check that programs and tests make before they use the GPU (to skip, or to refuse an option, saying why).
#pragma once

#include <string>

namespace remat::cuda {

/// An empty string when the CUDA runtime finds a device; else why not, beginning "no CUDA device" and
/// naming the CUDA error: "no CUDA device (cudaGetDeviceCount: cudaErrorNoDevice: no CUDA-capable device is
/// detected)", or "no CUDA device (cudaGetDeviceCount found none)". Reports, never throws a CUDA error.
///
///     if (const std::string why = remat::cuda::device_missing(); !why.empty()) {
///         std::printf("skipped: %s\n", why.c_str());
///         return 77;
///     }
[[nodiscard]] std::string device_missing();

} // namespace remat::cuda
