// Heterogeneous-chain plans through remat::run: a network whose state changes size from layer to layer
// gives gradients bit-identical to a plain store-everything loop with the host store (by slots, or by bytes) and a
// tiered store with an asynchronous level, the device store of a CPU build (and tests/hdf5/hdf5_chain_test.cpp: the
// HDF5 store); the run's counts and snapshot bytes are the plan's. And remat::profile measures the sizes exactly and
// the costs plausibly.
#define BOOST_TEST_MODULE chain_gradient
#include <boost/test/unit_test.hpp>

#include "chain_reference.hpp"
#include "layer_gradient.hpp"

#include "remat/cuda/basic_device_store.hpp"
#include "remat/cuda/host_runtime.hpp"
#include "remat/driver/capacity_for.hpp"
#include "remat/driver/profile.hpp"
#include "remat/schedule/chain.hpp"
#include "remat/schedule/chain_greedy.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <chrono>
#include <string>
#include <thread>

using namespace remat;

namespace {

const examples::layer_net& net()
{
    static const examples::layer_net n(test::uneven_widths(40), 2026);
    return n;
}

std::vector<double> input()
{
    std::vector<double> x(net().widths[0]);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = std::sin(static_cast<double>(i) + 0.5);
    return x;
}

// The plan's snapshot peak: what a byte-limited store must hold.
std::uint64_t snapshot_peak(const chain& plan)
{
    std::uint64_t held = 0;
    std::uint64_t peak = 0;
    std::vector<std::uint64_t> slot(64, 0);
    for (const action& a : plan) {
        if (const auto* s = std::get_if<store>(&a)) {
            slot.at(static_cast<std::size_t>(s->slot)) = plan.model().state_bytes(s->step);
            peak = std::max(peak, held += slot[static_cast<std::size_t>(s->slot)]);
        } else if (const auto* f = std::get_if<free_slot>(&a)) {
            held -= slot.at(static_cast<std::size_t>(f->slot));
        }
    }
    return peak;
}

// host_store keeps each slot's buffer for the next snapshot (no allocation in steady state), so its byte
// capacity counts, per slot, the largest snapshot that slot ever holds.
std::uint64_t slot_buffer_bytes(const chain& plan)
{
    std::vector<std::uint64_t> largest(64, 0);
    for (const action& a : plan)
        if (const auto* s = std::get_if<store>(&a))
            largest.at(static_cast<std::size_t>(s->slot)) =
                std::max(largest[static_cast<std::size_t>(s->slot)], plan.model().state_bytes(s->step));
    std::uint64_t total = 0;
    for (const std::uint64_t b : largest)
        total += b;
    return total;
}

} // namespace

BOOST_AUTO_TEST_CASE(gradients_are_bit_identical_to_store_all_with_every_host_store)
{
    const chain_model m = test::layer_chain_model(net());
    const test::layer_gradient reference = test::layer_reference(net(), input());
    int plans = 0;
    for (const double fraction : {0.12, 0.2, 0.35, 0.6, 1.0}) {
        const auto budget =
            std::max<std::uint64_t>(static_cast<std::uint64_t>(fraction * static_cast<double>(m.store_all_bytes())), 0);
        std::unique_ptr<chain> plan;
        try {
            plan = std::make_unique<chain>(m, budget);
        } catch (const capacity_error&) {
            continue; // below what this chain needs
        }
        ++plans;
        BOOST_TEST_CONTEXT("budget " << budget)
        {
            BOOST_TEST(plan->peak_bytes() <= budget);
            const test::chain_replay replay = test::replay_chain_plan(m, *plan);
            BOOST_TEST_REQUIRE(!replay.error.has_value());
            const slot_t slots = std::max<slot_t>(plan->cost().peak_slots, 1);

            host_store by_slots(slots);
            const test::layer_gradient a = test::layer_run(*plan, by_slots, net(), input());
            BOOST_TEST(a.same_bits_as(reference));
            BOOST_TEST(a.report.forward_steps == plan->cost().forward_steps);
            BOOST_TEST(a.report.stores == plan->cost().stores);
            BOOST_TEST(a.report.restores == plan->cost().restores);
            // the driver's own byte count: the snapshot part of the model's peak
            BOOST_TEST(a.report.peak_snapshot_bytes == snapshot_peak(*plan));

            host_store by_bytes(level_capacity{.bytes = slot_buffer_bytes(*plan)});
            BOOST_TEST(test::layer_run(*plan, by_bytes, net(), input()).same_bits_as(reference));

            tiered_store<host_store> tiered({tier_options{.asynchronous = true}}, host_store(slots));
            BOOST_TEST(test::layer_run(*plan, tiered, net(), input()).same_bits_as(reference));

            // the device level of a CPU build (its GPU twin runs the same code under CUDA); its slots have one
            // size, the largest state's
            std::size_t largest = 0;
            for (step_t k = 0; k <= m.size(); ++k)
                largest = std::max<std::size_t>(largest, m.state_bytes(k));
            cuda::basic_device_store<cuda::host_runtime> device(slots, {.slot_bytes = largest});
            BOOST_TEST(test::layer_run(*plan, device, net(), input()).same_bits_as(reference));
        }
    }
    BOOST_TEST(plans >= 3);
}

