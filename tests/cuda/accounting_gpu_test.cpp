// The time rule on a GPU (label gpu; skipped without a device): the GPU time of a user step's kernels is
// the step's, not remat's. Forward and adjoint steps each queue a kernel that spins for about 2 ms on the
// user's stream and return at once. Through a device store, a pinned host store copying with
// cuda::copier(stream) and a tiered store of both (synchronous and asynchronous), on the legacy stream and
// on a stream of one's own, the report must charge the kernels to forward_seconds and adjoint_seconds and
// keep remat_seconds() to a small fraction of them. Without the driver's wait at the end of each step the
// device store's report would show almost no user time (the kernels still queued), and the host store's
// copies would wait for the kernels inside remat's time.
#define BOOST_TEST_MODULE cuda_accounting
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include "test_kernels.hpp"

#include "remat/cuda/copy.hpp"
#include "remat/cuda/device_buffer.hpp"
#include "remat/cuda/device_span.hpp"
#include "remat/cuda/device_store.hpp"
#include "remat/cuda/event.hpp"
#include "remat/cuda/pinned_memory_resource.hpp"
#include "remat/cuda/stream.hpp"
#include "remat/driver/run.hpp"
#include "remat/schedule/multilevel.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <cuda_runtime_api.h>

#include <string>

using namespace remat;
using remat::cuda::device_span;

namespace {

constexpr std::size_t n = 1024; // doubles per state: 8 KiB, so that the store's copies are short
constexpr step_t steps = 12;
constexpr double spin_seconds = 0.002;

// The GPU time of one spin of `cycles`, timed alone with events (after a first spin that loads the kernel).
double kernel_seconds(long long cycles, cudaStream_t s)
{
    cuda::event start(cuda::event::timing::on);
    cuda::event end(cuda::event::timing::on);
    test::spin(cycles, s);
    start.record(s);
    test::spin(cycles, s);
    end.record(s);
    end.synchronize();
    return cuda::elapsed_seconds(start, end);
}

// The clock cycles of about `seconds` of spinning, from a timed spin of a known length.
long long cycles_for(double seconds, cudaStream_t s)
{
    constexpr long long probe = 10'000'000;
    const double t = kernel_seconds(probe, s);
    BOOST_REQUIRE(t > 0);
    return static_cast<long long>(static_cast<double>(probe) * seconds / t);
}

// Runs `plan` twice on `store` (the first run allocates the slots and maps the pinned pages) and checks
// the second run's report: the kernels' time in the steps, remat's time small, the counts the plan's.
template <class Plan, class Store>
void check_the_steps_get_their_kernels_time(const Plan& plan, Store& store, cudaStream_t s, const std::string& what)
{
    cuda::device_buffer memory(n * sizeof(double));
    device_span<double> x(reinterpret_cast<double*>(memory.data()), n);
    const long long cycles = cycles_for(spin_seconds, s);
    const double kernel = kernel_seconds(cycles, s);
    auto forward = remat::forward_step([&](step_t k, device_span<double>& y) {
        test::spin(cycles, s);
        test::fill(y.data(), y.size(), static_cast<double>(k + 1), s);
    });
    auto adjoint = remat::adjoint_step([&](step_t, device_span<double>&) { test::spin(cycles, s); });
    test::fill(x.data(), n, 0.0, s);
    (void)run(plan, store, x, forward, adjoint);
    test::fill(x.data(), n, 0.0, s);
    const run_report r = run(plan, store, x, forward, adjoint, run_options{.time_user_code = true});

    const schedule_cost c = plan.cost();
    BOOST_TEST(r.forward_steps == c.forward_steps, what);
    BOOST_TEST(r.reverse_steps == static_cast<std::uint64_t>(steps), what);
    BOOST_TEST(r.stores == c.stores, what);
    BOOST_TEST(r.restores == c.restores, what);
    BOOST_TEST(r.bytes_written == c.stores * n * sizeof(double), what);
    BOOST_TEST(r.peak_slots == c.peak_slots, what);

    const double forward_gpu = static_cast<double>(r.forward_steps) * kernel;
    const double adjoint_gpu = static_cast<double>(r.reverse_steps) * kernel;
    BOOST_TEST_MESSAGE(what << ": kernel " << kernel * 1e3 << " ms; forward " << r.forward_seconds * 1e3 << " ms (GPU "
                            << forward_gpu * 1e3 << "), adjoint " << r.adjoint_seconds * 1e3 << " ms (GPU "
                            << adjoint_gpu * 1e3 << "), remat " << r.remat_seconds() * 1e3 << " ms, waited "
                            << r.wait_seconds * 1e3 << " ms");
    BOOST_TEST(kernel > 0.5 * spin_seconds, what << ": the spin kernel ran " << kernel << " s");
    BOOST_TEST(r.forward_seconds >= 0.9 * forward_gpu, what << ": forward " << r.forward_seconds << " s");
    BOOST_TEST(r.adjoint_seconds >= 0.9 * adjoint_gpu, what << ": adjoint " << r.adjoint_seconds << " s");
    BOOST_TEST(r.remat_seconds() < 0.1 * (forward_gpu + adjoint_gpu), what << ": remat " << r.remat_seconds() << " s");
    BOOST_TEST(r.seconds >= r.user_seconds(), what);
}

// The streams a user's kernels may run on: the legacy default stream, and one of the user's own.
struct streams {
    cuda::stream own;
    [[nodiscard]] std::pair<cudaStream_t, std::string> at(int i) const
    {
        return i == 0 ? std::pair<cudaStream_t, std::string>{nullptr, "legacy stream"}
                      : std::pair<cudaStream_t, std::string>{own.get(), "own stream"};
    }
};

} // namespace

