// Gradients on the GPU through device, pinned host and HDF5 levels (label gpu; skipped without a
// device): bit-identical to a host-only store-everything run, with the run's per-level counts equal to
// the plan's prediction, synchronous and with the host and disk levels behind worker threads.
#define BOOST_TEST_MODULE cuda_disk_gradients
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include "gpu_disk_gradient.hpp"
#include "reaction_diffusion.hpp"
#include "scratch_dir.hpp"

#include "remat/schedule/cost.hpp"

#include <cmath>

using namespace remat;
using test::rd_gradient;
using test::reaction_diffusion;
using test::same_bits;

BOOST_AUTO_TEST_CASE(device_host_and_disk_levels_match_the_host_only_run_bit_for_bit)
{
    const reaction_diffusion problem = reaction_diffusion::stable_on(1000);
    const step_t steps = 300;
    const slot_t device_slots = 2, host_slots = 3;
    const rd_gradient expected = test::store_all_gradient(problem, steps);
    BOOST_TEST_REQUIRE(std::isfinite(expected.nu()));
    for (const bool asynchronous : {false, true}) {
        test::scratch_dir dir;
        run_report report;
        schedule_cost predicted;
        const rd_gradient g = test::gpu_three_level_gradient(problem, steps, device_slots, host_slots, dir / "gpu.h5",
                                                             asynchronous, report, predicted);
        BOOST_TEST(same_bits(g, expected), "asynchronous " << asynchronous);
        BOOST_TEST(report.forward_steps == predicted.forward_steps);
        BOOST_TEST_REQUIRE(report.levels.size() == 3u);
        BOOST_TEST(report.levels[0].name == "device");
        BOOST_TEST(report.levels[2].name == "disk");
        for (std::size_t l = 0; l < 3; ++l) {
            BOOST_TEST(report.levels[l].stores == predicted.levels[l].stores, "level " << l);
            BOOST_TEST(report.levels[l].restores == predicted.levels[l].restores, "level " << l);
        }
        BOOST_TEST(report.levels[1].stores > 0u);
        BOOST_TEST(report.levels[2].stores > 0u);
    }
}
