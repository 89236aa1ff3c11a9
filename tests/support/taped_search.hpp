// The fewest forward evaluations of any schedule with states and tapes, by exhaustive search over every
// action sequence (tests only; T <= 8). Independent of remat::taped_revolve's recursion: it searches the
// states (next step to reverse, current x_k, snapshots held, tapes held) with a 0-1 breadth-first search,
// one step at a time, and prices an advanced step 1, a reverse from a state 1 (its re-run), a reverse
// through a tape, a store, a restore and a free 0. Memory as in remat/schedule/taped_revolve.hpp: a reverse
// from a state holds rerun_units more while it runs, less x_K's snapshot where one is held (its input).
#pragma once

#include "remat/types.hpp"

#include <cstdint>
#include <optional>

namespace remat::test {

/// The optimum, or nothing when no schedule fits `units`.
std::optional<std::uint64_t> fewest_taped_evaluations(step_t steps, slot_t units, slot_t tape_units,
                                                      slot_t rerun_units = 0);

} // namespace remat::test
