// bench/neural_ode's CPU-only binary. Linking cuBLAS and the CUDA runtime would add their pages (about
// 90 MiB) to every CPU variant's peak RSS, so the CUDA back end lives in a sibling binary built from the
// same sources, neural_ode_cuda (where nvcc is): --device cuda hands over to it (exec, same arguments).
// In a build without nvcc --device cuda says so and skips.
#include "measure.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace remat::bench::neural_ode {

#ifdef REMAT_NEURAL_ODE_CUDA_BINARY
void hand_over_to_cuda_binary(char** argv)
{
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error)
        throw std::runtime_error("cannot find this program's own path to start " REMAT_NEURAL_ODE_CUDA_BINARY " (" +
                                 error.message() + ")");
    const std::string sibling = (self.parent_path() / REMAT_NEURAL_ODE_CUDA_BINARY).string();
    argv[0] = const_cast<char*>(sibling.c_str());
    ::execv(sibling.c_str(), argv);
    throw std::runtime_error("cannot start " + sibling + " (" + std::strerror(errno) + "); build its target");
}
#else
void hand_over_to_cuda_binary(char**) {}
#endif

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
