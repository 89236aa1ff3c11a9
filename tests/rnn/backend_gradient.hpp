// One RNN gradient computed by each back end of this build (tests only): the same source compiled by the
// host compiler for Thrust's CPP back end (cpu_gradient.cpp) and by nvcc for CUDA (cuda_gradient.cu),
// behind plain types, so that one test program compares the two.
#pragma once

#include "remat/rnn/layout.hpp"
#include "remat/rnn/sequence.hpp"

#include <cstdint>
#include <vector>

namespace remat::test {

struct rnn_case {
    rnn::rnn_shape shape;
    std::int64_t batch = 1;
    std::int64_t steps = 1;
    rnn::loss_at loss = rnn::loss_at::every_step;
    std::int64_t slots = 1; ///< revolve's slots for the checkpointed runs
    std::uint64_t seed = 1;
};

/// Store-all's loss and gradient (double), and whether revolve through a host level (pinned slots on the
/// GPU) and through the device level gave the same bits.
struct rnn_backend_gradient {
    double loss = 0;
    std::vector<double> params;
    std::vector<double> initial;
    bool revolve_host_identical = false;
    bool revolve_device_identical = false;
    std::uint64_t forward_steps = 0; ///< of the revolve run (it must recompute)
};

/// On the CPU (Thrust CPP, OpenBLAS).
rnn_backend_gradient cpu_rnn_gradient(const rnn_case& c);
/// On the GPU (Thrust CUDA, cuBLAS); needs a CUDA device.
rnn_backend_gradient cuda_rnn_gradient(const rnn_case& c);

} // namespace remat::test
