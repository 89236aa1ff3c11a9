// The ODE adapter on the GPU (label gpu; skipped without a device): the same discrete solve and gradient
// on the CPU (Thrust CPP, OpenBLAS) and on the GPU (Thrust CUDA, cuBLAS) agree to 1e-12 relative in double.
#define BOOST_TEST_MODULE ode_gpu
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include "backend_gradient.hpp"
#include "relative_difference.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace remat;
using remat::dense::activation;

BOOST_AUTO_TEST_CASE(cpu_and_cuda_gradients_agree)
{
    const std::vector<test::ode_case> cases{
        {.shape = {.dim = 2, .hidden = {50}, .act = activation::tanh}, .batch = 16, .steps = 200, .method = "rk4"},
        {.shape = {.dim = 4, .hidden = {32, 32}, .act = activation::softplus, .time_input = true},
         .batch = 64,
         .steps = 100,
         .method = "dopri5"},
        {.shape = {.dim = 3, .hidden = {8}, .act = activation::tanh}, .batch = 5, .steps = 50, .method = "euler"},
    };
    for (const test::ode_case& c : cases) {
        const test::backend_gradient cpu = test::cpu_gradient(c);
        const test::backend_gradient gpu = test::cuda_gradient(c);
        BOOST_TEST_REQUIRE(cpu.params.size() == gpu.params.size());
        BOOST_TEST(std::isfinite(cpu.loss));
        BOOST_TEST(std::abs(cpu.loss - gpu.loss) <= 1e-12 * std::abs(cpu.loss), c.method);
        BOOST_TEST(test::max_relative_difference(gpu.params, cpu.params) <= 1e-12, c.method);
        BOOST_TEST(test::max_relative_difference(gpu.y0, cpu.y0) <= 1e-12, c.method);
    }
}
