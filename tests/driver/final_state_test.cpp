// The fuller driver contract: the terminal callable sees x_T (bit-identical to a plain forward sweep's)
// once, before the first adjoint, in remat::run, run_online and run_online_converged, and is counted in
// the report; gradients seeded there are bit-identical to store-all; a throwing terminal callable is a
// step_error naming step T with every slot released. run_online takes any online schedule: online_multilevel
// over a two-level store gives bit-identical gradients and the counts of its cost(). The roles of the two
// steps are tags (the swapped and bare forms are compile-fail tests, tests/driver/compile_fail).
#define BOOST_TEST_MODULE driver_final_state
#include <boost/test/unit_test.hpp>

#include "lorenz63.hpp"
#include "lorenz_gradient.hpp"

#include "remat/driver/run.hpp"
#include "remat/driver/run_online.hpp"
#include "remat/schedule/online_multilevel.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"
#include "remat/store/tiered_store.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

using namespace remat;
using examples::vec3;
using test::lorenz_gradient;
using test::same_bits;
using test::store_all_reference;

static_assert(detail::untagged_steps<adjoint_step_fn<int>, forward_step_fn<int>>); // swapped
static_assert(detail::untagged_steps<int, int>);                                   // bare
static_assert(!detail::untagged_steps<forward_step_fn<int&>, adjoint_step_fn<int>>);

// A view that says its elements are in device memory (they are in host memory here: no GPU is needed, and
// the driver must refuse it before it copies anything). Its copies share the elements.
struct device_view {
    double* data = nullptr;
    std::size_t size = 0;
};

template <>
struct remat::snapshot_traits<device_view> {
    static const_bytes bytes(const device_view& v) noexcept
    {
        return {reinterpret_cast<const std::byte*>(v.data), v.size * sizeof(double), memory_space::device};
    }
    static mutable_bytes bytes(device_view& v) noexcept
    {
        return {reinterpret_cast<std::byte*>(v.data), v.size * sizeof(double), memory_space::device};
    }
};

namespace {

const examples::lorenz63 model;
const vec3 x0{1.0, 1.0, 1.0};

vec3 plain_final_state(step_t steps)
{
    vec3 x = x0;
    for (step_t k = 0; k < steps; ++k)
        model.step(x);
    return x;
}

// J = z(T): the terminal callable evaluates it and seeds the adjoint; no step is re-run by hand.
struct lorenz_run {
    lorenz_gradient g;
    vec3 lambda{};
    vec3 seen{};
    int calls = 0;
    auto forward()
    {
        return forward_step([](step_t, vec3& s) { model.step(s); });
    }
    auto adjoint()
    {
        return adjoint_step([this](step_t, vec3& s) { model.adjoint_step(s, lambda, g.dp); });
    }
    auto final()
    {
        return final_state([this](const vec3& xT) {
            ++calls;
            seen = xT;
            g.objective = xT[2];
            lambda = {0, 0, 1};
        });
    }
};

void check_against(const lorenz_run& r, const lorenz_gradient& reference, step_t steps)
{
    BOOST_TEST(r.calls == 1);
    BOOST_TEST(same_bits(r.seen, plain_final_state(steps)));
    BOOST_TEST(r.g.objective == reference.objective);
    BOOST_TEST(same_bits(r.lambda, reference.dx0));
    BOOST_TEST(same_bits(r.g.dp, reference.dp));
    BOOST_TEST(r.g.report.final_calls == 1u);
}

} // namespace

