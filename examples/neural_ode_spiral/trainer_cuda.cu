// The spiral trainer on the GPU: Thrust's CUDA back end and cuBLAS.
#include "spiral_trainer.hpp"

#include "remat/cuda/device_missing.hpp"
#include "remat/error.hpp"

#include <string>

namespace remat::examples {

bool spiral_cuda_built() noexcept
{
    return true;
}

spiral_result train_spiral_on_cuda(const spiral_config& config, const spiral_data& data,
                                   const spiral_progress& progress)
{
    if (const std::string why = cuda::device_missing(); !why.empty())
        throw error("--device cuda: " + why);
    return train_spiral(config, data, progress);
}

} // namespace remat::examples
