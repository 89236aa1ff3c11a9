// remat::cvodes against SUNDIALS's own published output for cvsRoberts_ASAi_dns (the .out file Debian's
// libsundials-dev ships with the example) and against CVODES's own all-in-RAM adjoint on the same problem.
#define BOOST_TEST_MODULE cvodes_roberts
#include <boost/test/unit_test.hpp>

#include "roberts.hpp"

#include "remat/cvodes/cvodes.hpp"
#include "remat/remat.hpp"

#include <array>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace remat;

namespace {

// The published numbers: G, then per backward problem (in the example's order) lambda(t0) and dG/dp.
struct published {
    double G = 0;
    struct backward {
        double tB0 = 0;
        std::array<double, 3> lambda0{};
        std::array<double, 3> dGdp{};
    };
    std::vector<backward> problems;
};

std::array<double, 3> three_after(const std::string& line, const std::string& label)
{
    std::istringstream in(line.substr(line.find(label) + label.size()));
    std::array<double, 3> v{};
    in >> v[0] >> v[1] >> v[2];
    BOOST_TEST_REQUIRE(!in.fail(), "three numbers after '" << label << "' in: " << line);
    return v;
}

published read_published()
{
    std::ifstream file(REMAT_ROBERTS_OUT);
    BOOST_TEST_REQUIRE(file.good(),
                       "cannot read SUNDIALS's published output " << REMAT_ROBERTS_OUT << " (install libsundials-dev)");
    published p;
    std::string line;
    while (std::getline(file, line)) {
        if (line.rfind("G:", 0) == 0)
            p.G = std::stod(line.substr(2));
        else if (line.find("Backward integration from tB0 =") != std::string::npos)
            p.problems.push_back({std::stod(line.substr(line.find('=') + 1)), {}, {}});
        else if (line.find("lambda(t0):") != std::string::npos)
            p.problems.back().lambda0 = three_after(line, "lambda(t0):");
        else if (line.find("dG/dp:") != std::string::npos)
            p.problems.back().dGdp = three_after(line, "dG/dp:");
    }
    BOOST_TEST_REQUIRE(p.G > 0);
    BOOST_TEST_REQUIRE(p.problems.size() == 2u);
    return p;
}

double relative(double a, double b)
{
    return std::abs(a - b) / std::abs(b);
}

// The tolerances: 1e-4 relative, 1e-3 for the smallest dG/dp component.
void check_against(const published::backward& ref, const cvodes::backward_state& got)
{
    BOOST_TEST(got.t_start == ref.tB0);
    for (int i = 0; i < 3; ++i)
        BOOST_TEST(relative(got.lambda[i], ref.lambda0[i]) < 1e-4,
                   "lambda0[" << i << "] " << got.lambda[i] << " vs " << ref.lambda0[i]);
    int smallest = 0;
    for (int i = 1; i < 3; ++i)
        if (std::abs(ref.dGdp[i]) < std::abs(ref.dGdp[smallest]))
            smallest = i;
    for (int i = 0; i < 3; ++i) {
        const double dGdp = -got.quadratures[i];
        BOOST_TEST(relative(dGdp, ref.dGdp[i]) < (i == smallest ? 1e-3 : 1e-4),
                   "dG/dp[" << i << "] " << dGdp << " vs " << ref.dGdp[i]);
    }
}

} // namespace

BOOST_AUTO_TEST_CASE(reproduces_the_published_example_with_fewer_slots_than_windows)
{
    const published ref = read_published();
    const examples::roberts model;
    for (const int per_decade : {1, 2, 4}) {
        BOOST_TEST_CONTEXT("windows per decade " << per_decade)
        {
            cvodes::adjoint_solver solver(model.forward(), model.backward());
            const auto w = cvodes::windows(model.window_boundaries(per_decade)).including(model.backward_starts);
            const slot_t slots = 3;
            BOOST_TEST_REQUIRE(w.count() > slots);
            host_store store(slots);
            const cvodes::solution s = cvodes::solve(solver, w, revolve(w.count(), slots), store);
            BOOST_TEST(relative(s.final_state.back(), ref.G) < 1e-4, "G " << s.final_state.back() << " vs " << ref.G);
            BOOST_TEST(s.final_state.front() == model.tf);
            BOOST_TEST_REQUIRE(s.backward.size() == 2u);
            check_against(ref.problems[0], s.backward[0]);
            check_against(ref.problems[1], s.backward[1]);
            BOOST_TEST(s.report.peak_slots <= slots);
            BOOST_TEST(s.report.forward_steps > static_cast<std::uint64_t>(w.count() - 1)); // it did recompute
        }
    }
}

BOOST_AUTO_TEST_CASE(online_windows_reproduce_the_first_backward_problem)
{
    const published ref = read_published();
    const examples::roberts model;
    cvodes::adjoint_solver solver(model.forward(), {model.backward(model.tf)});
    host_store store(4);
    const cvodes::solution s = cvodes::solve_online(solver, model.tf, 40, online_revolve(4), store);
    BOOST_TEST(s.windows > 4); // more windows than slots, found as it went
    BOOST_TEST(s.final_state.front() == model.tf);
    BOOST_TEST(relative(s.final_state.back(), ref.G) < 1e-4);
    check_against(ref.problems[0], s.backward[0]);
}

BOOST_AUTO_TEST_CASE(cvodes_own_adjoint_reproduces_the_published_example_and_agrees)
{
    const published ref = read_published();
    const examples::roberts model;
    // CVODES alone, as the example runs it (a checkpoint every 150 steps, all in RAM).
    const cvodes::in_ram_solution own = cvodes::solve_in_ram(model.forward(), model.backward(), model.tf, 150);
    BOOST_TEST(relative(own.final_state.back(), ref.G) < 1e-4);
    check_against(ref.problems[0], own.backward[0]);
    check_against(ref.problems[1], own.backward[1]);
    BOOST_TEST(own.checkpoints > 1);

    // remat's windows against it: the same gradients to within the integration tolerances.
    cvodes::adjoint_solver solver(model.forward(), model.backward());
    const auto w = cvodes::windows(model.window_boundaries(2)).including(model.backward_starts);
    host_store store(4);
    const cvodes::solution s = cvodes::solve(solver, w, revolve(w.count(), 4), store);
    BOOST_TEST(relative(s.final_state.back(), own.final_state.back()) < 1e-5);
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t i = 0; i < 3; ++i) {
            BOOST_TEST(relative(s.backward[b].lambda[i], own.backward[b].lambda[i]) < 1e-4);
            BOOST_TEST(relative(s.backward[b].quadratures[i], own.backward[b].quadratures[i]) < 1e-3);
        }
}
