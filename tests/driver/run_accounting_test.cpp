// remat::run_accounting: the report counts the store's work since start() only; the snapshots of all levels
// held at once are counted for several levels, the level's own peaks reported for one; the user's time
// is measured when timing and not when not.
#define BOOST_TEST_MODULE run_accounting
#include <boost/test/unit_test.hpp>

#include "remat/driver/run_accounting.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/snapshot_store.hpp"
#include "remat/store/snapshot_traits.hpp"
#include "remat/store/tiered_store.hpp"

#include <chrono>
#include <cstddef>
#include <thread>
#include <vector>

namespace {

const std::vector<double> x(4, 1.0); // 32 bytes
const remat::const_bytes bytes = remat::snapshot_traits<std::vector<double>>::bytes(x);

} // namespace

BOOST_AUTO_TEST_CASE(counts_are_the_stores_since_start)
{
    remat::host_store level(3);
    remat::detail::store_access<remat::host_store> access(level);
    level.write(0, 0, bytes); // before the run: not the run's
    remat::run_accounting acc;
    acc.start(access);
    access.write(0, 1, 1, bytes);
    access.write(0, 2, 2, bytes);
    level.release(0);
    const remat::run_report r = acc.finish(access);
    BOOST_TEST(r.stores == 2u);
    BOOST_TEST(r.bytes_written == 2 * bytes.size);
    BOOST_TEST(r.levels.size() == 1u);
    BOOST_TEST(r.levels[0].stores == 2u);
    // one level: the level's own peak, counted from what it held as the run started (x_0's slot)
    BOOST_TEST(r.peak_slots == 3);
    BOOST_TEST(r.peak_snapshot_bytes == 3 * bytes.size);
}

BOOST_AUTO_TEST_CASE(several_levels_count_the_snapshots_held_on_all_levels_at_once)
{
    remat::tiered_store<remat::host_store, remat::host_store> store(remat::host_store(2), remat::host_store(2));
    remat::detail::store_access<decltype(store)> access(store);
    remat::run_accounting acc;
    acc.start(access);
    BOOST_TEST(acc.several_levels());
    acc.hold(10);
    acc.hold(20); // two at once, 30 bytes: the byte peak
    acc.let_go(10);
    acc.hold(5);
    acc.hold(1); // three at once, 26 bytes: the slot peak
    acc.let_go(20);
    const remat::run_report r = acc.finish(access);
    BOOST_TEST(r.peak_slots == 3);
    BOOST_TEST(r.peak_snapshot_bytes == 30u);
}

BOOST_AUTO_TEST_CASE(user_time_is_measured_when_timing_and_not_read_otherwise)
{
    remat::host_store level(1);
    remat::detail::store_access<remat::host_store> access(level);
    remat::run_accounting timed;
    timed.set_timing(true);
    timed.start(access);
    BOOST_TEST(timed.timed(remat::user_call::adjoint, [] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return 7;
    }) == 7); // the call's result passes through
    const remat::run_report r = timed.finish(access);
    BOOST_TEST(r.adjoint_seconds >= 0.015); // the tick rate is calibrated over the run: some slack
    BOOST_TEST(r.adjoint_seconds <= r.seconds * 1.01);
    BOOST_TEST(r.forward_seconds == 0.0);
    BOOST_TEST(r.user_timed);

    remat::run_accounting untimed; // not timing unless asked
    untimed.start(access);
    untimed.timed(remat::user_call::forward, [] { std::this_thread::sleep_for(std::chrono::milliseconds(5)); });
    const remat::run_report u = untimed.finish(access);
    BOOST_TEST(u.forward_seconds == 0.0);
    BOOST_TEST(!u.user_timed);
    BOOST_TEST(u.seconds >= 0.004); // the run's wall time all the same
}
