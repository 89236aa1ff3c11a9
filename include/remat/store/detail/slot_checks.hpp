// remat/store/detail/slot_checks.hpp — the check every store makes before it writes a slot, with one wording
// for all of them. Header-only: the CUDA store, compiled by nvcc, includes it too.
#pragma once

#include "remat/error.hpp"
#include "remat/types.hpp"

#include <string>
#include <string_view>

namespace remat::detail {

/// Throws schedule_error unless a slot that holds x_`held` (< 0: nothing) may take x_`step`: the slot must be
/// empty (a schedule frees it first) and the step at least 0 (-1 marks an empty slot). `verb` is the action as
/// the messages say it ("store", "copy"); `where()` names the slot ("host slot 3"), called only to throw.
///
///     detail::require_slot_takes(e.step, step, "store", [&] { return "host slot " + std::to_string(slot); });
template <class Where>
void require_slot_takes(step_t held, step_t step, std::string_view verb, const Where& where)
{
    if (held >= 0) [[unlikely]]
        throw schedule_error(std::string(verb) + " into " + where() + ", which still holds x_" + std::to_string(held) +
                             " (free it first)");
    if (step < 0) [[unlikely]]
        throw schedule_error(std::string(verb) + " of x_" + std::to_string(step) + " into " + where() +
                             ": a step is at least 0");
}

} // namespace remat::detail
