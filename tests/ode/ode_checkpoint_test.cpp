// The ODE adapter through remat's driver: the gradient of a neural-ODE solve is bit-identical to keeping
// every state (a plain vector of states, no remat involved) for every schedule kind — revolve, uniform,
// online (run_online) and multi-level — and every store level this build has (RAM, HDF5, a tiered RAM +
// HDF5 store, asynchronous too); and an adaptive Dormand–Prince solve through run_online repeats its
// first sweep exactly, rejected trials included, when it recomputes from snapshots.
#define BOOST_TEST_MODULE ode_checkpoint
#include <boost/test/unit_test.hpp>

#include "ode_problem.hpp"
#include "same_bits.hpp"
#include "scratch_dir.hpp"

#include "remat/cuda/thrust_traits.hpp"
#include "remat/ode/adaptive.hpp"
#include "remat/ode/adaptive_traits.hpp"
#include "remat/ode/fixed_step.hpp"
#include "remat/ode/mlp.hpp"
#include "remat/ode/tableau.hpp"
#include <remat/remat.hpp>
#if REMAT_TEST_HDF5
#include "remat/hdf5/hdf5_store.hpp"
#endif

#include <thrust/device_vector.h>

#include <memory>
#include <string>
#include <vector>

using namespace remat;
using remat::dense::activation;
using remat::test::host_copy_of;

namespace {

using vector = thrust::device_vector<double>;
using solver_type = ode::fixed_step<double, ode::mlp<double>>;

const ode::mlp_shape shape{.dim = 3, .hidden = {6, 5}, .act = activation::tanh, .time_input = true};

// The gradient through remat::run (or run_online) with the same operations, in the same order, as
// quadratic_problem::store_all_gradient: dL/dy_T from x_T (one step past the x_{T-1} the last adjoint
// sees), then per step the solver's adjoint and the loss's term.
struct checkpointed {
    test::quadratic_problem<double>& problem;
    solver_type& solver;
    vector a;
    vector p_bar;

    explicit checkpointed(test::quadratic_problem<double>& p, solver_type& s)
        : problem(p), solver(s), a(p.y0().size(), 0.0),
          p_bar(static_cast<std::size_t>(p.field().parameter_count()), 0.0)
    {
    }
    void forward(step_t k, vector& y) { solver.step(k, y); }
    void adjoint(step_t k, vector& y)
    {
        const step_t steps = problem.steps();
        if (k == steps - 1) {
            vector last = y;
            solver.step(k, last);
            problem.add_loss_gradient(steps, last, a);
        }
        solver.adjoint_step(k, y, a, p_bar);
        problem.add_loss_gradient(k, y, a);
    }
    template <class Plan, class Store>
    test::ode_gradient<double> run(const Plan& plan, Store& store, run_report* report = nullptr)
    {
        vector y = problem.y0();
        const run_report r =
            remat::run(plan, store, y, remat::forward_step([&](step_t k, vector& s) { forward(k, s); }),
                       remat::adjoint_step([&](step_t k, vector& s) { adjoint(k, s); }));
        if (report != nullptr)
            *report = r;
        return {host_copy_of(a), host_copy_of(p_bar)};
    }
    template <class Store>
    test::ode_gradient<double> run_online(slot_t slots, Store& store, run_report& report)
    {
        vector y = problem.y0();
        const step_t steps = problem.steps();
        report = remat::run_online(online_revolve(slots), store, y,
                                   remat::forward_step([&](step_t k, vector& s) { forward(k, s); }),
                                   remat::adjoint_step([&](step_t k, vector& s) { adjoint(k, s); }),
                                   [&](step_t k, const vector&) { return k == steps - 1; });
        return {host_copy_of(a), host_copy_of(p_bar)};
    }
};

bool same(const test::ode_gradient<double>& g, const test::ode_gradient<double>& reference)
{
    return test::same_bits(g.y0, reference.y0) && test::same_bits(g.params, reference.params);
}

} // namespace

