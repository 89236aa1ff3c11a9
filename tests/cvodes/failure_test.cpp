// Bad input and failures: a clear error naming the window, the time and the CVODES call; the store is
// left consistent and reusable; nothing leaks (run under ASan).
#define BOOST_TEST_MODULE cvodes_failure
#include <boost/test/unit_test.hpp>

#include "contains.hpp"
#include "roberts.hpp"

#include "remat/cvodes/cvodes.hpp"
#include "remat/remat.hpp"

#include <exception>
#include <limits>
#include <stdexcept>
#include <string>

using namespace remat;

namespace {

const examples::roberts model;

cvodes::windows roberts_windows()
{
    return cvodes::windows(model.window_boundaries(1)).including(model.backward_starts);
}

using remat::test::contains;

// The message of the argument_error `call` throws; "no argument_error" where it throws none.
template <class Call>
std::string argument_message(Call&& call)
{
    try {
        call();
    } catch (const remat::argument_error& e) {
        return e.what();
    }
    return "no argument_error";
}

// Runs a solve that must fail; returns the step_error and the solver_error nested in it.
struct failure {
    step_t step = -1;
    step_phase phase = step_phase::forward;
    std::string what;
    std::string call;
    int code = 0;
    step_t window = -1;
    double time = 0;
    std::string user; // the user's exception nested in the solver_error, if any
};

failure fail_solve(cvodes::adjoint_solver& solver, host_store& store)
{
    const auto w = roberts_windows();
    failure f;
    try {
        (void)cvodes::solve(solver, w, revolve(w.count(), 3), store);
        BOOST_FAIL("the solve did not fail");
    } catch (const step_error& e) {
        f.step = e.step();
        f.phase = e.phase();
        try {
            std::rethrow_if_nested(e);
        } catch (const cvodes::solver_error& s) {
            f.what = s.what();
            f.call = s.call();
            f.code = s.code();
            f.window = s.window();
            f.time = s.time();
            try {
                std::rethrow_if_nested(s);
            } catch (const std::exception& u) {
                f.user = u.what();
            }
        }
    }
    BOOST_TEST_REQUIRE(!f.call.empty(), "no remat::cvodes::solver_error nested in the step_error");
    BOOST_TEST(store.stats().slots_in_use == 0u); // the store is consistent, and empty
    return f;
}

void check_store_still_works(host_store& store)
{
    cvodes::adjoint_solver good(model.forward(), model.backward());
    const auto w = roberts_windows();
    const cvodes::solution s = cvodes::solve(good, w, revolve(w.count(), 3), store);
    BOOST_TEST(std::abs(s.final_state.back() / 3.9983e7 - 1) < 1e-4);
}

} // namespace

BOOST_AUTO_TEST_CASE(a_throwing_rhs_names_the_window_the_time_and_the_call)
{
    for (const double when : {1e-3, 1e3, 1e7}) {
        BOOST_TEST_CONTEXT("throws after t = " << when)
        {
            auto f = model.forward();
            auto rhs = f.rhs;
            f.rhs = [rhs, when](double t, std::span<const double> y, std::span<double> dy) {
                if (t > when)
                    throw std::runtime_error("rate law undefined");
                rhs(t, y, dy);
            };
            cvodes::adjoint_solver solver(f, model.backward());
            host_store store(3);
            const failure e = fail_solve(solver, store);
            const auto w = roberts_windows();
            // The forward sweep never integrates the last window: its reverse step does, first.
            const bool last = e.window == w.count() - 1;
            BOOST_TEST((e.phase == (last ? step_phase::adjoint : step_phase::forward)));
            BOOST_TEST(e.call == "CVodeF");
            BOOST_TEST(e.code == -8); // CV_RHSFUNC_FAIL
            BOOST_TEST(e.window == e.step);
            BOOST_TEST(e.time >= w.start(e.window));
            BOOST_TEST(e.time <= w.end(e.window));
            BOOST_TEST(w.start(e.window) <= when);
            BOOST_TEST(e.user == "rate law undefined");
            BOOST_TEST(contains(e.what, "CV_RHSFUNC_FAIL"), e.what);
            BOOST_TEST(contains(e.what, "window " + std::to_string(e.window)), e.what);
            BOOST_TEST(contains(e.what, "rate law undefined"), e.what);
            check_store_still_works(store);
        }
    }
}

