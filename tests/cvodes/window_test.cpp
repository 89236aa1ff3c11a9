// Recomputation is exact: every integration of a window (forward sweep, recomputations, the reverse
// step's recorded re-integration) ends in the same bits, so the gradients are bit-identical for every
// schedule and store.
#define BOOST_TEST_MODULE cvodes_window
#include <boost/test/unit_test.hpp>

#include "roberts.hpp"
#include "same_bits.hpp"
#include "scratch_dir.hpp"

#include "remat/cvodes/cvodes.hpp"
#include "remat/remat.hpp"
#ifdef REMAT_TEST_HDF5
#include "remat/hdf5/hdf5_store.hpp"
#endif

#include <cmath>
#include <cstring>
#include <map>
#include <vector>

using namespace remat;

namespace {

const examples::roberts model;

cvodes::windows roberts_windows()
{
    return cvodes::windows(model.window_boundaries(2)).including(model.backward_starts);
}

// Every backward number of a solution, in one vector.
std::vector<double> gradient_bits(const cvodes::solution& s)
{
    std::vector<double> all = s.final_state;
    for (const auto& b : s.backward) {
        all.insert(all.end(), b.lambda.begin(), b.lambda.end());
        all.insert(all.end(), b.quadratures.begin(), b.quadratures.end());
    }
    return all;
}

} // namespace

BOOST_AUTO_TEST_CASE(every_integration_of_a_window_ends_in_the_same_bits)
{
    struct seen {
        std::vector<double> start;
        std::vector<double> end;
        int forward = 0;
        int reverse = 0;
    };
    std::map<step_t, seen> windows_seen;
    int mismatches = 0;
    int bad_counts = 0; // events whose work counts are impossible
    cvodes::solver_options options;
    options.steps_per_checkpoint = 5; // CVODES's own in-window checkpoints in most windows too
    options.on_window = [&](const cvodes::window_event& e) {
        seen& s = windows_seen[e.window];
        (e.sweep == cvodes::sweep::forward ? s.forward : s.reverse) += 1;
        // Every step evaluates the right-hand side at least once; only the reverse sweep integrates back
        // (the first backward problem starts at tf, so it is active in every reverse step).
        const bool reverse = e.sweep == cvodes::sweep::reverse;
        if (e.steps < 1 || e.rhs_evaluations < e.steps || (reverse ? e.backward_steps < 1 : e.backward_steps != 0) ||
            e.backward_rhs_evaluations < e.backward_steps) {
            ++bad_counts;
            BOOST_TEST_MESSAGE("window " << e.window << ": " << e.steps << " steps, " << e.rhs_evaluations
                                         << " evaluations, " << e.backward_steps << " backward steps, "
                                         << e.backward_rhs_evaluations << " backward evaluations");
        }
        const std::vector<double> start(e.start_state.begin(), e.start_state.end());
        const std::vector<double> end(e.end_state.begin(), e.end_state.end());
        if (s.end.empty()) {
            s.start = start;
            s.end = end;
        } else if (!test::same_bits(start, s.start) || !test::same_bits(end, s.end)) {
            ++mismatches;
            BOOST_TEST_MESSAGE("window " << e.window << (e.sweep == cvodes::sweep::forward ? " forward" : " reverse")
                                         << " differs");
        }
    };
    cvodes::adjoint_solver solver(model.forward(), model.backward(), options);
    const auto w = roberts_windows();
    host_store store(2); // few slots: windows are recomputed several times
    const cvodes::solution s = cvodes::solve(solver, w, revolve(w.count(), 2), store);
    BOOST_TEST(mismatches == 0);
    BOOST_TEST(bad_counts == 0);
    BOOST_TEST_REQUIRE(windows_seen.size() == static_cast<std::size_t>(w.count()));
    int recomputed = 0;
    for (step_t k = 0; k < w.count(); ++k) {
        const seen& v = windows_seen[k];
        BOOST_TEST(v.reverse == 1, "window " << k);
        BOOST_TEST(v.start.front() == w.start(k));
        BOOST_TEST(v.end.front() == w.end(k));
        if (k + 1 < w.count()) // the forward sweep reaches every window but the last
            BOOST_TEST(v.forward >= 1, "window " << k);
        recomputed += v.forward > 1 ? 1 : 0;
        if (k > 0) // window k starts exactly where window k-1 ended
            BOOST_TEST(test::same_bits(v.start, windows_seen[k - 1].end), "window " << k);
    }
    BOOST_TEST(recomputed > 0);
    BOOST_TEST(s.report.reverse_steps == static_cast<std::uint64_t>(w.count()));
}

