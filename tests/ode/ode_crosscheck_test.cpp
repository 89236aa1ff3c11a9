// An independent reference (label crosscheck): JAX with diffrax computes the same discrete solve and
// gradient — fixed-step RK4 and Dormand–Prince over the same MLP, weights, initial states and loss, in
// float64, differentiated by its RecursiveCheckpointAdjoint — and remat's gradients must agree to 1e-10
// relative. JAX and diffrax come from PyPI into build/python-venv (scripts/install-python.sh, which
// scripts/test.sh runs); where they are missing, the test says so and fails.
#define BOOST_TEST_MODULE ode_crosscheck
#include <boost/test/unit_test.hpp>

#include "ode_problem.hpp"
#include "relative_difference.hpp"
#include "scratch_dir.hpp"

#include "remat/dense/blas.hpp"
#include "remat/ode/fixed_step.hpp"
#include "remat/ode/mlp.hpp"
#include "remat/ode/tableau.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

using namespace remat;
using remat::dense::activation;
using json = nlohmann::json;

namespace {

const std::string python = REMAT_PYTHON;
const std::string script = REMAT_DIFFRAX_REFERENCE;

struct reference_case {
    ode::mlp_shape shape;
    std::int64_t batch = 1;
    step_t steps = 1;
    double t0 = 0;
    double h = 0;
    std::string method;
};

// (A function rather than nested braces: GCC 12 warns wrongly on initializer lists of such aggregates.)
reference_case make_case(std::int64_t dim, std::vector<std::int64_t> hidden, activation act, bool time_input,
                         std::int64_t batch, step_t steps, double t0, double h, const char* method)
{
    reference_case c;
    c.shape.dim = dim;
    c.shape.hidden = std::move(hidden);
    c.shape.act = act;
    c.shape.time_input = time_input;
    c.batch = batch;
    c.steps = steps;
    c.t0 = t0;
    c.h = h;
    c.method = method;
    return c;
}

void require_python_environment()
{
    const std::string check = "'" + python + "' -c 'import jax, diffrax' > /dev/null 2>&1";
    BOOST_TEST_REQUIRE(std::system(check.c_str()) == 0,
                       "no Python environment with JAX and diffrax at "
                           << python
                           << ": scripts/install-python.sh <build dir> installs them from PyPI (pinned versions); "
                              "it failed or was not run (can PyPI be reached? see <build dir>/python-venv.log)");
}

} // namespace

BOOST_AUTO_TEST_CASE(gradients_agree_with_diffrax)
{
    require_python_environment();
    std::vector<reference_case> cases;
    for (const char* method : {"rk4", "dopri5"}) {
        cases.push_back(make_case(2, {32}, activation::tanh, false, 8, 200, 0.0, 0.025, method));
        cases.push_back(make_case(3, {16, 16}, activation::softplus, true, 4, 100, 0.3, 0.02, method));
    }
    test::scratch_dir dir;
    dense::blas b;
    for (std::size_t index = 0; index < cases.size(); ++index) {
        const reference_case& c = cases[index];
        const ode::mlp_layout layout(c.shape);
        test::quadratic_problem<double> problem(b, layout, c.batch, c.steps, 100 + index);
        ode::fixed_step<double, ode::mlp<double>> solver(ode::method(c.method), problem.field(), b, c.t0, c.h);
        const test::ode_gradient<double> g = problem.store_all_gradient(solver);
        const double loss = problem.loss(solver, problem.y0());

        json in;
        in["dim"] = c.shape.dim;
        in["hidden"] = c.shape.hidden;
        in["activation"] = dense::name(c.shape.act);
        in["time_input"] = c.shape.time_input;
        in["batch"] = c.batch;
        in["method"] = c.method;
        in["params"] = problem.field().parameters_on_host();
        in["y0"] = test::host_copy_of(problem.y0());
        std::vector<double> times, targets, weights;
        for (step_t k = 0; k <= c.steps; ++k)
            times.push_back(solver.time(k)); // the same t_k as remat's steps, exactly
        for (step_t k = 1; k <= c.steps; ++k) {
            const std::vector<double> d = problem.target(k);
            targets.insert(targets.end(), d.begin(), d.end());
            weights.push_back(problem.weight(k));
        }
        in["times"] = times;
        in["targets"] = targets;
        in["weights"] = weights;
        in["checkpoints"] = 16; // a binomial checkpointing run on diffrax's side too
        const auto case_path = dir / ("case" + std::to_string(index) + ".json");
        const auto result_path = dir / ("result" + std::to_string(index) + ".json");
        std::ofstream(case_path) << in.dump();
        const std::string command =
            "'" + python + "' '" + script + "' '" + case_path.string() + "' '" + result_path.string() + "'";
        BOOST_TEST_REQUIRE(std::system(command.c_str()) == 0, "the diffrax reference failed: " << command);
        const json out = json::parse(std::ifstream(result_path));
        BOOST_TEST_MESSAGE(c.method << ": jax " << out["versions"]["jax"].get<std::string>() << ", diffrax "
                                    << out["versions"]["diffrax"].get<std::string>());
        const auto ref_params = out["grad_params"].get<std::vector<double>>();
        const auto ref_y0 = out["grad_y0"].get<std::vector<double>>();
        BOOST_TEST_REQUIRE(ref_params.size() == g.params.size());
        BOOST_TEST_REQUIRE(ref_y0.size() == g.y0.size());
        const double ref_loss = out["loss"].get<double>();
        BOOST_TEST(std::abs(loss - ref_loss) <= 1e-12 * std::abs(ref_loss),
                   c.method << " loss " << loss << " vs " << ref_loss);
        const double dp = test::max_relative_difference(g.params, ref_params);
        const double dy = test::max_relative_difference(g.y0, ref_y0);
        BOOST_TEST(dp <= 1e-10, c.method << " case " << index << ": parameter gradients differ by " << dp);
        BOOST_TEST(dy <= 1e-10, c.method << " case " << index << ": initial-state gradients differ by " << dy);
        BOOST_TEST_MESSAGE(c.method << " case " << index << ": max relative difference " << dp << " (parameters), "
                                    << dy << " (initial states), loss " << loss);
    }
}
