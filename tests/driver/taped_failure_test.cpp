// remat::run and remat::executor with tapes when something goes wrong: a throwing taped step or tape
// adjoint becomes remat::step_error and leaves no tape held and the store empty and reusable; a taped
// plan is refused without the tape callables; a taped advance that does not fit the state is refused.
#define BOOST_TEST_MODULE driver_taped_failure
#include <boost/test/unit_test.hpp>

#include "tanh_recurrence.hpp"

#include "remat/driver/run.hpp"
#include "remat/schedule/taped_revolve.hpp"
#include "remat/schedule/uniform.hpp" // store_all
#include "remat/store/host_store.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

using namespace remat;
using test::tanh_recurrence;
using test::tanh_tape;

namespace {

struct harness {
    tanh_recurrence model{4};
    tanh_recurrence::adjoint_state grad = model.seeded();
    tanh_tape scratch = model.make_tape();
    std::vector<double> x = start();
    std::uint64_t calls = 0;    // of every callable
    std::uint64_t throw_at = 0; // the call of the failing callable that throws (1-based; 0: never)
    std::uint64_t failing_calls = 0;

    std::vector<double> start() const { return {0.4, -0.1, 0.3, 0.2}; }

    void maybe_throw()
    {
        if (++failing_calls == throw_at)
            throw std::runtime_error("injected failure");
    }

    auto forward()
    {
        return forward_step([this](step_t k, std::vector<double>& s) {
            ++calls;
            model.step(k, s, scratch);
        });
    }
    auto adjoint()
    {
        return adjoint_step([this](step_t k, std::vector<double>& s) {
            ++calls;
            model.record(k, s, scratch);
            model.backward(scratch, grad);
        });
    }
    // Tapes whose taped step (when `fail_step`) or tape adjoint throws at call `throw_at`.
    auto tapes(bool fail_step)
    {
        return with_tapes(taped_step([this, fail_step](step_t k, std::vector<double>& s, tanh_tape& t) {
                              ++calls;
                              if (fail_step)
                                  maybe_throw();
                              model.record(k, s, t);
                          }),
                          tape_adjoint([this, fail_step](step_t, tanh_tape& t) {
                              ++calls;
                              if (!fail_step)
                                  maybe_throw();
                              model.backward(t, grad);
                          }),
                          [this] { return model.make_tape(); });
    }
};

bool same_bits(const std::vector<double>& a, const std::vector<double>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

const std::vector<double>& reference_gradient(step_t steps)
{
    static const std::vector<double> a = [steps] {
        harness h;
        host_store store(steps - 1);
        run(store_all(steps, steps - 1), store, h.x, h.forward(), h.adjoint());
        return h.grad.a;
    }();
    return a;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_throwing_tape_adjoint_leaves_nothing_held_and_the_store_reusable)
{
    const step_t steps = 40;
    const taped_revolve plan(steps, 12, 2);
    BOOST_TEST_REQUIRE(plan.cost().taped_steps >= 5u);
    for (const bool fail_step : {false, true}) {
        for (const std::uint64_t at : {1u, 3u, 5u}) {
            BOOST_TEST_INFO((fail_step ? "taped step" : "tape adjoint") << " throws at call " << at);
            host_store store(plan.cost().peak_slots);
            harness h;
            h.throw_at = at;
            try {
                run(plan, store, h.x, h.forward(), h.adjoint(), h.tapes(fail_step));
                BOOST_TEST(false, "no exception");
            } catch (const step_error& e) {
                BOOST_TEST((e.phase() == (fail_step ? step_phase::forward : step_phase::adjoint)));
                BOOST_TEST(std::string(e.what()).find("injected failure") != std::string::npos, e.what());
                try {
                    std::rethrow_if_nested(e);
                    BOOST_TEST(false, "nothing nested");
                } catch (const std::runtime_error& inner) {
                    BOOST_TEST(std::string(inner.what()) == "injected failure");
                }
            }
            BOOST_TEST(store.stats().slots_in_use == 0);
            // The same store, a fresh state: the gradient is the store-all one.
            harness again;
            run(plan, store, again.x, again.forward(), again.adjoint(), again.tapes(fail_step));
            BOOST_TEST(same_bits(again.grad.a, reference_gradient(steps)));
        }
    }
}

BOOST_AUTO_TEST_CASE(an_aborted_executor_holds_no_tape)
{
    const taped_revolve plan(30, 10, 2);
    for (const bool fail_step : {false, true}) {
        host_store store(plan.cost().peak_slots);
        harness h;
        h.throw_at = 4;
        executor ex(store, h.x, h.forward(), h.adjoint(), h.tapes(fail_step), plan.steps());
        ex.check_fits(plan.cost());
        std::uint64_t most_held = 0;
        bool failed = false;
        for (const action& a : plan) {
            try {
                ex.apply(a);
            } catch (const step_error&) {
                failed = true;
                break;
            }
            most_held = std::max(most_held, ex.tapes_held());
        }
        BOOST_TEST_REQUIRE(failed);
        BOOST_TEST(most_held > 0u);
        ex.abort();
        BOOST_TEST(ex.tapes_held() == 0u);
        BOOST_TEST(store.stats().slots_in_use == 0);
    }
}

BOOST_AUTO_TEST_CASE(a_taped_plan_is_refused_without_the_tape_callables)
{
    const taped_revolve plan(20, 8, 2);
    BOOST_TEST_REQUIRE(plan.cost().taped_steps > 0u);
    host_store store(plan.cost().peak_slots);
    harness h;
    try {
        run(plan, store, h.x, h.forward(), h.adjoint());
        BOOST_TEST(false, "no exception");
    } catch (const schedule_error& e) {
        BOOST_TEST(std::string(e.what()).find("remat::with_tapes") != std::string::npos, e.what());
        BOOST_TEST(std::string(e.what()).find(std::to_string(plan.cost().taped_steps) + " taped advances") !=
                       std::string::npos,
                   e.what());
    }
    BOOST_TEST(h.calls == 0u); // before any step
    BOOST_TEST(same_bits(h.x, h.start()));
    // An executor without tapes refuses the action itself.
    executor ex(store, h.x, h.forward(), h.adjoint(), 20);
    BOOST_CHECK_THROW(ex.apply(advance{0, 1, true}), schedule_error);
    BOOST_TEST(h.calls == 0u);
}

BOOST_AUTO_TEST_CASE(taped_advances_that_do_not_fit_the_state_are_refused)
{
    host_store slots(2);
    harness h;
    executor ex(slots, h.x, h.forward(), h.adjoint(), h.tapes(false), 10);
    BOOST_CHECK_THROW(ex.apply(advance{1, 2, true}), schedule_error); // the state is x_0
    BOOST_CHECK_THROW(ex.apply(advance{0, 2, true}), schedule_error); // a taped advance runs one step
    BOOST_TEST(h.calls == 0u);
    ex.apply(remat::store{0, 0, 0});
    ex.apply(advance{0, 1, true});
    BOOST_TEST(ex.tapes_held() == 1u);
    ex.apply(restore{0, 0, 0});
    try {
        ex.apply(advance{0, 1, true}); // step 0's tape is held already
        BOOST_TEST(false, "no exception");
    } catch (const schedule_error& e) {
        BOOST_TEST(std::string(e.what()).find("already held") != std::string::npos, e.what());
    }
    BOOST_TEST(ex.tapes_held() == 1u);
    ex.abort();
    BOOST_TEST(ex.tapes_held() == 0u);
}
