// remat::run with tapes (remat::with_tapes): gradients from remat::taped_revolve plans bit-identical to
// store-all and to revolve runs, the calls of each user callable equal to what the plan's cost says, and
// the tapes made before step 0 (as many as the plan's peak, never one per step).
#define BOOST_TEST_MODULE driver_taped_gradient
#include <boost/test/unit_test.hpp>

#include "tanh_recurrence.hpp"

#include "remat/driver/run.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/taped_revolve.hpp"
#include "remat/schedule/taped_uniform.hpp"
#include "remat/schedule/uniform.hpp" // store_all
#include "remat/store/host_store.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

using namespace remat;
using test::tanh_recurrence;
using test::tanh_tape;

namespace {

struct outcome {
    tanh_recurrence::adjoint_state grad;
    std::vector<double> x_final; // x_T as the terminal callable saw it
    run_report report;
    std::uint64_t forward_calls = 0, taped_calls = 0, adjoint_calls = 0, tape_adjoint_calls = 0, tapes_made = 0;
    std::uint64_t peak_units = 0; // snapshots + tape_units x tapes held, the most seen by any callable
};

bool same_bits(const std::vector<double>& a, const std::vector<double>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

bool same_gradient(const outcome& a, const outcome& b)
{
    return same_bits(a.grad.a, b.grad.a) && same_bits(a.grad.dw, b.grad.dw) && same_bits(a.grad.db, b.grad.db);
}

std::vector<double> start(std::size_t n)
{
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i)
        x[i] = 0.5 - 0.13 * static_cast<double>(i);
    return x;
}

// Runs `plan` (state-only, or taped when `taped`), seeding the adjoint with ones in the terminal callable.
template <class Plan>
outcome run_plan(const Plan& plan, const tanh_recurrence& model, bool taped, std::uint64_t tape_units = 1)
{
    outcome o;
    o.grad = model.seeded();
    std::vector<double> x = start(model.size());
    tanh_tape scratch = model.make_tape();
    host_store store(std::max<slot_t>(plan.cost().peak_slots, 1));
    const auto held = [&](std::uint64_t tapes) {
        const auto slots = static_cast<std::uint64_t>(store.stats().slots_in_use);
        o.peak_units = std::max(o.peak_units, slots + tapes * tape_units);
    };
    auto forward = forward_step([&](step_t k, std::vector<double>& s) {
        ++o.forward_calls;
        held(o.taped_calls - o.tape_adjoint_calls);
        model.step(k, s, scratch);
    });
    auto adjoint = adjoint_step([&](step_t k, std::vector<double>& s) {
        ++o.adjoint_calls;
        model.record(k, s, scratch); // the plain adjoint: record, then back-propagate
        model.backward(scratch, o.grad);
    });
    auto final = final_state([&](const std::vector<double>& xT) {
        o.x_final = xT;
        std::fill(o.grad.a.begin(), o.grad.a.end(), 1.0);
    });
    if (taped)
        o.report = run(plan, store, x, std::move(forward), std::move(adjoint),
                       with_tapes(taped_step([&](step_t k, std::vector<double>& s, tanh_tape& t) {
                                      ++o.taped_calls;
                                      model.record(k, s, t);
                                      held(o.taped_calls - o.tape_adjoint_calls);
                                  }),
                                  tape_adjoint([&](step_t, tanh_tape& t) {
                                      ++o.tape_adjoint_calls;
                                      model.backward(t, o.grad);
                                  }),
                                  [&] {
                                      ++o.tapes_made;
                                      return model.make_tape();
                                  }),
                       std::move(final));
    else
        o.report = run(plan, store, x, std::move(forward), std::move(adjoint), std::move(final));
    return o;
}

} // namespace

