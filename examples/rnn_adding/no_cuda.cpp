// The adding problem where this build has no CUDA: --device cuda is refused with the reason.
#include "training.hpp"

#include "remat/error.hpp"

namespace remat::examples {

training_result train_on_cuda(const training_options&, const training_progress&)
{
    throw argument_error("device 'cuda': this build has no CUDA (nvcc was not found when it was configured)");
}

} // namespace remat::examples
