// The classic checkpointing diagram as SVG: step index (down) against work done (right). Advances are
// black diagonals, reverse steps red, stored snapshots blue bars for as long as they are held.
#pragma once

#include "plan_request.hpp"

#include <iosfwd>

namespace remat::cli {

/// Schedules with at most this many steps are drawn action by action; longer ones are summarised
/// per pixel column (the span of steps each column's advances and reverses touch).
inline constexpr step_t svg_detail_steps = 400;
/// Drawing enumerates every action; beyond this many steps it would take too long.
inline constexpr step_t svg_max_steps = 50'000'000;

/// Throws usage_error when the plan has more than svg_max_steps steps.
void write_schedule_svg(std::ostream& out, const plan_choice& choice);

} // namespace remat::cli
