// An independent reference (label crosscheck): PyTorch's nn.GRU and nn.LSTM (Debian's python3-torch, CPU,
// float64) given the same weights, inputs and targets compute the same loss, parameter gradient and
// dL/dh_0 as remat's model under a binomial checkpointing schedule, to 1e-10 relative. PyTorch is seen
// through build/python-venv (scripts/install-python.sh makes it with Debian's packages visible;
// scripts/install-deps.sh installs python3-torch); where it is missing, the test says so and fails.
#define BOOST_TEST_MODULE rnn_crosscheck
#include <boost/test/unit_test.hpp>

#include "relative_difference.hpp"
#include "rnn_problem.hpp"
#include "scratch_dir.hpp"

#include "remat/schedule/revolve.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace remat;
using json = nlohmann::json;

namespace {

const std::string python = REMAT_PYTHON;
const std::string script = REMAT_TORCH_REFERENCE;

void require_torch()
{
    const std::string check = "'" + python + "' -c 'import torch' > /dev/null 2>&1";
    BOOST_TEST_REQUIRE(std::system(check.c_str()) == 0,
                       "no PyTorch at " << python
                                        << ": scripts/install-deps.sh installs Debian's python3-torch and "
                                           "scripts/install-python.sh <build dir> makes the environment that sees it");
}

struct torch_case {
    rnn::rnn_shape shape;
    std::int64_t batch;
    step_t steps;
    rnn::loss_at loss;
};

} // namespace

BOOST_AUTO_TEST_CASE(loss_and_gradients_agree_with_pytorch)
{
    require_torch();
    std::vector<torch_case> cases;
    for (rnn::cell_kind cell : {rnn::cell_kind::gru, rnn::cell_kind::lstm}) {
        cases.push_back(
            {{.cell = cell, .input = 3, .hidden = 16, .layers = 1, .output = 2}, 5, 60, rnn::loss_at::last_step});
        cases.push_back(
            {{.cell = cell, .input = 2, .hidden = 12, .layers = 3, .output = 1}, 4, 40, rnn::loss_at::every_step});
    }
    test::scratch_dir dir;
    dense::blas b;
    for (std::size_t index = 0; index < cases.size(); ++index) {
        const torch_case& c = cases[index];
        const std::string what = std::string(rnn::name(c.shape.cell)) + " layers " + std::to_string(c.shape.layers);
        const rnn::rnn_layout layout(c.shape);
        rnn::sequence_model<double> model(b, layout, c.batch);
        model.set_parameters(layout.initial_parameters(20 + index));
        const auto data = test::random_sequence<double>(c.shape, c.batch, c.steps, c.loss, 30 + index);

        rnn::bptt<double> bp(model);
        thrust::device_vector<double> grad(static_cast<std::size_t>(model.parameter_count()));
        host_store store(6);
        const rnn::bptt_result r = bp.gradient(revolve(c.steps, 6), store, data, grad);

        json in;
        in["cell"] = rnn::name(c.shape.cell);
        in["input"] = c.shape.input;
        in["hidden"] = c.shape.hidden;
        in["layers"] = c.shape.layers;
        in["output"] = c.shape.output;
        in["batch"] = c.batch;
        in["steps"] = c.steps;
        in["loss"] = c.loss == rnn::loss_at::every_step ? "every_step" : "last_step";
        in["params"] = model.parameters_on_host();
        // The inputs and targets exactly as the model reads them.
        in["inputs"] = test::random_inputs(c.shape, c.batch, c.steps, 30 + index);
        in["targets"] = test::random_targets(c.shape, c.batch, c.steps, c.loss, 30 + index);
        const auto case_path = dir / ("case" + std::to_string(index) + ".json");
        const auto result_path = dir / ("result" + std::to_string(index) + ".json");
        std::ofstream(case_path) << in.dump();
        const std::string command =
            "'" + python + "' '" + script + "' '" + case_path.string() + "' '" + result_path.string() + "'";
        BOOST_TEST_REQUIRE(std::system(command.c_str()) == 0, "the PyTorch reference failed: " << command);
        const json out = json::parse(std::ifstream(result_path));
        const double torch_loss = out.at("loss").get<double>();
        const auto torch_grad = out.at("grad").get<std::vector<double>>();
        const auto torch_initial = out.at("initial").get<std::vector<double>>();
        BOOST_TEST_REQUIRE(torch_grad.size() == static_cast<std::size_t>(model.parameter_count()), what);
        BOOST_TEST(std::abs(r.loss - torch_loss) <= 1e-10 * std::abs(torch_loss),
                   what << ": loss " << r.loss << " against PyTorch's " << torch_loss);
        const double dp = test::max_relative_difference(test::to_host(grad), torch_grad);
        const double dh = test::max_relative_difference(test::to_host(bp.initial_adjoint()), torch_initial);
        BOOST_TEST(dp <= 1e-10, what << ": parameter gradient differs by " << dp << " relative");
        BOOST_TEST(dh <= 1e-10, what << ": dL/dh_0 differs by " << dh << " relative");
        if (c.shape.layers == 1) {
            // A taped step holds no more than PyTorch's autograd keeps of the same step (its GRUCell and
            // LSTMCell both save 7 H B elements with the input state; the LSTM's tape held 8 until its h'
            // was recomputed from o and tanh(c') instead of kept).
            const auto torch_saved = out.at("saved_bytes_per_step").get<std::uint64_t>();
            BOOST_TEST(bp.tape_bytes() <= torch_saved,
                       what << ": a step's tape " << bp.tape_bytes() << " bytes, PyTorch saves " << torch_saved);
        }
        BOOST_TEST_MESSAGE(what << ": PyTorch " << out.at("torch").get<std::string>() << ", loss " << torch_loss
                                << ", gradients within " << dp << " and " << dh << " relative");
    }
}
