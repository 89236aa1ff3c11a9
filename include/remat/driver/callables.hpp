// remat/driver/callables.hpp — the user's callables, each wrapped in a tag that names its role.
//
// A forward step and an adjoint step have the same signature, so two bare lambdas given in the wrong
// order would compile and give a wrong gradient. The drivers (remat::run, run_online, resume, executor)
// take them only through these wrappers: the role is written where the call is, and a swap does not
// compile (a bare callable is refused with a message saying what to write).
//
//     | wrapper                  | the callable's expression  | meaning                                    |
//     |--------------------------|----------------------------|--------------------------------------------|
//     | remat::forward_step(f)   | f(k, x)   (x is State&)    | x_k -> x_{k+1} in place                    |
//     | remat::adjoint_step(g)   | g(k, x)   (x is State&)    | called with x == x_k, k = T-1 down to 0    |
//     | remat::final_state(h)    | h(x)      (x const State&) | x == x_T, once, before the first adjoint   |
//     | remat::taped_step(f)     | f(k, x, tape)              | x_k -> x_{k+1}, filling step k's tape      |
//     | remat::tape_adjoint(g)   | g(k, tape)                 | step k's adjoint from its tape (no x)      |
//
// The last two are for plans with taped advances (remat::taped_revolve, docs/tapes.md); with them the
// drivers also take a tape factory (remat/driver/tapes.hpp).
//
// An lvalue is held by reference (it must outlive the run, and its state, e.g. accumulated gradients,
// stays the caller's); an rvalue (a lambda written in place) is moved into the wrapper.
//
//     vec3 lambda{};                                    // the adjoint, seeded from x_T
//     remat::run(plan, store, x,
//                remat::forward_step([&](remat::step_t, vec3& s) { model.step(s); }),
//                remat::adjoint_step([&](remat::step_t, vec3& s) { model.adjoint_step(s, lambda, grad); }),
//                remat::final_state([&](const vec3& xT) { lambda = dJ_dx(xT); }));
#pragma once

#include "remat/types.hpp"

#include <concepts>
#include <type_traits>
#include <utility>

namespace remat {

/// A forward step for states of type State: `f(k, x)` turns x_k into x_{k+1} in place.
template <class F, class State>
concept forward_function = std::invocable<F&, step_t, State&>;

/// An adjoint step: `g(k, x)` is called with x == x_k; it takes the adjoint (which it owns) from a_{k+1}
/// to a_k and accumulates parameter gradients. It may overwrite x.
template <class F, class State>
concept adjoint_function = std::invocable<F&, step_t, State&>;

/// A terminal callable: `h(x)` with x == x_T, the loop's final state.
template <class F, class State>
concept final_function = std::invocable<F&, const State&>;

/// A taped forward step: `f(k, x, tape)` turns x_k into x_{k+1} in place and fills `tape` with what
/// step k's adjoint needs (x_k included).
template <class F, class State, class Tape>
concept taped_function = std::invocable<F&, step_t, State&, Tape&>;

/// An adjoint step from a tape: `g(k, tape)` back-propagates step k from the tape its taped step filled.
template <class F, class Tape>
concept tape_adjoint_function = std::invocable<F&, step_t, Tape&>;

/// The forward step of a run (made by remat::forward_step). F is a reference type for an lvalue.
template <class F>
struct forward_step_fn {
    F fn;
};
/// The adjoint step of a run (made by remat::adjoint_step).
template <class F>
struct adjoint_step_fn {
    F fn;
};
/// The terminal callable of a run (made by remat::final_state).
template <class F>
struct final_state_fn {
    F fn;
};

/// The taped forward step of a run (made by remat::taped_step).
template <class F>
struct taped_step_fn {
    F fn;
};
/// The adjoint step from a tape (made by remat::tape_adjoint).
template <class F>
struct tape_adjoint_fn {
    F fn;
};

/// Marks `f` as the forward step: `f(k, x)` maps x_k to x_{k+1}.
///
///     auto fwd = remat::forward_step([&](remat::step_t k, State& x) { step(k, x); });
template <class F>
[[nodiscard]] constexpr forward_step_fn<F> forward_step(F&& f)
{
    return {std::forward<F>(f)};
}

/// Marks `g` as the adjoint step: `g(k, x)` with x == x_k, for k = T-1 down to 0.
///
///     auto adj = remat::adjoint_step([&](remat::step_t k, State& x) { adjoint(k, x, a); });
template <class F>
[[nodiscard]] constexpr adjoint_step_fn<F> adjoint_step(F&& g)
{
    return {std::forward<F>(g)};
}

/// Marks `h` as the terminal callable: `h(x_T)` once, at the end of the first forward sweep, before the
/// first adjoint step. Where the schedule's forward sweep stops at x_{T-1} (every offline schedule, and
/// run_online), the driver runs step T-1 once more on the side to give h x_T, and puts x_{T-1} back; the
/// report counts that step in run_report::final_forward_steps, not in forward_steps.
///
///     auto fin = remat::final_state([&](const State& xT) { a = gradient_of_objective(xT); });
template <class F>
[[nodiscard]] constexpr final_state_fn<F> final_state(F&& h)
{
    return {std::forward<F>(h)};
}

/// Marks `f` as the taped forward step: `f(k, x, tape)` maps x_k to x_{k+1} in place and fills `tape`
/// with what the adjoint of step k needs. It must compute x_{k+1} exactly as the forward step does.
///
///     auto taped = remat::taped_step([&](remat::step_t k, State& x, Tape& t) { record(k, x, t); step(k, x); });
template <class F>
[[nodiscard]] constexpr taped_step_fn<F> taped_step(F&& f)
{
    return {std::forward<F>(f)};
}

/// Marks `g` as the adjoint step from a tape: `g(k, tape)` with the tape remat::taped_step filled for
/// step k. For gradients bit-identical to a state-only run, the adjoint step should be its composition
/// with the recording: `adjoint(k, x) = { record(k, x, t); backward(k, t); }`.
///
///     auto from_tape = remat::tape_adjoint([&](remat::step_t k, Tape& t) { backward(k, t, a); });
template <class F>
[[nodiscard]] constexpr tape_adjoint_fn<F> tape_adjoint(F&& g)
{
    return {std::forward<F>(g)};
}

/// No terminal callable (the drivers' default).
struct no_final_state {
    template <class State>
    constexpr void operator()(const State&) const noexcept
    {
    }
};

namespace detail {
/// Whether T is the wrapper Tag<F> of some callable F (forward_step_fn, taped_step_fn, ...).
template <class T, template <class> class Tag>
inline constexpr bool is_tagged = false;
template <class F, template <class> class Tag>
inline constexpr bool is_tagged<Tag<F>, Tag> = true;

/// True when a driver was given bare callables (or the tags in the wrong order), for its static_assert.
template <class Forward, class Adjoint>
inline constexpr bool untagged_steps = !is_tagged<std::remove_cvref_t<Forward>, forward_step_fn> ||
                                       !is_tagged<std::remove_cvref_t<Adjoint>, adjoint_step_fn>;

template <class>
inline constexpr bool always_false = false;
} // namespace detail

} // namespace remat
