// The user's time is the user's, on every path where user code runs, when timing is asked for
// (run_options::time_user_code; not by default: then no call is timed). With a simulated GPU
// stream (tests/support/simulated_stream.hpp) that user code leaves work on and returns at once:
//  - run_online and run_online_converged: the loop's termination test is timed as user code (test_seconds),
//    with the store's wait for the stream inside its timing, so neither its CPU time nor its GPU work
//    is remat's;
//  - remat::profile: with options.copy = the stream's copier, each forward and adjoint cost holds the work
//    the step left on the stream (its kernels are asynchronous);
//  - a tiered_store level whose own wait is no copier's (a device level's user stream) behind an
//    asynchronous tier: the driver's wait reaches it, so the step is charged the work, not the worker.
#define BOOST_TEST_MODULE user_time
#include <boost/test/unit_test.hpp>

#include "simulated_stream.hpp"

#include "remat/driver/profile.hpp"
#include "remat/driver/run.hpp"
#include "remat/driver/run_online.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <chrono>
#include <string>
#include <thread>
#include <vector>

using namespace remat;
using std::chrono::microseconds;

namespace {

constexpr std::size_t doubles = 100;

double seconds(microseconds us)
{
    return std::chrono::duration<double>(us).count();
}

} // namespace

// Timing is asked for: by default a run reads no clock per action (the counter costs more than the rest of
// the driver's work per action on a trivial step, docs/driver.md), its per-callable seconds are 0, not
// measured, and the report says so; asked, the same run times every call.
BOOST_AUTO_TEST_CASE(a_run_times_the_users_calls_only_when_asked)
{
    constexpr auto work = microseconds(500);
    const revolve plan(8, 3);
    for (const bool asked : {false, true}) {
        host_store store(3);
        std::vector<double> x(doubles, 1.0);
        const auto forward = remat::forward_step([&](step_t, std::vector<double>& y) {
            y[0] += 1.0;
            std::this_thread::sleep_for(work);
        });
        const auto adjoint =
            remat::adjoint_step([&](step_t, std::vector<double>&) { std::this_thread::sleep_for(work); });
        const auto final = remat::final_state([&](const std::vector<double>&) { std::this_thread::sleep_for(work); });
        const run_report r = asked ? run(plan, store, x, forward, adjoint, final, run_options{.time_user_code = true})
                                   : run(plan, store, x, forward, adjoint, final);
        const double calls = static_cast<double>(r.forward_steps + r.final_forward_steps + r.reverse_steps + 1);
        BOOST_TEST_MESSAGE((asked ? "timed" : "default") << ": user " << r.user_seconds() << " s of " << r.seconds
                                                         << " s; " << calls << " calls of " << seconds(work) << " s");
        BOOST_TEST(r.user_timed == asked);
        BOOST_TEST(r.seconds >= calls * seconds(work)); // the run's wall time either way
        if (asked) {
            BOOST_TEST(r.forward_seconds >= 0.98 * static_cast<double>(r.forward_steps + 1) * seconds(work));
            BOOST_TEST(r.adjoint_seconds >= 0.98 * static_cast<double>(r.reverse_steps) * seconds(work));
            BOOST_TEST(r.final_seconds >= 0.98 * seconds(work));
            BOOST_TEST(to_string(r).find("user ") != std::string::npos, to_string(r));
        } else {
            BOOST_TEST(r.forward_seconds == 0.0);
            BOOST_TEST(r.adjoint_seconds == 0.0);
            BOOST_TEST(r.final_seconds == 0.0);
            BOOST_TEST(r.remat_seconds() == r.seconds);
            BOOST_TEST(to_string(r).find("not timed") != std::string::npos, to_string(r));
        }
    }
}

BOOST_AUTO_TEST_CASE(an_online_loops_termination_test_is_user_time)
{
    constexpr step_t steps = 30;
    constexpr auto cpu = microseconds(300); // the test's own host time
    constexpr auto gpu = microseconds(700); // and the work it leaves on the stream
    for (const bool converged : {false, true}) {
        test::simulated_stream stream;
        const online_revolve plan(4);
        host_store store(plan.slots(), {.copy = stream.copier()});
        std::vector<double> x(doubles, 1.0);
        std::uint64_t tests = 0;
        auto is_final = [&](step_t k, const std::vector<double>&) {
            ++tests;
            std::this_thread::sleep_for(cpu);
            stream.queue(gpu);
            return converged ? k == steps : k == steps - 1;
        };
        const auto forward = remat::forward_step([](step_t, std::vector<double>& y) { y[0] += 1.0; });
        const auto adjoint = remat::adjoint_step([](step_t, std::vector<double>&) {});
        const run_options timed{.time_user_code = true};
        const run_report r = converged ? run_online_converged(plan, store, x, forward, adjoint, is_final, timed)
                                       : run_online(plan, store, x, forward, adjoint, is_final, timed);
        BOOST_TEST_REQUIRE(r.steps == steps);
        const double work = static_cast<double>(tests) * seconds(cpu + gpu);
        BOOST_TEST_MESSAGE((converged ? "run_online_converged" : "run_online")
                           << ": " << tests << " tests, test " << r.test_seconds << " s (work " << work << "), remat "
                           << r.remat_seconds() << " s, all " << r.seconds << " s");
        // (0.98: the calls are timed with the time-stamp counter, scaled to seconds over the whole run)
        BOOST_TEST(r.test_seconds >= 0.98 * work);
        BOOST_TEST(r.user_seconds() >= r.test_seconds);
        BOOST_TEST(r.remat_seconds() < 0.25 * work);
    }
}

