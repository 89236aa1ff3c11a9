// States of several parts on a GPU (label gpu; skipped without a device): (x_k, x_{k-1}) as two
// thrust::device_vector<double>, and the same with a step counter in host memory, gathered part by part
// into one slot of the device store (device-to-device copies on its copy stream, no host round trip), of a
// pinned host store (cuda::copier()) and of a tiered device + asynchronous pinned host store, and
// scattered back: gradients bit-identical to the host-only store-everything run, every part back exactly.
#define BOOST_TEST_MODULE cuda_multipart
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include "gpu_gradients.hpp"
#include "reaction_diffusion.hpp"

#include <cmath>
#include <cstdint>

using namespace remat;
using test::gpu_parts_store;
using test::rd_gradient;
using test::reaction_diffusion;

BOOST_AUTO_TEST_CASE(device_parts_through_every_gpu_level_match_the_host_only_run_bit_for_bit)
{
    const reaction_diffusion problem = reaction_diffusion::stable_on(1000);
    const step_t steps = 300;
    const rd_gradient expected = test::store_all_gradient(problem, steps);
    BOOST_TEST_REQUIRE(std::isfinite(expected.nu()));
    for (const gpu_parts_store store :
         {gpu_parts_store::device_store, gpu_parts_store::pinned_host_store, gpu_parts_store::tiered_async}) {
        for (const bool host_part : {false, true}) {
            std::uint64_t wrong = 0;
            const rd_gradient g = test::gpu_parts_gradient(problem, steps, 6, store, host_part, wrong);
            BOOST_TEST(test::same_bits(g, expected),
                       "store " << static_cast<int>(store) << ", host part " << host_part);
            BOOST_TEST(wrong == 0u, "store " << static_cast<int>(store) << ", host part " << host_part);
        }
    }
}
