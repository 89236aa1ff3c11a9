// One rule for the error kinds (docs/driver.md, "Errors") on the HDF5 store: the cases of
// tests/support/error_kinds.hpp, directly, through the executor, through remat::run and inside a tiered
// store (synchronous and asynchronous), on real files in a scratch directory.
#define BOOST_TEST_MODULE hdf5_error_kinds
#include <boost/test/unit_test.hpp>

#include "error_kinds.hpp"
#include "scratch_dir.hpp"

#include "remat/hdf5/hdf5_store.hpp"

#include <string>

using namespace remat;

BOOST_AUTO_TEST_CASE(hdf5_store_kinds)
{
    const test::scratch_dir dir;
    int files = 0;
    test::check_error_kinds("hdf5_store", [&](level_capacity c) {
        return hdf5_store(dir / ("kinds" + std::to_string(files++) + ".h5"), c);
    });
}

// In a resumed file, a slot that was never written is the schedule's error (one the file found damaged
// is integrity_error: hdf5_integrity_test, a_snapshot_of_another_slot_or_step_is_refused).
BOOST_AUTO_TEST_CASE(a_resumed_files_empty_slot_is_the_schedules_error)
{
    const test::scratch_dir dir;
    std::vector<double> x(8, 3.0), back(8);
    {
        hdf5_store store(dir / "r.h5", level_capacity{.slots = 2});
        store.write(0, 4, test::error_kinds_detail::in(x));
        store.flush();
    }
    hdf5_store resumed(dir / "r.h5", level_capacity{.slots = 2}, {.mode = hdf5_store::open_mode::resume});
    resumed.read(0, 4, test::error_kinds_detail::out(back));
    BOOST_TEST((back == x));
    test::expect_kind<schedule_error>("never written", [&] { resumed.read(1, 4, test::error_kinds_detail::out(back)); },
                                      {"slot 1", "holds no snapshot"});
}
