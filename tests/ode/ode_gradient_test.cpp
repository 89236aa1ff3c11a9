// The ODE adapter's gradients against central finite differences (double, Thrust CPP back end): the MLP's
// hand-written VJP, the exact discrete adjoint of Euler, RK4 and Dormand–Prince with fixed steps, and of
// adaptive Dormand–Prince with its step sizes frozen; the tableaus' convergence orders; bad input.
#define BOOST_TEST_MODULE ode_gradient
#include <boost/test/unit_test.hpp>

#include "ode_problem.hpp"

#include "remat/dense/blas.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/ode/adaptive.hpp"
#include "remat/ode/error.hpp"
#include "remat/ode/fixed_step.hpp"
#include "remat/ode/mlp.hpp"
#include "remat/ode/rk_stages.hpp"
#include "remat/ode/tableau.hpp"

#include <thrust/device_vector.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace remat;
using remat::dense::activation;
using remat::test::host_copy_of;
using remat::test::uniform_values;

namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b)
{
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        s += a[i] * b[i];
    return s;
}

thrust::device_vector<double> device(const std::vector<double>& v)
{
    return {v.begin(), v.end()};
}

std::vector<double> plus(std::vector<double> a, const std::vector<double>& d, double eps)
{
    for (std::size_t i = 0; i < a.size(); ++i)
        a[i] += eps * d[i];
    return a;
}

// |fd - adjoint| <= tol |fd|, with a message naming both.
void check_close(double adjoint, double fd, double tol, const std::string& what)
{
    BOOST_TEST(std::abs(fd) > 1e-8, what << ": the difference quotient " << fd << " is too small to test anything");
    BOOST_TEST(std::abs(adjoint - fd) <= tol * std::abs(fd), what << ": adjoint " << adjoint << " vs finite difference "
                                                                  << fd << " (rel "
                                                                  << std::abs(adjoint - fd) / std::abs(fd) << ")");
}

const std::vector<ode::mlp_shape> shapes{
    {.dim = 2, .hidden = {7}, .act = activation::tanh},
    {.dim = 3, .hidden = {5, 4}, .act = activation::softplus, .time_input = true},
    {.dim = 2, .hidden = {}, .act = activation::tanh, .time_input = true}, // linear
};

} // namespace

BOOST_AUTO_TEST_CASE(mlp_vjp_matches_finite_differences)
{
    dense::blas b;
    for (const ode::mlp_shape& shape : shapes) {
        const ode::mlp_layout layout(shape);
        const std::int64_t batch = 3;
        ode::mlp<double> f(b, layout, batch);
        const auto p0 = layout.initial_parameters(7, 1.0);
        f.set_parameters(p0);
        const std::size_t n = static_cast<std::size_t>(f.state_size());
        const auto y = uniform_values(n, 11, -1.5, 1.5);
        const auto w = uniform_values(n, 12, -1, 1); // dy_bar
        const double t = 0.7;
        thrust::device_vector<double> dy(n), tape(static_cast<std::size_t>(f.tape_size()) + 1);
        // phi(y, p) = <w, f(t, y; p)>
        auto phi = [&](const std::vector<double>& yy, const std::vector<double>& pp) {
            f.set_parameters(pp);
            const auto dy_in = device(yy);
            f.evaluate(t, dense::view(dy_in), dense::view(dy), dense::view(tape));
            return dot(host_copy_of(dy), w);
        };
        (void)phi(y, p0);
        thrust::device_vector<double> y_bar(n, 99.0), p_bar(p0.size(), 0.5);
        const auto yd = device(y);
        const auto wd = device(w);
        f.vjp(t, dense::view(yd), dense::view(std::as_const(tape)), dense::view(wd), dense::view(y_bar),
              dense::view(p_bar));
        const auto gy = host_copy_of(y_bar);
        auto gp = host_copy_of(p_bar);
        for (double& g : gp)
            g -= 0.5; // p_bar accumulates
        const double eps = 1e-6;
        for (std::uint64_t dir = 0; dir < 3; ++dir) {
            const auto dyv = uniform_values(n, 20 + dir, -1, 1);
            const auto dpv = uniform_values(p0.size(), 30 + dir, -1, 1);
            check_close(dot(gy, dyv), (phi(plus(y, dyv, eps), p0) - phi(plus(y, dyv, -eps), p0)) / (2 * eps), 1e-6,
                        "d/dy");
            check_close(dot(gp, dpv), (phi(y, plus(p0, dpv, eps)) - phi(y, plus(p0, dpv, -eps))) / (2 * eps), 1e-6,
                        "d/dp");
        }
    }
}

