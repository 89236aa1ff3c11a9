// remat/driver/profile.hpp — measures a chain's per-step costs and state sizes from the user's own steps,
// so that remat::chain can plan from measurements (docs/heterogeneous.md).
#pragma once

#include "remat/driver/executor.hpp"
#include "remat/error.hpp"
#include "remat/schedule/chain_model.hpp"
#include "remat/store/snapshot_traits.hpp"

#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace remat {

struct profile_options {
    /// Time the adjoint of every n-th step (k % n == 0, and the last step); the other steps' adjoint costs
    /// are their forward cost times the measured steps' ratio sum(b) / sum(f). 1: every step.
    step_t adjoint_every = 1;
    /// Runs of each step; the median time is kept (each run starts from a copy of x_k).
    int repeats = 1;
    /// a_k, the extra bytes the adjoint of step k needs (not measurable in general); none: 0.
    std::function<std::uint64_t(step_t)> adjoint_bytes{};
};

namespace detail {

template <class State>
std::uint64_t state_size(const State& x)
{
    if constexpr (contiguous_state<State>)
        return snapshot_traits<State>::bytes(x).size;
    else
        return snapshot_traits<State>::size_bytes(x);
}

/// The median time of run(i) over `repeats` runs; prepare(i) runs before each, untimed.
template <class Prepare, class Run>
double median_seconds(int repeats, Prepare&& prepare, Run&& run)
{
    std::vector<double> times;
    for (int i = 0; i < repeats; ++i) {
        prepare(i);
        const auto start = std::chrono::steady_clock::now();
        run(i);
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::nth_element(times.begin(), times.begin() + repeats / 2, times.end());
    return times[static_cast<std::size_t>(repeats / 2)];
}

} // namespace detail

/// Runs the forward sweep of `steps` steps once from `x0` (a copy), timing forward(k, x) for every step
/// and recording the snapshot size of every x_k; times adjoint(k, copy of x_k) on the steps
/// options.adjoint_every selects, during the same sweep, so only one extra state is ever held. Costs are
/// in seconds. The adjoint is called out of its usual order with whatever adjoint values it holds: reset
/// your adjoint variables and gradients after profiling. A throwing step becomes remat::step_error.
///
///     remat::chain_model m = remat::profile(T, x0, forward, adjoint);
///     std::ofstream("costs.json") << remat::to_json(m);          // for `remat plan --chain costs.json`
///     remat::chain plan(m, 4ull << 30);                           // or plan right away
template <snapshot_state State, forward_step<State> Forward, adjoint_step<State> Adjoint>
    requires std::copyable<State>
chain_model profile(step_t steps, const State& x0, Forward&& forward, Adjoint&& adjoint,
                    const profile_options& options = {})
{
    if (steps < 1)
        throw argument_error("steps must be at least 1, got " + std::to_string(steps));
    if (options.adjoint_every < 1)
        throw argument_error("adjoint_every must be at least 1, got " + std::to_string(options.adjoint_every));
    if (options.repeats < 1)
        throw argument_error("repeats must be at least 1, got " + std::to_string(options.repeats));
    chain_model m;
    m.steps.resize(static_cast<std::size_t>(steps));
    std::vector<bool> timed(static_cast<std::size_t>(steps), false);
    State x = x0;
    State work = x0;
    double timed_forward = 0;
    double timed_adjoint = 0;
    for (step_t k = 0; k < steps; ++k) {
        chain_step& s = m.steps[static_cast<std::size_t>(k)];
        s.state_bytes = detail::state_size(x);
        s.adjoint_bytes = options.adjoint_bytes ? options.adjoint_bytes(k) : 0;
        if (k % options.adjoint_every == 0 || k == steps - 1) {
            try {
                s.adjoint = detail::median_seconds(
                    options.repeats, [&](int) { work = x; }, [&](int) { std::invoke(adjoint, k, work); });
            } catch (...) {
                detail::rethrow_as_step_error(k, step_phase::adjoint);
            }
            timed[static_cast<std::size_t>(k)] = true;
        }
        try {
            // every run but the last works on a copy; the last advances x itself
            const auto last = [&](int run) { return run + 1 == options.repeats; };
            s.forward = detail::median_seconds(
                options.repeats,
                [&](int run) {
                    if (!last(run))
                        work = x;
                },
                [&](int run) { std::invoke(forward, k, last(run) ? x : work); });
        } catch (...) {
            detail::rethrow_as_step_error(k, step_phase::forward);
        }
        if (timed[static_cast<std::size_t>(k)]) {
            timed_forward += s.forward;
            timed_adjoint += s.adjoint;
        }
    }
    m.final_state_bytes = detail::state_size(x);
    const double ratio = timed_forward > 0 ? timed_adjoint / timed_forward : 0;
    for (step_t k = 0; k < steps; ++k)
        if (!timed[static_cast<std::size_t>(k)])
            m.steps[static_cast<std::size_t>(k)].adjoint = m.steps[static_cast<std::size_t>(k)].forward * ratio;
    return m;
}

} // namespace remat
