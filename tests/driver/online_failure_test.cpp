// The online driver when user code throws: a failing termination test (either convention) or forward
// step names its step and phase, nests the original exception, and leaves no slot held, so the same store
// completes the next run. Needs no example problem, so it also runs under ASan (leaks included).
#define BOOST_TEST_MODULE driver_online_failure
#include <boost/test/unit_test.hpp>

#include "remat/driver/run_online.hpp"
#include "remat/schedule/online_revolve.hpp"
#include "remat/store/host_store.hpp"

#include <stdexcept>
#include <string>
#include <vector>

using namespace remat;

namespace {

struct user_failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void forward(step_t k, std::vector<double>& x)
{
    for (double& v : x)
        v = 0.99 * v + 0.01 * static_cast<double>(k);
}

struct checksum {
    double sum = 0;
    void operator()(step_t, std::vector<double>& x) { sum += x[0] + 2 * x[1]; }
};

std::vector<double> initial()
{
    return {1.0, 2.0, 3.0};
}

// Runs a loop of `steps` steps through the store and checks that it needed every slot.
void complete_run(host_store& store, slot_t slots, step_t steps)
{
    std::vector<double> x = initial();
    checksum adjoint;
    const run_report r =
        run_online(online_revolve(slots), store, x, remat::forward_step(forward), remat::adjoint_step(adjoint),
                   [&](step_t k, const auto&) { return k == steps - 1; });
    BOOST_TEST(r.steps == steps);
    BOOST_TEST(r.peak_slots == slots);
}

} // namespace

BOOST_AUTO_TEST_CASE(a_throwing_termination_test_names_its_step)
{
    for (const step_t fail_at : {0, 1, 5, 40, 333}) {
        host_store store(4);
        std::vector<double> x = initial();
        checksum adjoint;
        bool ok = false;
        try {
            (void)run_online(online_revolve(4), store, x, remat::forward_step(forward), remat::adjoint_step(adjoint),
                             [&](step_t k, const auto&) -> bool {
                                 if (k == fail_at)
                                     throw user_failure("step size underflow");
                                 return false;
                             });
        } catch (const step_error& e) {
            ok = e.step() == fail_at && e.phase() == step_phase::predicate &&
                 std::string(e.what()).find("termination test at x_" + std::to_string(fail_at)) != std::string::npos;
            try {
                std::rethrow_if_nested(e);
            } catch (const user_failure& inner) {
                ok = ok && std::string(inner.what()) == "step size underflow";
            }
        }
        BOOST_TEST(ok, "fail_at " << fail_at);
        complete_run(store, 4, 100); // every slot was released
    }
}

BOOST_AUTO_TEST_CASE(a_throwing_convergence_test_names_its_step)
{
    host_store store(3);
    std::vector<double> x = initial();
    checksum adjoint;
    BOOST_CHECK_EXCEPTION((void)run_online_converged(online_revolve(3), store, x, remat::forward_step(forward),
                                                     remat::adjoint_step(adjoint),
                                                     [](step_t k, const auto&) -> bool {
                                                         if (k == 17)
                                                             throw user_failure("residual is NaN");
                                                         return false;
                                                     }),
                          step_error,
                          [](const step_error& e) { return e.step() == 17 && e.phase() == step_phase::predicate; });
    complete_run(store, 3, 50);
}

BOOST_AUTO_TEST_CASE(a_forward_step_failing_mid_sweep_names_its_step)
{
    host_store store(3);
    std::vector<double> x = initial();
    checksum adjoint;
    BOOST_CHECK_EXCEPTION(
        (void)run_online(online_revolve(3), store, x, remat::forward_step([](step_t k, std::vector<double>& v) {
                             if (k == 12)
                                 throw user_failure("forward");
                             forward(k, v);
                         }),
                         remat::adjoint_step(adjoint), [](step_t k, const auto&) { return k == 50; }),
        step_error, [](const step_error& e) { return e.step() == 12 && e.phase() == step_phase::forward; });
    complete_run(store, 3, 21);
}

BOOST_AUTO_TEST_CASE(an_adjoint_failing_in_the_reverse_sweep_names_its_step)
{
    host_store store(5);
    std::vector<double> x = initial();
    BOOST_CHECK_EXCEPTION((void)run_online(online_revolve(5), store, x, remat::forward_step(forward),
                                           remat::adjoint_step([](step_t k, std::vector<double>&) {
                                               if (k == 30)
                                                   throw user_failure("adjoint");
                                           }),
                                           [](step_t k, const auto&) { return k == 99; }),
                          step_error,
                          [](const step_error& e) { return e.step() == 30 && e.phase() == step_phase::adjoint; });
    complete_run(store, 5, 200);
}
