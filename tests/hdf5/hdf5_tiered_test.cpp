// The HDF5 level behind the tiered store's asynchronous engine: RAM first, then an HDF5 file written
// behind the computation and read ahead of the restores. Gradients are bit-identical to store-all; a
// disk that fills up (RLIMIT_FSIZE) during a write-behind fails the run with the file named, leaves the
// store consistent, and the same store then completes a run. And remat::online_multilevel through
// remat::run_online on the same RAM + HDF5 store: bit-identical to store-all, its counts those of cost(T).
#define BOOST_TEST_MODULE hdf5_tiered
#include <boost/test/unit_test.hpp>

#include "hdf5_test_support.hpp"
#include "vector_schedule.hpp"

#include "burgers_gradient.hpp"

#include "remat/driver/run.hpp"
#include "remat/driver/run_online.hpp"
#include "remat/error.hpp"
#include "remat/hdf5/hdf5_store.hpp"
#include "remat/schedule/online_multilevel.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <csignal>
#include <cstring>
#include <string>
#include <sys/resource.h>
#include <vector>

using namespace remat;

namespace {

struct problem {
    examples::burgers model;
    step_t steps = 0;

    template <class Schedule, class Store>
    std::vector<double> gradient(const Schedule& plan, Store& store, run_report* report = nullptr) const
    {
        test::burgers_gradient_result r = test::burgers_gradient(model, plan, store, run_options{.lookahead = 16});
        if (report != nullptr)
            *report = r.report;
        return std::move(r.gradient);
    }
};

problem make_problem(step_t steps, std::size_t points)
{
    return problem{test::small_burgers(points), steps};
}

using test::same_bits;

using ram_and_disk = tiered_store<host_store, hdf5_store>;

} // namespace

BOOST_AUTO_TEST_CASE(gradients_bit_identical_with_an_asynchronous_hdf5_level)
{
    test::scratch_dir dir;
    const problem p = make_problem(240, 512);
    host_store everything(239);
    const std::vector<double> reference = p.gradient(store_all(240, 239), everything);
    const test::vector_schedule plan = test::split_levels(revolve(240, 10), 3);
    for (const bool asynchronous : {false, true}) {
        ram_and_disk store({tier_options{}, tier_options{.asynchronous = asynchronous}}, host_store(3),
                           hdf5_store(dir.path() / "run.h5", level_capacity{.slots = 7}));
        run_report report;
        BOOST_TEST_REQUIRE(same_bits(p.gradient(plan, store, &report), reference), "asynchronous " << asynchronous);
        BOOST_TEST(report.levels[1].name == "disk");
        BOOST_TEST(report.levels[1].stores > 0u);
        store.flush();
        BOOST_TEST(store.stats().levels[1].slots_in_use == 0u); // every disk slot freed at the end
        if (asynchronous) {
            const async_counters c = store.counters(1);
            BOOST_TEST(c.cache_hits + c.staging_hits + c.demand_reads == report.levels[1].restores);
            BOOST_TEST(c.prefetches > 0u);
            // Waits are the caller's: never more than the run itself lasted.
            BOOST_TEST(report.wait_seconds <= report.seconds);
            BOOST_TEST(report.levels[1].wait_seconds <= c.wait_seconds); // c also has the flush() after the run
        }
    }
}

BOOST_AUTO_TEST_CASE(a_full_disk_during_write_behind_fails_the_run_cleanly)
{
    test::scratch_dir dir;
    const std::filesystem::path file = dir.path() / "full.h5";
    const problem p = make_problem(200, 8192); // 64 KiB snapshots
    host_store everything(199);
    const std::vector<double> reference = p.gradient(store_all(200, 199), everything);
    const test::vector_schedule plan = test::split_levels(revolve(200, 12), 2);
    ram_and_disk store({tier_options{}, tier_options{.asynchronous = true}}, host_store(2),
                       hdf5_store(file, level_capacity{.slots = 10}));
    store.flush();
    const auto before = std::filesystem::file_size(file);

    rlimit saved{};
    ::getrlimit(RLIMIT_FSIZE, &saved);
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN); // EFBIG instead of death
    rlimit limited = saved;
    limited.rlim_cur = before + 3 * 64 * 1024; // room for about two more snapshots
    BOOST_TEST_REQUIRE(::setrlimit(RLIMIT_FSIZE, &limited) == 0);
    std::string message;
    try {
        (void)p.gradient(plan, store);
    } catch (const io_error& e) {
        message = e.what();
    }
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, old_handler);

    BOOST_TEST_REQUIRE(!message.empty()); // the worker's failure reached the caller
    BOOST_TEST(message.find(file.string()) != std::string::npos, message);
    const store_stats after = store.stats();
    BOOST_TEST(after.levels[0].slots_in_use == 0u);
    BOOST_TEST(after.levels[1].slots_in_use == 0u);
    // With room again, the same store completes the run, bit for bit.
    BOOST_TEST(same_bits(p.gradient(plan, store), reference));
}

