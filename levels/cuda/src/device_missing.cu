// remat::cuda::device_missing: the one check for a usable CUDA device.
#include "remat/cuda/device_missing.hpp"

#include <cuda_runtime_api.h>

#include <string>

namespace remat::cuda {

std::string device_missing()
{
    int devices = 0;
    const cudaError_t status = cudaGetDeviceCount(&devices);
    if (status != cudaSuccess)
        return std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorName(status) + ": " +
               cudaGetErrorString(status) + ")";
    if (devices == 0)
        return "no CUDA device (cudaGetDeviceCount found none)";
    return {};
}

} // namespace remat::cuda
