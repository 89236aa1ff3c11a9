// CUDA error codes as remat exceptions.
#include "remat/cuda/detail/check.hpp"
#include "remat/cuda/error.hpp"
#include "remat/error.hpp"

#include <string>

namespace remat::cuda::detail {

void throw_cuda_error(cudaError_t code, const char* call, const std::string& context)
{
    std::string what = std::string(call);
    if (!context.empty())
        what += " (" + context + ")";
    what += " failed: " + std::string(cudaGetErrorName(code)) + ": " + cudaGetErrorString(code);
    throw cuda_error(static_cast<int>(code), what);
}

void throw_allocation_error(cudaError_t code, const char* call, std::size_t bytes)
{
    if (code == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError(); // not sticky: clear it so later calls do not report it again
        throw capacity_error(std::string(call) + " of " + std::to_string(bytes) +
                             " bytes failed: out of memory (cudaErrorMemoryAllocation)");
    }
    throw_cuda_error(code, call, std::to_string(bytes) + " bytes");
}

} // namespace remat::cuda::detail
