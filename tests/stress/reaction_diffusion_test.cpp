// The stress run's computation: its adjoint gives the gradient that central finite differences give,
// and any two schedules give the same bits.
#define BOOST_TEST_MODULE reaction_diffusion
#include <boost/test/unit_test.hpp>

#include "reaction_diffusion.hpp"

#include "remat/remat.hpp"

#include <cmath>
#include <cstring>

using namespace remat;
using namespace remat::stress;

namespace {

constexpr step_t steps = 30;

double objective(const reaction_diffusion& m, field x)
{
    field scratch;
    for (step_t k = 0; k < steps; ++k)
        m.step(x, scratch);
    double j = 0;
    field lambda;
    reaction_diffusion::seed(x, lambda, j);
    return j;
}

template <class Schedule, class Store>
gradient adjoint(const reaction_diffusion& m, const Schedule& plan, Store& store, std::uint64_t seed)
{
    field x = m.initial(seed), scratch, lambda, last;
    gradient g;
    run(plan, store, x, remat::forward_step([&](step_t, field& s) { m.step(s, scratch); }),
        remat::adjoint_step([&](step_t k, field& s) {
            if (k == steps - 1) {
                last = s;
                m.step(last, scratch);
                reaction_diffusion::seed(last, lambda, g.energy);
            }
            m.adjoint(s, lambda, scratch, g);
        }));
    g.dx0 = lambda;
    return g;
}

} // namespace

BOOST_AUTO_TEST_CASE(adjoint_matches_finite_differences)
{
    reaction_diffusion m;
    m.points = 16;
    m.b = 0.05; // a nonlinearity that shows
    host_store store(steps);
    const gradient g = adjoint(m, store_all(steps, steps - 1), store, 3);
    const field x0 = m.initial(3);
    for (std::size_t i = 0; i < m.points; ++i) {
        const double h = 1e-6;
        field plus = x0, minus = x0;
        plus[i] += h;
        minus[i] -= h;
        const double fd = (objective(m, plus) - objective(m, minus)) / (2 * h);
        BOOST_TEST(g.dx0[i] == fd, boost::test_tools::tolerance(1e-6));
    }
    for (double* p : {&m.a, &m.b}) {
        const double h = 1e-7;
        const double saved = *p;
        *p = saved + h;
        const double up = objective(m, x0);
        *p = saved - h;
        const double down = objective(m, x0);
        *p = saved;
        const double fd = (up - down) / (2 * h);
        BOOST_TEST((p == &m.a ? g.da : g.db) == fd, boost::test_tools::tolerance(1e-5));
    }
}

BOOST_AUTO_TEST_CASE(schedules_give_the_same_bits)
{
    reaction_diffusion m;
    m.points = 64;
    host_store all(steps), few(3);
    const gradient a = adjoint(m, store_all(steps, steps - 1), all, 5);
    const gradient b = adjoint(m, revolve(steps, 3), few, 5);
    BOOST_TEST(std::memcmp(a.dx0.data(), b.dx0.data(), a.dx0.size() * sizeof(double)) == 0);
    BOOST_TEST(std::memcmp(&a.da, &b.da, sizeof a.da) == 0);
    BOOST_TEST(std::memcmp(&a.db, &b.db, sizeof a.db) == 0);
}
