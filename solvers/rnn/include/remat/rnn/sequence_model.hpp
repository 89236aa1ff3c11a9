// remat/rnn/sequence_model.hpp — a stacked GRU/LSTM sequence model with a hand-written backward pass,
// shaped for back-propagation through time under remat::run: step k maps the hidden state (h, and c for
// LSTM, of every layer) from before input x_k to after it; the adjoint step of k recomputes the gates of
// step k from that state and back-propagates through them and through the read-out's loss term. One
// source for the GPU (nvcc: cuBLAS and CUDA kernels) and the CPU (a Thrust CPU back end and OpenBLAS).
//
// The state between steps (state_size() elements): for each layer l, h_l (H x B), then for LSTM c_l
// (H x B), layer after layer. The tape of one step (what its backward pass reads) is O(layers H B) and
// lives in the model; nothing grows with T.
#pragma once

#include "remat/dense/blas.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/dense/matrix.hpp"
#include "remat/error.hpp"
#include "remat/rnn/detail/cell_columns.hpp"
#include "remat/rnn/detail/cell_kernels.hpp"
#include "remat/rnn/detail/flush_denormals.hpp"
#include "remat/rnn/detail/negligible_update.hpp"
#include "remat/rnn/dropout.hpp"
#include "remat/rnn/layout.hpp"
#include "remat/rnn/sequence.hpp"
#include "remat/types.hpp"

