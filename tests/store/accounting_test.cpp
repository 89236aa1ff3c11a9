// Accounting (label unit): each count is kept in one place, the level's, and the run report reads it.
// Through every store that runs without a device or a disk — host_store, the device level on the host
// runtime, tiered stores (synchronous and asynchronous) — the report's counts are the plan's, its byte
// counts those times the state's bytes, its peaks the plan's, and the store's own stats the sums of the
// runs'; a second run on the same store, holding fewer snapshots, reports its own peaks. The time rule for asynchronous
// GPU work is checked with a simulated stream: user steps that leave work "on the GPU" are charged its time, not remat.
#define BOOST_TEST_MODULE accounting
#include <boost/test/unit_test.hpp>

#include "accounting_check.hpp"
#include "simulated_stream.hpp"

#include "remat/cuda/basic_device_store.hpp"
#include "remat/cuda/host_runtime.hpp"
#include "remat/driver/run.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/level_accounting.hpp"
#include "remat/store/tiered_store.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

using namespace remat;
using remat::test::check_accounting;

namespace {

constexpr std::size_t doubles = 100; // 800 bytes per snapshot
constexpr step_t steps = 40;

const cost_model two_levels{{{"ram", 3, 0, 0}, {"slow", 6, 2, 2}}};
const cost_model smaller{{{"ram", 2, 0, 0}, {"slow", 3, 2, 2}}}; // fewer snapshots at once

} // namespace

BOOST_AUTO_TEST_CASE(level_accounting_counts_and_restarts_its_peaks)
{
    level_accounting counts("ram");
    counts.wrote(100);
    counts.wrote(300);
    counts.read(300);
    counts.released(100);
    BOOST_TEST(counts.stats().name == "ram");
    BOOST_TEST(counts.stats().stores == 2u);
    BOOST_TEST(counts.stats().bytes_written == 400u);
    BOOST_TEST(counts.stats().restores == 1u);
    BOOST_TEST(counts.stats().bytes_read == 300u);
    BOOST_TEST(counts.stats().slots_in_use == 1u);
    BOOST_TEST(counts.stats().bytes_in_use == 300u);
    BOOST_TEST(counts.stats().peak_slots == 2u);
    BOOST_TEST(counts.stats().peak_bytes == 400u);
    counts.restart_peaks();
    BOOST_TEST(counts.stats().peak_slots == 1u);
    BOOST_TEST(counts.stats().peak_bytes == 300u);
    counts.holds(50); // found in a resumed file: held, not stored
    BOOST_TEST(counts.stats().stores == 2u);
    BOOST_TEST(counts.stats().peak_bytes == 350u);
    counts.released_all();
    BOOST_TEST(counts.stats().slots_in_use == 0u);
    BOOST_TEST(counts.stats().bytes_in_use == 0u);
    BOOST_TEST(counts.stats().peak_slots == 2u);
    counts.waited(0.25);
    BOOST_TEST(counts.stats().wait_seconds == 0.25);
}

BOOST_AUTO_TEST_CASE(through_a_host_store)
{
    host_store store(4);
    check_accounting(revolve(steps, 4), revolve(steps, 2), store, doubles, "host_store");
}

BOOST_AUTO_TEST_CASE(through_a_host_store_with_a_byte_budget)
{
    host_store store(level_capacity{.bytes = 5 * doubles * sizeof(double)});
    check_accounting(revolve(steps, 5), revolve(steps, 3), store, doubles, "host_store, byte budget");
}

BOOST_AUTO_TEST_CASE(through_a_device_level_on_the_host_runtime)
{
    cuda::basic_device_store<cuda::host_runtime> store(4);
    check_accounting(revolve(steps, 4), revolve(steps, 2), store, doubles, "device store, host runtime");
}

BOOST_AUTO_TEST_CASE(through_tiered_stores_synchronous_and_asynchronous)
{
    const multilevel plan(steps, two_levels);
    BOOST_TEST_REQUIRE(plan.cost().levels.at(1).stores > 0u); // the slow level is used
    for (const bool asynchronous : {false, true}) {
        tiered_store store(
            {tier_options{}, tier_options{.asynchronous = asynchronous, .async = {.staging_buffers = 2}}},
            host_store(3, {.name = "ram"}), host_store(6, {.name = "slow"}));
        check_accounting(plan, multilevel(steps, smaller), store, doubles,
                         asynchronous ? "tiered, asynchronous" : "tiered, synchronous");
    }
}

BOOST_AUTO_TEST_CASE(through_a_tiered_store_with_a_device_level)
{
    const multilevel plan(steps, two_levels);
    tiered_store store(cuda::basic_device_store<cuda::host_runtime>(3, {.name = "ram"}),
                       host_store(6, {.name = "slow"}));
    check_accounting(plan, multilevel(steps, smaller), store, doubles, "tiered, device level on the host runtime");
}

// --- the time rule, with a simulated GPU stream -----------------------------------------------------------

// The steps' queued work is charged to the steps: the driver waits for the stream (the copier's
// wait_for_user) when a step returns, inside the step's timing, so the store's copies no longer wait for it
// in remat's time. Work queued before the run is not the run's.
BOOST_AUTO_TEST_CASE(work_a_step_leaves_on_the_stream_is_the_steps_time)
{
    constexpr auto work = std::chrono::microseconds(1000);
    test::simulated_stream stream;
    host_store store(4, {.copy = stream.copier()});
    const revolve plan(steps, 4);
    std::vector<double> x(doubles, 1.0);
    stream.queue(std::chrono::microseconds(200'000)); // x_0's kernels, before the run
    const run_report r = run(plan, store, x, remat::forward_step([&](step_t, std::vector<double>& y) {
                                 y[0] += 1.0;
                                 stream.queue(work);
                             }),
                             remat::adjoint_step([&](step_t, std::vector<double>&) { stream.queue(work); }),
                             run_options{.time_user_code = true});
    const double unit = std::chrono::duration<double>(work).count();
    const double forward_work = static_cast<double>(r.forward_steps) * unit;
    const double adjoint_work = static_cast<double>(r.reverse_steps) * unit;
    BOOST_TEST_MESSAGE("forward " << r.forward_seconds << " s (work " << forward_work << "), adjoint "
                                  << r.adjoint_seconds << " s (work " << adjoint_work << "), remat "
                                  << r.remat_seconds() << " s, all " << r.seconds << " s");
    // (0.98: the steps are timed with the time-stamp counter, scaled to seconds over the whole run)
    BOOST_TEST(r.forward_seconds >= 0.98 * forward_work);
    BOOST_TEST(r.adjoint_seconds >= 0.98 * adjoint_work);
    BOOST_TEST(r.remat_seconds() < 0.25 * (forward_work + adjoint_work));
    BOOST_TEST(r.seconds < forward_work + adjoint_work + 0.15); // the 0.2 s queued before the run is not in it
}
