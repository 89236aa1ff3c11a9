// The RNN adapter on the GPU (label gpu; skipped without a device): GRU and LSTM, stacked, with dropout,
// the loss after every step or only the last. The CPU (Thrust CPP, OpenBLAS) and the GPU (Thrust CUDA,
// cuBLAS) agree to 1e-12 relative in double; on each back end revolve through a host level (pinned slots
// on the GPU) and through the device level gives store-all's bits.
#define BOOST_TEST_MODULE rnn_gpu
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include "backend_gradient.hpp"
#include "relative_difference.hpp"

#include <cmath>
#include <string>
#include <vector>

using namespace remat;

BOOST_AUTO_TEST_CASE(cpu_and_cuda_gradients_agree_and_checkpointing_is_exact_on_both)
{
    const std::vector<test::rnn_case> cases{
        {.shape = {.cell = rnn::cell_kind::gru, .input = 3, .hidden = 32, .layers = 2, .output = 2, .dropout = 0.3},
         .batch = 16,
         .steps = 120,
         .slots = 5},
        {.shape = {.cell = rnn::cell_kind::lstm, .input = 2, .hidden = 48, .layers = 2, .output = 1, .dropout = 0.2},
         .batch = 8,
         .steps = 90,
         .loss = rnn::loss_at::last_step,
         .slots = 4},
        {.shape = {.cell = rnn::cell_kind::lstm, .input = 4, .hidden = 16, .layers = 1, .output = 3},
         .batch = 5,
         .steps = 40,
         .slots = 2},
    };
    for (const test::rnn_case& c : cases) {
        const std::string what = std::string(rnn::name(c.shape.cell)) + " T=" + std::to_string(c.steps);
        const test::rnn_backend_gradient cpu = test::cpu_rnn_gradient(c);
        const test::rnn_backend_gradient gpu = test::cuda_rnn_gradient(c);
        BOOST_TEST_REQUIRE(cpu.params.size() == gpu.params.size());
        BOOST_TEST_REQUIRE(std::isfinite(cpu.loss), what);
        BOOST_TEST(std::abs(cpu.loss - gpu.loss) <= 1e-12 * std::abs(cpu.loss), what);
        BOOST_TEST(test::max_relative_difference(gpu.params, cpu.params) <= 1e-12, what);
        BOOST_TEST(test::max_relative_difference(gpu.initial, cpu.initial) <= 1e-12, what);
        BOOST_TEST(cpu.revolve_host_identical, what << " CPU, host level");
        BOOST_TEST(cpu.revolve_device_identical, what << " CPU, device level");
        BOOST_TEST(gpu.revolve_host_identical, what << " GPU, pinned host level");
        BOOST_TEST(gpu.revolve_device_identical, what << " GPU, device level");
        BOOST_TEST(gpu.forward_steps > static_cast<std::uint64_t>(c.steps), what); // it did recompute
    }
}
