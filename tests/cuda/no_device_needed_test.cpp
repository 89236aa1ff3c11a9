// The parts of remat::cuda that need no GPU (label unit: they run wherever remat::cuda is built, a device
// or not): device_missing() against the CUDA runtime's own answer, copier identity, and the device level's one
// handle per stream.
#define BOOST_TEST_MODULE cuda_no_device_needed
#include <boost/test/unit_test.hpp>

#include "remat/cuda/copy.hpp"
#include "remat/cuda/device_missing.hpp"
#include "remat/cuda/gpu_runtime.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
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

// A copier is its function and its context (the stream): copies made for one stream compare equal, however
// the stream is written; copiers for different streams do not. Making and comparing copiers calls nothing
// of the CUDA runtime, so the made-up stream handles below are never used.
BOOST_AUTO_TEST_CASE(copiers_for_the_same_stream_compare_equal)
{
    using remat::cuda::copier;
    using remat::cuda::copier_stream;
    BOOST_TEST((copier(nullptr) == copier(cudaStreamLegacy)));
    BOOST_TEST((copier() == copier(cudaStreamLegacy)));
    BOOST_TEST((copier_stream(copier(cudaStreamLegacy)) == cudaStream_t{}));
    BOOST_TEST((copier_stream(copier(nullptr)) == cudaStream_t{}));

    // The per-thread default stream is another stream than the legacy one, and so is a stream of one's own.
    const auto own = reinterpret_cast<cudaStream_t>(std::uintptr_t{0x1000});
    BOOST_TEST((copier(cudaStreamPerThread) != copier(nullptr)));
    BOOST_TEST((copier(own) != copier(nullptr)));
    BOOST_TEST((copier(own) != copier(cudaStreamPerThread)));
    BOOST_TEST((copier(own) == copier(own)));
    BOOST_TEST((copier_stream(copier(own)) == own));
    BOOST_TEST((copier_stream(copier(cudaStreamPerThread)) == cudaStreamPerThread));

    // Not the host-only copier, and no stream is read out of that one.
    BOOST_TEST((copier() != remat::host_copy));
    BOOST_TEST(!copier_stream(remat::host_copy).has_value());
}

// The device level keeps one handle per stream (gpu_runtime::canonical_stream): the legacy default stream is
// nullptr however it is written, as in copier_stream, so a level and a copier for it compare equal. Other
// handles, the per-thread default stream included, are kept as given.
BOOST_AUTO_TEST_CASE(the_device_runtime_names_the_legacy_stream_once)
{
    using remat::cuda::gpu_runtime;
    BOOST_TEST((gpu_runtime::canonical_stream(cudaStreamLegacy) == cudaStream_t{}));
    BOOST_TEST((gpu_runtime::canonical_stream(nullptr) == cudaStream_t{}));
    BOOST_TEST((gpu_runtime::canonical_stream(cudaStreamPerThread) == cudaStreamPerThread));
    const auto own = reinterpret_cast<cudaStream_t>(std::uintptr_t{0x1000});
    BOOST_TEST((gpu_runtime::canonical_stream(own) == own));
    // what use_copier compares: the copier's stream with the level's
    BOOST_TEST((*gpu_runtime::stream_of(remat::cuda::copier(cudaStreamLegacy)) ==
                gpu_runtime::canonical_stream(cudaStreamLegacy)));
}
