// remat/rnn/dropout.hpp — dropout masks that recomputation redraws exactly: element e of the mask of
// (seed, step, layer) is a pure function of those four numbers (Random123's Philox4x32-10, a
// counter-based generator), on the CPU and in CUDA kernels alike, so a step re-run by a checkpointing
// schedule drops the same units as the first run without the mask ever being stored.
//
//     // keep element e of layer l's output at step k with probability 1 - p, scaled by 1 / (1 - p):
//     bool kept = remat::rnn::dropout_keeps({.seed = 42, .step = k, .layer = l}, e, 0.25);
#pragma once

#include "remat/cuda/config.hpp"

#include <Random123/philox.h>

#include <cstdint>

namespace remat::rnn {

/// What a mask is drawn for: the run's seed, the time step and the layer whose output it drops.
struct dropout_key {
    std::uint64_t seed = 0;
    std::int64_t step = 0;
    std::int64_t layer = 0;
};

/// Whether element `element` (< 2^34) of the mask for `key` is kept under dropout probability p: a
/// uniform number in [0, 1) with 24 random bits (Philox4x32-10 with the counter (element / 4, step,
/// layer) and the seed as its key; word element % 4) is compared with p.
REMAT_HOST_DEVICE inline bool dropout_keeps(const dropout_key& key, std::int64_t element, double p)
{
    const auto step = static_cast<std::uint64_t>(key.step);
    philox4x32_ctr_t counter = {{static_cast<std::uint32_t>(element >> 2), static_cast<std::uint32_t>(step),
                                 static_cast<std::uint32_t>(step >> 32), static_cast<std::uint32_t>(key.layer)}};
    philox4x32_key_t k = {{static_cast<std::uint32_t>(key.seed), static_cast<std::uint32_t>(key.seed >> 32)}};
    const philox4x32_ctr_t r = philox4x32(counter, k);
    const double u = static_cast<double>(r.v[element & 3] >> 8) * 0x1p-24;
    return u >= p;
}

} // namespace remat::rnn
