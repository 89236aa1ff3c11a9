// The spiral trainer in a build without nvcc: --device cuda says so.
#include "spiral_training.hpp"

#include "remat/error.hpp"

namespace remat::examples {

bool spiral_cuda_built() noexcept
{
    return false;
}

spiral_result train_spiral_on_cuda(const spiral_config&, const spiral_data&, const spiral_progress&)
{
    throw argument_error("--device cuda: this build has no CUDA back end (nvcc was not found when it was configured)");
}

} // namespace remat::examples