BOOST_AUTO_TEST_CASE(a_chain_planned_in_blocks_gives_the_same_bits)
{
    // A long chain is planned in blocks (options::block_steps); here forced on 40 layers, blocks of 6, some kept.
    const chain_model m = test::layer_chain_model(net());
    const test::layer_gradient reference = test::layer_reference(net(), input());
    chain::options o;
    o.block_steps = 6;
    int plans = 0;
    for (const double fraction : {0.3, 0.5, 1.0}) {
        const auto budget = static_cast<std::uint64_t>(fraction * static_cast<double>(m.store_all_bytes()));
        BOOST_TEST_CONTEXT("budget " << budget)
        {
            const chain plan(m, budget, o);
            ++plans;
            BOOST_TEST(plan.block_steps() == 6);
            BOOST_TEST(!plan.exact());
            const test::chain_replay replay = test::replay_chain_plan(m, plan);
            BOOST_TEST_REQUIRE(!replay.error.has_value(), *replay.error);
            BOOST_TEST(replay.peak_bytes <= budget);
            BOOST_TEST(replay.peak_bytes == plan.peak_bytes());
            const slot_t slots = std::max<slot_t>(plan.cost().peak_slots, 1);
            host_store store(slots);
            const test::layer_gradient a = test::layer_run(plan, store, net(), input());
            BOOST_TEST(a.same_bits_as(reference));
            BOOST_TEST(a.report.forward_steps == plan.cost().forward_steps);
            // with room for every state each block is kept from the first sweep (its adjoint restores its states
            // instead of re-running it): every layer but the last runs forward once
            if (fraction == 1.0)
                BOOST_TEST(a.report.forward_steps == static_cast<std::uint64_t>(m.size() - 1));
            // never cheaper than the plan without blocks (optimal among such schedules at this granularity)
            const chain whole(m, budget);
            if (whole.lossless() && whole.exact())
                BOOST_TEST(plan.cost().predicted_cost >= whole.cost().predicted_cost - 1e-9);
        }
    }
    BOOST_TEST(plans == 3);
}

// The greedy ranking's plan (what a chain plan falls back to where it costs less) through remat::run.
BOOST_AUTO_TEST_CASE(the_greedy_rankings_plan_gives_the_same_bits)
{
    const chain_model m = test::layer_chain_model(net());
    const test::layer_gradient reference = test::layer_reference(net(), input());
    for (const double fraction : {0.5, 0.7, 1.0}) { // (at 30% no count of checkpoints fits)
        const auto budget = static_cast<std::uint64_t>(fraction * static_cast<double>(m.store_all_bytes()));
        BOOST_TEST_CONTEXT("budget " << budget)
        {
            const listed_plan plan = greedy_ranking(m, budget);
            BOOST_TEST_REQUIRE(!plan.empty());
            const test::chain_replay replay = test::replay_chain_plan(m, plan);
            BOOST_TEST_REQUIRE(!replay.error.has_value(), *replay.error);
            BOOST_TEST(replay.peak_bytes <= budget);
            BOOST_TEST(replay.peak_bytes == plan.peak_bytes());
            BOOST_TEST(replay.cost == plan.cost().predicted_cost);
            host_store store(std::max<slot_t>(plan.cost().peak_slots, 1));
            const test::layer_gradient a = test::layer_run(plan, store, net(), input());
            BOOST_TEST(a.same_bits_as(reference));
            BOOST_TEST(a.report.forward_steps == plan.cost().forward_steps);
        }
    }
}