BOOST_AUTO_TEST_CASE(every_schedule_kind_gives_the_store_everything_gradient)
{
    dense::blas b;
    for (const ode::tableau* method : {&ode::rk4(), &ode::dopri5(), &ode::euler()}) {
        const step_t steps = 57;
        test::quadratic_problem<double> problem(b, ode::mlp_layout(shape), 4, steps, 21);
        solver_type solver(*method, problem.field(), b, 0.0, 0.03);
        const test::ode_gradient<double> reference = problem.store_all_gradient(solver);
        const std::string name = method->name;
        for (const slot_t slots : {1, 3, 13}) {
            {
                host_store store(slots);
                checkpointed c(problem, solver);
                run_report r;
                BOOST_TEST(same(c.run(revolve(steps, slots), store, &r), reference), name << " revolve " << slots);
                BOOST_TEST(r.peak_slots <= slots);
                BOOST_TEST(r.forward_steps > static_cast<std::uint64_t>(steps - 1), "recomputation happened");
            }
            if (slots >= 13) { // uniform needs about sqrt(3 T) slots
                host_store store(slots);
                checkpointed c(problem, solver);
                BOOST_TEST(same(c.run(uniform::fit(steps, slots), store), reference), name << " uniform " << slots);
            }
            {
                host_store store(slots);
                checkpointed c(problem, solver);
                run_report r;
                BOOST_TEST(same(c.run_online(slots, store, r), reference), name << " online " << slots);
                BOOST_TEST(r.steps == steps);
            }
        }
        // Multi-level: 2 fast slots and an unlimited slow level with costs (a layered plan).
        const cost_model model{{{"fast", 2, 0, 0}, {"slow", level_spec::unlimited, 3, 3}}};
        const multilevel plan(steps, model);
        tiered_store<host_store, host_store> store(host_store(2, {.name = "fast"}),
                                                   host_store(level_capacity{}, {.name = "slow"}));
        checkpointed c(problem, solver);
        run_report r;
        BOOST_TEST(same(c.run(plan, store, &r), reference), name << " multilevel");
        BOOST_TEST(r.levels.at(1).stores > 0u, "the slow level was used");
    }
}

#if REMAT_TEST_HDF5
BOOST_AUTO_TEST_CASE(every_store_level_gives_the_store_everything_gradient)
{
    dense::blas b;
    const step_t steps = 80;
    test::quadratic_problem<double> problem(b, ode::mlp_layout(shape), 5, steps, 33);
    solver_type solver(ode::rk4(), problem.field(), b, 0.0, 0.025);
    const test::ode_gradient<double> reference = problem.store_all_gradient(solver);
    const test::scratch_dir dir;
    {
        hdf5_store disk(dir / "ode.h5", 6);
        checkpointed c(problem, solver);
        run_report r;
        BOOST_TEST(same(c.run(revolve(steps, 6), disk, &r), reference), "HDF5");
        BOOST_TEST(r.stores > 0u);
    }
    for (const bool asynchronous : {false, true}) {
        tiered_store<host_store, hdf5_store> store({tier_options{}, tier_options{.asynchronous = asynchronous}},
                                                   host_store(2), hdf5_store(dir / "tiered.h5", level_capacity{}));
        const multilevel plan(steps, cost_model{{{"host", 2, 0, 0}, {"disk", level_spec::unlimited, 2, 2}}});
        checkpointed c(problem, solver);
        run_report r;
        BOOST_TEST(same(c.run(plan, store, &r), reference), "RAM + HDF5, asynchronous " << asynchronous);
        BOOST_TEST(r.levels.at(1).stores > 0u, "the disk level was used");
    }
    {
        checkpointed online(problem, solver);
        hdf5_store disk(dir / "online.h5", 5);
        run_report r;
        BOOST_TEST(same(online.run_online(5, disk, r), reference), "online on HDF5");
    }
}
#endif