BOOST_AUTO_TEST_CASE(fixed_step_gradients_match_central_differences)
{
    dense::blas b;
    for (const ode::tableau* method : {&ode::euler(), &ode::rk4(), &ode::dopri5()})
        for (const ode::mlp_shape& shape : {shapes[0], shapes[1]}) {
            const ode::mlp_layout layout(shape);
            test::quadratic_problem<double> problem(b, layout, 3, 40, 5);
            ode::fixed_step<double, ode::mlp<double>> solver(*method, problem.field(), b, 0.1, 0.05);
            const test::ode_gradient<double> g = problem.store_all_gradient(solver);
            const auto p0 = problem.field().parameters_on_host();
            const auto y0 = host_copy_of(problem.y0());
            const double eps = 1e-6;
            for (std::uint64_t dir = 0; dir < 2; ++dir) {
                const auto dp = uniform_values(p0.size(), 40 + dir, -1, 1);
                auto loss_at = [&](double e) {
                    problem.field().set_parameters(plus(p0, dp, e));
                    return problem.loss(solver, problem.y0());
                };
                const double fd = (loss_at(eps) - loss_at(-eps)) / (2 * eps);
                problem.field().set_parameters(p0);
                check_close(dot(g.params, dp), fd, 1e-6, method->name + " d/dp");
                const auto dy = uniform_values(y0.size(), 50 + dir, -1, 1);
                const double fdy = (problem.loss(solver, device(plus(y0, dy, eps))) -
                                    problem.loss(solver, device(plus(y0, dy, -eps)))) /
                                   (2 * eps);
                check_close(dot(g.y0, dy), fdy, 1e-6, method->name + " d/dy0");
            }
            // Single components too: the largest parameter gradient and the first state's.
            std::size_t big = 0;
            for (std::size_t i = 0; i < g.params.size(); ++i)
                if (std::abs(g.params[i]) > std::abs(g.params[big]))
                    big = i;
            std::vector<double> e_big(p0.size(), 0.0);
            e_big[big] = 1.0;
            problem.field().set_parameters(plus(p0, e_big, eps));
            const double up = problem.loss(solver, problem.y0());
            problem.field().set_parameters(plus(p0, e_big, -eps));
            const double down = problem.loss(solver, problem.y0());
            problem.field().set_parameters(p0);
            check_close(g.params[big], (up - down) / (2 * eps), 1e-6, method->name + " one parameter");
        }
}

BOOST_AUTO_TEST_CASE(tableaus_converge_at_their_order)
{
    // y' = -y (a linear field: no hidden layer, W = -1, b = 0) to t = 1; error ratio 2^p when h halves.
    dense::blas b;
    const ode::mlp_layout layout({.dim = 1, .hidden = {}});
    ode::mlp<double> f(b, layout, 1);
    f.set_parameters(std::vector<double>{-1.0, 0.0});
    for (const ode::tableau* method : {&ode::euler(), &ode::rk4(), &ode::dopri5()}) {
        double previous = 0;
        for (int steps : {10, 20}) {
            ode::fixed_step<double, ode::mlp<double>> solver(*method, f, b, 0.0, 1.0 / steps);
            thrust::device_vector<double> y(1, 1.0);
            for (int k = 0; k < steps; ++k)
                solver.step(k, y);
            const double err = std::abs(host_copy_of(y)[0] - std::exp(-1.0));
            if (previous > 0) {
                const double order = std::log2(previous / err);
                BOOST_TEST(std::abs(order - method->order) < 0.15, method->name << " order " << order);
            }
            previous = err;
        }
        // Consistency: sum b = 1, c_i = sum_j a_ij; for the embedded pair sum e = 0.
        double sb = 0;
        for (int i = 0; i < method->stages; ++i) {
            sb += method->b[static_cast<std::size_t>(i)];
            double row = 0;
            for (double a : method->a[static_cast<std::size_t>(i)])
                row += a;
            BOOST_TEST(std::abs(row - method->c[static_cast<std::size_t>(i)]) < 1e-15);
        }
        BOOST_TEST(std::abs(sb - 1) < 1e-15);
    }
    double se = 0;
    for (double e : ode::dopri5().e)
        se += e;
    BOOST_TEST(std::abs(se) < 1e-15);
    BOOST_TEST(!ode::dopri5().contributes(6)); // the FSAL stage only serves the error estimate
    BOOST_TEST(ode::dopri5().contributes(1));  // b_2 = 0, but later stages use K_2
}

