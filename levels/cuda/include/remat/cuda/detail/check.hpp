// remat/cuda/detail/check.hpp — turns CUDA runtime error codes into remat exceptions.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace remat::cuda::detail {

/// Throws remat::cuda::cuda_error naming `call` (and `context`, e.g. a size) and the CUDA error.
[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const std::string& context = {});

/// Out of device or pinned memory becomes remat::capacity_error; other failures as throw_cuda_error.
[[noreturn]] void throw_allocation_error(cudaError_t code, const char* call, std::size_t bytes);

inline void check(cudaError_t code, const char* call)
{
    if (code != cudaSuccess) [[unlikely]]
        throw_cuda_error(code, call);
}

} // namespace remat::cuda::detail
