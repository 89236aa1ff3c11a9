// Rewriting an inner plan's actions into a composed plan's (internal to src/schedule): the adaptors every planner
// built from another one uses instead of a visitor of its own. A segment planned from 0 is rebased to where it
// starts; a plan over blocks, or over segments of k steps, is scaled to steps; a plan over a subset of levels, or
// over the depths of one stack, has its slots relabelled to the store's levels and slots.
#pragma once

#include "remat/schedule/action.hpp"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>
#include <variant>

namespace remat::detail {

/// Whether `a` names a slot (store, restore, free).
[[nodiscard]] inline bool names_slot(const action& a) noexcept
{
    return !std::holds_alternative<advance>(a) && !std::holds_alternative<reverse>(a);
}

/// `a` with every step k as k + offset.
[[nodiscard]] inline action rebased(action a, step_t offset) noexcept
{
    std::visit(overloaded{[&](advance& x) { x = {x.from + offset, x.to + offset}; },
                          [&](store& x) { x.step += offset; }, [&](restore& x) { x.step += offset; }, [](free_slot&) {},
                          [&](reverse& x) { x.step += offset; }},
               a);
    return a;
}

/// `a` with every step k of a plan over units of `unit` steps as k * unit, an advance ending no later than `end`
/// (a last unit may be shorter). A reverse is left as it is: a unit's reverse is a plan of its own.
[[nodiscard]] inline action scaled(action a, step_t unit, step_t end = std::numeric_limits<step_t>::max()) noexcept
{
    std::visit(overloaded{[&](advance& x) { x = {x.from * unit, std::min(x.to * unit, end)}; },
                          [&](store& x) { x.step *= unit; }, [&](restore& x) { x.step *= unit; }, [](free_slot&) {},
                          [](reverse&) {}},
               a);
    return a;
}

/// `a` with the level and slot of a store, restore or free as `where(level, slot)` gives them (a pair of level_t
/// and slot_t); advances and reverses as they are.
template <class Where>
[[nodiscard]] action relabelled(action a, Where&& where)
{
    std::visit(
        [&](auto& x) {
            if constexpr (requires { x.slot; })
                std::tie(x.level, x.slot) = where(x.level, x.slot);
        },
        a);
    return a;
}

/// `a` with the level of a store, restore or free as `level_of(level)` gives it, its slot as it is.
template <class LevelOf>
[[nodiscard]] action on_levels(action a, LevelOf&& level_of)
{
    return relabelled(std::move(a), [&](level_t level, slot_t slot) { return std::pair{level_of(level), slot}; });
}

} // namespace remat::detail