BOOST_AUTO_TEST_CASE(profile_times_a_step_until_its_work_on_the_stream_is_done)
{
    constexpr step_t steps = 6;
    constexpr auto forward_work = microseconds(2000);
    constexpr auto adjoint_work = microseconds(3000);
    test::simulated_stream stream;
    std::uint64_t adjoints = 0;
    auto forward = [&](step_t, std::vector<double>& y) {
        y[0] += 1.0;
        stream.queue(forward_work);
    };
    auto adjoint = [&](step_t, std::vector<double>&) {
        ++adjoints;
        stream.queue(adjoint_work);
    };
    const chain_model m = profile(steps, std::vector<double>(doubles, 1.0), remat::forward_step(forward),
                                  remat::adjoint_step(adjoint), {.repeats = 3, .slots = 2, .copy = stream.copier()});
    BOOST_TEST(adjoints == static_cast<std::uint64_t>(steps));
    BOOST_TEST_REQUIRE(m.size() == static_cast<std::size_t>(steps));
    for (const chain_step& s : m.steps) {
        BOOST_TEST(s.state_bytes == doubles * sizeof(double));
        BOOST_TEST(s.forward >= seconds(forward_work));
        BOOST_TEST(s.adjoint >= seconds(adjoint_work));
    }
}

namespace {

// A level that orders its copies after the user's work on the stream and waits for it in wait_for_user(), as a
// device level does for its user stream; its wait is its own, not a copier's.
class stream_level {
public:
    stream_level(slot_t slots, test::simulated_stream& stream) : ram_(slots), stream_(&stream) {}
    [[nodiscard]] level_capacity capacity() const noexcept { return ram_.capacity(); }
    void write(slot_t n, step_t k, const_bytes src)
    {
        stream_->synchronize();
        ram_.write(n, k, src);
    }
    void read(slot_t n, step_t k, mutable_bytes dst)
    {
        stream_->synchronize();
        ram_.read(n, k, dst);
    }
    void release(slot_t n) { ram_.release(n); }
    void release_all() noexcept { ram_.release_all(); }
    [[nodiscard]] std::size_t snapshot_bytes(slot_t n) const { return ram_.snapshot_bytes(n); }
    [[nodiscard]] level_stats stats() const { return ram_.stats(); }
    void wait_for_user()
    {
        ++waits;
        stream_->synchronize();
    }
    std::uint64_t waits = 0; // the driver's thread alone calls wait_for_user

private:
    host_store ram_;
    test::simulated_stream* stream_;
};
static_assert(storage_level<stream_level>);

} // namespace

BOOST_AUTO_TEST_CASE(a_levels_own_wait_is_reached_behind_an_asynchronous_tier)
{
    constexpr step_t steps = 24;
    constexpr auto work = microseconds(1000);
    for (const bool asynchronous : {false, true}) {
        test::simulated_stream stream;
        tiered_store<stream_level> store({tier_options{.asynchronous = asynchronous}}, stream_level(4, stream));
        std::vector<double> x(doubles, 1.0);
        const run_report r = run(revolve(steps, 4), store, x, remat::forward_step([&](step_t, std::vector<double>& y) {
                                     y[0] += 1.0;
                                     stream.queue(work);
                                 }),
                                 remat::adjoint_step([&](step_t, std::vector<double>&) { stream.queue(work); }),
                                 run_options{.time_user_code = true});
        store.flush();
        const double forward_work = static_cast<double>(r.forward_steps) * seconds(work);
        const double adjoint_work = static_cast<double>(r.reverse_steps) * seconds(work);
        const char* what = asynchronous ? "asynchronous tier" : "synchronous tier";
        BOOST_TEST_MESSAGE(what << ": level waits " << store.level<0>().waits << ", forward " << r.forward_seconds
                                << " s (work " << forward_work << "), adjoint " << r.adjoint_seconds << " s (work "
                                << adjoint_work << "), remat " << r.remat_seconds() << " s");
        BOOST_TEST(store.level<0>().waits > 0u, what);
        BOOST_TEST(r.forward_seconds >= 0.98 * forward_work, what);
        BOOST_TEST(r.adjoint_seconds >= 0.98 * adjoint_work, what);
        BOOST_TEST(r.remat_seconds() < 0.25 * (forward_work + adjoint_work), what);
    }
}