namespace {

// The adaptive solve with its step sizes given: the reference for "step sizes are not differentiated".
struct frozen_solve {
    ode::rk_stages<double, ode::mlp<double>>& stages;
    std::vector<double> t;
    std::vector<double> h;
    double run(thrust::device_vector<double> y, test::quadratic_problem<double>& problem)
    {
        double total = 0;
        for (std::size_t k = 0; k < h.size(); ++k) {
            stages.compute(t[k], h[k], dense::view(std::as_const(y)), false);
            stages.solution(h[k], dense::view(std::as_const(y)), dense::view(y));
            total += problem.loss_term(static_cast<step_t>(k + 1), y);
        }
        return total;
    }
};

} // namespace

BOOST_AUTO_TEST_CASE(adaptive_gradient_is_the_gradient_of_the_solve_with_its_step_sizes)
{
    dense::blas b;
    const ode::mlp_layout layout(shapes[1]);
    test::quadratic_problem<double> problem(b, layout, 2, 200, 9); // targets for up to 200 steps
    // A stiffer field than the problem's own (larger weights), so that the controller has work to do.
    std::vector<double> strong = problem.field().parameters_on_host();
    for (double& p : strong)
        p *= 4;
    problem.field().set_parameters(strong);
    const std::vector<double> stops{1.0, 2.5, 3.0};
    ode::adaptive<double, ode::mlp<double>> solver(ode::dopri5(), problem.field(), b,
                                                   {.rtol = 1e-9, .atol = 1e-11, .initial_step = 0.9}, stops, 0.0);
    // Forward, keeping every state, its time and the step size it takes.
    std::vector<ode::adaptive_state<double>> states{solver.start(problem.y0())};
    frozen_solve frozen{*new ode::rk_stages<double, ode::mlp<double>>(ode::dopri5(), problem.field(), b), {}, {}};
    std::unique_ptr<ode::rk_stages<double, ode::mlp<double>>> owner(&frozen.stages);
    while (!solver.finished(states.back())) {
        frozen.t.push_back(states.back().control.t);
        frozen.h.push_back(solver.accepted_step_size(states.back()));
        states.push_back(states.back());
        solver.step(states.back());
    }
    const auto steps = static_cast<step_t>(frozen.h.size());
    BOOST_TEST(steps > static_cast<step_t>(stops.size())); // the controller took more steps than stops
    BOOST_TEST(states.back().control.rejected > 0);        // and rejected some trials (initial_step is too big)
    BOOST_TEST(states.back().control.t == 3.0);
    // Reverse: the loss on every state (the quadratic problem's targets for k = 1..T).
    thrust::device_vector<double> a(problem.y0().size(), 0.0);
    thrust::device_vector<double> p_bar(static_cast<std::size_t>(problem.field().parameter_count()), 0.0);
    problem.add_loss_gradient(steps, states.back().y, a);
    for (step_t k = steps; k-- > 0;) {
        solver.adjoint_step(states[static_cast<std::size_t>(k)], a, p_bar);
        problem.add_loss_gradient(k, states[static_cast<std::size_t>(k)].y, a);
    }
    const auto gp = host_copy_of(p_bar);
    const auto gy = host_copy_of(a);
    const auto p0 = problem.field().parameters_on_host();
    const auto y0 = host_copy_of(problem.y0());
    BOOST_TEST(std::abs(frozen.run(problem.y0(), problem) - [&] {
                   double total = 0;
                   for (std::size_t k = 1; k < states.size(); ++k)
                       total += problem.loss_term(static_cast<step_t>(k), states[k].y);
                   return total;
               }()) == 0.0); // the frozen solve is the adaptive one
    const double eps = 1e-6;
    for (std::uint64_t dir = 0; dir < 2; ++dir) {
        const auto dp = uniform_values(p0.size(), 60 + dir, -1, 1);
        problem.field().set_parameters(plus(p0, dp, eps));
        const double up = frozen.run(problem.y0(), problem);
        problem.field().set_parameters(plus(p0, dp, -eps));
        const double down = frozen.run(problem.y0(), problem);
        problem.field().set_parameters(p0);
        check_close(dot(gp, dp), (up - down) / (2 * eps), 1e-6, "adaptive d/dp");
        const auto dy = uniform_values(y0.size(), 70 + dir, -1, 1);
        check_close(dot(gy, dy),
                    (frozen.run(device(plus(y0, dy, eps)), problem) - frozen.run(device(plus(y0, dy, -eps)), problem)) /
                        (2 * eps),
                    1e-6, "adaptive d/dy0");
    }
}