BOOST_AUTO_TEST_CASE(taped_gradients_are_bit_identical_to_store_all_and_revolve)
{
    const tanh_recurrence model(5);
    int plans = 0, with_tapes_held = 0;
    for (const step_t steps : {1, 2, 3, 4, 7, 12, 31, 64, 150}) {
        const outcome reference = run_plan(store_all(steps, std::max<step_t>(steps - 1, 1)), model, false);
        BOOST_TEST_REQUIRE(reference.report.reverse_steps == static_cast<std::uint64_t>(steps));
        for (const slot_t units : {1, 2, 3, 5, 9, 17, 40, 200, 320}) {
            const outcome rev = run_plan(revolve(steps, units), model, false);
            BOOST_TEST_REQUIRE(same_gradient(rev, reference), "revolve T " << steps << " M " << units);
            for (const slot_t tape_units : {1, 2, 3}) {
                const taped_revolve plan(steps, units, tape_units);
                const schedule_cost c = plan.cost();
                const outcome o = run_plan(plan, model, true, static_cast<std::uint64_t>(tape_units));
                ++plans;
                with_tapes_held += c.peak_tapes > 0 ? 1 : 0;
                BOOST_TEST_INFO("T " << steps << " M " << units << " u " << tape_units);
                BOOST_TEST_REQUIRE(same_gradient(o, reference));
                BOOST_TEST_REQUIRE(same_bits(o.x_final, reference.x_final));
                const run_report& r = o.report;
                // The report is the plan's cost.
                BOOST_TEST(r.forward_steps == c.forward_steps);
                BOOST_TEST(r.taped_steps == c.taped_steps);
                BOOST_TEST(r.peak_tapes == c.peak_tapes);
                BOOST_TEST(r.reverse_steps == c.reverse_steps);
                BOOST_TEST(r.tape_reverses == c.taped_steps); // every tape is consumed by its reverse
                BOOST_TEST(r.stores == c.stores);
                BOOST_TEST(r.restores == c.restores);
                BOOST_TEST(r.peak_slots == c.peak_slots);
                BOOST_TEST(r.forward_steps + r.reverse_steps - r.tape_reverses == plan.evaluations());
                // So are the calls of each callable (the terminal callable's extra step aside).
                BOOST_TEST(o.forward_calls + o.taped_calls == c.forward_steps + r.final_forward_steps);
                BOOST_TEST(o.taped_calls == c.taped_steps);
                BOOST_TEST(o.tape_adjoint_calls == c.taped_steps);
                BOOST_TEST(o.adjoint_calls == static_cast<std::uint64_t>(steps) - c.taped_steps);
                // The tapes were made before step 0, as many as the plan holds at once.
                BOOST_TEST(o.tapes_made == c.peak_tapes);
                // Memory: snapshots + tapes held at once within the budget, wherever a step ran.
                BOOST_TEST(o.peak_units <= static_cast<std::uint64_t>(plan.peak_units()));
                BOOST_TEST(plan.peak_units() <= units);
            }
        }
    }
    BOOST_TEST(with_tapes_held > plans / 2); // most plans really held tapes
}

BOOST_AUTO_TEST_CASE(every_step_but_the_last_taped_is_plain_bptt)
{
    // With (T-1) u units every step but the last is taped: T evaluations, each step run once.
    const tanh_recurrence model(4);
    const step_t steps = 50;
    const taped_revolve plan(steps, (steps - 1) * 2, 2);
    const outcome o = run_plan(plan, model, true);
    const outcome reference = run_plan(store_all(steps, steps - 1), model, false);
    BOOST_TEST(same_gradient(o, reference));
    BOOST_TEST(o.report.taped_steps == static_cast<std::uint64_t>(steps - 1));
    BOOST_TEST(o.report.tape_reverses == static_cast<std::uint64_t>(steps - 1));
    BOOST_TEST(o.adjoint_calls == 1u);
    BOOST_TEST(plan.evaluations() == static_cast<std::uint64_t>(steps));
}

BOOST_AUTO_TEST_CASE(checkpoint_sequentials_plan_gives_the_same_bits)
{
    // remat::taped_uniform (segment inputs kept, each segment re-run with tapes) through the same driver.
    const tanh_recurrence model(5);
    for (const step_t steps : {1, 2, 3, 7, 31, 150}) {
        const outcome reference = run_plan(store_all(steps, std::max<step_t>(steps - 1, 1)), model, false);
        for (const step_t every : {1, 2, 5, 13, 150}) {
            const taped_uniform plan(steps, every, 2);
            const schedule_cost c = plan.cost();
            const outcome o = run_plan(plan, model, true, 2);
            BOOST_TEST_INFO("T " << steps << " every " << every);
            BOOST_TEST_REQUIRE(same_gradient(o, reference));
            BOOST_TEST_REQUIRE(same_bits(o.x_final, reference.x_final));
            BOOST_TEST(o.report.forward_steps + o.report.reverse_steps - o.report.tape_reverses == plan.evaluations());
            BOOST_TEST(o.report.taped_steps == c.taped_steps);
            BOOST_TEST(o.tapes_made == c.peak_tapes);
            BOOST_TEST(o.peak_units <= static_cast<std::uint64_t>(plan.peak_units()));
        }
    }
}
