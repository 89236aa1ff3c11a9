// The adding problem (Hochreiter & Schmidhuber 1997): each step shows a value u_k, uniform in [0, 1], and
// a marker m_k in {0, 1}; exactly two steps are marked, one in each half of the sequence, and the target
// after the last step is the sum of the two marked values. Predicting the mean (1) scores a mean squared
// error of 1/6; solving it needs a memory over the whole sequence. Generated here, no download.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace remat::examples {

/// One batch: inputs (2 x B per step, step after step: u then m) and targets (B).
struct adding_batch {
    std::vector<double> inputs;
    std::vector<double> targets;
};

/// B sequences of T >= 2 steps from `gen`.
inline adding_batch make_adding_batch(std::mt19937_64& gen, std::int64_t steps, std::int64_t batch)
{
    adding_batch out;
    const auto at = [&](std::int64_t k, std::int64_t j) { return static_cast<std::size_t>(2 * (k * batch + j)); };
    out.inputs.assign(static_cast<std::size_t>(2 * steps * batch), 0.0);
    out.targets.assign(static_cast<std::size_t>(batch), 0.0);
    std::uniform_real_distribution<double> value(0.0, 1.0);
    const std::int64_t half = steps / 2;
    std::uniform_int_distribution<std::int64_t> first(0, half - 1);
    std::uniform_int_distribution<std::int64_t> second(half, steps - 1);
    for (std::int64_t k = 0; k < steps; ++k)
        for (std::int64_t j = 0; j < batch; ++j)
            out.inputs[at(k, j)] = value(gen);
    for (std::int64_t j = 0; j < batch; ++j)
        for (const std::int64_t k : {first(gen), second(gen)}) {
            out.inputs[at(k, j) + 1] = 1.0;
            out.targets[static_cast<std::size_t>(j)] += out.inputs[at(k, j)];
        }
    return out;
}

} // namespace remat::examples