BOOST_AUTO_TEST_CASE(an_adaptive_step_from_a_copy_of_its_state_repeats_itself_bit_for_bit)
{
    dense::blas b;
    const ode::mlp_layout layout(shapes[0]);
    test::quadratic_problem<double> problem(b, layout, 4, 1, 3);
    ode::adaptive<double, ode::mlp<double>> solver(ode::dopri5(), problem.field(), b,
                                                   {.rtol = 1e-10, .atol = 1e-12, .initial_step = 3.0}, {3.0}, 0.0);
    ode::adaptive_state<double> x = solver.start(problem.y0());
    int steps = 0;
    while (!solver.finished(x)) {
        ode::adaptive_state<double> again = x;
        solver.step(x);
        solver.step(again);
        BOOST_TEST_REQUIRE((host_copy_of(x.y) == host_copy_of(again.y)));
        BOOST_TEST_REQUIRE(std::memcmp(&x.control, &again.control, sizeof x.control) == 0);
        ++steps;
    }
    BOOST_TEST(steps > 5);
    BOOST_TEST(x.control.rejected > 0);
    BOOST_TEST(x.control.t == 3.0);
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused_with_the_value_named)
{
    dense::blas b;
    const ode::mlp_layout layout(shapes[0]);
    ode::mlp<double> f(b, layout, 2);
    auto has = [](const std::string& text) {
        return [text](const remat::error& e) { return std::string(e.what()).find(text) != std::string::npos; };
    };
    using fixed = ode::fixed_step<double, ode::mlp<double>>;
    BOOST_CHECK_EXCEPTION(fixed(ode::rk4(), f, b, 0.0, 0.0), argument_error, has("step size h = 0"));
    BOOST_CHECK_EXCEPTION(fixed(ode::rk4(), f, b, 0.0, std::numeric_limits<double>::quiet_NaN()), argument_error,
                          has("step size h = nan"));
    BOOST_CHECK_EXCEPTION((ode::adaptive<double, ode::mlp<double>>(ode::rk4(), f, b, {}, {1.0}, 0.0)), argument_error,
                          has("rk4 has no embedded error estimate"));
    BOOST_CHECK_EXCEPTION((ode::adaptive<double, ode::mlp<double>>(ode::dopri5(), f, b, {}, {1.0, 0.5}, 0.0)),
                          argument_error, has("stop time 1 = 0.5"));
    BOOST_CHECK_EXCEPTION((ode::adaptive<double, ode::mlp<double>>(ode::dopri5(), f, b, {.rtol = -1}, {1.0}, 0.0)),
                          argument_error, has("rtol = -1"));
    BOOST_CHECK_EXCEPTION(ode::mlp<double>(b, layout, 0), argument_error, has("batch size 0"));
    // A batch whose buffers pass 2^63 elements: the products overflowed (undefined) before any check.
    BOOST_CHECK_EXCEPTION(ode::mlp<double>(b, layout, std::int64_t{1} << 62), argument_error,
                          has("MLP batch size 4611686018427387904 x 7 values a member overflows 64 bits"));
    BOOST_CHECK_EXCEPTION(ode::mlp_layout({.dim = 2, .hidden = {4, 0}}), argument_error, has("layer 1 has width 0"));
    BOOST_CHECK_EXCEPTION((void)ode::method("rk45"), argument_error, has("unknown method 'rk45'"));
    BOOST_CHECK_EXCEPTION(f.set_parameters(std::vector<double>(3)), argument_error, has("got 3 values"));

    // A non-finite state: every trial's error estimate is NaN, the step shrinks until it underflows.
    ode::adaptive<double, ode::mlp<double>> solver(ode::dopri5(), f, b, {.initial_step = 0.1}, {1.0}, 0.0);
    const std::vector<double> bad{0.0, std::numeric_limits<double>::quiet_NaN(), 0.0, 0.0};
    ode::adaptive_state<double> x = solver.start(device(bad));
    BOOST_CHECK_EXCEPTION(solver.step(x), ode::numerical_error, has("error estimate nan"));
}