BOOST_AUTO_TEST_CASE(failures_in_the_reverse_sweep_name_the_adjoint_phase_and_the_call)
{
    { // the recorded re-integration: fail on the first call of the reverse sweep's CVodeF
        bool reversing = false;
        cvodes::solver_options options;
        auto f = model.forward();
        auto rhs = f.rhs;
        f.rhs = [rhs, &reversing](double t, std::span<const double> y, std::span<double> dy) {
            if (reversing)
                throw std::runtime_error("reverse-sweep fault");
            rhs(t, y, dy);
        };
        options.on_window = [&](const cvodes::window_event& e) {
            reversing = e.window == roberts_windows().count() - 2;
        };
        cvodes::adjoint_solver solver(f, model.backward(), options);
        host_store store(3);
        const failure e = fail_solve(solver, store);
        BOOST_TEST((e.phase == step_phase::adjoint));
        BOOST_TEST(e.call == "CVodeF");
        BOOST_TEST(e.user == "reverse-sweep fault");
        check_store_still_works(store);
    }
    { // the backward right-hand side returns an unrecoverable code below t = 1
        auto b = model.backward();
        auto rhs = b[1].rhs;
        b[1].rhs = [rhs](double t, std::span<const double> y, std::span<const double> l, std::span<double> dl) {
            if (t < 1)
                return -1;
            rhs(t, y, l, dl);
            return 0;
        };
        cvodes::adjoint_solver solver(model.forward(), b);
        host_store store(3);
        const failure e = fail_solve(solver, store);
        BOOST_TEST((e.phase == step_phase::adjoint));
        BOOST_TEST(e.call == "CVodeB");
        BOOST_TEST(e.user.empty()); // a code, not an exception
        BOOST_TEST(contains(e.what, "CVodeB returned"), e.what);
        BOOST_TEST(e.window == 2); // [0.4, 4], where the backward integration first goes below t = 1
        BOOST_TEST(e.time == 0.4); // CVodeB was asked for the window's start
        check_store_still_works(store);
    }
}

BOOST_AUTO_TEST_CASE(a_failed_step_names_the_window)
{
    auto f = model.forward();
    f.settings.max_steps = 20; // too much work for the first window
    cvodes::adjoint_solver solver(f, model.backward());
    host_store store(3);
    const failure e = fail_solve(solver, store);
    BOOST_TEST(e.call == "CVodeF");
    BOOST_TEST(e.code == -1); // CV_TOO_MUCH_WORK
    BOOST_TEST(contains(e.what, "CV_TOO_MUCH_WORK"), e.what);
    BOOST_TEST(contains(e.what, "mxstep steps taken"), e.what); // CVODES's own message, not printed
    BOOST_TEST(contains(e.what, "window 0 at t = "), e.what);
    check_store_still_works(store);
}

