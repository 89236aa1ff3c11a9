// remat/driver/profile.hpp — measures a chain's per-step costs and state sizes from the user's own steps,
// so that remat::chain can plan from measurements (docs/heterogeneous.md).
#pragma once

#include "remat/detail/median_seconds.hpp"
#include "remat/driver/executor.hpp"
#include "remat/driver/run.hpp"
#include "remat/error.hpp"
#include "remat/schedule/chain_model.hpp"
#include "remat/schedule/revolve.hpp"
#include "remat/store/host_store.hpp"
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
    /// Runs of each forward step; the median time is kept (each run but the last starts from a copy of x_k).
    int repeats = 1;
    /// Snapshot slots of the reverse sweep that times the adjoints (revolve in RAM; more slots, less
    /// recomputation); 0: about sqrt(T).
    slot_t slots = 0;
    /// a_k, the extra bytes the adjoint of step k needs (not measurable in general); none: 0.
    std::function<std::uint64_t(step_t)> adjoint_bytes{};
    /// The copier of the reverse sweep's store in RAM, and the wait that ends every timing: for a state on
    /// the GPU whose steps queue kernels on `stream`, remat::cuda::copier(stream), so that each step is
    /// timed until its kernels have run (they are asynchronous) and the snapshots reach host memory.
    byte_copier copy = host_copy;
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

} // namespace detail

/// Measures a chain: a forward sweep from a copy of `x0` times forward(k, x) for every step and records the
/// snapshot size of every x_k; then a real reverse sweep (remat::run with revolve on options.slots slots
/// in RAM, from x0 again) times every adjoint(k, x) in its proper order. So prepare the adjoint as for a
/// run (seed dJ/dx_T, zero the gradients): afterwards it holds a true gradient. Costs are in seconds; a
/// throwing step becomes remat::step_error. For a state on the GPU give options.copy =
/// remat::cuda::copier(stream): every timing then waits for the kernels the step queued on `stream`.
///
///     remat::chain_model m = remat::profile(T, x0, remat::forward_step(f), remat::adjoint_step(g));
///     std::ofstream("costs.json") << remat::to_json(m);          // for `remat plan --chain costs.json`
///     remat::chain plan(m, 4ull << 30);                           // or plan right away
template <snapshot_state State, forward_function<State> Forward, adjoint_function<State> Adjoint>
    requires std::copyable<State>
chain_model profile(step_t steps, const State& x0, forward_step_fn<Forward> forward_step_of,
                    adjoint_step_fn<Adjoint> adjoint_step_of, const profile_options& options = {})
{
    auto& forward = forward_step_of.fn;
    auto& adjoint = adjoint_step_of.fn;
    if (steps < 1)
        throw argument_error("steps must be at least 1, got " + std::to_string(steps));
    if (options.repeats < 1)
        throw argument_error("repeats must be at least 1, got " + std::to_string(options.repeats));
    if (options.slots < 0)
        throw argument_error("slots must be >= 0, got " + std::to_string(options.slots));
    // Every timing waits for the user's GPU work before it starts (a copy of the state, the previous step)
    // and before it stops (the step's own kernels), as the driver does (docs/driver.md, "Accounting").
    const byte_copier& wait = options.copy;
    chain_model m;
    m.steps.resize(static_cast<std::size_t>(steps));
    State x = x0;
    State work = x0;
    for (step_t k = 0; k < steps; ++k) {
        chain_step& s = m.steps[static_cast<std::size_t>(k)];
        s.state_bytes = detail::state_size(x);
        s.adjoint_bytes = options.adjoint_bytes ? options.adjoint_bytes(k) : 0;
        try {
            // every run but the last works on a copy; the last advances x itself
            const auto last = [&](int run) { return run + 1 == options.repeats; };
            s.forward = detail::median_seconds(
                options.repeats,
                [&](int run) {
                    if (!last(run))
                        work = x;
                    wait.wait_for_user();
                },
                [&](int run) {
                    std::invoke(forward, k, last(run) ? x : work);
                    wait.wait_for_user();
                });
        } catch (...) {
            detail::rethrow_as_step_error(k, step_phase::forward);
        }
    }
    m.final_state_bytes = detail::state_size(x);
    // The adjoints in their own order, from a checkpointed reverse sweep (the adjoint's state must be right).
    slot_t slots = options.slots;
    while (slots == 0 || (slots < steps && slots * slots < steps))
        ++slots;
    host_store store(slots, {.copy = options.copy});
    x = x0;
    auto timed_adjoint = [&](step_t k, State& state) {
        wait.wait_for_user(); // the restore of x_k, the forward steps before
        const auto start = std::chrono::steady_clock::now();
        std::invoke(adjoint, k, state);
        wait.wait_for_user();
        m.steps[static_cast<std::size_t>(k)].adjoint =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    run(revolve(steps, slots), store, x, remat::forward_step(forward), remat::adjoint_step(timed_adjoint));
    return m;
}

/// Bare callables (or the two steps given in the wrong order) are refused with a message.
template <snapshot_state State, class Forward, class Adjoint, class... Rest>
    requires detail::untagged_steps<Forward, Adjoint>
chain_model profile(step_t, const State&, Forward&&, Adjoint&&, Rest&&...)
{
    static_assert(detail::always_false<Forward>,
                  "remat::profile takes remat::forward_step(f), then remat::adjoint_step(g): wrap each callable "
                  "so that the two cannot be swapped");
    return {};
}

} // namespace remat
