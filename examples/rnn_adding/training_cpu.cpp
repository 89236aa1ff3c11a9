// The adding problem's training on the CPU: Thrust's CPP back end and OpenBLAS.
#include "training_loop.hpp"

namespace remat::examples {

training_result train_on_cpu(const training_options& o, const training_progress& progress)
{
    return o.float64 ? train<double>(o, progress) : train<float>(o, progress);
}

} // namespace remat::examples