BOOST_AUTO_TEST_CASE(a_device_store_charges_the_kernels_to_the_steps)
{
    const streams ss;
    for (int i = 0; i < 2; ++i) {
        const auto [s, name] = ss.at(i);
        cuda::device_store store(level_capacity{.slots = 3}, {.slot_bytes = n * sizeof(double), .user_stream = s});
        check_the_steps_get_their_kernels_time(revolve(steps, 3), store, s, "device store, " + name);
    }
}

BOOST_AUTO_TEST_CASE(a_pinned_host_store_with_the_users_copier_charges_the_kernels_to_the_steps)
{
    const streams ss;
    cuda::pinned_memory_resource pinned;
    for (int i = 0; i < 2; ++i) {
        const auto [s, name] = ss.at(i);
        host_store store(level_capacity{.slots = 3}, {.memory = &pinned, .copy = cuda::copier(s)});
        check_the_steps_get_their_kernels_time(revolve(steps, 3), store, s, "pinned host store, " + name);
    }
}

BOOST_AUTO_TEST_CASE(a_tiered_store_charges_the_kernels_to_the_steps)
{
    const streams ss;
    cuda::pinned_memory_resource pinned;
    const multilevel plan(steps, cost_model{{{"device", 2, 0, 0}, {"host", 4, 1, 1}}});
    BOOST_TEST_REQUIRE(plan.cost().levels.at(1).stores > 0u); // the host level is used
    for (int i = 0; i < 2; ++i)
        for (const bool asynchronous : {false, true}) {
            const auto [s, name] = ss.at(i);
            tiered_store<cuda::device_store, host_store> store(
                cuda::copier(s),
                {tier_options{}, tier_options{.asynchronous = asynchronous,
                                              .async = {.staging_buffers = 2, .staging_memory = &pinned}}},
                cuda::device_store(level_capacity{.slots = 2}, {.slot_bytes = n * sizeof(double)}),
                host_store(level_capacity{.slots = 4}, {.memory = &pinned}));
            check_the_steps_get_their_kernels_time(
                plan, store, s, std::string(asynchronous ? "asynchronous" : "synchronous") + " tiered store, " + name);
        }
}
