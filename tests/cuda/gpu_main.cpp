// main() of the GPU tests: without a usable CUDA device they print why and exit 77, which CTest reports
// as skipped (SKIP_RETURN_CODE), never as passed.
#include <boost/test/unit_test.hpp>

#include "remat/cuda/device_missing.hpp"

#include <cstdio>
#include <string>

bool init_unit_test(); // defined by each test's BOOST_TEST_MODULE

int main(int argc, char* argv[])
{
    if (const std::string why = remat::cuda::device_missing(); !why.empty()) {
        std::printf("skipped: %s\n", why.c_str());
        return 77;
    }
    return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
