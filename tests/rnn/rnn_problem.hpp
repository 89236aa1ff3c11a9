// A small random sequence problem shared by the RNN tests: a model of a given shape with PyTorch-style
// random weights, random inputs and targets, and its loss and store-everything gradient. Compiled for the
// back end of the including translation unit.
#pragma once

#include "remat/cuda/host_level.hpp"
#include "remat/cuda/thrust_traits.hpp"
#include "remat/dense/blas.hpp"
#include "remat/rnn/bptt.hpp"
#include "remat/rnn/layout.hpp"
#include "remat/rnn/sequence.hpp"
#include "remat/rnn/sequence_model.hpp"
#include "remat/schedule/uniform.hpp"
#include "remat/store/host_store.hpp"

#include <thrust/device_vector.h>
#include <thrust/host_vector.h>

#include <cstdint>
#include <random>
#include <vector>

namespace remat::test {

inline std::vector<double> random_values(std::size_t n, std::uint64_t seed, double lo, double hi)
{
    std::mt19937_64 gen(seed);
    std::vector<double> v(n);
    for (double& x : v)
        x = lo + (hi - lo) * static_cast<double>(gen() >> 11) * 0x1p-53;
    return v;
}

inline namespace REMAT_DENSE_BACKEND_NS {

template <class T>
std::vector<double> to_host(const thrust::device_vector<T>& v)
{
    thrust::host_vector<T> h = v;
    return {h.begin(), h.end()};
}

/// Random inputs in [-1, 1] (input x B x T) for a model's shape.
inline std::vector<double> random_inputs(const rnn::rnn_shape& shape, std::int64_t batch, step_t steps,
                                         std::uint64_t seed)
{
    return random_values(static_cast<std::size_t>(shape.input * batch * steps), seed, -1, 1);
}
/// Random targets in [-0.5, 0.5] (output x B, after every step or after the last).
inline std::vector<double> random_targets(const rnn::rnn_shape& shape, std::int64_t batch, step_t steps,
                                          rnn::loss_at loss, std::uint64_t seed)
{
    const step_t terms = loss == rnn::loss_at::every_step ? steps : 1;
    return random_values(static_cast<std::size_t>(shape.output * batch * terms), seed + 1, -0.5, 0.5);
}

/// A sequence of random_inputs and random_targets.
template <class T>
rnn::sequence<T> random_sequence(const rnn::rnn_shape& shape, std::int64_t batch, step_t steps, rnn::loss_at loss,
                                 std::uint64_t seed)
{
    const rnn::sequence_shape s{
        .input = shape.input, .output = shape.output, .batch = batch, .steps = steps, .loss = loss};
    return rnn::sequence<T>(s, random_inputs(shape, batch, steps, seed),
                            random_targets(shape, batch, steps, loss, seed));
}

/// The loss and gradient of one run, on the host.
struct rnn_gradient {
    double loss = 0;
    std::vector<double> params;
    std::vector<double> initial;
};

/// The gradient with every state kept (store-all: the reference of every checkpointed run).
template <class T>
rnn_gradient store_all_gradient(rnn::sequence_model<T>& model, const rnn::sequence<T>& data)
{
    rnn::bptt<T> bp(model);
    thrust::device_vector<T> grad(static_cast<std::size_t>(model.parameter_count()));
    host_store store(static_cast<slot_t>(data.steps()), cuda::host_level_options());
    const rnn::bptt_result r =
        bp.gradient(store_all(data.steps(), static_cast<slot_t>(data.steps())), store, data, grad);
    return {r.loss, to_host(grad), to_host(bp.initial_adjoint())};
}

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::test
