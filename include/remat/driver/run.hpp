// remat/driver/run.hpp — the driver: runs the user's steps along a schedule.
#pragma once

#include "remat/driver/callables.hpp"
#include "remat/driver/executor.hpp"
#include "remat/driver/run_options.hpp"
#include "remat/driver/run_report.hpp"
#include "remat/driver/step_callables.hpp"
#include "remat/driver/tapes.hpp"
#include "remat/schedule/range.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace remat {

namespace detail {

/// Applies an action given as its own type (remat::advance, ...): the sink a draining cursor calls.
template <class Executor>
struct apply_each {
    Executor& ex;
    template <class Act>
    void operator()(const Act& a) const
    {
        ex.apply(a);
    }
};

/// A cursor that hands its remaining actions over each as its own type, c.drain(sink) (remat::revolve's).
template <class Cursor, class Executor>
concept drains_into = requires(Cursor& c, apply_each<Executor> sink) { c.drain(sink); };

/// Applies every remaining action of `cursor`, showing each restore to the store `options.lookahead`
/// actions before it is applied (only for stores that prefetch, and only with a lookahead).
template <class Store, class Executor, class Cursor>
void apply_all(Executor& ex, Cursor& cursor, const run_options& options)
{
    if (!store_prefetches<Store> || options.lookahead == 0) {
        if constexpr (drains_into<Cursor, Executor>) {
            // No action variant built and dispatched per action: the cursor calls the executor's typed apply.
            cursor.drain(apply_each<Executor>{ex});
            return;
        }
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
/// owns the adjoint variables and gradients it updates. The wrappers name each callable's role: bare
/// callables, or the two steps swapped, do not compile (remat/driver/callables.hpp). After them, in any
/// order and each at most once (remat/driver/step_callables.hpp):
///  - remat::final_state(h): called once as h(x_T), before the first adjoint step, so that h can evaluate
///    the objective and seed the adjoint (report: final_calls, final_forward_steps);
///  - remat::with_tapes(remat::taped_step(f), remat::tape_adjoint(g), make_tape), for plans with taped
///    advances (remat::taped_revolve, docs/tapes.md): the plan's cost().peak_tapes tapes are made before
///    step 0; `advance K K+1 tape` fills a free one, `reverse K` with K's tape held calls g(k, tape) (else
///    the adjoint step, as always). Gradients are bit-identical to a state-only run when the adjoint step
///    is the taped step's recording followed by g. The report counts taped_steps, tape_reverses and
///    peak_tapes. Without it a taped plan is refused with remat::schedule_error before any step runs;
///  - remat::run_options (lookahead, timing).
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
template <schedule Schedule, store_for_run Store, snapshot_state State, class Forward, class Adjoint, class... Extras>
run_report run(const Schedule& plan, Store& store, State& state, Forward&& forward, Adjoint&& adjoint,
               Extras&&... extras)
{
    if constexpr (detail::untagged_steps<Forward, Adjoint>) {
        static_assert(detail::always_false<Forward>,
                      "remat::run takes remat::forward_step(f), then remat::adjoint_step(g): wrap each callable "
                      "so that the two cannot be swapped");
        return {};
    } else {
        static_assert(detail::valid_extras<false, false, std::remove_cvref_t<Extras>...>,
                      "remat::run takes, after the two steps, at most one remat::final_state(h), one "
                      "remat::with_tapes(...) and one remat::run_options, in any order");
        const run_options options = detail::pick_value<detail::arg_role::options>(run_options{}, extras...);
        executor ex(store, state,
                    detail::bundle(std::forward<Forward>(forward), std::forward<Adjoint>(adjoint),
                                   std::forward<Extras>(extras)...),
                    plan.steps());
        ex.time_user_code(options.time_user_code);
        return detail::run_plan<Store>(ex, plan, options);
    }
}

} // namespace remat
