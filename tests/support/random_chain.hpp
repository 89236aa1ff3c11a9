// Small random chains for the taped chain planner's tests: costs in quarters (exact in binary, so sums compare
// exactly), some zero; states of a few bytes; an adjoint's extra bytes on most steps.
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
};

inline chain_model random_chain(std::mt19937_64& rng, step_t steps, random_chain_shape shape = {})
{
    std::uniform_int_distribution<int> quarters(0, 12);
    std::uniform_int_distribution<std::uint64_t> bytes(1, shape.most_state_bytes);
    std::uniform_int_distribution<std::uint64_t> extra(0, shape.most_adjoint_bytes);
    chain_model m;
    for (step_t k = 0; k < steps; ++k) {
        const double forward = quarters(rng) / 4.0;
        double adjoint = forward + quarters(rng) / 4.0;
        if (shape.adjoint_below_forward)
            adjoint = std::max(0.0, adjoint - (quarters(rng) < 2 ? 1.0 : 0.0));
        m.steps.push_back({forward, adjoint, bytes(rng), extra(rng)});
    }
    m.final_state_bytes = bytes(rng);
    return m;
}

} // namespace remat::test
