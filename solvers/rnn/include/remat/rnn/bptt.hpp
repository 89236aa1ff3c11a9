// remat/rnn/bptt.hpp — back-propagation through time of a remat::rnn::sequence_model through remat::run:
// any schedule (binomial, uniform segments, store-all, ...) and any store; the snapshots are hidden (and
// cell) states, and each adjoint step recomputes its step's gates. The loss and the gradient are
// bit-identical for every schedule and store.
#pragma once

#include "remat/cuda/thrust_traits.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/driver/run.hpp"
#include "remat/error.hpp"
#include "remat/rnn/sequence.hpp"
#include "remat/rnn/sequence_model.hpp"
#include "remat/schedule/range.hpp"
#include "remat/store/snapshot_store.hpp"
#include "remat/types.hpp"

#include <thrust/device_vector.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>

namespace remat::rnn {

/// What one gradient computation gave: the loss (the mean squared error of the read-out against the
/// targets) and the driver's report (forward steps, snapshots, peak snapshot bytes, time).
struct bptt_result {
    double loss = 0;
    run_report report;
};

inline namespace REMAT_DENSE_BACKEND_NS {

/// Gradients of a sequence model's loss, with the initial state h_0 = 0 (and c_0 = 0) as PyTorch's
/// default. Holds the state and its adjoint (allocated once); the model must outlive it.
///
///     remat::rnn::bptt<float> bp(model);
///     thrust::device_vector<float> grad(model.parameter_count());
///     remat::host_store store(20);
///     remat::rnn::bptt_result r = bp.gradient(remat::revolve(T, 20), store, data, grad);
template <class T>
class bptt {
public:
    explicit bptt(sequence_model<T>& model)
        : model_(&model), state_(static_cast<std::size_t>(model.state_size()), T(0)),
          adjoint_(static_cast<std::size_t>(model.state_size()), T(0))
    {
    }

    /// grad = dL/dparameters (overwritten) along `plan` (plan.steps() must be data.steps()), keeping
    /// snapshots in `store`. A plan with taped advances (remat::taped_revolve) keeps those steps' tapes
    /// (h_k and the step's gates: state_size() + tape_size() elements each, plan.cost().peak_tapes of them)
    /// and back-propagates through them instead of recomputing; the bits are the same. The tapes stay with
    /// this object for the next call, as the state does (a training loop allocates them once): it keeps
    /// the most any call needed, tapes_kept() of them, until release_tapes(). Throws remat::argument_error for data
    /// that does not fit the model or a gradient of the wrong length, remat::schedule_error for a plan of another
    /// length; failures in a step come as remat::step_error naming it. The adjoint of h_0 is initial_adjoint()
    /// afterwards.
    template <schedule Schedule, store_for_run Store, class A>
    bptt_result gradient(const Schedule& plan, Store& store, const sequence<T>& data, thrust::device_vector<T, A>& grad,
                         const run_options& options = {})
    {
        model_->check(data);
        if (plan.steps() != data.steps())
            throw schedule_error("a schedule of " + std::to_string(plan.steps()) + " steps for a sequence of " +
                                 std::to_string(data.steps()));
        dense::detail::check_same_size("bptt::gradient", "the gradient length", model_->parameter_count(),
                                       static_cast<std::int64_t>(grad.size()));
        dense::blas& b = model_->blas();
        dense::fill(b, dense::view(state_), T(0));
        dense::fill(b, dense::view(adjoint_), T(0));
        dense::fill(b, dense::view(grad), T(0));
        double loss = 0;
        bptt_result r;
        // A step's tape for taped plans: h_k (state_size()) then the step's gates and outputs (tape_size()),
        // recorded and read back by the same kernels as the adjoint step's recomputation, so a taped plan
        // gives the same bits. State-only plans make no tape.
        const auto state = model_->state_size();
        const auto tape = model_->tape_size();
        tapes_handed_ = 0;
        r.report = remat::run(
            plan, store, state_,
            remat::forward_step([&](step_t k, thrust::device_vector<T>& s) { model_->step(k, data, dense::view(s)); }),
            remat::adjoint_step([&](step_t k, thrust::device_vector<T>& s) {
                loss += model_->adjoint_step(k, data, dense::view(std::as_const(s)), dense::view(adjoint_),
                                             dense::view(grad));
            }),
            remat::with_tapes(remat::taped_step([&](step_t k, thrust::device_vector<T>& s, dense::vector_view<T>& all) {
                                  dense::copy(b, dense::view(std::as_const(s)), all.sub(0, state));
                                  model_->record_step(k, data, dense::view(s), all.sub(state, tape));
                              }),
                              remat::tape_adjoint([&](step_t k, dense::vector_view<T>& all) {
                                  loss += model_->backward_step(k, data, dense::vector_view<const T>(all.sub(0, state)),
                                                                dense::vector_view<const T>(all.sub(state, tape)),
                                                                dense::view(adjoint_), dense::view(grad));
                              }),
                              [&] { return next_tape(static_cast<std::size_t>(state + tape)); }),
            options);
        b.synchronize();
        r.loss = loss;
        return r;
    }

    /// The same gradient by plain back-propagation through time: every state and every step's tape (gate
    /// activations, layer outputs) kept, nothing recomputed; memory grows as T (model.kept_per_step()
    /// elements per step). The baseline checkpointing is measured against; its loss and gradient are
    /// bit-identical to gradient()'s. Its buffers stay with this object for the next call, as a caching
    /// allocator (PyTorch's) keeps a training loop's activations' memory: plain_bytes_kept() of them, until
    /// release_plain(). The report counts T forward steps and the kept bytes as its peak_snapshot_bytes;
    /// its forward_seconds are the forward sweep's (with zeroing h_0, the adjoint and the gradient), its
    /// adjoint_seconds the backward sweep's.
    template <class A>
    bptt_result plain_gradient(const sequence<T>& data, thrust::device_vector<T, A>& grad)
    {
        model_->check(data);
        dense::detail::check_same_size("bptt::plain_gradient", "the gradient length", model_->parameter_count(),
                                       static_cast<std::int64_t>(grad.size()));
        const auto steps = static_cast<std::size_t>(data.steps());
        const auto state = static_cast<std::size_t>(model_->state_size());
        const auto tape = static_cast<std::size_t>(model_->tape_size());
        // Allocated (zero-filled) only when the length changes, the old buffers freed first: a training
        // loop's later calls reuse them.
        if (plain_states_.size() != steps * state || plain_tapes_.size() != steps * tape) {
            release_plain();
            plain_states_.resize(steps * state);
            plain_tapes_.resize(steps * tape);
        }
        const thrust::device_vector<T>& states = plain_states_;
        const thrust::device_vector<T>& tapes = plain_tapes_;
        dense::blas& b = model_->blas();
        const auto start = std::chrono::steady_clock::now();
        const dense::vector_view<T> all_states = dense::view(plain_states_);
        const dense::vector_view<T> all_tapes = dense::view(plain_tapes_);
        dense::fill(b, dense::view(state_), T(0));
        dense::fill(b, dense::view(adjoint_), T(0));
        dense::fill(b, dense::view(grad), T(0));
        for (std::size_t k = 0; k < steps; ++k) {
            dense::copy(b, dense::view(std::as_const(state_)),
                        all_states.sub(static_cast<std::int64_t>(k * state), static_cast<std::int64_t>(state)));
            model_->record_step(static_cast<step_t>(k), data, dense::view(state_),
                                all_tapes.sub(static_cast<std::int64_t>(k * tape), static_cast<std::int64_t>(tape)));
        }
        b.synchronize(); // the forward sweep's kernels are done: its time is its own (one wait per call)
        const auto swept = std::chrono::steady_clock::now();
        double loss = 0;
        for (std::size_t k = steps; k-- > 0;)
            loss += model_->backward_step(static_cast<step_t>(k), data,
                                          dense::vector_view<const T>(all_states.sub(
                                              static_cast<std::int64_t>(k * state), static_cast<std::int64_t>(state))),
                                          dense::vector_view<const T>(all_tapes.sub(static_cast<std::int64_t>(k * tape),
                                                                                    static_cast<std::int64_t>(tape))),
                                          dense::view(adjoint_), dense::view(grad));
        b.synchronize();
        const auto done = std::chrono::steady_clock::now();
        bptt_result r;
        r.loss = loss;
        r.report.steps = data.steps();
        r.report.forward_steps = steps; // each step once, none re-run
        r.report.reverse_steps = steps;
        r.report.peak_snapshot_bytes = (states.size() + tapes.size()) * sizeof(T);
        r.report.seconds = std::chrono::duration<double>(done - start).count();
        r.report.user_timed = true; // its two sweeps, timed here
        r.report.forward_seconds = std::chrono::duration<double>(swept - start).count();
        r.report.adjoint_seconds = std::chrono::duration<double>(done - swept).count();
        return r;
    }

    /// The loss by a plain forward sweep (no gradient, nothing kept).
    [[nodiscard]] double loss(const sequence<T>& data)
    {
        model_->check(data);
        dense::fill(model_->blas(), dense::view(state_), T(0));
        double total = 0;
        for (step_t k = 0; k < data.steps(); ++k) {
            model_->step(k, data, dense::view(state_));
            total += model_->loss_term(k, data, dense::view(std::as_const(state_)));
        }
        return total;
    }

    /// dL/dh_0 (and dL/dc_0) of the last gradient().
    [[nodiscard]] const thrust::device_vector<T>& initial_adjoint() const noexcept { return adjoint_; }
    /// The bytes of one snapshot (the state between steps).
    [[nodiscard]] std::uint64_t state_bytes() const noexcept { return state_.size() * sizeof(T); }
    /// The bytes of one step's tape, kept by a taped advance: its input state and the step's gates and
    /// outputs. With state_bytes(), what a byte budget holds as a taped plan's units:
    ///
    ///     remat::taped_units u = remat::taped_units_for_budget(budget, bp.state_bytes(), bp.tape_bytes());
    ///     bp.gradient(remat::taped_revolve(T, u.units, u.tape_units), store, data, grad);
    [[nodiscard]] std::uint64_t tape_bytes() const noexcept
    {
        return static_cast<std::uint64_t>(model_->state_size() + model_->tape_size()) * sizeof(T);
    }
    /// Tapes kept from earlier gradient() calls for the next ones: the most peak_tapes of any call so far.
    [[nodiscard]] std::uint64_t tapes_kept() const noexcept { return tapes_.size(); }
    /// Frees the kept tapes (the next taped gradient() allocates its own again).
    void release_tapes()
    {
        tapes_.clear();
        tapes_.shrink_to_fit();
        tapes_handed_ = 0;
    }
    /// The bytes plain_gradient() keeps for its next call (its states and tapes).
    [[nodiscard]] std::uint64_t plain_bytes_kept() const noexcept
    {
        return (plain_states_.size() + plain_tapes_.size()) * sizeof(T);
    }
    /// Frees plain_gradient()'s buffers (the next call allocates them again).
    void release_plain()
    {
        thrust::device_vector<T>().swap(plain_states_);
        thrust::device_vector<T>().swap(plain_tapes_);
    }

private:
    // The driver asks for plan.cost().peak_tapes tapes before step 0; each call hands out the kept ones
    // first and makes only those beyond them. (A deque: the views handed out stay valid as it grows.)
    dense::vector_view<T> next_tape(std::size_t elements)
    {
        if (tapes_handed_ == tapes_.size())
            tapes_.emplace_back(elements);
        return dense::view(tapes_[tapes_handed_++]);
    }

    sequence_model<T>* model_;
    thrust::device_vector<T> state_;
    thrust::device_vector<T> adjoint_;
    std::deque<thrust::device_vector<T>> tapes_; // kept across gradient() calls
    std::size_t tapes_handed_ = 0;               // handed out in the current call
    thrust::device_vector<T> plain_states_;      // plain_gradient()'s, kept across calls
    thrust::device_vector<T> plain_tapes_;
};

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::rnn