namespace {

// Member by member (the struct has padding, whose bytes a copy need not keep).
bool same(const ode::controller_state& a, const ode::controller_state& b)
{
    return a.t == b.t && a.h == b.h && a.err_prev == b.err_prev && a.next_stop == b.next_stop &&
           a.rejected == b.rejected && a.at_stop == b.at_stop && a.rejected_last == b.rejected_last;
}

// An adaptive solve (the stiff variant of ode_gradient_test's): its loss on every accepted state.
struct adaptive_case {
    dense::blas b;
    test::quadratic_problem<double> problem{b, ode::mlp_layout(shape), 2, 400, 9};
    std::unique_ptr<ode::adaptive<double, ode::mlp<double>>> solver;
    adaptive_case()
    {
        std::vector<double> strong = problem.field().parameters_on_host();
        for (double& p : strong)
            p *= 4;
        problem.field().set_parameters(strong);
        solver = std::make_unique<ode::adaptive<double, ode::mlp<double>>>(
            ode::dopri5(), problem.field(), b,
            ode::controller_options{.rtol = 1e-9, .atol = 1e-11, .initial_step = 0.9},
            std::vector<double>{1.0, 2.5, 3.0}, 0.0);
    }
};

} // namespace

BOOST_AUTO_TEST_CASE(adaptive_solves_through_run_online_repeat_their_trials_exactly)
{
    adaptive_case ac;
    auto& solver = *ac.solver;
    auto& problem = ac.problem;
    // The reference: every state kept.
    std::vector<ode::adaptive_state<double>> states{solver.start(problem.y0())};
    while (!solver.finished(states.back())) {
        states.push_back(states.back());
        solver.step(states.back());
    }
    const auto steps = static_cast<step_t>(states.size() - 1);
    BOOST_TEST_REQUIRE(steps < problem.steps()); // the problem has targets for every step
    BOOST_TEST_REQUIRE(states.back().control.rejected > 0);
    vector a(problem.y0().size(), 0.0);
    vector p_bar(static_cast<std::size_t>(problem.field().parameter_count()), 0.0);
    problem.add_loss_gradient(steps, states.back().y, a);
    for (step_t k = steps; k-- > 0;) {
        solver.adjoint_step(states[static_cast<std::size_t>(k)], a, p_bar);
        problem.add_loss_gradient(k, states[static_cast<std::size_t>(k)].y, a);
    }
    const test::ode_gradient<double> reference{host_copy_of(a), host_copy_of(p_bar)};

    for (const slot_t slots : {1, 2, 4, 9}) {
        vector ca(problem.y0().size(), 0.0);
        vector cp(p_bar.size(), 0.0);
        ode::adaptive_state<double> x = solver.start(problem.y0());
        std::int64_t forward_calls = 0;
        bool all_states_match = true;
        host_store store(slots);
        const run_report r = run_online_converged(
            online_revolve(slots), store, x, remat::forward_step([&](step_t k, ode::adaptive_state<double>& s) {
                // Every recomputation starts from exactly the state of the first sweep: y and controller.
                const auto& expected = states[static_cast<std::size_t>(k)];
                all_states_match = all_states_match && host_copy_of(s.y) == host_copy_of(expected.y) &&
                                   same(s.control, expected.control);
                solver.step(s);
                ++forward_calls;
            }),
            remat::adjoint_step([&](step_t k, ode::adaptive_state<double>& s) {
                if (k == steps - 1) { // dL/dy_T from x_T, one step past x_{T-1}
                    ode::adaptive_state<double> last = s;
                    solver.step(last);
                    BOOST_TEST((host_copy_of(last.y) == host_copy_of(states.back().y)));
                    BOOST_TEST(last.control.rejected == states.back().control.rejected);
                    problem.add_loss_gradient(steps, last.y, ca);
                }
                solver.adjoint_step(s, ca, cp);
                problem.add_loss_gradient(k, s.y, ca);
            }),
            [&](step_t, const ode::adaptive_state<double>& s) { return solver.finished(s); });
        BOOST_TEST(r.steps == steps, slots << " slots");
        BOOST_TEST(all_states_match, slots << " slots: a recomputed state differs from the first sweep's");
        BOOST_TEST(forward_calls > steps, slots << " slots: no recomputation, nothing tested");
        BOOST_TEST(same({host_copy_of(ca), host_copy_of(cp)}, reference), slots << " slots");
    }
}
