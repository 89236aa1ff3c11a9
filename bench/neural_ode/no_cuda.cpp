// bench/neural_ode in a build without nvcc: --device cuda says so and skips.
#include "measure.hpp"

namespace remat::bench::neural_ode {

namespace {
[[noreturn]] void no_back_end()
{
    throw no_cuda_device("this build has no CUDA back end (nvcc was not found when it was configured)");
}
} // namespace

std::vector<measurement> measure_on_cuda(const problem_size&, int, snapshot_level, const on_variant&)
{
    no_back_end();
}

std::string cuda_device_name()
{
    no_back_end();
}

} // namespace remat::bench::neural_ode
