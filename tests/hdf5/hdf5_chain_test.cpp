// A heterogeneous-chain plan with its snapshots in an HDF5 file: a network whose state changes size from
// layer to layer gives gradients bit-identical to a plain store-everything loop, alone and behind a tiered
// store's asynchronous level, and the file is left with no slot in use.
#define BOOST_TEST_MODULE hdf5_chain
#include <boost/test/unit_test.hpp>

#include "layer_gradient.hpp"
#include "scratch_dir.hpp"

#include "remat/hdf5/hdf5_store.hpp"
#include "remat/schedule/chain.hpp"
#include "remat/store/tiered_store.hpp"

#include <cmath>

using namespace remat;

BOOST_AUTO_TEST_CASE(gradients_through_an_hdf5_store_are_bit_identical)
{
    const examples::layer_net net(test::uneven_widths(30), 7);
    std::vector<double> x0(net.widths[0]);
    for (std::size_t i = 0; i < x0.size(); ++i)
        x0[i] = std::cos(static_cast<double>(i));
    const test::layer_gradient reference = test::layer_reference(net, x0);
    const chain_model m = test::layer_chain_model(net);
    test::scratch_dir dir;
    for (const std::uint64_t budget : {m.store_all_bytes() / 4, m.store_all_bytes() / 2}) {
        const chain plan(m, budget);
        const slot_t slots = plan.cost().peak_slots;
        {
            hdf5_store disk(dir / "chain.h5", slots);
            const test::layer_gradient g = test::layer_run(plan, disk, net, x0);
            BOOST_TEST(g.same_bits_as(reference));
            BOOST_TEST(g.report.restores == plan.cost().restores);
            BOOST_TEST(disk.stats().slots_in_use == 0u);
        }
        tiered_store<hdf5_store> tiered({tier_options{.asynchronous = true}}, hdf5_store(dir / "tiered.h5", slots));
        BOOST_TEST(test::layer_run(plan, tiered, net, x0).same_bits_as(reference));
    }
}
