// The body of cpu_rnn_gradient and cuda_rnn_gradient (backend_gradient.hpp), compiled once per back end.
#pragma once

#include "backend_gradient.hpp"
#include "rnn_problem.hpp"
#include "same_bits.hpp"

#include "remat/cuda/device_store.hpp"
#include "remat/schedule/revolve.hpp"

#include <cstring>

namespace remat::test {

inline namespace REMAT_DENSE_BACKEND_NS {

inline rnn_backend_gradient compute_rnn_backend_gradient(const rnn_case& c)
{
    const rnn::rnn_layout layout(c.shape);
    dense::blas b;
    rnn::sequence_model<double> model(b, layout, c.batch);
    model.set_parameters(layout.initial_parameters(c.seed));
    model.set_training(true);
    model.set_dropout_seed(c.seed + 17);
    const auto data = random_sequence<double>(c.shape, c.batch, c.steps, c.loss, c.seed + 1);
    const rnn_gradient all = store_all_gradient(model, data);

    rnn::bptt<double> bp(model);
    thrust::device_vector<double> grad(static_cast<std::size_t>(model.parameter_count()));
    auto same_as_all = [&](const rnn::bptt_result& r) {
        return std::memcmp(&r.loss, &all.loss, sizeof(double)) == 0 && same_bits(to_host(grad), all.params) &&
               same_bits(to_host(bp.initial_adjoint()), all.initial);
    };
    rnn_backend_gradient out{.loss = all.loss, .params = all.params, .initial = all.initial};
    host_store host(c.slots, cuda::host_level_options());
    const rnn::bptt_result on_host = bp.gradient(revolve(c.steps, c.slots), host, data, grad);
    out.revolve_host_identical = same_as_all(on_host);
    out.forward_steps = on_host.report.forward_steps;
    cuda::device_store device(c.slots);
    out.revolve_device_identical = same_as_all(bp.gradient(revolve(c.steps, c.slots), device, data, grad));
    return out;
}

} // namespace REMAT_DENSE_BACKEND_NS

} // namespace remat::test
