// Gradients on the GPU (label gpu; skipped without a device): the reaction-diffusion problem with its
// exact discrete adjoint as CUDA kernels, through remat::run with device states (thrust::device_vector,
// device_span on the user's own stream) and both GPU-capable stores, must be bit-identical to a host-only
// store-everything run of the same problem (the kernels are compiled without FMA contraction).
#define BOOST_TEST_MODULE cuda_gradients
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include "gpu_gradients.hpp"
#include "reaction_diffusion.hpp"

#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"

#include <cmath>
#include <cstring>
#include <tuple>
#include <vector>

using namespace remat;
using test::gpu_schedule_kind;
using test::gpu_store_kind;
using test::rd_gradient;
using test::reaction_diffusion;
using test::same_bits;

namespace {

const std::vector<std::tuple<std::size_t, step_t, slot_t>> cases{{256, 1, 1}, {256, 60, 3}, {1000, 400, 8}};

} // namespace

BOOST_AUTO_TEST_CASE(device_vector_states_match_the_host_only_run_bit_for_bit)
{
    for (const auto& [points, steps, slots] : cases) {
        const reaction_diffusion problem = reaction_diffusion::stable_on(points);
        const rd_gradient expected = test::store_all_gradient(problem, steps);
        BOOST_TEST_REQUIRE(std::isfinite(expected.nu()), "n=" << points << " T=" << steps);
        BOOST_TEST(std::abs(expected.nu()) > 0.0);
        for (const gpu_store_kind store : {gpu_store_kind::device_store, gpu_store_kind::pinned_host_store})
            for (const gpu_schedule_kind schedule : {gpu_schedule_kind::revolve, gpu_schedule_kind::store_all}) {
                run_report report;
                const rd_gradient g = test::gpu_thrust_gradient(problem, steps, slots, store, schedule, &report);
                BOOST_TEST(same_bits(g, expected), "n=" << points << " T=" << steps << " s=" << slots << " store "
                                                        << static_cast<int>(store) << " schedule "
                                                        << static_cast<int>(schedule));
                if (schedule == gpu_schedule_kind::revolve)
                    BOOST_TEST(report.forward_steps == revolve(steps, slots).cost().forward_steps);
            }
    }
}

BOOST_AUTO_TEST_CASE(device_span_states_on_the_users_own_stream_match_bit_for_bit)
{
    for (const auto& [points, steps, slots] : cases) {
        const reaction_diffusion problem = reaction_diffusion::stable_on(points);
        run_report report;
        const rd_gradient g = test::gpu_span_gradient(problem, steps, slots, &report);
        BOOST_TEST(same_bits(g, test::store_all_gradient(problem, steps)),
                   "n=" << points << " T=" << steps << " s=" << slots);
        BOOST_TEST(report.levels.at(0).name == "device");
        BOOST_TEST(report.stores == revolve(steps, slots).cost().stores);
    }
}

BOOST_AUTO_TEST_CASE(a_tiered_store_with_device_slots_first_and_pinned_host_slots_behind_them)
{
    // The composition of docs/cuda.md: GPU slots as level 0, pinned host RAM as level 1 (synchronous,
    // and behind the tiered store's worker thread), along a two-level schedule that uses both.
    for (const auto& [points, steps, device_slots, host_slots] :
         std::vector<std::tuple<std::size_t, step_t, slot_t, slot_t>>{{256, 60, 2, 3}, {1000, 400, 3, 6}}) {
        const reaction_diffusion problem = reaction_diffusion::stable_on(points);
        const rd_gradient expected = test::store_all_gradient(problem, steps);
        BOOST_TEST_REQUIRE(std::isfinite(expected.nu()), "n=" << points << " T=" << steps);
        for (const bool asynchronous : {false, true}) {
            run_report report;
            const rd_gradient g =
                test::gpu_tiered_gradient(problem, steps, device_slots, host_slots, 2.0, asynchronous, &report);
            BOOST_TEST(same_bits(g, expected), "n=" << points << " T=" << steps << " asynchronous " << asynchronous);
            BOOST_TEST(report.levels.at(0).name == "device");
            BOOST_TEST(report.levels.at(0).stores > 0u);
            BOOST_TEST(report.levels.at(1).stores > 0u);
        }
    }
}
