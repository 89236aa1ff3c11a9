// The GPU code of remat on Thrust's CPU back ends (compiled twice: CPP and OMP), where "device" memory is
// host memory: thrust::device_vector and device_span states through the driver with the device level and
// with a host store of "device" states, against the sequential host reference (bit-identical) and finite
// differences (the adjoint is right).
#define BOOST_TEST_MODULE thrust_backend
#include <boost/test/unit_test.hpp>

#include "reaction_diffusion_thrust.hpp"
#include "vector_schedule.hpp"

#include "remat/cuda/copy.hpp"
#include "remat/cuda/device_span.hpp"
#include "remat/cuda/device_store.hpp"
#include "remat/cuda/pinned_memory_resource.hpp"
#include "remat/cuda/thrust_traits.hpp"
#include "remat/driver/run.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <thrust/device_vector.h>
#include <thrust/sequence.h>

#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_OMP
#include <omp.h>
#endif

using namespace remat;
using test::rd_gradient;
using test::reaction_diffusion;
using test::same_bits;

namespace {

struct use_two_threads {
    use_two_threads()
    {
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_OMP
        omp_set_num_threads(2); // really parallel, even where the machine reports one core
#endif
    }
};

} // namespace

BOOST_GLOBAL_FIXTURE(use_two_threads);

static_assert(REMAT_DEVICE_SYSTEM_HOST == 1);
static_assert(remat::cuda::device_space == memory_space::host);
static_assert(std::is_same_v<remat::cuda::device_store, remat::cuda::basic_device_store<remat::cuda::host_runtime>>);
static_assert(contiguous_state<thrust::device_vector<double>>);
static_assert(contiguous_state<thrust::host_vector<float>>);
static_assert(contiguous_state<remat::cuda::device_span<double>>);
static_assert(!snapshot_state<remat::cuda::device_span<const double>>); // a restore writes into the state

BOOST_AUTO_TEST_CASE(thrust_vectors_are_viewed_in_place)
{
    thrust::device_vector<double> v(10);
    thrust::sequence(v.begin(), v.end());
    const const_bytes b = snapshot_traits<thrust::device_vector<double>>::bytes(std::as_const(v));
    BOOST_TEST(b.data == reinterpret_cast<const std::byte*>(thrust::raw_pointer_cast(v.data())));
    BOOST_TEST(b.size == 80u);
    BOOST_TEST((b.space == memory_space::host)); // a CPU back end: "device" memory is host memory
    // A restore of a snapshot of another length resizes the vector.
    const mutable_bytes m = snapshot_traits<thrust::device_vector<double>>::bytes_for(v, 24);
    BOOST_TEST(v.size() == 3u);
    BOOST_TEST(m.size == 24u);
    BOOST_CHECK_THROW((void)snapshot_traits<thrust::device_vector<double>>::bytes_for(v, 25), integrity_error);
}

BOOST_AUTO_TEST_CASE(the_host_reference_agrees_with_finite_differences)
{
    const reaction_diffusion problem{.points = 64};
    const step_t steps = 120;
    const rd_gradient g = test::store_all_gradient(problem, steps);
    const double eps = 1e-6;
    reaction_diffusion up = problem;
    reaction_diffusion down = problem;
    up.nu += eps;
    down.nu -= eps;
    const double fd = (up.objective(up.final_field(steps)) - down.objective(down.final_field(steps))) / (2 * eps);
    BOOST_TEST(std::abs(g.nu() - fd) <= 1e-6 * std::abs(fd), "adjoint " << g.nu() << " vs fd " << fd);
    BOOST_TEST(std::abs(g.nu()) > 1e-3); // not trivially zero

    // One component of dJ/du_0, perturbing x_0.
    const std::size_t i = 17;
    auto objective_with = [&](double delta) {
        std::vector<double> u = problem.initial_field();
        u[i] += delta;
        std::vector<double> scratch;
        for (step_t k = 0; k < steps; ++k)
            problem.step(u.data(), scratch);
        return problem.objective(u);
    };
    const double fd0 = (objective_with(eps) - objective_with(-eps)) / (2 * eps);
    BOOST_TEST(std::abs(g.initial[i] - fd0) <= 1e-6 * std::abs(fd0) + 1e-10);
}

BOOST_AUTO_TEST_CASE(device_vector_states_through_the_device_level_are_bit_identical)
{
    const reaction_diffusion problem{.points = 128};
    // (Few forward steps in all: on the OMP back end each step is a parallel region.)
    const std::pair<step_t, slot_t> cases[] = {{1, 1}, {2, 1}, {30, 1}, {40, 3}, {150, 4}, {333, 12}};
    for (const auto& [steps, slots] : cases) {
        remat::cuda::device_store store(slots);
        run_report report;
        const rd_gradient g = test::run_thrust_gradient(problem, revolve(steps, slots), store, &report);
        BOOST_TEST(same_bits(g, test::store_all_gradient(problem, steps)), "T=" << steps << " s=" << slots);
        BOOST_TEST(report.forward_steps == revolve(steps, slots).cost().forward_steps);
        BOOST_TEST(report.levels.at(0).name == "device");
    }
}