BOOST_AUTO_TEST_CASE(non_persistent_plans_give_the_same_bits)
{
    // chain::options::non_persistent frees some checkpoints before their own step is reversed and makes
    // those states again from an earlier one: the driver runs such plans like any other. Adjoints with extra
    // memory (a_k, a number the plan only counts) on one step in three make such plans pay.
    chain_model m = test::layer_chain_model(net());
    for (std::size_t k = 0; k < m.steps.size(); k += 3)
        m.steps[k].adjoint_bytes = 2 * m.steps[k].state_bytes;
    const test::layer_gradient reference = test::layer_reference(net(), input());
    int non_persistent = 0;
    for (const double fraction : {0.2, 0.25, 0.3, 0.4, 0.5}) {
        const auto budget = static_cast<std::uint64_t>(fraction * static_cast<double>(m.store_all_bytes()));
        chain::options o;
        o.non_persistent = true;
        o.granularity = 64; // units the extension's plain tables plan in well under a second
        BOOST_TEST_CONTEXT("budget " << budget)
        {
            const chain plan(m, budget, o);
            BOOST_TEST_MESSAGE("budget " << budget << ": " << plan.method());
            non_persistent += std::string(plan.method()) == "dynamic program, non-persistent" ? 1 : 0;
            const test::chain_replay replay = test::replay_chain_plan(m, plan);
            BOOST_TEST_REQUIRE(!replay.error.has_value(), *replay.error);
            BOOST_TEST(replay.peak_bytes <= budget);
            host_store store(std::max<slot_t>(plan.cost().peak_slots, 1));
            const test::layer_gradient a = test::layer_run(plan, store, net(), input());
            BOOST_TEST(a.same_bits_as(reference));
            BOOST_TEST(a.report.forward_steps == plan.cost().forward_steps);
        }
    }
    BOOST_TEST(non_persistent > 0);
}

BOOST_AUTO_TEST_CASE(profile_measures_sizes_exactly_and_costs_plausibly)
{
    // step 3 sleeps: its forward cost must stand out; sizes are the vectors' bytes.
    examples::layer_forward inner{&net()};
    auto forward = [&](step_t k, std::vector<double>& x) {
        if (k == 3)
            std::this_thread::sleep_for(std::chrono::milliseconds(3));
        inner(k, x);
    };
    examples::layer_adjoint adjoint(net());
    const step_t layers = net().layers();
    const chain_model m = profile(layers, input(), remat::forward_step(forward), remat::adjoint_step(adjoint),
                                  {.repeats = 3, .slots = 4});
    // the adjoints ran in their order in a real reverse sweep: the adjoint holds the true gradient
    const test::layer_gradient reference = test::layer_reference(net(), input());
    BOOST_TEST(test::same_bits(adjoint.a, reference.dx0));
    BOOST_TEST_REQUIRE(m.size() == layers);
    for (step_t k = 0; k < layers; ++k) {
        BOOST_TEST(m.steps[static_cast<std::size_t>(k)].state_bytes == 8 * net().width(k));
        BOOST_TEST(m.steps[static_cast<std::size_t>(k)].forward >= 0);
        BOOST_TEST(m.steps[static_cast<std::size_t>(k)].adjoint >= 0);
    }
    BOOST_TEST(m.final_state_bytes == 8 * net().widths.back());
    BOOST_TEST(m.steps[3].forward >= 0.0025);
    for (step_t k = 0; k < layers; ++k)
        if (k != 3)
            BOOST_TEST(m.steps[static_cast<std::size_t>(k)].forward < m.steps[3].forward);
    BOOST_CHECK_NO_THROW(validate(m));
    // a plan from the measurements runs and gives the same gradient
    const chain plan(m, m.store_all_bytes() / 4 + 4096);
    host_store store(capacity_for(plan));
    BOOST_TEST(test::layer_run(plan, store, net(), input()).same_bits_as(reference));
}

BOOST_AUTO_TEST_CASE(profile_reports_a_failing_step)
{
    auto forward = [](step_t k, std::vector<double>&) {
        if (k == 2)
            throw std::runtime_error("boom");
    };
    auto adjoint = [](step_t, std::vector<double>&) {};
    try {
        (void)profile(5, std::vector<double>(3), remat::forward_step(forward), remat::adjoint_step(adjoint));
        BOOST_FAIL("no error");
    } catch (const step_error& e) {
        BOOST_TEST(e.step() == 2);
        BOOST_TEST(std::string(e.what()).find("boom") != std::string::npos);
    }
    BOOST_CHECK_THROW(
        (void)profile(0, std::vector<double>(3), remat::forward_step(forward), remat::adjoint_step(adjoint)),
        argument_error);
    BOOST_CHECK_THROW((void)profile(5, std::vector<double>(3), remat::forward_step(forward),
                                    remat::adjoint_step(adjoint), {.repeats = 0}),
                      argument_error);
}
