// remat/driver/step_callables.hpp — the callables of one run in one bundle, and the sorting of a driver
// call's trailing arguments by their role.
//
// Every driver takes the forward step and the adjoint step first, then, in any order, the optional pieces:
//
//     | argument                        | role                              | taken by                      |
//     |---------------------------------|-----------------------------------|-------------------------------|
//     | remat::final_state(h)           | the terminal callable             | every driver                  |
//     | remat::with_tapes(...)          | the tape callables and factory    | every driver                  |
//     | remat::run_options{...}         | lookahead, timing                 | run, run_online, run_resumed  |
//     | a step count                    | T (or an upper bound)             | executor                      |
//     | any other callable              | the loop's termination test       | run_online(_converged)        |
//
// so that one function serves every combination (remat::run with or without a terminal callable, with or
// without tapes). A piece given twice, or one the driver does not take, is refused by a static_assert.
//
//     auto calls = remat::detail::bundle(remat::forward_step(f), remat::adjoint_step(g), remat::final_state(h));
//     static_assert(decltype(calls)::has_final && !decltype(calls)::has_tapes);
#pragma once

#include "remat/driver/callables.hpp"
#include "remat/driver/run_options.hpp"
#include "remat/driver/tapes.hpp"

#include <concepts>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace remat {

/// The callables of one run: forward and adjoint steps, the terminal callable (no_final_state: none) and
/// the tapes (detail::no_tapes: none).
template <class Forward, class Adjoint, class Final = no_final_state, class Tapes = detail::no_tapes>
struct step_callables {
    static constexpr bool has_final = !std::is_same_v<std::remove_cvref_t<Final>, no_final_state>;
    static constexpr bool has_tapes = !std::is_same_v<Tapes, detail::no_tapes>;
    forward_step_fn<Forward> forward;
    adjoint_step_fn<Adjoint> adjoint;
    final_state_fn<Final> final;
    [[no_unique_address]] Tapes tapes;
};

namespace detail {

/// The role of a trailing driver argument (the table above).
enum class arg_role { final_state, tapes, options, steps, test };

template <class T>
inline constexpr arg_role role_of = std::integral<T> && !std::same_as<T, bool> ? arg_role::steps : arg_role::test;
template <class F>
inline constexpr arg_role role_of<final_state_fn<F>> = arg_role::final_state;
template <class S, class A, class M>
inline constexpr arg_role role_of<tape_set<S, A, M>> = arg_role::tapes;
template <>
inline constexpr arg_role role_of<run_options> = arg_role::options;

/// How many of Args have role R.
template <arg_role R, class... Args>
inline constexpr std::size_t count_role = (std::size_t{role_of<std::remove_cvref_t<Args>> == R} + ... + 0);

/// The index of the first of Args with role R (one of them has it).
template <arg_role R, class... Args>
consteval std::size_t index_of_role()
{
    constexpr arg_role roles[] = {role_of<std::remove_cvref_t<Args>>...};
    std::size_t i = 0;
    while (roles[i] != R)
        ++i;
    return i;
}

/// The argument with role R, by value; `fallback` when there is none.
template <arg_role R, class Fallback, class... Args>
auto pick_value(Fallback fallback, Args&&... args)
{
    if constexpr (count_role<R, Args...> == 0) {
        return fallback;
    } else {
        constexpr std::size_t i = index_of_role<R, Args...>();
        using T = std::remove_cvref_t<std::tuple_element_t<i, std::tuple<Args...>>>;
        return T(std::get<i>(std::forward_as_tuple(std::forward<Args>(args)...)));
    }
}

/// The argument with role R (there is one), by reference.
template <arg_role R, class... Args>
decltype(auto) pick_ref(Args&&... args)
{
    return std::get<index_of_role<R, Args...>()>(std::forward_as_tuple(std::forward<Args>(args)...));
}

/// The type of the argument with role R among Ts (decayed), or Fallback.
template <arg_role R, class Fallback, class... Ts>
struct type_of_role {
    using type = Fallback;
};
template <arg_role R, class Fallback, class T, class... Ts>
struct type_of_role<R, Fallback, T, Ts...>
    : std::conditional_t<role_of<T> == R, std::type_identity<T>, type_of_role<R, Fallback, Ts...>> {};

template <class F>
struct final_callable {
    using type = F;
};
template <class F>
struct final_callable<final_state_fn<F>> {
    using type = F;
};

/// The step_callables of a driver call whose trailing arguments are Extras (decayed).
template <class Forward, class Adjoint, class... Extras>
using callables_for = step_callables<
    Forward, Adjoint,
    typename final_callable<typename type_of_role<arg_role::final_state, no_final_state, Extras...>::type>::type,
    typename type_of_role<arg_role::tapes, no_tapes, Extras...>::type>;

/// Bundles the callables of a driver call (the steps and any terminal callable or tapes among `extras`).
template <class Forward, class Adjoint, class... Extras>
callables_for<Forward, Adjoint, std::remove_cvref_t<Extras>...>
bundle(forward_step_fn<Forward> forward, adjoint_step_fn<Adjoint> adjoint, Extras&&... extras)
{
    return {std::move(forward), std::move(adjoint),
            pick_value<arg_role::final_state>(final_state_fn<no_final_state>{}, std::forward<Extras>(extras)...),
            pick_value<arg_role::tapes>(no_tapes{}, std::forward<Extras>(extras)...)};
}

/// The step count among a call's trailing arguments (0 when there is none: refused by a static_assert).
template <class... Args>
step_t steps_among(const Args&... args)
{
    if constexpr (count_role<arg_role::steps, Args...> == 0)
        return 0;
    else
        return static_cast<step_t>(pick_ref<arg_role::steps>(args...));
}

/// Whether the trailing arguments Extras (decayed) suit a driver: a terminal callable, tapes and options
/// at most once each; exactly one step count where the driver takes one (the executor), none elsewhere;
/// exactly one termination test where the driver takes one (run_online), none elsewhere.
template <bool take_steps, bool take_test, class... Extras>
inline constexpr bool valid_extras =
    count_role<arg_role::final_state, Extras...> <= 1 && count_role<arg_role::tapes, Extras...> <= 1 &&
    count_role<arg_role::options, Extras...> <= 1 && count_role<arg_role::steps, Extras...> == (take_steps ? 1 : 0) &&
    count_role<arg_role::test, Extras...> == (take_test ? 1 : 0);

/// Whether the callables suit states of type State (checked by the drivers' static_asserts).
template <class Callables, class State>
inline constexpr bool callables_suit = requires {
    requires forward_function<decltype(std::declval<Callables&>().forward.fn), State>;
    requires adjoint_function<decltype(std::declval<Callables&>().adjoint.fn), State>;
    requires final_function<decltype(std::declval<Callables&>().final.fn), State>;
};

} // namespace detail

} // namespace remat