namespace {

ode::tableau heun()
{
    return {.name = "heun", .stages = 2, .order = 2, .a = {{}, {1.0}}, .b = {0.5, 0.5}, .c = {0.0, 1.0}};
}

} // namespace

// A method of one's own (the tableau is a public aggregate): the solver keeps its own copy, and refuses
// coefficients that do not fit the stages. It kept a reference: a tableau changed or gone after the solver
// was made (a temporary) changed the steps or was read after it was freed, and short coefficient vectors
// were read past their ends.
BOOST_AUTO_TEST_CASE(a_method_of_ones_own_is_copied_and_checked)
{
    dense::blas b;
    const ode::mlp_layout layout(shapes[0]);
    ode::mlp<double> f(b, layout, 2);
    f.set_parameters(layout.initial_parameters(3));
    const auto y0 = uniform_values(static_cast<std::size_t>(f.state_size()), 5, -1.0, 1.0);
    using fixed = ode::fixed_step<double, ode::mlp<double>>;
    auto one_step = [&](fixed& solver) {
        thrust::device_vector<double> y = device(y0);
        solver.step(0, y);
        return host_copy_of(y);
    };
    const ode::tableau kept = heun();
    fixed reference(kept, f, b, 0.0, 0.1);
    const std::vector<double> expected = one_step(reference);
    BOOST_TEST_REQUIRE(expected != y0);

    ode::tableau changing = heun();
    fixed after_change(changing, f, b, 0.0, 0.1);
    changing.name = "changed";
    changing.b = {1.0, 0.0};
    BOOST_TEST(after_change.method().name == "heun");
    BOOST_TEST(one_step(after_change) == expected);

    fixed from_temporary(heun(), f, b, 0.0, 0.1);
    BOOST_TEST(from_temporary.method().name == "heun");
    BOOST_TEST(one_step(from_temporary) == expected);

    auto has = [](const std::string& text) {
        return [text](const remat::error& e) { return std::string(e.what()).find(text) != std::string::npos; };
    };
    ode::tableau bad = heun();
    bad.b = {1.0};
    BOOST_CHECK_EXCEPTION(fixed(bad, f, b, 0.0, 0.1), argument_error,
                          has("method heun: b has 1 coefficients (expected 2)"));
    bad = heun();
    bad.a = {{}, {}};
    BOOST_CHECK_EXCEPTION(fixed(bad, f, b, 0.0, 0.1), argument_error,
                          has("method heun: row 1 of a has 0 coefficients (expected 1)"));
    bad = heun();
    bad.a = {{}};
    BOOST_CHECK_EXCEPTION(fixed(bad, f, b, 0.0, 0.1), argument_error, has("method heun: a has 1 rows (expected 2)"));
    bad = heun();
    bad.c[1] = std::numeric_limits<double>::quiet_NaN();
    BOOST_CHECK_EXCEPTION(fixed(bad, f, b, 0.0, 0.1), argument_error, has("method heun: c has the coefficient nan"));
    bad = ode::dopri5();
    bad.e.pop_back();
    BOOST_CHECK_EXCEPTION((ode::adaptive<double, ode::mlp<double>>(bad, f, b, {}, {1.0}, 0.0)), argument_error,
                          has("method dopri5: e has 6 coefficients (expected 7)"));
}