BOOST_AUTO_TEST_CASE(online_multilevel_runs_through_run_online_on_ram_and_disk)
{
    // A loop whose length the schedule learns only at its end, on 3 RAM slots spilling to an HDF5 file
    // (written behind and read ahead, or synchronously): the gradient, seeded from x_T by the terminal
    // callable, is bit-identical to store-all's, and the run's counts are the ones cost(T) replays.
    static_assert(online_schedule<online_multilevel>);
    test::scratch_dir dir;
    const cost_model m{{{"ram", 3, 0, 0}, {"disk", level_spec::unlimited, 4, 4}}};
    int file = 0;
    for (const step_t steps : {step_t{1}, step_t{2}, step_t{9}, step_t{60}, step_t{241}}) {
        const problem p = make_problem(steps, 512);
        std::vector<double> reference(p.model.points, 0.0);
        if (steps > 1) {
            host_store everything(steps - 1);
            reference = p.gradient(store_all(steps, steps - 1), everything);
        } else {
            host_store one(1);
            reference = p.gradient(revolve(1, 1), one);
        }
        for (const step_t period : {step_t{0}, step_t{5}})
            for (const bool asynchronous : {false, true})
                for (const bool converged : {false, true}) {
                    BOOST_TEST_CONTEXT("T " << steps << " period " << period << " asynchronous " << asynchronous
                                            << " converged " << converged)
                    {
                        const online_multilevel plan(m, {.period = period});
                        ram_and_disk store(
                            {tier_options{}, tier_options{.asynchronous = asynchronous}}, host_store(3),
                            hdf5_store(dir.path() / ("online" + std::to_string(file++) + ".h5"), level_capacity{}));
                        std::vector<double> u = p.model.initial_field(), lambda, scratch;
                        std::uint64_t final_calls = 0;
                        auto forward = forward_step([&](step_t, std::vector<double>& s) { p.model.step(s, scratch); });
                        auto adjoint = adjoint_step(
                            [&](step_t, std::vector<double>& s) { p.model.adjoint_step(s, lambda, scratch); });
                        auto seed = final_state([&](const std::vector<double>& uT) {
                            ++final_calls;
                            lambda = p.model.objective_gradient(uT);
                        });
                        const run_options options{.lookahead = 16};
                        const run_report r = converged
                                                 ? run_online_converged(
                                                       plan, store, u, forward, adjoint, seed,
                                                       [&](step_t k, const auto&) { return k == steps; }, options)
                                                 : run_online(
                                                       plan, store, u, forward, adjoint, seed,
                                                       [&](step_t k, const auto&) { return k == steps - 1; }, options);
                        BOOST_TEST(same_bits(lambda, reference));
                        BOOST_TEST(final_calls == 1u);
                        BOOST_TEST(r.final_forward_steps == (converged ? 0u : 1u));
                        BOOST_TEST(r.steps == steps);
                        const schedule_cost c =
                            plan.cost(steps, converged ? online_end::after_last_step : online_end::at_last_step);
                        BOOST_TEST(r.forward_steps == c.forward_steps);
                        BOOST_TEST(r.reverse_steps == c.reverse_steps);
                        BOOST_TEST_REQUIRE(r.levels.size() == 2u);
                        for (std::size_t level = 0; level < 2; ++level) {
                            BOOST_TEST(r.levels[level].stores == c.levels.at(level).stores, "level " << level);
                            BOOST_TEST(r.levels[level].restores == c.levels.at(level).restores, "level " << level);
                            BOOST_TEST(r.levels[level].peak_slots <= c.levels.at(level).peak_slots, "level " << level);
                        }
                        BOOST_TEST(r.levels[0].peak_slots <= 3u);
                        if (steps > 60)
                            BOOST_TEST(r.levels[1].stores > 0u); // it did spill to the file
                        store.flush();
                        BOOST_TEST(store.stats().levels[1].slots_in_use == 0u);
                    }
                }
    }
}
