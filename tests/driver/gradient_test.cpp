// Gradients through the driver: bit-identical to a store-everything run for every schedule kind, and in
// agreement with central finite differences of the same discrete map.
#define BOOST_TEST_MODULE driver_gradient
#include <boost/test/unit_test.hpp>

#include "burgers.hpp"
#include "burgers_gradient.hpp"
#include "lorenz63.hpp"
#include "lorenz_gradient.hpp"

#include "remat/driver/run.hpp"
#include "remat/schedule/any_schedule.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"

#include <cmath>
#include <cstring>
#include <vector>

using namespace remat;
using examples::vec3;
using test::lorenz_gradient;
using test::lorenz_run;
using test::same_bits;

namespace {

double lorenz_objective(const examples::lorenz63& model, vec3 x, step_t steps)
{
    for (step_t k = 0; k < steps; ++k)
        model.step(x);
    return x[2];
}

std::vector<any_schedule> every_kind(step_t steps)
{
    return {revolve(steps, 1), revolve(steps, 2),  revolve(steps, 7),        revolve(steps, 64),
            uniform(steps, 1), uniform(steps, 13), uniform::fit(steps, 200), store_all(steps, steps - 1)};
}

} // namespace

BOOST_AUTO_TEST_CASE(lorenz_gradients_are_bit_identical_to_store_all)
{
    const step_t steps = 3000;
    const examples::lorenz63 model;
    const vec3 x0{1.0, 1.0, 1.0};
    const lorenz_gradient reference = lorenz_run(store_all(steps, steps - 1), steps - 1, model, x0);
    for (const any_schedule& plan : every_kind(steps)) {
        const schedule_cost c = plan.cost();
        const lorenz_gradient g = lorenz_run(plan, std::max<slot_t>(c.peak_slots, 1), model, x0);
        BOOST_TEST_REQUIRE(same_bits(g.dx0, reference.dx0), "peak " << c.peak_slots);
        BOOST_TEST_REQUIRE(same_bits(g.dp, reference.dp));
        BOOST_TEST_REQUIRE(g.objective == reference.objective);
        // The report matches the schedule's own prediction.
        BOOST_TEST(g.report.forward_steps == c.forward_steps);
        BOOST_TEST(g.report.reverse_steps == c.reverse_steps);
        BOOST_TEST(g.report.stores == c.stores);
        BOOST_TEST(g.report.restores == c.restores);
        BOOST_TEST(g.report.peak_slots == c.peak_slots);
        BOOST_TEST(g.report.peak_snapshot_bytes == c.peak_slots * sizeof(vec3));
        BOOST_TEST(g.report.bytes_written == c.stores * sizeof(vec3));
        BOOST_TEST(g.report.bytes_read == c.restores * sizeof(vec3));
    }
}

BOOST_AUTO_TEST_CASE(lorenz_gradient_matches_central_differences)
{
    const step_t steps = 2000; // t = 2: chaotic, but the sensitivities are still moderate
    const examples::lorenz63 model;
    const vec3 x0{1.0, 1.0, 1.0};
    const lorenz_gradient g = lorenz_run(revolve(steps, 10), 10, model, x0);
    BOOST_TEST(g.objective == lorenz_objective(model, x0, steps));
    const double eps = 1e-5;
    for (int i = 0; i < 3; ++i) {
        vec3 plus = x0, minus = x0;
        plus[static_cast<std::size_t>(i)] += eps;
        minus[static_cast<std::size_t>(i)] -= eps;
        const double fd = (lorenz_objective(model, plus, steps) - lorenz_objective(model, minus, steps)) / (2 * eps);
        BOOST_TEST(std::abs(g.dx0[static_cast<std::size_t>(i)] - fd) <= 1e-6 * std::abs(fd),
                   "x0[" << i << "]: adjoint " << g.dx0[static_cast<std::size_t>(i)] << " fd " << fd);
    }
    for (int i = 0; i < 3; ++i) {
        examples::lorenz63 plus = model, minus = model;
        double* p_plus = i == 0 ? &plus.sigma : (i == 1 ? &plus.rho : &plus.beta);
        double* p_minus = i == 0 ? &minus.sigma : (i == 1 ? &minus.rho : &minus.beta);
        *p_plus += eps;
        *p_minus -= eps;
        const double fd = (lorenz_objective(plus, x0, steps) - lorenz_objective(minus, x0, steps)) / (2 * eps);
        BOOST_TEST(std::abs(g.dp[static_cast<std::size_t>(i)] - fd) <= 1e-6 * std::abs(fd),
                   "p[" << i << "]: adjoint " << g.dp[static_cast<std::size_t>(i)] << " fd " << fd);
    }
}

BOOST_AUTO_TEST_CASE(burgers_gradient_bit_identical_and_matches_differences)
{
    examples::burgers model;
    model.points = 128;
    model.dt = 1e-3;
    model.nu = 0.05;
    const step_t steps = 400;
    auto gradient = [&](const any_schedule& plan, slot_t slots, double* energy) {
        host_store store(slots);
        test::burgers_gradient_result r = test::burgers_gradient(model, plan, store);
        if (energy != nullptr)
            *energy = r.energy;
        return std::move(r.gradient);
    };
    double energy = 0;
    const std::vector<double> reference = gradient(store_all(steps, steps - 1), steps - 1, &energy);
    for (const slot_t s : {1, 3, 16}) {
        const std::vector<double> g = gradient(revolve(steps, s), s, nullptr);
        BOOST_TEST_REQUIRE(std::memcmp(g.data(), reference.data(), g.size() * sizeof(double)) == 0, "s=" << s);
    }
    const std::vector<double> g = gradient(uniform(steps, 20), uniform(steps, 20).cost().peak_slots, nullptr);
    BOOST_TEST_REQUIRE(std::memcmp(g.data(), reference.data(), g.size() * sizeof(double)) == 0);

    auto energy_of = [&](std::vector<double> u) {
        std::vector<double> scratch;
        for (step_t k = 0; k < steps; ++k)
            model.step(u, scratch);
        return model.objective(u);
    };
    BOOST_TEST(energy == energy_of(model.initial_field()));
    const double eps = 1e-6;
    for (const std::size_t j : {std::size_t{0}, std::size_t{17}, std::size_t{64}, std::size_t{127}}) {
        std::vector<double> plus = model.initial_field(), minus = model.initial_field();
        plus[j] += eps;
        minus[j] -= eps;
        const double fd = (energy_of(plus) - energy_of(minus)) / (2 * eps);
        BOOST_TEST(std::abs(reference[j] - fd) <= 1e-6 * std::abs(fd),
                   "j=" << j << ": adjoint " << reference[j] << " fd " << fd);
    }
}
