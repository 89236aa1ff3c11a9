// remat/driver/run.hpp — the driver: runs the user's steps along a schedule.
#pragma once

#include "remat/driver/callables.hpp"
#include "remat/driver/executor.hpp"
#include "remat/driver/run_report.hpp"
#include "remat/driver/tapes.hpp"
#include "remat/schedule/range.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>

namespace remat {

struct run_options {
    /// How many actions ahead the driver looks to tell the store about coming restores (0: none; at
    /// most 31 are used). Only stores that prefetch (tiered stores with asynchronous levels) see them.
    std::size_t lookahead = 8;
};

namespace detail {

/// Applies every remaining action of `cursor`, showing each restore to the store `options.lookahead`
/// actions before it is applied (only for stores that prefetch, and only with a lookahead).
template <class Store, class Executor, class Cursor>
void apply_all(Executor& ex, Cursor& cursor, const run_options& options)
{
    if (!store_prefetches<Store> || options.lookahead == 0) {
        action a;
        while (cursor.next(a))
            ex.apply(a);
        return;
    }
    // A ring of the next actions: each is shown to the store when it enters, applied when it leaves.
    constexpr std::size_t ring_size = 32;
    std::array<action, ring_size> ring{};
    const std::size_t window = std::min(options.lookahead, ring_size - 1) + 1; // + the action applied
    std::size_t head = 0;
    std::size_t count = 0;
    bool more = true;
    auto pull = [&] {
        action& slot = ring[(head + count) % ring_size];
        if (cursor.next(slot)) {
            ++count;
            ex.look_ahead(slot);
        } else {
            more = false;
        }
    };
    while (more && count < window)
        pull();
    while (count > 0) {
        ex.apply(ring[head]);
        head = (head + 1) % ring_size;
        --count;
        if (more)
            pull();
    }
}

/// The drivers' common body: checks the plan against the store before step 0 (and makes its tapes), then
/// applies it; on any failure the store's slots and the tapes are released before the exception leaves.
/// A plan that prices its own bytes (remat::chain) is over states whose size changes from step to step:
/// only its slots can be checked before step 0.
template <class Store, class Executor, class Schedule>
run_report run_plan(Executor& ex, const Schedule& plan, const run_options& options)
{
    ex.check_fits(plan.cost(), !requires { plan.peak_bytes(); }); // nothing has run: nothing to release
    try {
        auto cursor = plan.cursor();
        apply_all<Store>(ex, cursor, options);
        return ex.finish();
    } catch (...) {
        ex.abort();
        throw;
    }
}

} // namespace detail

/// Runs the reverse sweep of a loop of plan.steps() steps, starting from `state` == x_0.
///
/// `forward` (remat::forward_step(f)) maps x_k to x_{k+1} in place with f(k, x); `adjoint`
/// (remat::adjoint_step(g)) is called as g(k, x) with x == x_k, once per step from k = T-1 down to 0, and
/// owns the adjoint variables and gradients it updates. The optional `final` (remat::final_state(h)) is
/// called once as h(x_T), before the first adjoint step, so that h can evaluate the objective and seed the
/// adjoint (report: final_calls, final_forward_steps). The wrappers name each callable's role: bare
/// callables, or the two steps swapped, do not compile (remat/driver/callables.hpp).
///
/// The store holds the snapshots the schedule asks for: one storage level (host_store, hdf5_store,
/// cuda::device_store) or a multi-level store (tiered_store) for a schedule over several levels.
/// Gradients are bit-identical for every schedule, since each adjoint step sees exactly the x_k of a plain
/// forward sweep.
///
/// Errors: a plan that does not fit the store (more levels, or more slots or bytes at once on a level
/// than it holds) is refused with remat::capacity_error before any step runs; a throwing callable
/// becomes remat::step_error naming the step (the original is nested);
/// a schedule that does not fit the state or the store throws remat::schedule_error. In both cases
/// the store's slots are released before the exception leaves.
///
///     std::vector<double> x = x0;                  // x_0
///     std::vector<double> a(x.size());             // the adjoint, seeded from x_T below
///     remat::host_store store(20);
///     remat::run_report r = remat::run(remat::revolve(T, 20), store, x,
///         remat::forward_step([&](remat::step_t k, std::vector<double>& s) { step(k, s); }),
///         remat::adjoint_step([&](remat::step_t k, std::vector<double>& s) { adjoint_step(k, s, a); }),
///         remat::final_state([&](const std::vector<double>& xT) { a = dJ_dx(xT); }));
template <schedule Schedule, store_for_run Store, snapshot_state State, forward_function<State> Forward,
          adjoint_function<State> Adjoint, final_function<State> Final>
run_report run(const Schedule& plan, Store& store, State& state, forward_step_fn<Forward> forward,
               adjoint_step_fn<Adjoint> adjoint, final_state_fn<Final> final, const run_options& options = {})
{
    executor<State, Store, Forward, Adjoint, Final> ex(store, state, std::move(forward), std::move(adjoint),
                                                       std::move(final), plan.steps());
    return detail::run_plan<std::remove_cvref_t<Store>>(ex, plan, options);
}

/// remat::run without a terminal callable.
template <schedule Schedule, store_for_run Store, snapshot_state State, forward_function<State> Forward,
          adjoint_function<State> Adjoint>
run_report run(const Schedule& plan, Store& store, State& state, forward_step_fn<Forward> forward,
               adjoint_step_fn<Adjoint> adjoint, const run_options& options = {})
{
    return run(plan, store, state, std::move(forward), std::move(adjoint), final_state_fn<no_final_state>{}, options);
}

/// remat::run for plans with taped advances (remat::taped_revolve, docs/tapes.md): `tapes`
/// (remat::with_tapes) gives the taped step `f(k, x, tape)`, the adjoint from a tape `g(k, tape)` and the
/// factory of tapes. The plan's cost().peak_tapes tapes are made before step 0; `advance K K+1 tape`
/// fills a free one, `reverse K` with K's tape held calls g(k, tape) (else the adjoint step, as always).
/// Gradients are bit-identical to a state-only run when the adjoint step is the taped step's recording
/// followed by g. The report counts taped_steps, tape_reverses and peak_tapes. The other overloads
/// refuse a taped plan with remat::schedule_error before any step runs.
///
///     struct tape { std::vector<double> x; };
///     remat::run(remat::taped_revolve(T, 40, 2), store, x, remat::forward_step(f), remat::adjoint_step(g),
///                remat::with_tapes(remat::taped_step([&](remat::step_t k, std::vector<double>& s, tape& t) {
///                                      t.x = s; f(k, s); }),
///                                  remat::tape_adjoint([&](remat::step_t k, tape& t) { g(k, t.x); }),
///                                  [&] { return tape{std::vector<double>(n)}; }),
///                remat::final_state([&](const std::vector<double>& xT) { a = dJ_dx(xT); }));
template <schedule Schedule, store_for_run Store, snapshot_state State, forward_function<State> Forward,
          adjoint_function<State> Adjoint, class Taped, class TapeAdjoint, class Make, final_function<State> Final>
run_report run(const Schedule& plan, Store& store, State& state, forward_step_fn<Forward> forward,
               adjoint_step_fn<Adjoint> adjoint, tape_set<Taped, TapeAdjoint, Make> tapes, final_state_fn<Final> final,
               const run_options& options = {})
{
    using tapes_type = tape_set<Taped, TapeAdjoint, Make>;
    executor<State, Store, Forward, Adjoint, Final, tapes_type> ex(store, state, std::move(forward), std::move(adjoint),
                                                                   std::move(final), std::move(tapes), plan.steps());
    return detail::run_plan<std::remove_cvref_t<Store>>(ex, plan, options);
}

/// remat::run with tapes, without a terminal callable.
template <schedule Schedule, store_for_run Store, snapshot_state State, forward_function<State> Forward,
          adjoint_function<State> Adjoint, class Taped, class TapeAdjoint, class Make>
run_report run(const Schedule& plan, Store& store, State& state, forward_step_fn<Forward> forward,
               adjoint_step_fn<Adjoint> adjoint, tape_set<Taped, TapeAdjoint, Make> tapes,
               const run_options& options = {})
{
    return run(plan, store, state, std::move(forward), std::move(adjoint), std::move(tapes),
               final_state_fn<no_final_state>{}, options);
}

/// Bare callables (or the two steps given in the wrong order) are refused with a message.
template <schedule Schedule, store_for_run Store, snapshot_state State, class Forward, class Adjoint, class... Rest>
    requires detail::untagged_steps<Forward, Adjoint>
run_report run(const Schedule&, Store&, State&, Forward&&, Adjoint&&, Rest&&...)
{
    static_assert(detail::always_false<Forward>,
                  "remat::run takes remat::forward_step(f), then remat::adjoint_step(g): wrap each callable "
                  "so that the two cannot be swapped");
    return {};
}

} // namespace remat
