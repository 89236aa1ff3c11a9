// remat/rnn/layout.hpp — the shape of a recurrent sequence model and where each weight lives in its one
// flat parameter vector (the host-side half of remat::rnn::sequence_model).
//
// The model: a stack of GRU or LSTM layers with PyTorch's gate conventions (nn.GRU, nn.LSTM: the same
// gate order, the same two biases per layer, the same dropout between layers), fed a linear input, and a
// linear read-out y = W_out h + b_out of the top layer's hidden state.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace remat::rnn {

/// The recurrent cell. Gates, as PyTorch stacks them in W_ih and W_hh (G = 3 for GRU, 4 for LSTM):
///   gru:  r, z, n     r = s(Gi_r + Gh_r), z = s(Gi_z + Gh_z), n = tanh(Gi_n + r * Gh_n),
///                     h' = (1 - z) n + z h
///   lstm: i, f, g, o  i, f, o = s(Gi + Gh), g = tanh(Gi_g + Gh_g), c' = f c + i g, h' = o tanh(c')
/// with Gi = W_ih x + b_ih and Gh = W_hh h + b_hh.
enum class cell_kind : unsigned char { gru, lstm };

/// "gru" or "lstm".
[[nodiscard]] const char* name(cell_kind c) noexcept;
/// The cell called `text`; remat::argument_error naming it and the choices otherwise.
///
///     remat::rnn::cell_kind c = remat::rnn::parse_cell("lstm");
[[nodiscard]] cell_kind parse_cell(std::string_view text);
/// G: how many gates the cell has (3 or 4).
[[nodiscard]] std::int64_t gate_count(cell_kind c) noexcept;

/// What the network looks like.
///
///     remat::rnn::rnn_shape shape{.cell = remat::rnn::cell_kind::lstm, .input = 2, .hidden = 64, .output = 1};
struct rnn_shape {
    cell_kind cell = cell_kind::gru;
    std::int64_t input = 0;  ///< features per step and batch member
    std::int64_t hidden = 0; ///< H, per layer
    std::int64_t layers = 1; ///< stacked recurrent layers
    std::int64_t output = 0; ///< read-out features
    /// Dropout probability on each layer's output that feeds the next layer (not after the last layer),
    /// as nn.GRU/nn.LSTM's `dropout`; in [0, 1).
    double dropout = 0;
};

/// Where one recurrent layer's parameters are: W_ih (G H x in, column-major), W_hh (G H x H), b_ih and
/// b_hh (G H each), at these offsets. PyTorch's weight_ih_l{l} (G H x in, row-major) has the same
/// elements in transposed order: ours(i, j) == torch[i][j].
struct rnn_layer_offsets {
    std::int64_t in = 0;
    std::int64_t w_ih = 0;
    std::int64_t w_hh = 0;
    std::int64_t b_ih = 0;
    std::int64_t b_hh = 0;
};

/// The layers' offsets, the read-out's, and the parameter count. Throws remat::argument_error for a size
/// below 1 or a dropout outside [0, 1) (naming it), remat::overflow_error when the count does not fit.
///
///     remat::rnn::rnn_layout layout({.cell = remat::rnn::cell_kind::gru, .input = 2, .hidden = 8, .output = 1});
///     layout.parameter_count();   // 3*8*2 + 3*8*8 + 2*3*8 + 1*8 + 1 = 297
class rnn_layout {
public:
    explicit rnn_layout(rnn_shape shape);

    [[nodiscard]] const rnn_shape& shape() const noexcept { return shape_; }
    [[nodiscard]] const std::vector<rnn_layer_offsets>& layers() const noexcept { return layers_; }
    /// The read-out's W_out (output x hidden, column-major) and b_out (output).
    [[nodiscard]] std::int64_t w_out() const noexcept { return w_out_; }
    [[nodiscard]] std::int64_t b_out() const noexcept { return b_out_; }
    [[nodiscard]] std::int64_t parameter_count() const noexcept { return parameter_count_; }
    /// G H: the rows of W_ih and W_hh.
    [[nodiscard]] std::int64_t gate_rows() const noexcept { return gate_count(shape_.cell) * shape_.hidden; }
    /// Hidden-state vectors per layer in the state between steps: 1 (h) for GRU, 2 (h, c) for LSTM.
    [[nodiscard]] std::int64_t state_parts() const noexcept { return shape_.cell == cell_kind::lstm ? 2 : 1; }

    /// Parameters drawn as PyTorch does for nn.GRU/nn.LSTM and nn.Linear (uniform in +-1/sqrt(H), the
    /// read-out in +-1/sqrt(H) too), from a 64-bit Mersenne Twister seeded with `seed` (the same values
    /// on every platform).
    [[nodiscard]] std::vector<double> initial_parameters(std::uint64_t seed) const;
    /// The same, with the memory gates' biases drawn for timescales up to `max_timescale` steps (chrono
    /// initialisation, Tallec & Ollivier 2018): b_hh of the GRU's z and of the LSTM's f is log(u), and of
    /// the LSTM's i -log(u), with u uniform in [1, max_timescale - 1]; b_ih of those gates is 0. Long
    /// memories from the start: what tasks with dependencies over hundreds of steps need. argument_error
    /// for max_timescale < 2.
    ///
    ///     model.set_parameters(layout.chrono_parameters(7, 1000.0));
    [[nodiscard]] std::vector<double> chrono_parameters(std::uint64_t seed, double max_timescale) const;

private:
    rnn_shape shape_;
    std::vector<rnn_layer_offsets> layers_;
    std::int64_t w_out_ = 0;
    std::int64_t b_out_ = 0;
    std::int64_t parameter_count_ = 0;
};

} // namespace remat::rnn