BOOST_AUTO_TEST_CASE(bad_horizons_windows_and_budgets_are_refused_naming_the_value)
{
    auto message = [](auto&& call) -> std::string {
        try {
            call();
        } catch (const remat::error& e) {
            return e.what();
        }
        return "no error";
    };
    BOOST_TEST(contains(message([] { (void)cvodes::windows({0.0, 10.0, 5.0}); }), "boundary 2 = 5 is not after"));
    BOOST_TEST(contains(message([] { (void)cvodes::windows({0.0, -1.0}); }), "tf before t0"));
    BOOST_TEST(contains(message([] { (void)cvodes::windows::uniform(1.0, 0.5, 4); }), "tf = 0.5"));
    BOOST_TEST(contains(message([] { (void)cvodes::windows({0.0}); }), "1 boundaries"));

    cvodes::adjoint_solver solver(model.forward(), model.backward());
    BOOST_TEST(contains(message([&] { (void)cvodes::slots_for_budget(solver, 20); }),
                        "a budget of 20 bytes holds no window-start state of 40 bytes"));
    BOOST_TEST(cvodes::slots_for_budget(solver, 400) == 10u);
    host_store store(4);
    const cvodes::windows no_tb0(model.window_boundaries(1)); // 50 is no boundary
    BOOST_TEST(contains(message([&] { (void)cvodes::solve(solver, no_tb0, revolve(no_tb0.count(), 4), store); }),
                        "backward problem 1 starts at t = 50, which is no window boundary"));
    const auto w = roberts_windows();
    BOOST_TEST(contains(message([&] { (void)cvodes::solve(solver, w, revolve(w.count() + 1, 4), store); }),
                        "the schedule has " + std::to_string(w.count() + 1) + " steps for"));
    BOOST_TEST(contains(message([&] { (void)cvodes::solve_online(solver, -1.0, 10, online_revolve(4), store); }),
                        "tf = -1 is not a finite time after t0 = 0"));
    BOOST_TEST(contains(message([&] { (void)cvodes::solve_online(solver, model.tf, 10, online_revolve(4), store); }),
                        "backward problem 1 starts at t = 50, not at tf"));

    // A store smaller than one window-start state: the driver's capacity error, the store left empty.
    host_store tiny(level_capacity{.slots = 4, .bytes = 16});
    BOOST_TEST(contains(message([&] { (void)cvodes::solve(solver, w, revolve(w.count(), 4), tiny); }), "16"));
    BOOST_TEST(tiny.stats().slots_in_use == 0u);

    // Problems that cannot be integrated.
    auto f = model.forward();
    f.y0.clear();
    BOOST_TEST(contains(message([&] { cvodes::adjoint_solver s(f, {}); }), "no unknowns"));
    f = model.forward();
    f.settings.absolute_tolerances = {1e-8, 1e-8};
    BOOST_TEST(contains(message([&] { cvodes::adjoint_solver s(f, {}); }), "2 absolute_tolerances for 3 unknowns"));
    f = model.forward();
    f.settings.nonlinear_convergence_coefficient = -0.5;
    BOOST_TEST(contains(message([&] { cvodes::adjoint_solver s(f, {}); }), "nonlinear_convergence_coefficient -0.5"));
    f = model.forward();
    f.settings.relative_tolerance = -1;
    BOOST_TEST(contains(message([&] { cvodes::adjoint_solver s(f, {}); }), "relative_tolerance -1"));
    auto b = model.backward(10.0);
    b.lambda_start = {1.0};
    BOOST_TEST(contains(message([&] { cvodes::adjoint_solver s(model.forward(), {b}); }),
                        "lambda_start has 1 values for 3 unknowns"));
    b = model.backward(-5.0);
    BOOST_TEST(contains(message([&] { cvodes::adjoint_solver s(model.forward(), {b}); }),
                        "t_start = -5 is not a finite time after t0 = 0"));
}

BOOST_AUTO_TEST_CASE(a_nan_or_inf_starting_value_is_refused_up_front_naming_the_component)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    for (const double bad : {nan, inf, -inf}) {
        // Before, y0 = {1, NaN, 0} reached CVODES and came back as a convergence failure in window 0, and a
        // NaN lambda_start only after the whole forward sweep.
        auto f = model.forward();
        f.y0[1] = bad;
        BOOST_TEST(contains(argument_message([&] { cvodes::adjoint_solver s(f, model.backward()); }), "y0[1] = "), bad);
        auto b = model.backward(10.0);
        b.lambda_start = {0.0, 0.0, bad};
        const std::string refused = argument_message([&] { cvodes::adjoint_solver s(model.forward(), {b}); });
        BOOST_TEST(contains(refused, "backward problem 0: lambda_start[2] = "), refused);
        BOOST_TEST(contains(refused, "is not finite"), refused);
    }
}

