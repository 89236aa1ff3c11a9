// Parameter offsets and initial weights of the recurrent sequence model.
#include "remat/rnn/layout.hpp"
#include "remat/detail/checked_math.hpp"
#include "remat/error.hpp"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>

namespace remat::rnn {

const char* name(cell_kind c) noexcept
{
    return c == cell_kind::lstm ? "lstm" : "gru";
}

cell_kind parse_cell(std::string_view text)
{
    if (text == "gru")
        return cell_kind::gru;
    if (text == "lstm")
        return cell_kind::lstm;
    throw argument_error("cell '" + std::string(text) + "' (expected gru or lstm)");
}

std::int64_t gate_count(cell_kind c) noexcept
{
    return c == cell_kind::lstm ? 4 : 3;
}

namespace {

// a + b * c, refusing what does not fit in 63 bits.
std::int64_t add_product(std::int64_t a, std::int64_t b, std::int64_t c)
{
    const std::uint64_t r = remat::detail::checked_add(
        static_cast<std::uint64_t>(a),
        remat::detail::checked_mul(static_cast<std::uint64_t>(b), static_cast<std::uint64_t>(c), "RNN parameter count"),
        "RNN parameter count");
    if (r > static_cast<std::uint64_t>(INT64_MAX))
        throw overflow_error("RNN parameter count " + std::to_string(r) + " exceeds 2^63 - 1");
    return static_cast<std::int64_t>(r);
}

void check_size(const char* what, std::int64_t value)
{
    if (value < 1)
        throw argument_error(std::string("RNN ") + what + " " + std::to_string(value) + " (expected at least 1)");
}

} // namespace

rnn_layout::rnn_layout(rnn_shape shape) : shape_(shape)
{
    check_size("input size", shape_.input);
    check_size("hidden size", shape_.hidden);
    check_size("layer count", shape_.layers);
    check_size("output size", shape_.output);
    if (!(shape_.dropout >= 0 && shape_.dropout < 1))
        throw argument_error("RNN dropout " + std::to_string(shape_.dropout) + " (expected a probability in [0, 1))");
    const std::int64_t rows = add_product(0, gate_count(shape_.cell), shape_.hidden);
    std::int64_t at = 0;
    for (std::int64_t l = 0; l < shape_.layers; ++l) {
        rnn_layer_offsets layer{.in = l == 0 ? shape_.input : shape_.hidden};
        layer.w_ih = at;
        at = add_product(at, rows, layer.in);
        layer.w_hh = at;
        at = add_product(at, rows, shape_.hidden);
        layer.b_ih = at;
        at = add_product(at, rows, 1);
        layer.b_hh = at;
        at = add_product(at, rows, 1);
        layers_.push_back(layer);
    }
    w_out_ = at;
    at = add_product(at, shape_.output, shape_.hidden);
    b_out_ = at;
    parameter_count_ = add_product(at, shape_.output, 1);
}

std::vector<double> rnn_layout::initial_parameters(std::uint64_t seed) const
{
    std::mt19937_64 gen(seed);
    const double bound = 1.0 / std::sqrt(static_cast<double>(shape_.hidden));
    std::vector<double> p(static_cast<std::size_t>(parameter_count_));
    for (double& x : p) // 53 random bits to [0, 1), then to [-bound, bound)
        x = bound * (2.0 * static_cast<double>(gen() >> 11) * 0x1p-53 - 1.0);
    return p;
}

std::vector<double> rnn_layout::chrono_parameters(std::uint64_t seed, double max_timescale) const
{
    if (!(max_timescale >= 2) || !std::isfinite(max_timescale))
        throw argument_error("chrono initialisation: largest timescale " + std::to_string(max_timescale) +
                             " steps (expected a finite number >= 2)");
    std::vector<double> p = initial_parameters(seed);
    std::mt19937_64 gen(seed ^ 0x9e3779b97f4a7c15ULL);
    const std::int64_t h = shape_.hidden;
    // The memory gate's row block: z (1) for GRU, f (1) for LSTM, whose i (0) gets the opposite bias.
    for (const rnn_layer_offsets& layer : layers_)
        for (std::int64_t u = 0; u < h; ++u) {
            const double draw = 1 + (max_timescale - 2) * static_cast<double>(gen() >> 11) * 0x1p-53;
            const double b = std::log(draw);
            p[static_cast<std::size_t>(layer.b_hh + h + u)] = b;
            p[static_cast<std::size_t>(layer.b_ih + h + u)] = 0;
            if (shape_.cell == cell_kind::lstm) {
                p[static_cast<std::size_t>(layer.b_hh + u)] = -b;
                p[static_cast<std::size_t>(layer.b_ih + u)] = 0;
            }
        }
    return p;
}

} // namespace remat::rnn
