// Accounting through the disk level (label unit): an hdf5_store alone and behind a tiered store's worker
// thread reports what the plan says, byte counts the state's bytes times the counts, the plan's peaks, and
// its own stats the sums of the runs'; a second run on the same file, holding fewer snapshots, reports its
// own peaks (tests/support/accounting_check.hpp).
#define BOOST_TEST_MODULE hdf5_accounting
#include <boost/test/unit_test.hpp>

#include "accounting_check.hpp"
#include "scratch_dir.hpp"

#include "remat/hdf5/hdf5_store.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

using namespace remat;
using remat::test::check_accounting;
using remat::test::scratch_dir;

namespace {
constexpr std::size_t doubles = 100;
constexpr step_t steps = 30;
} // namespace

BOOST_AUTO_TEST_CASE(through_an_hdf5_store_alone)
{
    scratch_dir dir;
    hdf5_store disk(dir / "alone.h5", level_capacity{.slots = 4}, {.durable_writes = false});
    check_accounting(revolve(steps, 4), revolve(steps, 2), disk, doubles, "hdf5_store");
}

BOOST_AUTO_TEST_CASE(through_an_hdf5_store_behind_a_ram_level_synchronous_and_asynchronous)
{
    const multilevel plan(steps, cost_model{{{"host", 2, 0, 0}, {"disk", 6, 3, 3}}});
    BOOST_TEST_REQUIRE(plan.cost().levels.at(1).stores > 0u); // the disk is used
    scratch_dir dir;
    for (const bool asynchronous : {false, true}) {
        tiered_store store({tier_options{}, tier_options{.asynchronous = asynchronous}}, host_store(2),
                           hdf5_store(dir / (asynchronous ? "async.h5" : "sync.h5"), level_capacity{.slots = 6},
                                      {.durable_writes = false}));
        check_accounting(plan, multilevel(steps, cost_model{{{"host", 1, 0, 0}, {"disk", 4, 3, 3}}}), store, doubles,
                         asynchronous ? "host + disk, asynchronous" : "host + disk, synchronous");
    }
}
