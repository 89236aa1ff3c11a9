// The adding problem's training loop, compiled once per back end (see training.hpp): Adam on the
// gradient of back-propagation through time under remat::run, the schedule and store chosen by the
// options, a held-out batch every few iterations, and at the end one gradient compared bit for bit with
// a store-everything run.
#pragma once

#include "adding_problem.hpp"
#include "training.hpp"

#include "remat/cuda/device_store.hpp"
#include "remat/cuda/host_level.hpp"
#include "remat/cuda/thrust_traits.hpp"
#include "remat/dense/adam.hpp"
#include "remat/dense/blas.hpp"
#include "remat/dense/elementwise.hpp"
#include "remat/error.hpp"
#include "remat/rnn/bptt.hpp"
#include "remat/rnn/sequence_model.hpp"
#include "remat/schedule/any_schedule.hpp"
#include "remat/schedule/budget.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/schedule/taped_revolve.hpp"
#include "remat/schedule/taped_uniform.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"

#include <thrust/device_vector.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <variant>

namespace remat::examples {

inline namespace REMAT_DENSE_BACKEND_NS {

namespace training_detail {

// `slots`: units of one state; the taped kinds share them between snapshots and tapes of `tape_units`.
inline any_schedule make_schedule(const std::string& kind, step_t steps, slot_t slots, slot_t tape_units)
{
    if (kind == "revolve")
        return revolve(steps, slots);
    if (kind == "uniform")
        return uniform::fit(steps, slots);
    if (kind == "store-all")
        return store_all(steps, steps);
    if (kind == "taped")
        return taped_revolve(steps, slots, tape_units);
    if (kind == "checkpoint-sequential")
        return taped_uniform::fit(steps, slots, tape_units);
    throw argument_error("schedule '" + kind +
                         "' (expected revolve, uniform, store-all, taped or checkpoint-sequential)");
}

template <class T>
rnn::sequence<T> to_sequence(const adding_batch& b, std::int64_t steps, std::int64_t batch)
{
    return rnn::sequence<T>({.input = 2, .output = 1, .batch = batch, .steps = steps}, b.inputs, b.targets);
}

} // namespace training_detail

template <class T>
training_result train(const training_options& o, const training_progress& progress)
{
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    if (o.steps < 2)
        throw argument_error("sequence length " + std::to_string(o.steps) + " (the adding problem needs at least 2)");
    const rnn::rnn_layout layout(
        {.cell = o.cell, .input = 2, .hidden = o.hidden, .layers = o.layers, .output = 1, .dropout = o.dropout});
    dense::blas b;
    rnn::sequence_model<T> model(b, layout, o.batch);
    model.set_parameters(layout.chrono_parameters(o.seed, static_cast<double>(o.steps)));
    rnn::bptt<T> bp(model);
    training_result result;
    result.blas = dense::blas::library();
    result.state_bytes = bp.state_bytes();
    result.store_all_bytes = result.state_bytes * static_cast<std::uint64_t>(o.steps);
    result.plain_bptt_bytes =
        static_cast<std::uint64_t>(model.kept_per_step()) * sizeof(T) * static_cast<std::uint64_t>(o.steps);

    // Slots: given, or what the budget buys (remat::capacity_error below one state), or 2 sqrt(T).
    slot_t slots = o.slots;
    if (o.budget > 0)
        slots = plan_for_budget(o.steps, o.budget, result.state_bytes).slots;
    if (slots == 0)
        slots = static_cast<slot_t>(2 * std::ceil(std::sqrt(static_cast<double>(o.steps))));
    if (o.schedule == "store-all") {
        slots = o.steps;
        // It keeps every state but the last: a budget that holds fewer is refused, not exceeded in silence.
        const std::uint64_t kept = store_all(o.steps, o.steps).cost().peak_slots;
        if (o.budget > 0 && o.budget < kept * result.state_bytes)
            throw capacity_error("--schedule store-all keeps " + std::to_string(kept) + " states of " +
                                 std::to_string(result.state_bytes) + " bytes (" +
                                 std::to_string(kept * result.state_bytes) + " bytes); a budget of " +
                                 std::to_string(o.budget) + " bytes holds " +
                                 std::to_string(o.budget / result.state_bytes) + " (use --schedule revolve)");
    }
    result.slots = slots;
    // A step's tape (taped schedules): h_k and the step's gates and outputs, planned in whole states.
    result.tape_bytes = bp.tape_bytes();
    const slot_t tape_units = tape_units_for(result.tape_bytes, result.state_bytes);
    const any_schedule plan = training_detail::make_schedule(o.schedule, o.steps, slots, tape_units);
    if (o.store != "host" && o.store != "device")
        throw argument_error("store '" + o.store + "' (expected host or device)");
    // The store holds the plan's snapshots; a taped plan keeps the rest of its units as tapes.
    const slot_t store_slots = plan.cost().taped_steps > 0 ? std::max<slot_t>(plan.cost().peak_slots, 1) : slots;
    auto store = o.store == "host" ? std::variant<host_store, cuda::device_store>(std::in_place_index<0>, store_slots,
                                                                                  cuda::host_level_options())
                                   : std::variant<host_store, cuda::device_store>(std::in_place_index<1>, store_slots);

    dense::adam<T> adam(model.parameter_count(), {.learning_rate = o.learning_rate});
    thrust::device_vector<T> grad(static_cast<std::size_t>(model.parameter_count()));
    std::mt19937_64 gen(o.seed);
    std::mt19937_64 held_out_gen(o.seed + 1000003);
    const adding_batch held_out_batch = make_adding_batch(held_out_gen, o.steps, o.batch);
    const rnn::sequence<T> held_out = training_detail::to_sequence<T>(held_out_batch, o.steps, o.batch);
    auto evaluate = [&] {
        model.set_training(false);
        const double loss = bp.loss(held_out);
        model.set_training(true);
        return loss;
    };
    model.set_training(true);
    const std::int64_t check_every = 25;
    for (std::int64_t it = 1; it <= o.iterations; ++it) {
        const rnn::sequence<T> data =
            training_detail::to_sequence<T>(make_adding_batch(gen, o.steps, o.batch), o.steps, o.batch);
        model.set_dropout_seed(o.seed * 1000003 + static_cast<std::uint64_t>(it));
        const rnn::bptt_result r = std::visit([&](auto& s) { return bp.gradient(plan, s, data, grad); }, store);
        if (!std::isfinite(r.loss))
            throw error("training diverged: loss " + std::to_string(r.loss) + " at iteration " + std::to_string(it));
        result.forward_steps = r.report.forward_steps;
        result.taped_steps = r.report.taped_steps;
        result.peak_snapshot_bytes = r.report.peak_snapshot_bytes;
        result.peak_tape_bytes = r.report.peak_tapes * result.tape_bytes;
        result.losses.push_back(r.loss);
        if (o.clip > 0) {
            const double norm = std::sqrt(
                static_cast<double>(dense::dot(b, dense::view(std::as_const(grad)), dense::view(std::as_const(grad)))));
            if (norm > o.clip)
                dense::scale(b, static_cast<T>(o.clip / norm), dense::view(grad));
        }
        adam.step(b, dense::view(model.parameters()), dense::view(std::as_const(grad)));
        result.iterations = it;
        if (progress)
            progress(it, r.loss);
        const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
        const bool out_of_time = o.time_limit > 0 && elapsed > o.time_limit;
        if (it % check_every == 0 || it == o.iterations || out_of_time) {
            result.final_loss = evaluate();
            result.held_out.emplace_back(it, result.final_loss);
            if (result.final_loss < o.target_loss) {
                result.reached_target = true;
                break;
            }
        }
        if (out_of_time)
            break;
    }
    result.seconds = std::chrono::duration<double>(clock::now() - start).count();

    // One more gradient along the plan and along store-all: the same bits (when T snapshots fit in 1 GiB).
    if (result.store_all_bytes <= (std::uint64_t(1) << 30)) {
        const rnn::sequence<T> data =
            training_detail::to_sequence<T>(make_adding_batch(gen, o.steps, o.batch), o.steps, o.batch);
        const rnn::bptt_result r = std::visit([&](auto& s) { return bp.gradient(plan, s, data, grad); }, store);
        const std::vector<T> planned = [&] {
            thrust::host_vector<T> h = grad;
            return std::vector<T>(h.begin(), h.end());
        }();
        host_store all(o.steps, cuda::host_level_options());
        const rnn::bptt_result ra = bp.gradient(store_all(o.steps, o.steps), all, data, grad);
        thrust::host_vector<T> reference = grad;
        result.bit_identical =
            r.loss == ra.loss && std::memcmp(planned.data(), reference.data(), planned.size() * sizeof(T)) == 0;
    }
    return result;
}

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::examples
