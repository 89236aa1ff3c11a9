// main() of the GPU tests: without a usable CUDA device they print why and exit 77, which CTest reports
// as skipped (SKIP_RETURN_CODE), never as passed.
#include <boost/test/unit_test.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>

bool init_unit_test(); // defined by each test's BOOST_TEST_MODULE

int main(int argc, char* argv[])
{
    int devices = 0;
    const cudaError_t status = cudaGetDeviceCount(&devices);
    if (status != cudaSuccess || devices == 0) {
        std::printf("skipped: no CUDA device (%s)\n",
                    status != cudaSuccess ? cudaGetErrorString(status) : "cudaGetDeviceCount found none");
        return 77;
    }
    return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