#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/host_vector.h>

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace remat::rnn {

inline namespace REMAT_DENSE_BACKEND_NS {

/// The model for a batch of `batch` sequences: its parameters (device memory; layout: rnn_layout),
/// the scratch and tape of one step, and a reference to the BLAS it runs on (which must outlive it).
/// Allocates only in the constructor. Dropout (shape().dropout > 0) is on while training() is set;
/// its masks are keyed by (dropout_seed(), step, layer). Every step function (step, loss_term, adjoint_step,
/// record_step, backward_step) throws remat::argument_error, before changing anything, for a step k outside
/// 0..T-1 of `data`, data that does not fit the model, or a vector of the wrong length.
///
///     remat::dense::blas b;
///     remat::rnn::rnn_layout layout({.cell = remat::rnn::cell_kind::gru, .input = 2, .hidden = 64, .output = 1});
///     remat::rnn::sequence_model<float> model(b, layout, 32);
///     model.set_parameters(layout.initial_parameters(7));
///     model.step(k, data, state);                       // state: h_k -> h_{k+1}
///     double term = model.adjoint_step(k, data, state, adjoint, grad);   // state == h_k
template <class T>
class sequence_model {
public:
    sequence_model(dense::blas& b, rnn_layout layout, std::int64_t batch) : blas_(&b), layout_(std::move(layout))
    {
        if (batch < 1)
            throw argument_error("RNN batch size " + std::to_string(batch) + " (expected at least 1)");
        batch_ = batch;
        const rnn_shape& s = layout_.shape();
        // Compared before multiplying: a product past 2^63 overflowed (to 0 for hidden 1024 and batch 2^54) and passed.
        if (batch > ((std::int64_t(1) << 34) - 1) / s.hidden) // hidden x batch >= 2^34
            throw argument_error("RNN hidden size " + std::to_string(s.hidden) + " x batch " + std::to_string(batch) +
                                 " (at most 2^34 supported)");
        count_ = s.hidden * batch;
        layer_tape_ = (s.layers > 1 ? 1 : 0) * count_ + gate_tape() * count_ + (output_on_tape() ? count_ : 0);
        params_.assign(static_cast<std::size_t>(layout_.parameter_count()), T(0));
        tape_.assign(static_cast<std::size_t>(layer_tape_ * s.layers), T(0));
        const auto gates = static_cast<std::size_t>(layout_.gate_rows() * batch);
        gi_.assign(gates, T(0));
        gh_.assign(gates, T(0));
        spare_.assign(static_cast<std::size_t>((output_on_tape() ? 1 : 2) * count_), T(0));
        readout_.assign(static_cast<std::size_t>(s.output * batch), T(0));
        if constexpr (!dense::on_gpu)
            bias_sums_.assign(static_cast<std::size_t>(layout_.gate_rows()), T(0));
    }

    [[nodiscard]] const rnn_layout& layout() const noexcept { return layout_; }
    [[nodiscard]] std::int64_t batch() const noexcept { return batch_; }
    [[nodiscard]] dense::blas& blas() const noexcept { return *blas_; }
    /// Elements of the state between steps: layers x (1 or 2) x H x B.
    [[nodiscard]] std::int64_t state_size() const noexcept
    {
        return layout_.shape().layers * layout_.state_parts() * count_;
    }
    [[nodiscard]] std::int64_t parameter_count() const noexcept { return layout_.parameter_count(); }
    /// Elements of the one-step tape and scratch this model holds (for memory reports).
    [[nodiscard]] std::int64_t workspace_size() const noexcept
    {
        return static_cast<std::int64_t>(tape_.size() + gi_.size() + gh_.size() + spare_.size() + readout_.size() +
                                         bias_sums_.size());
    }
    /// Elements plain back-propagation through time keeps per step: the state and every gate activation
    /// and layer output of the step (the tape).
    [[nodiscard]] std::int64_t kept_per_step() const noexcept
    {
        return state_size() + static_cast<std::int64_t>(tape_.size());
    }

    /// The parameters, in device memory.
    [[nodiscard]] thrust::device_vector<T>& parameters() noexcept { return params_; }
    [[nodiscard]] const thrust::device_vector<T>& parameters() const noexcept { return params_; }
    /// Copies host values in (converted to T); argument_error unless there are parameter_count() of them.
    template <class U>
    void set_parameters(std::span<const U> host)
    {
        if (static_cast<std::int64_t>(host.size()) != parameter_count())
            throw argument_error("RNN parameters: got " + std::to_string(host.size()) + " values (expected " +
                                 std::to_string(parameter_count()) + ")");
        thrust::host_vector<T> h(host.begin(), host.end());
        blas_->synchronize(); // nothing may still read the old values
        params_ = h;
    }
    void set_parameters(const std::vector<double>& host) { set_parameters(std::span<const double>(host)); }
    [[nodiscard]] std::vector<T> parameters_on_host() const
    {
        blas_->synchronize();
        thrust::host_vector<T> h = params_;
        return {h.begin(), h.end()};
    }

    /// Dropout on (training) or off (evaluation); off by default.
    void set_training(bool on) noexcept { training_ = on; }
    [[nodiscard]] bool training() const noexcept { return training_; }
    /// The seed of the dropout masks (use a new one for every pass over the data).
    void set_dropout_seed(std::uint64_t seed) noexcept { seed_ = seed; }
    [[nodiscard]] std::uint64_t dropout_seed() const noexcept { return seed_; }

    /// Subnormal floats flushed to zero inside every call of this model (step, loss_term, adjoint_step,
    /// record_step, backward_step) on an x86 CPU, as torch.set_flush_denormal(True) does; off by default.
    /// A BPTT adjoint decays through the subnormal range, where every operation takes a microcode assist:
    /// flushing makes plain BPTT of a 1000-step GRU or LSTM about 3x faster on the CPU (docs/rnn.md; the
    /// backward already skips the weight-gradient products that change no bit there). It changes only
    /// values below the smallest normal number, the same way in every run, so every schedule still gives
    /// the same bits (those of plain BPTT with the same setting). The calling thread's mode is put back on
    /// return; the GPU's kernels and a multi-threaded BLAS's own threads are not affected.
    void set_flush_denormals(bool on) noexcept { flush_denormals_ = on; }
    [[nodiscard]] bool flush_denormals() const noexcept { return flush_denormals_; }

    /// Throws remat::argument_error unless `data` fits this model (features, batch).
    void check(const sequence<T>& data) const
    {
        const sequence_shape& d = data.shape();
        const rnn_shape& s = layout_.shape();
        if (d.input != s.input || d.output != s.output || d.batch != batch_)
            throw argument_error("sequence of " + std::to_string(d.input) + " input features, " +
                                 std::to_string(d.output) + " targets, batch " + std::to_string(d.batch) +
                                 " does not fit the model (" + std::to_string(s.input) + " input features, " +
                                 std::to_string(s.output) + " outputs, batch " + std::to_string(batch_) + ")");
    }

    /// state <- h_{k+1} (and c) from state == h_k: step k with input x_k of `data`.
    void step(step_t k, const sequence<T>& data, dense::vector_view<T> state)
    {
        check_state("sequence_model::step", state.size);
        const detail::flush_denormals_scope flush(flush_denormals_);
        run_step(k, data, state.data, state.data, nullptr);
    }

    /// The loss term after step k (0 if the loss has none there), from state == h_{k+1}.
    [[nodiscard]] double loss_term(step_t k, const sequence<T>& data, dense::vector_view<const T> state)
    {
        check_state("sequence_model::loss_term", state.size);
        check_step(k, data);
        if (!data.has_target(k))
            return 0;
        const std::int64_t top = (layout_.shape().layers - 1) * layout_.state_parts() * count_;
        const detail::flush_denormals_scope flush(flush_denormals_);
        return read_out(k, data, state.data + top, false);
    }

    /// The adjoint of step k, with state == h_k (unchanged): recomputes the step's gates, adds the loss
    /// term after step k to the adjoint of h_{k+1} (dL/dh_{k+1} in `adjoint` on entry, dL/dh_k on
    /// return), and adds the step's parameter gradient to `grad`. Returns the loss term.
    double adjoint_step(step_t k, const sequence<T>& data, dense::vector_view<const T> state,
                        dense::vector_view<T> adjoint, dense::vector_view<T> grad)
    {
        check_state("sequence_model::adjoint_step", state.size);
        const detail::flush_denormals_scope flush(flush_denormals_);
        run_step(k, data, state.data, nullptr, raw(tape_));
        return backward(k, data, state.data, raw(tape_), adjoint, grad);
    }

    /// Elements of one step's tape: what its backward pass reads besides the input state. Per layer its
    /// dropped input (layers above the first), its gates (GRU: r, z, n, W_hn h + b_hn; LSTM: i, f, g, o,
    /// tanh(c'), as PyTorch's LSTMCell saves them) and, for the GRU, its output h'. The LSTM's h' = o tanh(c')
    /// is one product of two taped values: the backward pass recomputes it, to the bit, where it needs it
    /// (the read-out), so an LSTM tape with its input state is 7 H B elements a layer, not 8.
    [[nodiscard]] std::int64_t tape_size() const noexcept { return static_cast<std::int64_t>(tape_.size()); }
    /// Plain back-propagation through time, which keeps every step's tape instead of recomputing it (for
    /// comparisons: memory grows with T): step k as step() does, also writing its tape to `tape`.
    ///
    ///     model.record_step(k, data, state, tapes.sub(k * model.tape_size(), model.tape_size()));
    void record_step(step_t k, const sequence<T>& data, dense::vector_view<T> state, dense::vector_view<T> tape)
    {
        check_state("sequence_model::record_step", state.size);
        dense::detail::check_same_size("sequence_model::record_step", "the tape length", tape_size(), tape.size);
        const detail::flush_denormals_scope flush(flush_denormals_);
        run_step(k, data, state.data, state.data, tape.data);
    }
    /// The adjoint of step k from its recorded tape, with state == h_k: adjoint_step() without the
    /// recomputation. Returns the loss term.
    double backward_step(step_t k, const sequence<T>& data, dense::vector_view<const T> state,
                         dense::vector_view<const T> tape, dense::vector_view<T> adjoint, dense::vector_view<T> grad)
    {
        check_state("sequence_model::backward_step", state.size);
        dense::detail::check_same_size("sequence_model::backward_step", "the tape length", tape_size(), tape.size);
        check_step(k, data);
        const detail::flush_denormals_scope flush(flush_denormals_);
        return backward(k, data, state.data, tape.data, adjoint, grad);
    }

private:
    [[nodiscard]] std::int64_t gate_tape() const noexcept { return layout_.shape().cell == cell_kind::gru ? 4 : 5; }
    // Whether a layer's output h' is on the tape (the GRU's: (1 - z) n + z h, a sum whose recomputation could
    // round otherwise where a compiler contracts it) or recomputed from it (the LSTM's o tanh(c'): a single
    // product, the same bits wherever it runs).
    [[nodiscard]] bool output_on_tape() const noexcept { return layout_.shape().cell == cell_kind::gru; }
    [[nodiscard]] bool dropping() const noexcept { return training_ && layout_.shape().dropout > 0; }
    static T* raw(thrust::device_vector<T>& v) noexcept { return thrust::raw_pointer_cast(v.data()); }
    [[nodiscard]] const T* param(std::int64_t offset) const noexcept
    {
        return thrust::raw_pointer_cast(params_.data()) + offset;
    }
    [[nodiscard]] dense::matrix_view<const T> weights(std::int64_t offset, std::int64_t rows, std::int64_t cols) const
    {
        return dense::dense_matrix(param(offset), rows, cols);
    }
    [[nodiscard]] dense::matrix_view<const T> hidden_matrix(const T* h) const noexcept
    {
        return dense::dense_matrix(h, layout_.shape().hidden, batch_);
    }
    // Layer l's part of a tape: [its dropped input (l > 0, when layers > 1)] [gates] [GRU: its output h'].
    template <class P>
    P* layer_tape(P* tape, std::int64_t l) const noexcept
    {
        return tape + l * layer_tape_;
    }
    template <class P>
    P* layer_gates(P* tape, std::int64_t l) const noexcept
    {
        return layer_tape(tape, l) + (l > 0 ? count_ : 0);
    }
    template <class P>
    P* layer_output(P* tape, std::int64_t l) const noexcept // (output_on_tape() only)
    {
        return layer_tape(tape, l) + layer_tape_ - count_;
    }
    // Where layer l's new h' goes: the tape (GRU), the state when it is wanted, else scratch (an LSTM step
    // recomputed for its tape alone; the layer above copies it onto its own part of the tape first).
    T* output_of(T* tape, T* out, std::int64_t l) noexcept
    {
        if (tape && output_on_tape())
            return layer_output(tape, l);
        return out ? out + l * layout_.state_parts() * count_ : raw(spare_) + count_;
    }
    // Every call that reads step k's input or target: `data` fits, and k is one of its steps.
    void check_step(step_t k, const sequence<T>& data) const
    {
        check(data);
        if (k < 0 || k >= data.steps())
            throw argument_error("RNN step " + std::to_string(k) + " outside the sequence's steps 0.." +
                                 std::to_string(data.steps() - 1));
    }
    void check_state(const char* call, std::int64_t size) const
    {
        dense::detail::check_same_size(call, "the state length", state_size(), size);
    }
    [[nodiscard]] detail::dropout_apply<T> dropout(T* x, step_t k, std::int64_t l) const noexcept
    {
        const double p = layout_.shape().dropout;
        return {x, seed_, k, l, p, static_cast<T>(1 / (1 - p))};
    }

    // One of the cell functors over a layer-step's H x B elements: on the GPU one thread per element; on
    // the CPU a pass per batch column (detail/cell_columns.hpp: the transcendentals vectorised).
    template <class Cell>
    void gates_pass(const Cell& f)
    {
        if constexpr (dense::on_gpu)
            dense::for_each_index(*blas_, count_, f);
        else
            dense::for_each_index(*blas_, batch_, detail::by_columns(f));
    }

    // Step k from `in` == h_k. Without a tape: into `out` == `in` itself. With one: the gates and layer
    // outputs onto it, and (when `out` is given) h_{k+1} and c_{k+1} into `out` (which may be `in`).
    void run_step(step_t k, const sequence<T>& data, const T* in, T* out, T* tape)
    {
        check_step(k, data);
        const rnn_shape& s = layout_.shape();
        const std::int64_t parts = layout_.state_parts();
        const std::int64_t rows = layout_.gate_rows();
        const detail::gate_index at{s.hidden, rows};
        for (std::int64_t l = 0; l < s.layers; ++l) {
            const rnn_layer_offsets& layer = layout_.layers()[static_cast<std::size_t>(l)];
            const T* h = in + l * parts * count_;
            dense::matrix_view<const T> x = data.input(k);
            if (l > 0) {
                // The layer below's new output, through dropout: into this layer's tape, or scratch.
                const T* below = output_of(tape, out, l - 1);
                T* dropped = tape ? layer_tape(tape, l) : raw(spare_);
                if (dropping() || tape) {
                    dense::copy(*blas_, dense::vector_view<const T>{below, count_},
                                dense::vector_view<T>{dropped, count_});
                    if (dropping())
                        dense::for_each_index(*blas_, count_, dropout(dropped, k, l - 1));
                    below = dropped;
                }
                x = hidden_matrix(below);
            }
            dense::gemm(*blas_, dense::op::none, dense::op::none, T(1), weights(layer.w_ih, rows, layer.in), x, T(0),
                        dense::dense_matrix(raw(gi_), rows, batch_));
            dense::gemm(*blas_, dense::op::none, dense::op::none, T(1), weights(layer.w_hh, rows, s.hidden),
                        hidden_matrix(h), T(0), dense::dense_matrix(raw(gh_), rows, batch_));
            T* gates = tape ? layer_gates(tape, l) : nullptr;
            T* h_out = output_of(tape, out, l);
            if (s.cell == cell_kind::gru) {
                gates_pass(detail::gru_forward<T>{raw(gi_), raw(gh_), param(layer.b_ih), param(layer.b_hh), h, h_out,
                                                  gates, count_, at});
            } else {
                // c' goes to the state, or nowhere when only the tape is wanted (tanh(c') is on it).
                T* c_out = out ? out + l * parts * count_ + count_ : raw(spare_);
                gates_pass(detail::lstm_forward<T>{raw(gi_), raw(gh_), param(layer.b_ih), param(layer.b_hh), h + count_,
                                                   h_out, c_out, gates, count_, at});
            }
            if (tape && out && output_on_tape())
                dense::copy(*blas_, dense::vector_view<const T>{h_out, count_},
                            dense::vector_view<T>{out + l * parts * count_, count_});
        }
    }

    // The adjoint of step k from its tape, with `state` == h_k.
    double backward(step_t k, const sequence<T>& data, const T* state, const T* tape, dense::vector_view<T> adjoint,
                    dense::vector_view<T> grad)
    {
        check_state("sequence_model: the adjoint", adjoint.size);
        dense::detail::check_same_size("sequence_model: the adjoint step", "the gradient length", parameter_count(),
                                       grad.size);
        const rnn_shape& s = layout_.shape();
        const std::int64_t parts = layout_.state_parts();
        const std::int64_t rows = layout_.gate_rows();
        const detail::gate_index at{s.hidden, rows};
        double term = 0;
        if (data.has_target(k)) {
            // dy = dL/dy, then W_out, b_out and the top layer's dh'.
            const T* top = top_output(tape);
            term = read_out(k, data, top, true);
            const dense::matrix_view<const T> dy = dense::dense_matrix<const T>(raw(readout_), s.output, batch_);
            dense::gemm(*blas_, dense::op::none, dense::op::transpose, T(1), dy, hidden_matrix(top), T(1),
                        dense::dense_matrix(grad.data + layout_.w_out(), s.output, s.hidden));
            dense::row_sums(*blas_, dy, grad.sub(layout_.b_out(), s.output), T(1));
            dense::gemm(*blas_, dense::op::transpose, dense::op::none, T(1),
                        weights(layout_.w_out(), s.output, s.hidden), dy, T(1),
                        dense::dense_matrix(adjoint.data + (s.layers - 1) * parts * count_, s.hidden, batch_));
        }
        for (std::int64_t l = s.layers; l-- > 0;) {
            const rnn_layer_offsets& layer = layout_.layers()[static_cast<std::size_t>(l)];
            const T* h = state + l * parts * count_;
            T* dh = adjoint.data + l * parts * count_;
            const T* gates = layer_gates(tape, l);
            T* dgi = raw(gi_);
            T* dgh = raw(gh_);
            if (s.cell == cell_kind::gru) {
                gates_pass(detail::gru_backward<T>{gates, h, dh, dgi, dgh, count_, at});
            } else {
                dgh = dgi;
                gates_pass(detail::lstm_backward<T>{gates, h + count_, dh, dh + count_, dgi, count_, at});
            }
            const dense::matrix_view<const T> dgi_m = dense::dense_matrix<const T>(dgi, rows, batch_);
            const dense::matrix_view<const T> dgh_m = dense::dense_matrix<const T>(dgh, rows, batch_);
            const dense::matrix_view<const T> x = l == 0 ? data.input(k) : hidden_matrix(layer_tape(tape, l));
            add_weight_gradient(dgi_m, x, dense::dense_matrix(grad.data + layer.w_ih, rows, layer.in));
            add_weight_gradient(dgh_m, hidden_matrix(h), dense::dense_matrix(grad.data + layer.w_hh, rows, s.hidden));
            add_bias_gradients(dgi, dgh, grad.data + layer.b_ih, grad.data + layer.b_hh);
            // dL/dh_k of this layer: the GRU's direct part z dh' plus W_hh^T dGh (the LSTM has no direct part).
            dense::gemm(*blas_, dense::op::transpose, dense::op::none, T(1), weights(layer.w_hh, rows, s.hidden), dgh_m,
                        s.cell == cell_kind::gru ? T(1) : T(0), dense::dense_matrix(dh, s.hidden, batch_));
            if (l > 0) {
                // The layer below's output fed this layer through dropout: its gradient gets W_ih^T dGi, masked.
                T* dx = raw(spare_);
                dense::gemm(*blas_, dense::op::transpose, dense::op::none, T(1), weights(layer.w_ih, rows, layer.in),
                            dgi_m, T(0), dense::dense_matrix(dx, s.hidden, batch_));
                if (dropping())
                    dense::for_each_index(*blas_, count_, dropout(dx, k, l - 1));
                dense::axpy(*blas_, T(1), dense::vector_view<const T>{dx, count_},
                            dense::vector_view<T>{adjoint.data + (l - 1) * parts * count_, count_});
            }
        }
        return term;
    }

    // dW += dG X^T, a weight's gradient. On the CPU skipped where it provably changes no bit of dW
    // (detail/negligible_update.hpp): late in a long sequence the adjoint has decayed far below dW, and through
    // the subnormal range, where this product is most of the step's time (a microcode assist per instruction).
    void add_weight_gradient(dense::matrix_view<const T> dg, dense::matrix_view<const T> x, dense::matrix_view<T> dw)
    {
        if constexpr (!dense::on_gpu) {
            // The full test scans dW; it is tried only once the gate gradient's first column is below eps^2
            // (a cheap sign that the adjoint has decayed; the test alone decides).
            const T gate = std::numeric_limits<T>::epsilon() * std::numeric_limits<T>::epsilon();
            if (detail::max_abs_bits(dg.data, dg.rows) <= detail::abs_bits(gate) && dg.ld == dg.rows &&
                x.ld == x.rows && dw.ld == dw.rows &&
                detail::product_is_negligible(dg.data, dg.rows * dg.cols, x.data, x.rows * x.cols, dg.cols, dw.data,
                                              dw.rows * dw.cols))
                return;
        }
        dense::gemm(*blas_, dense::op::none, dense::op::transpose, T(1), dg, x, T(1), dw);
    }

    // db_ih += dGi 1 and db_hh += dGh 1 over the batch. On the CPU by columns (row_sums_by_columns: the bits of
    // dense::row_sums, vectorised), and once for the LSTM, whose dGi and dGh are one matrix.
    void add_bias_gradients(const T* dgi, const T* dgh, T* db_ih, T* db_hh)
    {
        const std::int64_t rows = layout_.gate_rows();
        if constexpr (dense::on_gpu) {
            dense::row_sums(*blas_, dense::dense_matrix<const T>(dgi, rows, batch_), dense::vector_view<T>{db_ih, rows},
                            T(1));
            dense::row_sums(*blas_, dense::dense_matrix<const T>(dgh, rows, batch_), dense::vector_view<T>{db_hh, rows},
                            T(1));
        } else {
            T* sums = raw(bias_sums_);
            detail::row_sums_by_columns(dgi, rows, batch_, sums);
            detail::add_sums(sums, rows, db_ih);
            if (dgh != dgi)
                detail::row_sums_by_columns(dgh, rows, batch_, sums);
            detail::add_sums(sums, rows, db_hh);
        }
    }

    // The top layer's h' of a taped step: on the tape (GRU), or o tanh(c') from it into scratch (LSTM; the
    // same product as the forward pass's, so the same bits).
    const T* top_output(const T* tape)
    {
        const std::int64_t top = layout_.shape().layers - 1;
        if (output_on_tape())
            return layer_output(tape, top);
        const T* gates = layer_gates(tape, top);
        T* h = raw(spare_) + count_;
        dense::for_each_index(*blas_, count_, detail::lstm_output<T>{gates, h, count_});
        return h;
    }

    // y = W_out h + b_out against the target after step k: the term (y - t)^2 summed / N; with `gradient`,
    // readout_ holds dL/dy afterwards.
    double read_out(step_t k, const sequence<T>& data, const T* h, bool gradient)
    {
        const rnn_shape& s = layout_.shape();
        const dense::matrix_view<T> y = dense::dense_matrix(raw(readout_), s.output, batch_);
        dense::gemm(*blas_, dense::op::none, dense::op::none, T(1), weights(layout_.w_out(), s.output, s.hidden),
                    hidden_matrix(h), T(0), y);
        dense::add_bias(*blas_, y, dense::vector_view<const T>{param(layout_.b_out()), s.output});
        const T* target = data.target(k).data;
        const double n = data.loss_terms();
        const double sum = dense::transform_reduce(*blas_, y.size(), detail::squared_error<T>{y.data, target}, 0.0,
                                                   thrust::plus<double>{});
        if (gradient)
            dense::for_each_index(*blas_, y.size(),
                                  detail::squared_error_gradient<T>{y.data, target, static_cast<T>(2 / n)});
        return sum / n;
    }

    dense::blas* blas_;
    rnn_layout layout_;
    std::int64_t batch_ = 0;
    std::int64_t count_ = 0;      // H x B
    std::int64_t layer_tape_ = 0; // elements of one layer's tape
    bool training_ = false;
    bool flush_denormals_ = false;
    std::uint64_t seed_ = 0;
    thrust::device_vector<T> params_;
    thrust::device_vector<T> tape_;      // the recorded step, layer after layer
    thrust::device_vector<T> gi_;        // W_ih x, then dGi
    thrust::device_vector<T> gh_;        // W_hh h, then dGh
    thrust::device_vector<T> spare_;     // a dropped input, an LSTM c' not kept, or dx; (LSTM) then an h' not kept
    thrust::device_vector<T> readout_;   // y, then dL/dy
    thrust::device_vector<T> bias_sums_; // (CPU) a layer's dG summed over the batch
};

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::rnn