BOOST_AUTO_TEST_CASE(run_hands_x_T_to_the_terminal_callable_once)
{
    for (const step_t steps : {1, 2, 5, 100, 1000}) {
        const lorenz_gradient reference = store_all_reference(model, x0, steps);
        for (const slot_t s : {1, 3, 10}) {
            BOOST_TEST_CONTEXT("T " << steps << " slots " << s)
            {
                lorenz_run r;
                host_store store(s);
                vec3 x = x0;
                const revolve plan(steps, s);
                r.g.report = run(plan, store, x, r.forward(), r.adjoint(), r.final());
                check_against(r, reference, steps);
                BOOST_TEST(r.g.report.final_forward_steps == 1u);
                BOOST_TEST(r.g.report.forward_steps == plan.cost().forward_steps); // the extra step apart
                BOOST_TEST(r.g.report.final_seconds >= 0);
                BOOST_TEST(store.stats().slots_in_use == 0u);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(run_online_hands_x_T_over_for_both_conventions)
{
    for (const step_t steps : {1, 2, 7, 300}) {
        const lorenz_gradient reference = store_all_reference(model, x0, steps);
        {
            lorenz_run r;
            host_store store(4);
            vec3 x = x0;
            r.g.report = run_online(online_revolve(4), store, x, r.forward(), r.adjoint(), r.final(),
                                    [&](step_t k, const vec3&) { return k == steps - 1; });
            check_against(r, reference, steps);
            BOOST_TEST(r.g.report.final_forward_steps == 1u);
            BOOST_TEST(r.g.report.forward_steps == online_revolve(4).cost(steps).forward_steps);
        }
        {
            // The loop stops at x_T itself: the terminal callable sees it there, no step is run again.
            lorenz_run r;
            host_store store(4);
            vec3 x = x0;
            r.g.report = run_online_converged(online_revolve(4), store, x, r.forward(), r.adjoint(), r.final(),
                                              [&](step_t k, const vec3&) { return k == steps; });
            check_against(r, reference, steps);
            BOOST_TEST(r.g.report.final_forward_steps == 0u);
            BOOST_TEST(r.g.report.forward_steps ==
                       online_revolve(4).cost(steps, online_end::after_last_step).forward_steps);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_throwing_terminal_callable_is_a_step_error_at_T)
{
    host_store store(3);
    vec3 x = x0;
    try {
        (void)run(revolve(20, 3), store, x, forward_step([](step_t, vec3& s) { model.step(s); }),
                  adjoint_step([](step_t, vec3&) {}),
                  final_state([](const vec3&) { throw std::runtime_error("objective failed"); }));
        BOOST_ERROR("no exception");
    } catch (const step_error& e) {
        BOOST_TEST(e.step() == 20);
        BOOST_TEST((e.phase() == step_phase::final_state));
        BOOST_TEST(std::string(e.what()).find("objective failed") != std::string::npos, e.what());
    }
    BOOST_TEST(store.stats().slots_in_use == 0u);
}

BOOST_AUTO_TEST_CASE(after_a_throwing_terminal_callable_the_store_runs_again)
{
    // Nothing is corrupted: the same store gives the store-all gradient on the next run, and the adjoint
    // never ran in the failed one.
    const step_t steps = 50;
    const lorenz_gradient reference = store_all_reference(model, x0, steps);
    host_store store(4);
    int adjoint_calls = 0;
    {
        vec3 x = x0;
        BOOST_CHECK_EXCEPTION(
            (void)run(revolve(steps, 4), store, x, forward_step([](step_t, vec3& s) { model.step(s); }),
                      adjoint_step([&](step_t, vec3&) { ++adjoint_calls; }),
                      final_state([](const vec3&) { throw std::runtime_error("objective failed"); })),
            step_error, [&](const step_error& e) { return e.step() == steps && e.phase() == step_phase::final_state; });
    }
    BOOST_TEST(adjoint_calls == 0);
    BOOST_TEST(store.stats().slots_in_use == 0u);
    lorenz_run r;
    vec3 x = x0;
    r.g.report = run(revolve(steps, 4), store, x, r.forward(), r.adjoint(), r.final());
    check_against(r, reference, steps);

    // The loop that stops at x_T itself: the terminal callable fails there, before any reverse.
    host_store online(4);
    vec3 y = x0;
    BOOST_CHECK_EXCEPTION(
        (void)run_online_converged(online_revolve(4), online, y, forward_step([](step_t, vec3& s) { model.step(s); }),
                                   adjoint_step([&](step_t, vec3&) { ++adjoint_calls; }),
                                   final_state([](const vec3&) { throw std::runtime_error("objective failed"); }),
                                   [&](step_t k, const vec3&) { return k == 30; }),
        step_error, [&](const step_error& e) {
            return e.step() == 30 && e.phase() == step_phase::final_state &&
                   std::string(e.what()).find("objective failed") != std::string::npos;
        });
    BOOST_TEST(adjoint_calls == 0);
    BOOST_TEST(online.stats().slots_in_use == 0u);
}

BOOST_AUTO_TEST_CASE(a_device_view_with_a_terminal_callable_is_refused_before_step_0)
{
    // x_{T-1} cannot be kept aside in a copy of a view that shares its elements: refused up front, with no
    // step run, rather than after the whole forward sweep.
    std::vector<double> buffer(8, 1.0);
    device_view v{buffer.data(), buffer.size()};
    host_store store(3);
    int forward_calls = 0;
    BOOST_CHECK_EXCEPTION((void)run(revolve(10, 3), store, v,
                                    forward_step([&](step_t, device_view&) { ++forward_calls; }),
                                    adjoint_step([](step_t, device_view&) {}), final_state([](const device_view&) {})),
                          argument_error, [](const argument_error& e) {
                              return std::string(e.what()).find("view of device memory") != std::string::npos;
                          });
    BOOST_TEST(forward_calls == 0);
    BOOST_TEST(store.stats().slots_in_use == 0u);
}

BOOST_AUTO_TEST_CASE(run_online_takes_the_multilevel_online_schedule)
{
    // A fast level of 3 slots spilling to a slow one (a second host_store standing in for disk; the HDF5
    // level is run in hdf5_run_test): gradients bit-identical to store-all, counts those of cost(T).
    const cost_model m{{{"fast", 3, 0, 0}, {"slow", level_spec::unlimited, 4, 4}}};
    for (const step_t period : {0, 5, 40})
        for (const step_t steps : {1, 2, 9, 60, 777}) {
            BOOST_TEST_CONTEXT("period " << period << " T " << steps)
            {
                const online_multilevel plan(m, {.period = period});
                const lorenz_gradient reference = store_all_reference(model, x0, steps);
                tiered_store<host_store, host_store> store(host_store(3), host_store(level_capacity{}));
                lorenz_run r;
                vec3 x = x0;
                r.g.report = run_online(plan, store, x, r.forward(), r.adjoint(), r.final(),
                                        [&](step_t k, const vec3&) { return k == steps - 1; });
                check_against(r, reference, steps);
                const schedule_cost c = plan.cost(steps);
                BOOST_TEST(r.g.report.forward_steps == c.forward_steps);
                BOOST_TEST(r.g.report.levels.at(1).stores == c.levels.at(1).stores);
                BOOST_TEST(r.g.report.levels.at(1).restores == c.levels.at(1).restores);
                BOOST_TEST(r.g.report.levels.at(0).peak_slots <= 3u);
            }
        }
    // the store is checked against the schedule's levels before step 0
    host_store one(8);
    vec3 x = x0;
    lorenz_run r;
    BOOST_CHECK_THROW((void)run_online(online_multilevel(m), one, x, r.forward(), r.adjoint(),
                                       [](step_t k, const vec3&) { return k == 5; }),
                      capacity_error);
}
