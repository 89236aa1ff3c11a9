// Small random chains for the chain planners' tests: costs in quarters (exact in binary, so sums compare exactly),
// some zero unless the shape says otherwise; states of a few bytes; an adjoint's extra bytes on most steps.
#pragma once

#include "remat/schedule/chain_model.hpp"

#include <algorithm>
#include <cstdint>
#include <random>

namespace remat::test {

struct random_chain_shape {
    std::uint64_t most_state_bytes = 5;   // states of 1 .. this many bytes
    std::uint64_t most_adjoint_bytes = 4; // a_k of 0 .. this many
    bool adjoint_below_forward = false;   // some b_k a unit below f_k (clamped at 0), not only at least f_k
    bool adjoint_apart = false;           // b_k drawn apart from f_k (0 .. 3): below it about half the time
    int least_quarters = 0;               // costs of at least this many quarters (1: no zero cost)
    step_t adjoint_bytes_every = 1;       // a_k drawn on the steps k with k % this == 0, 0 on the others
};

/// The chain planner's (remat::chain) own tests' chains: b_k drawn apart from f_k, states of 1 .. most_state_bytes,
/// a_k of 0 .. most_adjoint_bytes.
inline random_chain_shape adjoints_apart(std::uint64_t most_state_bytes, std::uint64_t most_adjoint_bytes)
{
    return {.most_state_bytes = most_state_bytes, .most_adjoint_bytes = most_adjoint_bytes, .adjoint_apart = true};
}

inline chain_model random_chain(std::mt19937_64& rng, step_t steps, random_chain_shape shape = {})
{
    std::uniform_int_distribution<int> quarters(shape.least_quarters, 12);
    std::uniform_int_distribution<std::uint64_t> bytes(1, shape.most_state_bytes);
    std::uniform_int_distribution<std::uint64_t> extra(0, shape.most_adjoint_bytes);
    chain_model m;
    for (step_t k = 0; k < steps; ++k) {
        const double forward = quarters(rng) / 4.0;
        double adjoint = (shape.adjoint_apart ? 0.0 : forward) + quarters(rng) / 4.0;
        if (shape.adjoint_below_forward)
            adjoint = std::max(0.0, adjoint - (quarters(rng) < 2 ? 1.0 : 0.0));
        const std::uint64_t state = bytes(rng);
        const std::uint64_t adjoint_bytes = k % shape.adjoint_bytes_every == 0 ? extra(rng) : 0;
        m.steps.push_back({forward, adjoint, state, adjoint_bytes});
    }
    m.final_state_bytes = bytes(rng);
    return m;
}

} // namespace remat::test
