// One rule for the error kinds (docs/driver.md, "Errors") on the device store in GPU memory (label gpu;
// skipped without a device): the cases of tests/support/error_kinds.hpp, directly, through the executor,
// through remat::run and inside a tiered store, synchronous and asynchronous.
#define BOOST_TEST_MODULE cuda_error_kinds
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include "error_kinds.hpp"

#include "remat/cuda/device_store.hpp"

using namespace remat;

BOOST_AUTO_TEST_CASE(device_store_kinds)
{
    test::check_error_kinds("cuda::device_store", [](level_capacity c) { return cuda::device_store(c); });
}
