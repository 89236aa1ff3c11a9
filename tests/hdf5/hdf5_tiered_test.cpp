// The HDF5 level behind the tiered store's asynchronous engine: RAM first, then an HDF5 file written
// behind the computation and read ahead of the restores. Gradients are bit-identical to store-all; a
// disk that fills up (RLIMIT_FSIZE) during a write-behind fails the run with the file named, leaves the
// store consistent, and the same store then completes a run.
#define BOOST_TEST_MODULE hdf5_tiered
#include <boost/test/unit_test.hpp>

#include "hdf5_test_support.hpp"
#include "vector_schedule.hpp"

#include "burgers_gradient.hpp"

#include "remat/driver/run.hpp"
#include "remat/error.hpp"
#include "remat/hdf5/hdf5_store.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <csignal>
#include <cstring>
#include <sys/resource.h>
#include <vector>

using namespace remat;

namespace {

struct problem {
    examples::burgers model;
    step_t steps = 0;

    template <class Schedule, class Store>
    std::vector<double> gradient(const Schedule& plan, Store& store, run_report* report = nullptr) const
    {
        test::burgers_gradient_result r = test::burgers_gradient(model, plan, store, run_options{.lookahead = 16});
        if (report != nullptr)
            *report = r.report;
        return std::move(r.gradient);
    }
};

problem make_problem(step_t steps, std::size_t points)
{
    return problem{test::small_burgers(points), steps};
}

using test::same_bits;

using ram_and_disk = tiered_store<host_store, hdf5_store>;

} // namespace

BOOST_AUTO_TEST_CASE(gradients_bit_identical_with_an_asynchronous_hdf5_level)
{
    test::scratch_dir dir;
    const problem p = make_problem(240, 512);
    host_store everything(239);
    const std::vector<double> reference = p.gradient(store_all(240, 239), everything);
    const test::vector_schedule plan = test::split_levels(revolve(240, 10), 3);
    for (const bool asynchronous : {false, true}) {
        ram_and_disk store({tier_options{}, tier_options{.asynchronous = asynchronous}}, host_store(3),
                           hdf5_store(dir.path() / "run.h5", level_capacity{.slots = 7}));
        run_report report;
        BOOST_TEST_REQUIRE(same_bits(p.gradient(plan, store, &report), reference), "asynchronous " << asynchronous);
        BOOST_TEST(report.levels[1].name == "disk");
        BOOST_TEST(report.levels[1].stores > 0u);
        store.flush();
        BOOST_TEST(store.stats().levels[1].slots_in_use == 0u); // every disk slot freed at the end
        if (asynchronous) {
            const async_counters c = store.counters(1);
            BOOST_TEST(c.cache_hits + c.staging_hits + c.demand_reads == report.levels[1].restores);
            BOOST_TEST(c.prefetches > 0u);
            // Waits are the caller's: never more than the run itself lasted.
            BOOST_TEST(report.wait_seconds <= report.seconds);
            BOOST_TEST(report.levels[1].wait_seconds <= c.wait_seconds); // c also has the flush() after the run
        }
    }
}

BOOST_AUTO_TEST_CASE(a_full_disk_during_write_behind_fails_the_run_cleanly)
{
    test::scratch_dir dir;
    const std::filesystem::path file = dir.path() / "full.h5";
    const problem p = make_problem(200, 8192); // 64 KiB snapshots
    host_store everything(199);
    const std::vector<double> reference = p.gradient(store_all(200, 199), everything);
    const test::vector_schedule plan = test::split_levels(revolve(200, 12), 2);
    ram_and_disk store({tier_options{}, tier_options{.asynchronous = true}}, host_store(2),
                       hdf5_store(file, level_capacity{.slots = 10}));
    store.flush();
    const auto before = std::filesystem::file_size(file);

    rlimit saved{};
    ::getrlimit(RLIMIT_FSIZE, &saved);
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN); // EFBIG instead of death
    rlimit limited = saved;
    limited.rlim_cur = before + 3 * 64 * 1024; // room for about two more snapshots
    BOOST_TEST_REQUIRE(::setrlimit(RLIMIT_FSIZE, &limited) == 0);
    std::string message;
    try {
        (void)p.gradient(plan, store);
    } catch (const io_error& e) {
        message = e.what();
    }
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, old_handler);

    BOOST_TEST_REQUIRE(!message.empty()); // the worker's failure reached the caller
    BOOST_TEST(message.find(file.string()) != std::string::npos, message);
    const store_stats after = store.stats();
    BOOST_TEST(after.levels[0].slots_in_use == 0u);
    BOOST_TEST(after.levels[1].slots_in_use == 0u);
    // With room again, the same store completes the run, bit for bit.
    BOOST_TEST(same_bits(p.gradient(plan, store), reference));
}
