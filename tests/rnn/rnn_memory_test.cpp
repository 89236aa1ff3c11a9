// A sequence of 10^5 steps in bounded memory: an LSTM's back-propagation through time with 20 snapshot
// slots raises the process's peak resident set by a small fraction of what keeping every state would
// take (which is checked against), with the gradient finite and the loss that of a plain forward sweep.
#define BOOST_TEST_MODULE rnn_memory
#include <boost/test/unit_test.hpp>

#include "rnn_problem.hpp"

#include "remat/schedule/revolve.hpp"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>

using namespace remat;

namespace {

// The process's peak resident set (VmHWM), in bytes.
std::uint64_t peak_rss()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0)
            return std::stoull(line.substr(6)) * 1024;
    BOOST_FAIL("no VmHWM in /proc/self/status");
    return 0;
}

} // namespace

BOOST_AUTO_TEST_CASE(hundred_thousand_steps_in_bounded_memory)
{
    const step_t steps = 100000;
    const slot_t slots = 20;
    const rnn::rnn_shape shape{.cell = rnn::cell_kind::lstm, .input = 2, .hidden = 48, .output = 1};
    const rnn::rnn_layout layout(shape);
    dense::blas b;
    rnn::sequence_model<float> model(b, layout, 4);
    model.set_parameters(layout.initial_parameters(1));
    const auto data = test::random_sequence<float>(shape, 4, steps, rnn::loss_at::last_step, 2);
    rnn::bptt<float> bp(model);
    thrust::device_vector<float> grad(static_cast<std::size_t>(model.parameter_count()));
    host_store store(slots);
    const double forward_loss = bp.loss(data);

    const std::uint64_t before = peak_rss();
    const rnn::bptt_result r = bp.gradient(revolve(steps, slots), store, data, grad);
    const std::uint64_t growth = peak_rss() - before;

    // Plain BPTT keeps every state and the gates of every step; store-all keeps every state.
    const std::uint64_t state_bytes = bp.state_bytes();
    const std::uint64_t store_all_bytes = state_bytes * static_cast<std::uint64_t>(steps);
    const std::uint64_t plain_bytes =
        static_cast<std::uint64_t>(model.kept_per_step()) * sizeof(float) * static_cast<std::uint64_t>(steps);
    BOOST_TEST_MESSAGE("peak RSS grew by " << growth << " bytes; store-all needs " << store_all_bytes << ", plain BPTT "
                                           << plain_bytes);
    BOOST_TEST(r.report.peak_snapshot_bytes == static_cast<std::uint64_t>(slots) * state_bytes);
    BOOST_TEST(growth < store_all_bytes / 10);
    BOOST_TEST(r.report.forward_steps >
               4 * static_cast<std::uint64_t>(steps)); // about 5.3 sweeps with 20 slots (README)
    BOOST_TEST(std::abs(r.loss - forward_loss) <= 1e-6 * forward_loss);
    double norm = 0;
    for (double g : test::to_host(grad))
        norm += g * g;
    BOOST_TEST((std::isfinite(norm) && norm > 0));
}