BOOST_AUTO_TEST_CASE(device_vector_states_through_a_host_store_with_the_cuda_copier)
{
    const reaction_diffusion problem{.points = 128};
    remat::cuda::pinned_memory_resource pinned;
    host_store store(level_capacity{.slots = 6}, {.memory = &pinned, .copy = remat::cuda::copier()});
    const rd_gradient g = test::run_thrust_gradient(problem, revolve(120, 6), store);
    BOOST_TEST(same_bits(g, test::store_all_gradient(problem, 120)));
}

BOOST_AUTO_TEST_CASE(device_span_states_over_the_users_buffer)
{
    const reaction_diffusion problem{.points = 100};
    const step_t steps = 90;
    thrust::device_vector<double> buffer(problem.points);
    const std::vector<double> x0 = problem.initial_field();
    thrust::copy(x0.begin(), x0.end(), buffer.begin());
    remat::cuda::device_span<double> x(thrust::raw_pointer_cast(buffer.data()), buffer.size());

    rd_gradient g{problem.objective_gradient(problem.final_field(steps)), std::vector<double>(problem.points, 0.0)};
    std::vector<double> scratch;
    remat::cuda::device_store store(level_capacity{.slots = 4}, {.slot_bytes = 800});
    (void)run(revolve(steps, 4), store, x, remat::forward_step([&](step_t, remat::cuda::device_span<double>& s) {
                  problem.step(s.data(), scratch);
              }),
              remat::adjoint_step([&](step_t, remat::cuda::device_span<double>& s) {
                  problem.adjoint_step(s.data(), g.initial, g.nu_points, scratch);
              }));
    BOOST_TEST(same_bits(g, test::store_all_gradient(problem, steps)));
    BOOST_TEST(x.data() == thrust::raw_pointer_cast(buffer.data())); // restored in place
}

BOOST_AUTO_TEST_CASE(a_tiered_store_with_the_device_level_first_and_an_asynchronous_host_level)
{
    // The composition the GPU machine uses: device slots first, then host RAM behind a worker thread
    // (pinned staging, the store's one copier), executing a two-level stream.
    const reaction_diffusion problem{.points = 96};
    const step_t steps = 160;
    const test::vector_schedule plan = test::split_levels(revolve(steps, 9), 3);
    remat::cuda::pinned_memory_resource pinned;
    const rd_gradient expected = test::store_all_gradient(problem, steps);
    for (const bool asynchronous : {false, true}) {
        tiered_store<remat::cuda::device_store, host_store> store(
            remat::cuda::copier(),
            {tier_options{},
             tier_options{.asynchronous = asynchronous, .async = {.staging_buffers = 3, .staging_memory = &pinned}}},
            remat::cuda::device_store(3), host_store(level_capacity{.slots = 6}, {.memory = &pinned}));
        run_report report;
        const rd_gradient g = test::run_thrust_gradient(problem, plan, store, &report);
        BOOST_TEST(same_bits(g, expected), "asynchronous " << asynchronous);
        BOOST_TEST(report.levels.at(0).name == "device");
        BOOST_TEST(report.levels.at(1).stores > 0u);
    }
}

BOOST_AUTO_TEST_CASE(states_of_several_device_parts_through_every_level)
{
    // An (x_k, x_{k-1}) pair of device vectors, and the same with a step counter on the host: each part
    // gathered into one slot and scattered back, on the device level, a host store with cuda::copier() and a
    // tiered device + asynchronous host store; gradients bit-identical to the host store-all run.
    const reaction_diffusion problem{.points = 96};
    const step_t steps = 120;
    const rd_gradient expected = test::store_all_gradient(problem, steps);
    remat::cuda::pinned_memory_resource pinned;
    const test::vector_schedule plan = test::split_levels(revolve(steps, 9), 3);
    auto check = [&]<class State>(const char* what) {
        std::uint64_t wrong = 0;
        remat::cuda::device_store device(5);
        BOOST_TEST(
            same_bits(test::run_thrust_parts_gradient<State>(problem, revolve(steps, 5), device, wrong), expected),
            what << ", device level");
        host_store host(level_capacity{.slots = 5}, {.memory = &pinned, .copy = remat::cuda::copier()});
        BOOST_TEST(same_bits(test::run_thrust_parts_gradient<State>(problem, revolve(steps, 5), host, wrong), expected),
                   what << ", host level");
        tiered_store<remat::cuda::device_store, host_store> tiered(
            remat::cuda::copier(),
            {tier_options{},
             tier_options{.asynchronous = true, .async = {.staging_buffers = 3, .staging_memory = &pinned}}},
            remat::cuda::device_store(3), host_store(level_capacity{.slots = 6}, {.memory = &pinned}));
        run_report report;
        BOOST_TEST(same_bits(test::run_thrust_parts_gradient<State>(problem, plan, tiered, wrong, &report), expected),
                   what << ", tiered");
        BOOST_TEST(report.levels.at(1).stores > 0u);
        BOOST_TEST(wrong == 0u, what);
    };
    check.template operator()<test::rd_device_parts>("device parts");
    check.template operator()<test::rd_mixed_parts>("device and host parts");
}
