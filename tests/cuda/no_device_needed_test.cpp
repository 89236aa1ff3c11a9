// The parts of remat::cuda that need no GPU (label unit: they run wherever remat::cuda is built, a device
// or not): device_missing() against the CUDA runtime's own answer.
#define BOOST_TEST_MODULE cuda_no_device_needed
#include <boost/test/unit_test.hpp>

#include "remat/cuda/device_missing.hpp"

#include <cuda_runtime_api.h>

#include <string>

BOOST_AUTO_TEST_CASE(device_missing_is_empty_exactly_when_the_runtime_finds_a_device)
{
    int devices = 0;
    const cudaError_t status = cudaGetDeviceCount(&devices);
    const std::string why = remat::cuda::device_missing();
    if (status == cudaSuccess && devices > 0) {
        BOOST_TEST(why.empty(), why);
        return;
    }
    BOOST_TEST(why.starts_with("no CUDA device ("), why);
    if (status != cudaSuccess) // the error by name, for a reader who looks it up
        BOOST_TEST(why.find(std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status)) != std::string::npos, why);
    else
        BOOST_TEST(why == "no CUDA device (cudaGetDeviceCount found none)");
    BOOST_TEST_MESSAGE("this machine: " << why);
}