BOOST_AUTO_TEST_CASE(gradients_are_bit_identical_for_every_schedule_and_store)
{
    const auto w = roberts_windows();
    const step_t W = w.count();
    cvodes::adjoint_solver solver(model.forward(), model.backward());
    host_store everything(W);
    const std::vector<double> reference = gradient_bits(cvodes::solve(solver, w, store_all(W, W), everything));
    for (const double v : reference)
        BOOST_TEST_REQUIRE(std::isfinite(v));
    for (const slot_t slots : {1, 2, 5}) {
        host_store store(slots);
        const cvodes::solution s = cvodes::solve(solver, w, revolve(W, slots), store); // the same solver again
        BOOST_TEST(test::same_bits(gradient_bits(s), reference), "revolve, " << slots << " slots");
        BOOST_TEST(s.report.peak_snapshot_bytes <= static_cast<std::uint64_t>(slots) * solver.state_size() * 8);
        BOOST_TEST(store.stats().slots_in_use == 0u);
    }
    {
        host_store store(W);
        const cvodes::solution s = cvodes::solve(solver, w, uniform(W, 4), store);
        BOOST_TEST(test::same_bits(gradient_bits(s), reference), "uniform every 4");
    }
#ifdef REMAT_TEST_HDF5
    test::scratch_dir dir;
    {
        hdf5_store disk(dir / "cvodes.h5", slot_t{3});
        BOOST_TEST(test::same_bits(gradient_bits(cvodes::solve(solver, w, revolve(W, 3), disk)), reference), "hdf5");
    }
    {
        tiered_store<host_store, hdf5_store> tiers({tier_options{}, tier_options{.asynchronous = true}}, host_store(1),
                                                   hdf5_store(dir / "tiered.h5", slot_t{4}));
        const cvodes::solution s =
            cvodes::solve(solver, w, multilevel(W, cost_model{{{"host", 1, 0, 0}, {"disk", 4, 1, 1}}}), tiers);
        BOOST_TEST(test::same_bits(gradient_bits(s), reference), "host + asynchronous hdf5");
        BOOST_TEST(s.report.levels.size() == 2u);
    }
#endif
}

BOOST_AUTO_TEST_CASE(online_windows_are_bit_identical_to_store_all)
{
    cvodes::adjoint_solver solver(model.forward(), {model.backward(model.tf)});
    host_store big(1000);
    const cvodes::solution all = cvodes::solve_online(solver, model.tf, 25, online_revolve(1000), big);
    host_store small(3);
    const cvodes::solution few = cvodes::solve_online(solver, model.tf, 25, online_revolve(3), small);
    BOOST_TEST(few.windows == all.windows);
    BOOST_TEST(few.windows > 3);
    BOOST_TEST(test::same_bits(gradient_bits(few), gradient_bits(all)));
    BOOST_TEST(few.report.peak_slots <= 3u);
}

// The memory bound over long horizons: CVODES's own adjoint keeps a checkpoint every Nd steps, so its
// checkpoints grow with the horizon; remat's windows of a fixed length keep `slots` states whatever the
// horizon, and the gradients agree with CVODES's to the integration tolerance.
BOOST_AUTO_TEST_CASE(remat_memory_stays_bounded_as_the_horizon_grows_and_cvodes_checkpoints_do_not)
{
    // y'' = -y as (y0, y1); G = int y0^2 dt; lambda' = -(J^T lambda) - dg/dy = (lambda1 - 2 y0, -lambda0).
    cvodes::forward_problem f;
    f.y0 = {1.0, 0.0};
    f.rhs = [](double, std::span<const double> y, std::span<double> dy) {
        dy[0] = y[1];
        dy[1] = -y[0];
    };
    f.settings.lmm = cvodes::method::adams;
    f.settings.iteration = cvodes::fixed_point{};
    f.settings.relative_tolerance = 1e-10;
    f.settings.absolute_tolerance = 1e-12;
    f.settings.max_steps = 1'000'000;
    const slot_t slots = 4;
    std::int64_t previous_checkpoints = 0;
    for (const double tf : {40.0, 160.0, 640.0}) {
        BOOST_TEST_CONTEXT("tf = " << tf)
        {
            cvodes::backward_problem b;
            b.t_start = tf;
            b.rhs = [](double, std::span<const double> y, std::span<const double> l, std::span<double> dl) {
                dl[0] = l[1] - 2 * y[0];
                dl[1] = -l[0];
            };
            b.settings = f.settings;
            const cvodes::in_ram_solution own = cvodes::solve_in_ram(f, {b}, tf, 50);
            BOOST_TEST(own.checkpoints > 2 * previous_checkpoints); // grows with the horizon
            previous_checkpoints = own.checkpoints;

            cvodes::adjoint_solver solver(f, {b});
            const auto w = cvodes::windows::uniform(0.0, tf, static_cast<step_t>(tf / 5)); // windows of length 5
            host_store store(slots);
            const cvodes::solution s = cvodes::solve(solver, w, revolve(w.count(), slots), store);
            // Every slot full of one 24-byte state [t, y0, y1], and never more, whatever the horizon.
            BOOST_TEST(s.report.peak_snapshot_bytes == static_cast<std::uint64_t>(slots) * 3 * sizeof(double));
            // lambda(t0) = dG/dy(t0) against CVODES's own, and against the closed form: G(y(0)) =
            // int_0^tf (y0(0) cos t + y1(0) sin t)^2 dt, so dG/dy0(0) = tf + sin(2 tf) / 2, dG/dy1(0) = sin^2 tf.
            for (std::size_t i = 0; i < 2; ++i)
                BOOST_TEST(std::abs(s.backward[0].lambda[i] - own.backward[0].lambda[i]) <
                           1e-5 * (1 + std::abs(own.backward[0].lambda[i])));
            BOOST_TEST(std::abs(s.backward[0].lambda[0] - (tf + std::sin(2 * tf) / 2)) < 1e-5 * tf);
            BOOST_TEST(std::abs(s.backward[0].lambda[1] - std::sin(tf) * std::sin(tf)) < 1e-5 * tf);
        }
    }
}

