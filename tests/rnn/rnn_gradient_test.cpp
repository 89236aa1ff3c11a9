// The RNN adapter's gradients against central finite differences (double, Thrust CPP back end): GRU and
// LSTM cells, one and two layers, the loss after the last step or after every step, dropout on (its
// masks are a fixed function of (seed, step, layer), so the loss stays a smooth function of the weights).
#define BOOST_TEST_MODULE rnn_gradient
#include <boost/test/unit_test.hpp>

#include "rnn_problem.hpp"

#include <cmath>
#include <string>
#include <vector>

using namespace remat;

namespace {

struct fd_case {
    rnn::rnn_shape shape;
    std::int64_t batch;
    step_t steps;
    rnn::loss_at loss;
};

std::string describe(const fd_case& c)
{
    return std::string(rnn::name(c.shape.cell)) + " layers " + std::to_string(c.shape.layers) + " dropout " +
           std::to_string(c.shape.dropout) + (c.loss == rnn::loss_at::every_step ? " every step" : " last step");
}

// The loss at parameters p (the model's own are restored afterwards by the caller).
double loss_at(rnn::sequence_model<double>& model, const rnn::sequence<double>& data, const std::vector<double>& p)
{
    model.set_parameters(p);
    rnn::bptt<double> bp(model);
    return bp.loss(data);
}

} // namespace

BOOST_AUTO_TEST_CASE(gradients_match_central_differences)
{
    std::vector<fd_case> cases;
    for (rnn::cell_kind cell : {rnn::cell_kind::gru, rnn::cell_kind::lstm}) {
        cases.push_back(
            {{.cell = cell, .input = 3, .hidden = 5, .layers = 1, .output = 2}, 4, 7, rnn::loss_at::last_step});
        cases.push_back(
            {{.cell = cell, .input = 2, .hidden = 4, .layers = 2, .output = 1}, 3, 6, rnn::loss_at::every_step});
        cases.push_back({{.cell = cell, .input = 2, .hidden = 6, .layers = 3, .output = 2, .dropout = 0.3},
                         3,
                         5,
                         rnn::loss_at::every_step});
    }
    dense::blas b;
    std::uint64_t seed = 10;
    for (const fd_case& c : cases) {
        const rnn::rnn_layout layout(c.shape);
        rnn::sequence_model<double> model(b, layout, c.batch);
        const std::vector<double> p0 = layout.initial_parameters(seed++);
        model.set_parameters(p0);
        model.set_training(true);
        model.set_dropout_seed(seed);
        const auto data = test::random_sequence<double>(c.shape, c.batch, c.steps, c.loss, seed++);
        const test::rnn_gradient g = test::store_all_gradient(model, data);
        // The reverse sweep sums the loss terms from the last step back: the forward loss up to rounding.
        BOOST_TEST(std::abs(g.loss - loss_at(model, data, p0)) <= 1e-14 * g.loss, describe(c));
        // Every parameter by central differences (step 1e-6: truncation ~1e-12, rounding ~1e-10).
        double worst = 0;
        double scale = 0;
        for (std::size_t i = 0; i < p0.size(); ++i) {
            std::vector<double> p = p0;
            const double h = 1e-6;
            p[i] = p0[i] + h;
            const double up = loss_at(model, data, p);
            p[i] = p0[i] - h;
            const double down = loss_at(model, data, p);
            const double fd = (up - down) / (2 * h);
            worst = std::max(worst, std::abs(fd - g.params[i]));
            scale = std::max(scale, std::abs(g.params[i]));
        }
        BOOST_TEST(scale > 1e-4, describe(c)); // the gradient is not trivially zero
        BOOST_TEST(worst <= 1e-7 * scale, describe(c) << ": worst difference " << worst << " of " << scale);
        model.set_parameters(p0);
    }
}

BOOST_AUTO_TEST_CASE(dropout_masks_depend_on_seed_step_and_layer_only)
{
    const double p = 0.3;
    std::int64_t kept = 0;
    std::int64_t differ_step = 0;
    std::int64_t differ_layer = 0;
    std::int64_t differ_seed = 0;
    const std::int64_t n = 200000;
    for (std::int64_t e = 0; e < n; ++e) {
        const bool k = rnn::dropout_keeps({.seed = 7, .step = 1000000007, .layer = 2}, e, p);
        BOOST_TEST_REQUIRE(k == rnn::dropout_keeps({.seed = 7, .step = 1000000007, .layer = 2}, e, p));
        kept += k;
        differ_step += k != rnn::dropout_keeps({.seed = 7, .step = 1000000008, .layer = 2}, e, p);
        differ_layer += k != rnn::dropout_keeps({.seed = 7, .step = 1000000007, .layer = 1}, e, p);
        differ_seed += k != rnn::dropout_keeps({.seed = 8, .step = 1000000007, .layer = 2}, e, p);
    }
    // Kept with probability 0.7 (5 standard deviations: 0.001); independent masks differ in 2 p (1 - p) = 0.42.
    BOOST_TEST(std::abs(static_cast<double>(kept) / n - 0.7) < 0.005);
    for (std::int64_t d : {differ_step, differ_layer, differ_seed})
        BOOST_TEST(std::abs(static_cast<double>(d) / n - 0.42) < 0.01);
    // Steps beyond 2^32 are distinct keys too.
    std::int64_t differ_high = 0;
    for (std::int64_t e = 0; e < 1000; ++e)
        differ_high += rnn::dropout_keeps({.seed = 7, .step = 5, .layer = 0}, e, p) !=
                       rnn::dropout_keeps({.seed = 7, .step = 5 + (std::int64_t(1) << 32), .layer = 0}, e, p);
    BOOST_TEST(differ_high > 300);
}
