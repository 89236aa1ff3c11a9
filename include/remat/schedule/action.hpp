// remat/schedule/action.hpp — the five checkpointing actions, as value types with a text form.
//
// A schedule is a sequence of these actions (design.md §2). Each has `==` and a one-line text form,
// exactly what `remat plan --format actions` prints and what an independent simulator can replay:
//
//     advance A B      run forward steps A..B-1: the current state goes from x_A to x_B
//     advance K K+1 tape   run step K keeping its tape (remat/schedule/taped_revolve.hpp)
//     store L S K      copy the current state x_K into slot S of level L
//     restore L S K    make the snapshot x_K held in slot S of level L the current state
//     free L S         slot S of level L is no longer needed
//     reverse K        adjoint of step K; the current state must be x_K (and is undefined after it),
//                      unless step K's tape is held: then the adjoint uses the tape, without re-running K
//
// Taped advances. A step's *tape* is everything its adjoint needs (the activations of a network layer,
// the stages of a Runge-Kutta step), its input state x_K included. `advance K K+1 tape` runs step K
// once and keeps that tape; the later `reverse K` back-propagates through it instead of re-running step
// K from x_K, so a taped step costs one forward evaluation instead of two (Beaumont et al. 2019's "F_all";
// Gruslys et al. 2016's internal states). The tape is held from its advance until `reverse K` consumes
// it; unlike a plain advance, a taped one may run the next step to reverse itself (x_{K+1} is then of no
// use, the tape is). Only remat::taped_revolve emits taped advances; every state-only schedule leaves
// `taped` false. remat::run and remat::executor carry them out when given the tape callables
// (remat::with_tapes, remat/driver/tapes.hpp) and refuse them with remat::schedule_error otherwise;
// remat::find_resume_point refuses them (tapes are not persisted). Anything else that cannot honour them
// must refuse them too: a consumer that ignored the flag would reverse step K with x_K not current.
#pragma once

#include "remat/types.hpp"

#include <iosfwd>
#include <string>
#include <string_view>
#include <variant>

namespace remat {

/// `advance A B`: run forward steps A..B-1 (B > A). With `taped` (text form `advance K K+1 tape`, only
/// for one step, B == A + 1): run step A keeping its tape, which the later `reverse A` consumes.
///
///     remat::advance{3, 4, true} == remat::parse_action("advance 3 4 tape")   // true
struct advance {
    step_t from = 0;
    step_t to = 0;
    bool taped = false; ///< keep step `from`'s tape for its adjoint (then to == from + 1)
    friend bool operator==(const advance&, const advance&) = default;
};

/// `store L S K`: copy the current state, which is x_K, into slot S of level L.
struct store {
    level_t level = 0;
    slot_t slot = 0;
    step_t step = 0;
    friend bool operator==(const store&, const store&) = default;
};

/// `restore L S K`: the snapshot x_K held in slot S of level L becomes the current state.
struct restore {
    level_t level = 0;
    slot_t slot = 0;
    step_t step = 0;
    friend bool operator==(const restore&, const restore&) = default;
};

/// `free L S`: slot S of level L is no longer needed. (Named free_slot: `free` is taken by C.)
struct free_slot {
    level_t level = 0;
    slot_t slot = 0;
    friend bool operator==(const free_slot&, const free_slot&) = default;
};

/// `reverse K`: the adjoint of step K; the current state must be x_K and is undefined afterwards, unless
/// step K's tape is held (a taped advance of K came before): then it back-propagates through that tape.
struct reverse {
    step_t step = 0;
    friend bool operator==(const reverse&, const reverse&) = default;
};

/// One checkpointing action. Drive a state-only schedule yourself with std::visit (a schedule with taped
/// advances needs the tape kept and used, see above):
///
///     for (const remat::action& a : remat::revolve(1000, 10))
///         std::visit(remat::overloaded{
///             [&](const remat::advance& s) { for (auto k = s.from; k < s.to; ++k) step(k, x); },
///             [&](const remat::store& s)   { slots[s.slot] = x; },
///             [&](const remat::restore& s) { x = slots[s.slot]; },
///             [&](const remat::free_slot&) {},
///             [&](const remat::reverse& s) { adjoint_step(s.step, x); }}, a);
using action = std::variant<advance, store, restore, free_slot, reverse>;

/// Helper to build a visitor from lambdas (see the example on `action`).
template <class... F>
struct overloaded : F... {
    using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;

/// The one-line text form of an action, e.g. "store 0 2 17" or "advance 5 6 tape".
[[nodiscard]] std::string to_string(const action& a);

/// Parses the text form; throws remat::argument_error naming the line when it is not an action (a taped
/// advance of more than one step included).
///
///     remat::action a = remat::parse_action("advance 0 4");   // == remat::advance{0, 4}
[[nodiscard]] action parse_action(std::string_view line);

/// Writes to_string(a).
std::ostream& operator<<(std::ostream& os, const action& a);

} // namespace remat