// CVodeSetNonlinConvCoef reaches the forward and the backward CVODES memories of every window: with
// fixed-point iteration, a looser coefficient (0.3 against CVODES's 0.1) lets the steps whose error
// estimate lies near the controller's target (1/6) pass after one iteration, so both systems evaluate
// their right-hand sides fewer times per step; recomputation stays exact, and lambda(t0) stays within
// the integration tolerance of the default's.
BOOST_AUTO_TEST_CASE(the_nonlinear_convergence_coefficient_reaches_forward_and_backward_systems)
{
    // The damped, forced oscillator y'' = -y - 0.2 y' + 0.5 cos(1.5 t) as (y0, y1); G = int y0^2 dt.
    cvodes::forward_problem f;
    f.y0 = {1.0, 0.0};
    f.rhs = [](double t, std::span<const double> y, std::span<double> dy) {
        dy[0] = y[1];
        dy[1] = -y[0] - 0.2 * y[1] + 0.5 * std::cos(1.5 * t);
    };
    f.settings.lmm = cvodes::method::adams;
    f.settings.iteration = cvodes::fixed_point{};
    f.settings.relative_tolerance = 1e-8;
    f.settings.absolute_tolerance = 1e-10;
    f.settings.max_steps = 1'000'000;
    const double tf = 100;
    cvodes::backward_problem b;
    b.t_start = tf;
    b.rhs = [](double, std::span<const double> y, std::span<const double> l, std::span<double> dl) {
        dl[0] = l[1] - 2 * y[0];
        dl[1] = -l[0] + 0.2 * l[1];
    };
    b.settings = f.settings;
    struct work {
        double forward_per_step = 0;
        double backward_per_step = 0;
        std::vector<double> lambda;
    };
    const auto w = cvodes::windows::uniform(0.0, tf, 10);
    auto run = [&](double coefficient) {
        std::int64_t steps = 0, evaluations = 0, backward_steps = 0, backward_evaluations = 0;
        cvodes::solver_options options;
        options.on_window = [&](const cvodes::window_event& e) {
            steps += e.steps;
            evaluations += e.rhs_evaluations;
            backward_steps += e.backward_steps;
            backward_evaluations += e.backward_rhs_evaluations;
        };
        auto fc = f;
        auto bc = b;
        fc.settings.nonlinear_convergence_coefficient = bc.settings.nonlinear_convergence_coefficient = coefficient;
        cvodes::adjoint_solver solver(fc, {bc}, options);
        host_store all(w.count());
        const cvodes::solution reference = cvodes::solve(solver, w, store_all(w.count(), w.count()), all);
        host_store few(2);
        const cvodes::solution s = cvodes::solve(solver, w, revolve(w.count(), 2), few);
        BOOST_TEST(test::same_bits(gradient_bits(s), gradient_bits(reference)), "coefficient " << coefficient);
        return work{static_cast<double>(evaluations) / static_cast<double>(steps),
                    static_cast<double>(backward_evaluations) / static_cast<double>(backward_steps),
                    s.backward[0].lambda};
    };
    const work standard = run(0);
    const work loose = run(0.3);
    BOOST_TEST_MESSAGE("evaluations per step, forward " << standard.forward_per_step << " -> " << loose.forward_per_step
                                                        << ", backward " << standard.backward_per_step << " -> "
                                                        << loose.backward_per_step);
    BOOST_TEST(loose.forward_per_step < standard.forward_per_step - 0.1);
    BOOST_TEST(loose.backward_per_step < standard.backward_per_step - 0.1);
    for (std::size_t i = 0; i < 2; ++i)
        BOOST_TEST(std::abs(loose.lambda[i] - standard.lambda[i]) < 1e-5 * (1 + std::abs(standard.lambda[i])));
}
