// One rule for the error kinds (docs/driver.md, "Errors"), on the host store and on the device store's
// logic (its host runtime, what remat::cuda::device_store is on the CPU), each directly, through the
// executor, through remat::run and inside a tiered store, synchronous and asynchronous. The HDF5 store
// runs the same cases in hdf5_error_kinds_test, the device store on a GPU in cuda_error_kinds_gpu_test.
#define BOOST_TEST_MODULE error_kinds
#include <boost/test/unit_test.hpp>

#include "error_kinds.hpp"

#include "remat/cuda/basic_device_store.hpp"
#include "remat/cuda/host_runtime.hpp"
#include "remat/store/host_store.hpp"

#include <vector>

using namespace remat;

BOOST_AUTO_TEST_CASE(host_store_kinds)
{
    test::check_error_kinds("host_store", [](level_capacity c) { return host_store(c); });
}

BOOST_AUTO_TEST_CASE(device_store_kinds_on_the_host_runtime)
{
    test::check_error_kinds("device store (host runtime)",
                            [](level_capacity c) { return cuda::basic_device_store<cuda::host_runtime>(c); });
}

// A level of unlimited slots takes any index, but one whose table does not fit in memory is a
// capacity_error naming the slot, not a bare std::length_error.
BOOST_AUTO_TEST_CASE(a_slot_table_beyond_memory_is_a_capacity_error)
{
    host_store unlimited(level_capacity{.bytes = 1 << 20});
    const std::vector<double> x(4, 1.0);
    const slot_t far = slot_t{1} << 62;
    test::expect_kind<capacity_error>("host_store slot 2^62",
                                      [&] { unlimited.write(far, 0, test::error_kinds_detail::in(x)); },
                                      {"4611686018427387904"});
    BOOST_TEST(unlimited.stats().slots_in_use == 0u);
    unlimited.write(3, 0, test::error_kinds_detail::in(x)); // still usable
    BOOST_TEST(unlimited.snapshot_bytes(3) == 32u);
}
