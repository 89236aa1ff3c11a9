// Small random chains for the chain planners' tests: costs in quarters (exact in binary, so sums compare exactly),
// some zero unless the shape says otherwise; states of a few bytes; an adjoint's extra bytes on most steps.
#pragma once

#include "remat/schedule/chain_model.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>

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

/// Gives two steps in three a tape size of their own (chain_step::tape_bytes), from 1 (or the step's a_k where
/// `at_least_adjoint`: the taped planner's optimum is the exhaustive search's there) to 4 past the default m_k + a_k.
/// Returns how many are below and above the default.
inline std::pair<int, int> give_tape_sizes(std::mt19937_64& rng, chain_model& m, bool at_least_adjoint = false)
{
    std::uniform_int_distribution<int> third(0, 2);
    int below = 0, above = 0;
    for (chain_step& st : m.steps) {
        if (third(rng) == 0)
            continue;
        const std::uint64_t usual = st.state_bytes + st.adjoint_bytes;
        const std::uint64_t least = at_least_adjoint ? std::max<std::uint64_t>(1, st.adjoint_bytes) : 1;
        st.tape_bytes = std::uniform_int_distribution<std::uint64_t>(least, usual + 4)(rng);
        below += st.tape_bytes < usual ? 1 : 0;
        above += st.tape_bytes > usual ? 1 : 0;
    }
    return {below, above};
}

/// Gives every step a tape below its input, 1 .. m_k bytes (storage shared with the neighbour's tape).
inline void give_tapes_below_inputs(std::mt19937_64& rng, chain_model& m)
{
    for (chain_step& st : m.steps)
        st.tape_bytes = std::uniform_int_distribution<std::uint64_t>(1, st.state_bytes)(rng);
}

} // namespace remat::test
