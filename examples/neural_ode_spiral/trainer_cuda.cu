// The spiral trainer on the GPU: Thrust's CUDA back end and cuBLAS.
#include "spiral_trainer.hpp"

#include "remat/cuda/error.hpp"

#include <cuda_runtime_api.h>

#include <string>

namespace remat::examples {

bool spiral_cuda_built() noexcept
{
    return true;
}

spiral_result train_spiral_on_cuda(const spiral_config& config, const spiral_data& data,
                                   const spiral_progress& progress)
{
    int devices = 0;
    const cudaError_t status = cudaGetDeviceCount(&devices);
    if (status != cudaSuccess)
        throw cuda::cuda_error(static_cast<int>(status), std::string("--device cuda: no usable CUDA device (") +
                                                             cudaGetErrorName(status) + ": " +
                                                             cudaGetErrorString(status) + ")");
    if (devices == 0)
        throw cuda::cuda_error(static_cast<int>(cudaErrorNoDevice), "--device cuda: this machine has no CUDA device");
    return train_spiral(config, data, progress);
}

} // namespace remat::examples