// Quadrature tolerances are handed to CVODES whether or not the quadratures take part in the error control,
// and a backward problem's only in the reverse sweep; zero relative and absolute tolerances give CVODES a
// zero error weight, which it refuses at its first step. Each is refused when the solver is made, naming
// the setting, as the state's own tolerances are.
BOOST_AUTO_TEST_CASE(bad_quadrature_tolerances_and_zero_tolerances_are_refused_up_front)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (const double bad : {-1.0, nan, std::numeric_limits<double>::infinity()}) {
        auto f = model.forward();
        f.settings.quadrature_relative_tolerance = bad;
        std::string refused = argument_message([&] { cvodes::adjoint_solver s(f, model.backward()); });
        BOOST_TEST(contains(refused, "the forward problem's settings: quadrature_relative_tolerance "), refused);
        f = model.forward();
        f.settings.quadrature_error_control = false;
        f.settings.quadrature_absolute_tolerance = bad;
        refused = argument_message([&] { cvodes::adjoint_solver s(f, model.backward()); });
        BOOST_TEST(contains(refused, "the forward problem's settings: quadrature_absolute_tolerance "), refused);
        auto b = model.backward();
        b[0].settings.quadrature_absolute_tolerance = bad;
        refused = argument_message([&] { cvodes::adjoint_solver s(model.forward(), b); });
        BOOST_TEST(contains(refused, "backward problem 0's settings: quadrature_absolute_tolerance "), refused);
    }
    auto f = model.forward();
    f.settings.relative_tolerance = 0;
    f.settings.absolute_tolerances = {1e-8, 0, 1e-6};
    BOOST_TEST(contains(argument_message([&] { cvodes::adjoint_solver s(f, model.backward()); }),
                        "relative_tolerance 0 with absolute_tolerances[1] = 0"));
    f = model.forward();
    f.settings.quadrature_relative_tolerance = 0;
    f.settings.quadrature_absolute_tolerance = 0;
    BOOST_TEST(contains(argument_message([&] { cvodes::adjoint_solver s(f, model.backward()); }),
                        "quadrature_relative_tolerance 0 with quadrature_absolute_tolerance 0"));
    f.settings.quadrature_error_control = false; // then CVODES weighs no quadrature error
    BOOST_CHECK_NO_THROW(cvodes::adjoint_solver(f, model.backward()));
    auto b = model.backward();
    b[1].settings.relative_tolerance = 0;
    b[1].settings.absolute_tolerance = 0;
    b[1].settings.absolute_tolerances.clear();
    BOOST_TEST(contains(argument_message([&] { cvodes::adjoint_solver s(model.forward(), b); }),
                        "backward problem 1's settings: relative_tolerance 0 with absolute_tolerance 0"));
}

// A negative Anderson depth reached SUNNonlinSol_FixedPoint, which crashed in the first window (a
// segmentation fault, nothing to catch); a negative Krylov dimension became SUNDIALS's default in silence.
// Both are refused when the solver is made, forward and backward.
BOOST_AUTO_TEST_CASE(a_negative_anderson_depth_or_krylov_dimension_is_refused_up_front)
{
    auto f = model.forward();
    f.settings.iteration = cvodes::fixed_point{.anderson_depth = -1};
    std::string refused = argument_message([&] { cvodes::adjoint_solver s(f, model.backward()); });
    BOOST_TEST(contains(refused, "the forward problem's settings: fixed_point anderson_depth -1 is negative"), refused);
    auto b = model.backward();
    b[1].settings.iteration = cvodes::newton_gmres{.krylov_dimension = -3};
    refused = argument_message([&] { cvodes::adjoint_solver s(model.forward(), b); });
    BOOST_TEST(contains(refused, "backward problem 1's settings: newton_gmres krylov_dimension -3 is negative"),
               refused);
    refused = argument_message([&] { (void)cvodes::solve_in_ram(f, model.backward(), model.tf, 100); });
    BOOST_TEST(contains(refused, "anderson_depth -1"), refused);
}

// CVodeAdjInit allocates the interpolation data of steps_per_checkpoint + 1 steps up front: at 2^62 the
// allocation's size wrapped inside SUNDIALS (a solve that never ended) and window_working_bytes() said 272
// bytes. A count whose bytes pass 64 bits is refused; below that the estimate is exact.
BOOST_AUTO_TEST_CASE(steps_per_checkpoint_past_64_bits_of_bytes_is_refused)
{
    cvodes::solver_options huge;
    huge.steps_per_checkpoint = 1L << 62;
    try {
        cvodes::adjoint_solver s(model.forward(), model.backward(), huge);
        BOOST_ERROR("no argument_error; window_working_bytes() = " << s.window_working_bytes());
    } catch (const argument_error& e) {
        BOOST_TEST(contains(e.what(), "steps_per_checkpoint 4611686018427387904 needs more than 2^64 bytes of "
                                      "interpolation data for 3 unknowns"),
                   e.what());
    }
    cvodes::solver_options large;
    large.steps_per_checkpoint = 1L << 40;
    const cvodes::adjoint_solver s(model.forward(), model.backward(), large);
    // (Nd + 1) steps of y and y' (3 unknowns), and a Nordsieck array of order 5 + 2 over y and q (3 + 1).
    BOOST_TEST(s.window_working_bytes() == 8 * (((1ULL << 40) + 1) * 2 * 3 + 7 * 4));
}
